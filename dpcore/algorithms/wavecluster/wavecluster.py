"""WaveCluster and differentially private WaveCluster (Chen, Yu & Chirkova).

WaveCluster (Sheikholeslami et al. 1998) finds clusters of arbitrary shape on
a grid in four steps (Chen et al., §3.2):

1. *quantisation*: cut the public box into ``num_grid`` cells per dimension
   and count the points of each cell (the count matrix ``M``);
2. *wavelet transform*: one level of a discrete wavelet transform of ``M``
   (PyWavelets, ``mode="periodization"``); the approximation sub-band ``W``
   (one value per block of 2^d cells) is kept;
3. *significant-grid identification*: ``S`` = the positive values of ``W``
   in ascending order, ``k = ceil((1 - p) |S|)`` with ``p`` the density
   threshold; the top ``k`` values are significant;
4. *cluster identification*: clusters are the connected components of the
   significant cells (:func:`scipy.ndimage.label`); a point takes the label of
   its cell, ``-1`` (noise) in a non-significant cell.

The private variants (Chen et al., §4) are, in the order of the paper:

* :class:`PrivBasic` -- WaveCluster on synthetic data drawn from an
  epsilon-DP grid synopsis (Alg. 1);
* :class:`PrivQT` -- Laplace noise on the count matrix (Alg. 2);
* :class:`PrivTHR` -- as PrivQT, then a noisy count ``|Z'|`` of the
  non-positive true transformed values removes the ``|Z'|/2`` smallest noisy
  positive values before the threshold (Alg. 3, 90 % / 10 % split);
* :class:`PrivTHREM` -- as PrivQT, with the threshold drawn by the exponential
  mechanism over the true transformed values with the rank quality function
  (Alg. 4, 70 % / 30 % split).

Sensitivities
-------------
Neighbouring data sets differ by adding or removing one record.  The count
matrix then changes in one cell by 1 (L1 sensitivity 1; the cells are
disjoint, parallel composition).  For the two threshold steps what matters is
how many transformed values one cell can move: with the 1-D approximation
matrix ``T`` of the wavelet (``T[i, u]`` = weight of cell ``i`` in value
``u``, computed by PyWavelets from ``Wavelet(name).dec_lo`` with periodic
extension), the separable d-D transform gives cell ``(i_1..i_d)`` weight
``prod_j T[i_j, u_j]`` in value ``u``, so one cell moves at most
``s = (max_i #{u : T[i, u] != 0})^d`` values (:func:`approximation_influence`).
For Haar, ``dec_lo = (1/sqrt 2, 1/sqrt 2)`` and the blocks do not overlap, so
``s = 1``: the paper's value (§4.3, §4.4).

References
----------
Chen, Yu, Chirkova (2015). "WaveCluster with differential privacy". CIKM 2015
(arXiv:1508.00192), §3-§6.
Sheikholeslami, Chatterjee, Zhang (1998). "WaveCluster: a multi-resolution
clustering approach for very large spatial databases". VLDB.
Qardaji, Yang, Li (2013). "Differentially private grids for geospatial data". ICDE
(the uniform-grid size rule used by :class:`PrivBasic`).
Smith (2011). "Privacy-preserving statistical estimation with optimal convergence
rates". STOC (exponential mechanism over the intervals between sorted values).
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ...synopsis import WaveletGridSynopsis
from ...utils.fixedpoint import FixedPoint
from ...utils.validation import EPSILON, Checked
from ..base import DPClusterer, fit_doc
from ..traits import AuditCase
from .transform import (
    MAX_CELLS,
    cell_index,
    check_wavelet,
    label_significant,
    threshold_rank,
    top_k_threshold,
    wavelet_approximation,
)


def _check_cells(num_grid, d):
    # num_grid's own range is a constraint; the cell count depends on the data's number of columns.
    if d * math.log(int(num_grid)) > math.log(MAX_CELLS):
        raise ValueError(f"num_grid={num_grid} in {d} dimensions makes {int(num_grid)}^{d} cells, more than "
                         f"{MAX_CELLS}: choose a smaller num_grid")


# ---------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------
class WaveCluster(DPClusterer):
    """WaveCluster, non-private (Sheikholeslami et al. 1998, as run by Chen et al. §3.2).

    Parameters
    ----------
    epsilon : None
        Accepted (and ignored) for a uniform interface; the baseline is not private.
    bounds : (lower, upper), data units, optional
        The box that is quantised.  ``None`` uses the data's own range (no
        warning: the baseline is for the data owner's eyes only).
    num_grid : int, default 40
        Cells per dimension of the count matrix (the paper's spiral setting).
    density_threshold : float in [0, 1), default 0.1
        Fraction ``p`` of the positive transformed values that are not
        significant: the top ``ceil((1 - p) |S|)`` values are significant.
    wavelet : str, default "haar"
        Any discrete PyWavelets wavelet ("bior2.2", "db2", "sym4", ...).
    connectivity : {"full", "face"}, default "full"
        Adjacency used for connected components (see :func:`label_significant`).
    random_state : ignored (kept for a uniform interface)

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (number of clusters found, d), data units
        Per cluster, the mean of its cells' centres weighted by their transformed values.
    labels_ : ndarray (n,) int
        Cluster of each training point, ``-1`` for noise.  Baseline only: the
        private variants do not store training labels (their length is the
        private n); call ``predict(X)`` or ``fit_predict(X)``.
    n_clusters_ : int
    significant_cells_ : ndarray of bool, transformed-grid shape
    n_significant_ : int
        Number of significant transformed values (the paper's ``k``).
    threshold_ : float
        The density threshold value: cells with transformed value >= it (and > 0) are significant.
    threshold_rank_ : int
        The rank ``k`` (or private ``k'``) the threshold was taken at: the paper's "k"
        (§6.2).  ``n_significant_`` can exceed it when values tie at the threshold.
        Always computed from released (noisy) values in the private variants.
    synopsis_ : WaveletGridSynopsis
        Transformed-grid edges (data units), cluster id per cell, transformed values.
    budget_ : BudgetLedger (empty)

    Raises
    ------
    ValueError
        Bad ``num_grid``, ``density_threshold``, ``wavelet`` or ``connectivity``, or bad data.

    References
    ----------
    Chen, Yu, Chirkova (2015), §3.2; Sheikholeslami et al. (1998).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import WaveCluster
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = WaveCluster(bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()
    (0.0, 0.0)
    """

    key = "wavecluster"
    display_name = "WaveCluster (not private)"
    accepts_source = True
    reference = "Sheikholeslami et al. 1998; as in Chen, Yu & Chirkova 2015, §3.2"
    summary = ("Grid clustering: counts per cell, a wavelet transform, dense cells above a percentile, "
               "clusters = connected dense cells. The reference the private versions are measured against.")
    private = False
    family = "grid clusters"
    audit = AuditCase(privacy="non-private baseline (WaveCluster)", sources=dict(epsilon=None, num_grid=16))
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        # The non-private baseline ignores a budget; its private variants replace this with EPSILON.
        "epsilon": [EPSILON, None],
        "num_grid": [Interval(Integral, 2, None, closed="left")],
        # The fraction of positive transformed values that are NOT significant (0.1 for 10 %).
        "density_threshold": [Interval(Real, 0, 1, closed="left")],
        "wavelet": [Checked(check_wavelet, "a discrete wavelet name of PyWavelets, such as 'haar'")],
        # "full": cells touching by a corner are adjacent; "face": only by a face.
        "connectivity": [StrOptions({"full", "face"})],
    }

    def __init__(self, *, epsilon=None, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", random_state=None):
        self.epsilon = epsilon
        self.bounds = bounds
        self.num_grid = num_grid
        self.density_threshold = density_threshold
        self.wavelet = wavelet
        self.connectivity = connectivity
        self.random_state = random_state

    # -- fit scaffolding shared by every variant ----------------------------
    def _prepare(self, X, privacy_id=None):
        """Validate; return (source, noise, n): X may be an array or any DataSource."""
        src, noise, n = self._begin_fit(X, privacy_id=privacy_id)
        _check_cells(self.num_grid, src.n_features)
        self._wavelet_ = check_wavelet(self.wavelet)
        return src, noise, n

    def _counts(self, src):
        """The exact count matrix of step 1 (``quantize``), computed where the data live: floats, or the
        exact :class:`~dpcore.utils.fixedpoint.FixedPoint` sums of the weights of weighted rows."""
        m = int(self.num_grid)
        counts = src.grid_counts(self.bounds_, (m,) * src.n_features)
        return counts if isinstance(counts, FixedPoint) else counts.astype(float)

    @fit_doc('Cluster X.', example='bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        X, _, _ = self._prepare(X, privacy_id)
        counts = self._counts(X)
        W = wavelet_approximation(counts, self._wavelet_)
        S = np.sort(W[W > 0])
        k = threshold_rank(S.size, self.density_threshold)
        self._finish(X, W, top_k_threshold(S, k), k)
        return self

    def _finish(self, X, W, threshold, k):
        """Steps 3-4 from the (noisy) transformed values and the threshold; set fitted attributes."""
        significant = (W >= threshold) & (W > 0)
        labels, n_clusters = label_significant(significant, self.connectivity)
        m = int(self.num_grid)
        dom = self.bounds_
        edges = []
        for j in range(dom.d):
            e = np.linspace(dom.lower[j], dom.upper[j], m + 1)
            edges.append(np.append(e[:-1][::2], e[-1]))
        self.significant_cells_ = significant
        self.n_significant_ = int(significant.sum())
        self.threshold_ = float(threshold)
        self.threshold_rank_ = int(k)
        self.n_clusters_ = n_clusters
        self.cells_per_dim_ = m
        self.synopsis_ = WaveletGridSynopsis(edges=edges, labels=labels, values=W)
        self.cluster_centers_ = _weighted_cluster_centres(edges, labels, W, n_clusters)
        if not self.private and hasattr(X, "X"):
            # Only the baseline keeps training labels: a private estimator's labels_ would have the
            # private length n and hold a function of every row (issue #19); fit_predict and
            # predict(X) label the caller's own rows from the released grid instead.  A file or
            # engine source is never pulled into memory, so it gets no labels_ either.
            self.labels_ = self._label_points(X.X)

    def _label_points(self, X: np.ndarray) -> np.ndarray:
        dom = self.bounds_
        U = (X - dom.lower) / dom.width
        idx = cell_index(U, int(self.num_grid)) // 2
        synopsis = self.synopsis_
        assert synopsis is not None, "fit sets the released grid first"
        labels = synopsis.labels[tuple(idx.T)]
        return np.where(dom.contains(X), labels, -1)

    def _expected_failed_checks(self) -> dict[str, str]:
        grid = ("the wavelet grid has num_grid^d cells; scikit-learn's check uses 5 to 10 columns with the "
                f"default num_grid, beyond the {MAX_CELLS:,}-cell cap, and the estimator refuses it up front "
                "with a message naming a smaller num_grid")
        return {**super()._expected_failed_checks(), "check_estimators_dtypes": grid,
                "check_dtype_object": grid, "check_fit2d_1sample": grid}

    def predict(self, X) -> np.ndarray:
        """Label points by the cluster of the transformed cell they fall in.

        Parameters
        ----------
        X : array-like (n, d), data units, or a :class:`~dpcore.sources.DataSource`

        Returns
        -------
        ndarray (n,) int: cluster id, ``-1`` for noise (a non-significant cell) or
        a point outside the public bounds.

        Notes
        -----
        Uses only the released grid of labels, so it costs no privacy.
        """
        X = self._check_predict_X(X)
        return self._label_points(X)


def _weighted_cluster_centres(edges, labels, W, n_clusters) -> np.ndarray:
    d = labels.ndim
    if n_clusters == 0:
        return np.empty((0, d))
    mids = [(e[:-1] + e[1:]) / 2 for e in edges]
    mesh = np.meshgrid(*mids, indexing="ij")
    lab = labels.ravel()
    keep = lab >= 0
    w = np.clip(W.ravel()[keep], 1e-12, None)
    mass = np.bincount(lab[keep], weights=w, minlength=n_clusters)
    return np.stack([np.bincount(lab[keep], weights=w * g.ravel()[keep], minlength=n_clusters) / mass
                     for g in mesh], axis=1)
