"""The non-private baseline: scikit-learn's k-means (k-means++ seeding, Lloyd iterations)."""
from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.cluster import KMeans as _SKKMeans
from sklearn.utils._param_validation import Interval

from ..privacy.rng import check_random_state
from ..utils.validation import Checked
from .base import DPClusterer, fit_doc
from .traits import AuditCase


def _no_budget(epsilon) -> None:
    if epsilon is not None:
        raise ValueError("the non-private k-means takes epsilon=None; choose a private algorithm to use a budget")


class KMeans(DPClusterer):
    """Non-private k-means baseline (scikit-learn), on the same normalised domain as the private ones.

    Not private: for the data owner's eyes only.  It clusters in the
    ``[-1, 1]^d`` normalisation of ``bounds`` (or of the data's own range when
    ``bounds`` is None, silently: nothing private is released), so its
    centres are comparable with the private estimators'.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : None
        Accepted for protocol compatibility; must be None.
    bounds : (lower, upper) or None
    n_init : int, default 10
        k-means++ restarts; the lowest inertia is kept.
    random_state : None, int or Generator
    assignment : {"auto", "cells", "rows"}, default "auto"
        On a :class:`~dpcore.sources.DataSource` only: ``"cells"`` reads the data once into exact
        fine-cell statistics (:mod:`dpcore.sources.cells`) and runs every Lloyd step on them in
        memory (up to ``CELL_LLOYD_STEPS``); ``"rows"`` reads the rows once per step (up to
        ``SOURCE_LLOYD_STEPS``).  ``"auto"``: cells up to 2 dimensions.

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    labels_ : ndarray (n,)
    inertia_ : float, in squared data units
    n_iter_ : int
    budget_ : BudgetLedger (always empty)

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import KMeans
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = KMeans(n_clusters=3, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()
    (0.0, 0.0)
    """

    key = "kmeans"
    display_name = "k-means (not private)"
    accepts_source = True
    reference = "Lloyd 1982; Arthur & Vassilvitskii 2007 (scikit-learn)"
    summary = "Ordinary k-means on the raw data: the reference the private results are measured against."
    private = False
    # Non-private: no privacy audit; on a source it releases k-means of a fine grid (an approximation,
    # tested on its own), so the sources test's "same release as on the array" does not apply.
    audit = AuditCase(privacy="non-private baseline (scikit-learn k-means)", sources=None)
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "epsilon": [Checked(_no_budget, "None")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=None, bounds=None, n_init=10, random_state=None,
                 assignment="auto"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_init = n_init
        self.random_state = random_state
        self.assignment = assignment

    @fit_doc("Fit scikit-learn's k-means (no privacy).", example='n_clusters=3, bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        from ..sources import ArraySource, DataSource
        if isinstance(X, DataSource) and not isinstance(X, ArraySource):
            return self._fit_source(X)
        src, _, _ = self._begin_fit(X)   # accepts_source: the rows come back as an ArraySource
        dom = self.bounds_
        X, _ = dom.clip(src.X)
        seed = int(check_random_state(self.random_state).integers(2 ** 31 - 1))
        km = _SKKMeans(n_clusters=int(self.n_clusters), n_init=int(self.n_init), random_state=seed)
        km.fit(dom.normalize(X))
        self.cluster_centers_ = dom.denormalize(km.cluster_centers_)
        self.labels_ = km.labels_
        diff = X - self.cluster_centers_[self.labels_]
        self.inertia_ = float(np.einsum("ij,ij->", diff, diff))
        self.n_iter_ = int(km.n_iter_)
        return self

    def _fit_source(self, src):
        """k-means on the exact fine grid of a source, refined by exact Lloyd passes (see :meth:`fit`)."""
        from ..sources.cells import CellSource
        src, _, n = self._begin_fit(src, assignment=self.assignment)
        steps = CELL_LLOYD_STEPS if isinstance(src, CellSource) else SOURCE_LLOYD_STEPS
        dom, d, k = self.bounds_, src.n_features, int(self.n_clusters)
        # With cells the exact Lloyd steps are cheap, so k-means++ runs on a coarser start grid (its
        # n_init restarts on up to 2^20 occupied cells took most of the reference's time).
        m = max(2, int((CELL_START_CELLS if steps == CELL_LLOYD_STEPS else GRID_CELLS) ** (1.0 / d)))
        counts = src.grid_counts(dom, (m,) * d).ravel().astype(float)
        mids = (np.arange(m) + 0.5) / m * 2 - 1           # cell centres, normalised
        cells = np.stack(np.meshgrid(*([mids] * d), indexing="ij"), axis=-1).reshape(-1, d)
        keep = counts > 0
        seed = int(check_random_state(self.random_state).integers(2 ** 31 - 1))
        km = _SKKMeans(n_clusters=min(k, int(keep.sum())), n_init=int(self.n_init), random_state=seed)
        km.fit(cells[keep], sample_weight=counts[keep])
        centers = km.cluster_centers_
        if centers.shape[0] < k:  # fewer occupied cells than clusters: repeat (still k rows)
            centers = np.resize(centers, (k, d))
        n_steps = 0
        for n_steps in range(1, steps + 1):  # noqa: B007 (the count is kept after the loop)
            cnt, fixed = src.cluster_sums(centers, dom)
            sums = fixed.to_float()
            new = centers.copy()
            ok = cnt > 0
            new[ok] = sums[ok] / cnt[ok, None]
            shift = float(np.abs(new - centers).max())
            centers = new
            if shift <= 2e-4:
                break
        self.cluster_centers_ = dom.denormalize(centers)
        self.labels_ = None
        self.inertia_ = None  # data-unit inertia needs another pass; NICV: dpcore.metrics.nicv(source, ...)
        self.n_iter_ = int(km.n_iter_) + n_steps
        return self


#: Cells of the exact grid that the source baseline clusters (about 1000 x 1000 in 2-D).
GRID_CELLS = 1 << 20
#: Exact Lloyd passes over a source after the grid k-means.
SOURCE_LLOYD_STEPS = 10
#: Lloyd steps on the fine-cell statistics (in memory, milliseconds each) after the grid k-means.
CELL_LLOYD_STEPS = 100
#: Cells of the start grid when the Lloyd steps run on the fine-cell statistics (256 x 256 in 2-D).
CELL_START_CELLS = 1 << 16
