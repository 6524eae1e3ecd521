"""A recorded release seen through the fitted attributes that pages and reports draw.

Post-processing of the release dict only: no privacy cost, and nothing the release does not hold.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..synopsis import CoresetSynopsis, GridSynopsis, PointSynopsis, WaveletGridSynopsis
from ..utils.domain import Domain

# The registry, the ledger and the nearest-centre kernels are imported where a ReleasedFit is made or asked: a reader
# of published releases (the public gallery) calls point_synopsis and needs none of the estimators (issue 66).


class ReleasedFit:
    """A recorded release seen through the fitted attributes the pages draw.

    Built only from the release dict that the store accepted
    (:func:`dpcore.release.build_release`), so what a page shows after a
    rerun, a reload or a server restart is exactly what was recorded, and
    nothing the release does not hold (the dataset size, clipped rows, the
    per-point labels) can reach a page through it.

    Attributes
    ----------
    release : dict, the recorded release
    release_id : int or None, its id in the store
    draw : int, 1 for the first draw of these settings on this dataset, 2 for the next, ...
    cluster_centers_ : ndarray (k, d)
    synopsis_ : GridSynopsis, CoresetSynopsis, PointSynopsis, WaveletGridSynopsis or None
    budget_ : BudgetLedger rebuilt from the release's ledger
    bounds_ : Domain, the public bounds
    branch_ : str (Hybrid only)
    coreset_size_ : int (coreset only)
    n_clusters_, n_significant_ : int (grid clusters only)
    """

    def __init__(self, release: dict, release_id: int | None = None, draw: int = 1, key=None):
        from ..algorithms.registry import releasable
        from ..privacy.accountant import BudgetLedger

        self.release, self.release_id, self.draw, self.key = release, release_id, draw, key
        cls = releasable(release["algorithm"]["key"])
        self.display_name = cls.display_name or release["algorithm"]["key"]
        lower = np.asarray(release["bounds"]["lower"], dtype=float)
        upper = np.asarray(release["bounds"]["upper"], dtype=float)
        self.bounds_ = Domain(lower, upper)
        self.n_features_in_ = d = lower.size
        self.cluster_centers_ = np.asarray(release["centroids"], dtype=float).reshape(-1, d)
        p = release["privacy"]
        ledger = BudgetLedger(p["epsilon"], p["delta"])
        for e in release["ledger"]:
            ledger.spend(e["name"], e["epsilon"], e.get("delta") or 0.0, mechanism=e.get("mechanism", ""),
                         sensitivity=e.get("sensitivity"), granularity=e.get("granularity"),
                         sampler=e.get("sampler"))
        self.budget_ = ledger
        syn = release.get("synopsis")
        self.synopsis_: Any = None
        if syn is not None and syn["kind"] == "grid":
            self.synopsis_ = GridSynopsis([np.asarray(e, dtype=float) for e in syn["edges"]],
                                          np.asarray(syn["counts"], dtype=float))
        elif syn is not None and syn["kind"] == "coreset":
            self.synopsis_ = CoresetSynopsis(np.asarray(syn["points"], dtype=float).reshape(-1, d),
                                             np.asarray(syn["weights"], dtype=float))
            self.coreset_size_ = int(self.synopsis_.weights.size)
        elif syn is not None and syn["kind"] == "points":
            self.synopsis_ = point_synopsis(release)
        elif syn is not None and syn["kind"] == "wavelet_grid":
            labels = np.asarray(syn["labels"], dtype=int)
            self.synopsis_ = WaveletGridSynopsis([np.asarray(e, dtype=float) for e in syn["edges"]], labels,
                                                 np.asarray(syn["values"], dtype=float) if "values" in syn else None)
            self.n_clusters_ = int(labels.max() + 1) if labels.size and labels.max() >= 0 else 0
            self.n_significant_ = int((labels >= 0).sum())
        branch = (release.get("private_extras") or {}).get("hybrid_branch")
        if branch:
            self.branch_ = branch

    def predict(self, X) -> np.ndarray:
        """Labels from the released output only: nearest released centre, or the released grid's cluster id.

        Costs no privacy, but the labels are a function of X and as private as X.
        """
        from ..utils.nearest import assign

        X = np.asarray(X, dtype=float)
        syn = self.synopsis_
        if getattr(syn, "kind", None) != "wavelet_grid":
            return assign(X, self.cluster_centers_)
        idx = [np.clip(np.searchsorted(e, X[:, j], side="right") - 1, 0, len(e) - 2)
               for j, e in enumerate(syn.edges)]
        inside = np.all((X >= self.bounds_.lower) & (X <= self.bounds_.upper), axis=1)
        return np.where(inside, syn.labels[tuple(idx)], -1)


def is_geo(release: dict) -> bool:
    """True when the first two columns are longitude, latitude (by name) inside world bounds.

    A release carries its column names and public bounds, not the dataset's ``geo`` flag; a map is
    drawn only when both say longitude/latitude.

    Returns
    -------
    bool
    """
    cols = [c.lower() for c in release["dataset"]["columns"]]
    if len(cols) < 2 or not any(t in cols[0] for t in ("lon", "lng")) or "lat" not in cols[1]:
        return False
    lo, hi = (np.asarray(release["bounds"][k][:2], dtype=float) for k in ("lower", "upper"))
    return bool(lo[0] >= -180 and hi[0] <= 180 and lo[1] >= -90 and hi[1] <= 90)


def point_synopsis(release: dict) -> PointSynopsis:
    """The :class:`~dpcore.synopsis.PointSynopsis` a release of kind ``"points"`` holds (issue 57).

    Parameters
    ----------
    release : dict, a release whose ``synopsis`` has kind ``"points"`` (points, weights, lower, upper)

    Returns
    -------
    PointSynopsis, for analyses at no cost (k-means for any k, range counts, density): post-processing.

    Raises
    ------
    ValueError
        The release holds no point synopsis.
    """
    syn = release.get("synopsis") or {}
    if syn.get("kind") != "points":
        raise ValueError("this release holds no point synopsis (kind 'points')")
    d = len(release["bounds"]["lower"])
    arr = {k: np.asarray(syn[k], dtype=float).reshape(-1, d) for k in ("points", "lower", "upper")}
    bounds = syn.get("bounds") or [release["bounds"]["lower"], release["bounds"]["upper"]]
    return PointSynopsis(points=arr["points"], weights=np.asarray(syn["weights"], dtype=float),
                         lower=arr["lower"], upper=arr["upper"], method=syn.get("method", "privtree"),
                         bounds=tuple(np.asarray(b, dtype=float) for b in bounds))


def released_points(release: dict) -> PointSynopsis:
    """The weighted points a release publishes, as a :class:`~dpcore.synopsis.PointSynopsis` for any analysis.

    A sanitized database (kind ``"points"``) as it is; a noisy grid: each cell's middle weighted by its
    noisy count (negative counts as 0), with the cell as its box; a coreset: its points and weights
    (boxes of no width).  ``.kmeans(k)`` then gives centres for any k.

    Parameters
    ----------
    release : dict
        A recorded release (:func:`dpcore.release.build_release`).

    Returns
    -------
    PointSynopsis

    Raises
    ------
    ValueError
        The release publishes no points (only its centres, or a WaveCluster grid of labels).

    Notes
    -----
    **Privacy.** A function of the released values and the public bounds only: post-processing
    (Dwork & Roth 2014, Prop. 2.1); no ε is spent, whatever is computed from it.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import EUGkM
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
    >>> rel = build_release(EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X), algorithm="eugkm")
    >>> released_points(rel).kmeans(7, random_state=0).shape
    (7, 2)
    """
    syn = release.get("synopsis") or {}
    kind = syn.get("kind")
    bounds = (np.asarray(release["bounds"]["lower"], dtype=float), np.asarray(release["bounds"]["upper"], dtype=float))
    d = bounds[0].size
    if kind == "points":
        return point_synopsis(release)
    if kind == "grid":
        edges = [np.asarray(e, dtype=float) for e in syn["edges"]]
        idx = np.indices([len(e) - 1 for e in edges]).reshape(d, -1).T
        lower = np.stack([edges[a][idx[:, a]] for a in range(d)], axis=1)
        upper = np.stack([edges[a][idx[:, a] + 1] for a in range(d)], axis=1)
        weights = np.clip(np.asarray(syn["counts"], dtype=float).ravel(), 0.0, None)
        return PointSynopsis(points=(lower + upper) / 2, weights=weights, lower=lower, upper=upper,
                             method="grid", bounds=bounds)
    if kind == "coreset":
        points = np.asarray(syn["points"], dtype=float).reshape(-1, d)
        return PointSynopsis(points=points, weights=np.clip(np.asarray(syn["weights"], dtype=float), 0.0, None),
                             lower=points.copy(), upper=points.copy(), method="coreset", bounds=bounds)
    what = "only its centres" if not syn else f"a {kind} synopsis (cluster labels, no counts)"
    raise ValueError(f"this release publishes {what}: there are no weighted points to cluster again. A sanitized "
                     "database (dpcore.sanitize, or 'dpcore sanitize' on the command line) can be analysed at any k")
