"""Released, data-like objects: what an estimator publishes besides centres.

Every synopsis is differentially private on its own (it is produced by the
estimator's noise steps and recorded in its ledger), so it may be shown,
exported and re-analysed freely.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def grid_points(axes: list) -> np.ndarray:
    """All points of the product grid ``axes[0] x axes[1] x ...`` as rows (M, d), in C order.

    Works for any number of dimensions (numpy's ``meshgrid``/``ravel_multi_index``
    stop at 32), as long as M itself fits in memory.
    """
    sizes = np.array([len(a) for a in axes], dtype=np.int64)
    total = int(np.prod(sizes))
    strides = np.ones(len(axes), dtype=np.int64)
    for i in range(len(axes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    digits = (np.arange(total, dtype=np.int64)[:, None] // strides[None, :]) % sizes[None, :]
    return np.stack([np.asarray(a, dtype=float)[digits[:, i]] for i, a in enumerate(axes)], axis=1)


@dataclass
class GridSynopsis:
    """Uniform-grid synopsis (Su et al. 2016, §4.2): cell edges and signed noisy counts.

    Attributes
    ----------
    edges : list of d ndarrays
        ``edges[i]`` has ``shape[i] + 1`` increasing cell boundaries, data units.
    counts : ndarray, shape ``tuple(len(e) - 1 for e in edges)`` (flat, in C order, when d > 32,
        beyond numpy's array dimensions)
        Noisy counts, kept signed and unrounded: negative cells cancel
        positive noise in the weighted Lloyd step.
    """

    edges: list
    counts: np.ndarray
    kind: str = field(default="grid", init=False)

    @property
    def shape(self) -> tuple:
        return tuple(len(e) - 1 for e in self.edges)

    def cell_centers(self) -> np.ndarray:
        """Centres of all cells, (M, d), in C order matching ``counts.ravel()``."""
        return grid_points([(e[:-1] + e[1:]) / 2 for e in self.edges])

    def to_dict(self) -> dict:
        return {"kind": self.kind, "edges": [e.tolist() for e in self.edges],
                "counts": self.counts.tolist()}


@dataclass
class CoresetSynopsis:
    """Weighted private coreset (Feldman et al. 2017): points (m, d) and positive weights (m,)."""

    points: np.ndarray
    weights: np.ndarray
    kind: str = field(default="coreset", init=False)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "points": self.points.tolist(), "weights": self.weights.tolist()}


@dataclass
class WaveletGridSynopsis:
    """WaveCluster result grid: cell edges and a cluster id per cell (-1: not significant).

    Attributes
    ----------
    edges : list of d ndarrays (data units)
    labels : ndarray of int, the grid's shape
    values : ndarray or None
        The (noisy) transformed values the labels came from, if released.
    """

    edges: list
    labels: np.ndarray
    values: np.ndarray | None = None
    kind: str = field(default="wavelet_grid", init=False)

    @property
    def shape(self) -> tuple:
        return tuple(len(e) - 1 for e in self.edges)

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "edges": [e.tolist() for e in self.edges], "labels": self.labels.tolist()}
        if self.values is not None:
            out["values"] = self.values.tolist()
        return out


def _overlap(lower: np.ndarray, upper: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Share of each box ``[lower_i, upper_i]`` (m, d) inside the rectangles ``[lo_j, hi_j]`` (q, d): (m, q).

    The mass of a box is taken as spread uniformly over it; a box of zero width in a dimension
    counts as inside when its coordinate is.
    """
    share = np.ones((lower.shape[0], lo.shape[0]))
    for a in range(lower.shape[1]):
        lw, up = lower[:, a:a + 1], upper[:, a:a + 1]
        inter = np.clip(np.minimum(up, hi[None, :, a]) - np.maximum(lw, lo[None, :, a]), 0.0, None)
        width = up - lw
        flat = width <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            part = np.where(flat, ((lw >= lo[None, :, a]) & (lw <= hi[None, :, a])).astype(float), inter / width)
        share *= part
    return share


@dataclass
class PointSynopsis:
    """A private sanitized database of points: weighted points (m, d) and their cells (issue 57).

    Made by :func:`dpcore.sanitize` (a noisy spatial decomposition: a uniform grid, an adaptive
    grid or PrivTree).  Everything here is released output, so any analysis of it (k-means for
    any k, counts in any rectangle, a density map) is post-processing and spends no budget.

    Parameters
    ----------
    points : ndarray (m, d), data units
        One point per cell of the decomposition: the cell's centre.
    weights : ndarray (m,), float, non-negative
        The cell's noisy count after consistency post-processing (see ``dpcore.sanitize``).
    lower, upper : ndarray (m, d), data units
        The cell of each point (public structure or a function of released values); the mass of
        a cell is taken as spread uniformly over it by :meth:`range_count`, :meth:`density` and
        :meth:`cost`.
    method : str
        ``"uniform"``, ``"adaptive"`` or ``"privtree"``.
    bounds : (lower (d,), upper (d,))
        The public box.
    budget_ : BudgetLedger or None
        The ledger of the release (its entries sum to at most epsilon).
    privacy_unit_ : dict or None
        The privacy unit for a person-level release (``unit``, ``max_contributions``, ``bounding``).

    Examples
    --------
    A release's synopsis answers any number of questions at no further cost (the weights are
    noisy, so only shapes and exact identities are shown):

    >>> import numpy as np
    >>> import dpcore
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(5000, 2))
    >>> syn = dpcore.sanitize(X, epsilon=1.0, bounds=(0, 1))
    >>> syn.kmeans(4).shape
    (4, 2)
    >>> bool(abs(syn.range_count([0, 0], [1, 1]) - syn.total) < 1e-6 * max(syn.total, 1))
    True
    """

    points: np.ndarray
    weights: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    method: str = "privtree"
    bounds: tuple | None = None
    budget_: object = None
    privacy_unit_: dict | None = None
    kind: str = field(default="points", init=False)

    @property
    def size(self) -> int:
        """m, the number of points (a function of public inputs and released values)."""
        return int(self.points.shape[0])

    @property
    def total(self) -> float:
        """The sum of the weights: an estimate of the number of rows (units times their rows)."""
        return float(np.sum(self.weights))

    def _spread(self) -> np.ndarray:
        """Each cell's variance about its centre under a uniform spread: sum_j width_j^2 / 12, (m,)."""
        return (((self.upper - self.lower) ** 2) / 12.0).sum(axis=1)

    def spread(self, q: int) -> PointSynopsis:
        """The same mass with each cell cut into ``q^d`` equal sub-cells of equal weight (uniform spread).

        Parameters
        ----------
        q : int >= 1, cuts per dimension

        Returns
        -------
        PointSynopsis with ``m q^d`` points (post-processing; no budget).
        """
        q = int(q)
        if q < 1:
            raise ValueError(f"q must be a whole number >= 1, got {q!r}")
        d = self.points.shape[1]
        sub = grid_points([np.arange(q)] * d)                       # (q^d, d) sub-cell indices
        width = (self.upper - self.lower) / q
        lower = (self.lower[:, None, :] + sub[None, :, :] * width[:, None, :]).reshape(-1, d)
        upper = lower + np.repeat(width, sub.shape[0], axis=0)
        weights = np.repeat(self.weights / sub.shape[0], sub.shape[0])
        return PointSynopsis(points=(lower + upper) / 2, weights=weights, lower=lower, upper=upper,
                             method=self.method, bounds=self.bounds, budget_=self.budget_,
                             privacy_unit_=self.privacy_unit_)

    def cost(self, centres, q: int = 1) -> float:
        """The k-means cost of ``centres`` on the synopsis: ``sum_i w_i (||p_i - c(p_i)||^2 + s_i)``.

        Parameters
        ----------
        centres : array-like (k, d), data units

        Returns
        -------
        float, squared data units: the weighted cost with each cell's mass spread uniformly
        over it (``s_i`` the cell's variance, sum of squared widths over 12) and assigned to the
        centre nearest its centre point; an estimate of the data's k-means cost.

        Notes
        -----
        Post-processing of the release: no budget.
        """
        if int(q) > 1:
            return self.spread(q).cost(centres)
        C = np.atleast_2d(np.asarray(centres, dtype=float))
        if C.shape[1] != self.points.shape[1]:
            raise ValueError(f"centres have {C.shape[1]} columns, the synopsis {self.points.shape[1]}")
        d2 = np.full(self.points.shape[0], np.inf)
        for c in C:   # k is small; (m, k) at once would hold m k floats
            np.minimum(d2, ((self.points - c) ** 2).sum(axis=1), out=d2)
        return float(np.dot(self.weights, d2 + self._spread()))

    def kmeans(self, n_clusters: int, random_state=None, n_init: int = 10) -> np.ndarray:
        """k-means on the synopsis: weighted k-means++ and Lloyd (scikit-learn's ``KMeans`` with ``sample_weight``).

        Parameters
        ----------
        n_clusters : int >= 1
        random_state : None, int or Generator
            Seeds only the initialisation (post-processing of a release: a seed here reveals nothing).
        n_init : int, default 10

        Returns
        -------
        ndarray (n_clusters, d), data units.  With fewer points of positive weight than
        ``n_clusters``, those points are repeated.

        Notes
        -----
        Post-processing of the release: any number of k at no budget.
        """
        from sklearn.cluster import KMeans
        k = int(n_clusters)
        if k < 1:
            raise ValueError(f"n_clusters must be at least 1, got {n_clusters!r}")
        pos = self.weights > 0
        P, W = self.points[pos], self.weights[pos]
        if P.shape[0] == 0:
            P, W = self.points, np.ones(self.points.shape[0])
        if P.shape[0] <= k:
            return P[np.arange(k) % P.shape[0]].copy()
        seed = random_state
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2 ** 31 - 1))
        km = KMeans(n_clusters=k, n_init=int(n_init), random_state=seed).fit(P, sample_weight=W)
        return km.cluster_centers_

    def range_count(self, lo, hi) -> np.ndarray | float:
        """Estimated number of rows in the rectangle(s) ``[lo, hi]``.

        Parameters
        ----------
        lo, hi : array-like (d,) or (q, d), data units

        Returns
        -------
        float, or ndarray (q,) for q rectangles: the weights of the cells times the share of
        each cell inside the rectangle (uniform spread within a cell).

        Notes
        -----
        Post-processing of the release: any number of queries at no budget.
        """
        lo_a, hi_a = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
        single = lo_a.ndim == 1
        lo2, hi2 = np.atleast_2d(lo_a), np.atleast_2d(hi_a)
        d = self.points.shape[1]
        if lo2.shape != hi2.shape or lo2.shape[1] != d:
            raise ValueError(f"lo and hi must both be (d,) or (q, d) with d = {d}")
        out = np.empty(lo2.shape[0])
        step = max(1, (1 << 22) // max(self.points.shape[0], 1))
        for s in range(0, lo2.shape[0], step):
            out[s:s + step] = self.weights @ _overlap(self.lower, self.upper, lo2[s:s + step], hi2[s:s + step])
        return float(out[0]) if single else out

    def density(self, shape) -> GridSynopsis:
        """The synopsis' mass on a uniform grid over its bounds (a density map).

        Parameters
        ----------
        shape : int or tuple of d ints, cells per dimension

        Returns
        -------
        GridSynopsis, its ``counts`` the estimated rows per cell (non-negative).
        """
        if self.bounds is None:
            raise ValueError("the synopsis has no bounds to lay a grid over")
        d = self.points.shape[1]
        shape = tuple(int(s) for s in np.broadcast_to(np.asarray(shape, dtype=np.int64), (d,)))
        lower, upper = (np.asarray(b, dtype=float) for b in self.bounds)
        edges = [np.linspace(lower[a], upper[a], shape[a] + 1) for a in range(d)]
        parts = []
        for a in range(d):
            lo_e, hi_e = edges[a][:-1][None, :], edges[a][1:][None, :]
            lw, up = self.lower[:, a:a + 1], self.upper[:, a:a + 1]
            inter = np.clip(np.minimum(up, hi_e) - np.maximum(lw, lo_e), 0.0, None)
            parts.append(inter / np.where(up > lw, up - lw, 1.0))
        letters = "abc"[:d]
        counts = np.einsum("m," + ",".join(f"m{x}" for x in letters) + "->" + letters, self.weights, *parts)
        return GridSynopsis(edges=edges, counts=counts)

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "method": self.method, "points": self.points.tolist(),
               "weights": self.weights.tolist(), "lower": self.lower.tolist(), "upper": self.upper.tolist()}
        if self.bounds is not None:
            out["bounds"] = [np.asarray(b, dtype=float).tolist() for b in self.bounds]
        return out
