"""A private sanitized database of the points: a weighted point synopsis for d <= 3 (issue 57).

Feldman et al. (2017, §6) end with the administrator publishing "the private sanitized database"
for further analyses.  :func:`sanitize` releases one: a noisy spatial decomposition of the public
box whose cells become weighted points (:class:`~dpcore.synopsis.PointSynopsis`), to be analysed
afterwards (k-means for any k, range counts, density maps) at no further cost.

Three decompositions, every one built from exact integer counts of one histogram pass over the
rows (in memory or where the data live, :meth:`~dpcore.sources.DataSource.grid_counts`):

``"privtree"``
    PrivTree (Zhang, Xiao & Xie 2016, Alg. 2): a dyadic tree split where a biased count plus noise
    exceeds a threshold (:meth:`~dpcore.privacy.mechanisms.NoiseSource.privtree`), then the
    leaves' counts with the rest of the budget.  Every node's exact count is a block sum of one
    histogram at the finest level ``2^J`` cells per dimension (J from d only).
``"adaptive"``
    The adaptive grid AG (Qardaji, Yang & Li 2013, §IV-B): an ``m1^d`` grid on ``first_level_share epsilon``,
    each cell cut into ``m2^d`` by its noisy count on the rest, then constrained inference between
    the levels (§IV-C).  ``m2`` is rounded to a power of two so that one histogram of
    ``(m1 2^K)^d`` cells gives every count.
``"uniform"``
    EUGkM's noisy uniform grid (Su et al. 2016, §4.2, Eq. 4).

The released cells are a function of public inputs (bounds, epsilon, d, a public size) and
released noisy values only; the weights are made non-negative by Norm-Sub (a projection that keeps
the noisy total; :func:`~dpcore.algorithms._blocks.consistency.norm_sub`), level by level after the
adaptive grid's consistency step.
"""
from __future__ import annotations

import math
import threading
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..synopsis import PointSynopsis
from ..utils.fixedpoint import FixedPoint
from ..utils.validation import DELTA
from ._blocks.consistency import norm_sub, tree_norm_sub, two_level_consistency
from ._blocks.grid import eug_cells_per_dim, max_cells_per_dim
from .base import DPClusterer, fit_doc
from .parameters import SHARE

#: The methods :func:`sanitize` offers (``"auto"`` picks one of them from public inputs).
METHODS = ("privtree", "adaptive", "uniform")
#: Most cells of the one exact histogram a fit reads (8 bytes a cell): 2^21, i.e. 1024^2 or 128^3.
MAX_FINE_CELLS = 1 << 21
#: Largest dimension a point synopsis is offered for (maps first; the cells grow as 2^(J d)).
MAX_DIM = 3
#: Guards the one computation of :attr:`Sanitizer.cluster_centers_` (k-means on the synopsis) across threads.
_CENTERS_LOCK = threading.Lock()


def privtree_depth(d: int, max_cells: int = MAX_FINE_CELLS) -> int:
    """J, the deepest level of the PrivTree: ``2^J`` cells per dimension, ``2^(J d) <= max_cells``.

    A function of d only (public).
    """
    return max(1, int(math.floor(math.log2(max_cells) / d)))


def choose_method(d: int, epsilon: float, n_samples=None) -> str:
    """The method ``method="auto"`` takes, from public inputs only (never from the data).

    PrivTree in every case d <= 3: it needs no dataset size (no share of epsilon for one), its
    noise does not grow with the depth (Zhang et al. 2016, §3) and it adapts the cells to the
    density, where a uniform grid spends its noise on empty cells (``benchmarks/sanitize.py``: the
    smallest cost error at every epsilon and k on the taxi sample).  The arguments are kept so that
    a rule on public inputs can refine the choice without changing callers.
    """
    return "privtree"


def _exact_counts(counts, shape) -> tuple[np.ndarray, int]:
    """A source's exact histogram as (int64 numerators of ``shape``, bits): bits 0 for row counts, the
    weight bits for sums of contribution weights (a :class:`~dpcore.utils.fixedpoint.FixedPoint`)."""
    if isinstance(counts, FixedPoint):
        return np.asarray(counts.q, dtype=np.int64).reshape(shape), counts.bits
    return np.asarray(counts, dtype=np.int64).reshape(shape), 0


def _query(q: np.ndarray, bits: int):
    """Exact counts as the noised query: integers, or a FixedPoint of weighted counts (lattice noise)."""
    return FixedPoint(q, bits) if bits else q


def _pyramid(fine: np.ndarray) -> list[np.ndarray]:
    """Every level of the dyadic tree from the finest histogram, by 2^d-block sums: [root, ..., fine]."""
    d = fine.ndim
    levels = [np.asarray(fine, dtype=np.int64)]
    while levels[-1].shape[0] > 1:
        c = levels[-1]
        h = c.shape[0] // 2
        levels.append(c.reshape(sum(((h, 2) for _ in range(d)), ())).sum(axis=tuple(range(1, 2 * d, 2))))
    return levels[::-1]


def _boxes(dom, index: np.ndarray, per_dim) -> tuple[np.ndarray, np.ndarray]:
    """Cells of multi-index ``index`` (m, d) on a grid of ``per_dim`` (m,) or scalar cells a dimension."""
    per = np.asarray(per_dim, dtype=float).reshape(-1, 1) if np.ndim(per_dim) else float(per_dim)
    width = dom.width[None, :] / per
    lower = dom.lower[None, :] + index * width
    upper = np.minimum(lower + width, dom.upper[None, :])
    return lower, upper


def _adaptive_grid(n_est: float, eps: float, alpha: float, d: int) -> tuple[int, int]:
    """The adaptive grid's first level ``m1`` and its finest sub-grid ``f = 2^K`` cells a dimension (public inputs).

    Qardaji et al. §IV-B: ``m1 = max(10, m_UG / 4)`` in 2-d (``m_UG`` of Eq. 4's kind), ``10^(2/d)`` in d
    dims; sub-grids of ``2^j`` cells a dimension, ``j <= K``, so that one histogram of ``(m1 2^K)^d`` cells
    gives every count.
    """
    e2 = eps - alpha * eps
    m1 = max(int(math.ceil(10 ** (2 / d))), int(math.ceil(eug_cells_per_dim(n_est, eps, d) / 4)))
    m1 = min(m1, int(MAX_FINE_CELLS ** (1 / d)))
    K = max(0, min(int(math.ceil(math.log2(max(eug_cells_per_dim(n_est, e2, d, theta=5.0), 1)))),
                   int(math.floor(math.log2(MAX_FINE_CELLS ** (1 / d) / m1)))))
    return m1, 2 ** K


def _block_sum(arr: np.ndarray, f: int) -> np.ndarray:
    """Sum f-blocks along the last d axes of ``arr`` (c, s, ..., s): (c, s/f, ..., s/f)."""
    c, d = arr.shape[0], arr.ndim - 1
    s = arr.shape[1] // f
    shaped = arr.reshape((c,) + sum(((s, f) for _ in range(d)), ()))
    return shaped.sum(axis=tuple(range(2, 2 * d + 1, 2)))


class Sanitizer(DPClusterer):
    """A private point synopsis (sanitized database) of the rows, d <= 3; see :func:`dpcore.sanitize`.

    Parameters
    ----------
    n_clusters : int, default 8
        k of the centres ``cluster_centers_`` computed from the synopsis on demand (post-processing;
        the fit itself does not run k-means).
    epsilon : float, default 1.0
    bounds : (lower, upper), data units, public
    delta : float, default 0.0
        Accepted for a uniform signature; every method here is pure epsilon-DP (delta spent: 0).
    method : {"auto", "privtree", "adaptive", "uniform"}, default "auto"
    n_samples : float or None
        A public dataset size for the grid rules of "adaptive" and "uniform" (else ``n_share`` of
        epsilon buys a noisy one); PrivTree needs none.
    n_share : float, default 0.02
    theta : float, default 0
        PrivTree's split threshold.
    tree_share : float, default 0.5
        PrivTree: share of epsilon for the splits (the rest for the leaf counts).
    first_level_share : float, default 0.5
        Adaptive grid: share of epsilon for the first level (Qardaji et al.'s alpha = 0.5).
    depth : int or None
        PrivTree's deepest level J (``2^J`` cells per dimension); None: :func:`privtree_depth`.
    random_state : None, int or Generator
        None for a release; a seed makes a simulation (:class:`~dpcore.exceptions.SeededNoiseWarning`).
    max_contributions : int or None
        L, for a person-level release with ``fit(X, privacy_id=ids)``: every count's sensitivity is L.
    contribution_bounding : {"weight", "sample"}, default "weight"
        How a unit's rows are bounded to L: every row weighted ``min(1, L / m)`` (Amin et al. 2019), or a
        secret keyed sample of L rows; see Notes.  Weighting is the default: on Gowalla it gave the
        smaller cost error (``benchmarks/results/privacy_unit_gowalla.txt``).

    Attributes
    ----------
    synopsis_ : PointSynopsis
    cluster_centers_ : ndarray (n_clusters, d)
        k-means on the synopsis (computed when first read; post-processing).
    method_ : str
        The method used.
    budget_, privacy_unit_, bounds_, n_clipped_, n_dropped_, n_features_in_, simulation_
        As every :class:`~dpcore.algorithms.base.DPClusterer`.

    Notes
    -----
    **Privacy of a person-level synopsis.**  Neighbours differ by all the rows of one unit.  With
    sampling a unit keeps at most L rows, so it moves the histogram's counts by at most L in L1 and
    each count's noise is scaled by L (``NoiseSource.contribution_factor``).  With weighting each of
    a unit's m rows counts ``w = min(1, L / m)`` rounded *down* to a multiple of ``2^-12``
    (:func:`~dpcore.utils.contributions.contribution_weights`), so its weights sum to at most L
    exactly, and every count is an exact fixed-point sum of weights: by the triangle inequality the
    unit moves the histogram (every level of it) by at most ``sum w <= L`` in L1, the same
    sensitivity as L sampled rows (Amin, Dick, Kulesza, Munoz Medina & Vassilvitskii 2019, ICML,
    §3: weights summing to at most L bound the contribution as well as L rows).  The leaf and
    cell counts then get lattice noise calibrated to L (:meth:`NoiseSource.laplace` on a
    :class:`~dpcore.utils.fixedpoint.FixedPoint`), and PrivTree's split decisions hold for weighted
    counts by the argument in :mod:`dpcore.privacy.privtree` ("Weighted rows").  A weight depends on
    its own unit's row count only, so the weights of the other units are the same on both
    neighbours; the released cells, their number and the ledger depend on public inputs and
    released noisy values only, never on the rows per unit.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import Sanitizer
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
    >>> est = Sanitizer(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.method_, est.cluster_centers_.shape, est.budget_.total()
    ('privtree', (3, 2), (1.0, 0.0))
    """

    key = "sanitize"
    display_name = "Sanitized point synopsis"
    reference = ("Zhang, Xiao & Xie 2016 (PrivTree, Alg. 2); Qardaji, Yang & Li 2013 (AG, §IV); "
                 "Su et al. 2016, §4.2 (uniform grid)")
    summary = "Publishes a noisy spatial decomposition as weighted points, for any later analysis at no cost."
    accepts_source = True
    supports_weighting = True
    family = "synopsis"
    #: A release kind, not a clustering algorithm the pickers offer: its centres are post-processing.
    offered = False

    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "delta": [DELTA],
        "method": [StrOptions({"auto", *METHODS})],
        "theta": [Interval(Real, None, None, closed="neither")],   # finite; the paper uses 0
        "tree_share": [SHARE],
        "first_level_share": [SHARE],
        "depth": [Interval(Integral, 1, 24, closed="both"), None],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, delta=0.0, method="auto", n_samples=None,
                 n_share=0.02, theta=0.0, tree_share=0.5, first_level_share=0.5, depth=None, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.delta = delta
        self.method = method
        self.n_samples = n_samples
        self.n_share = n_share
        self.theta = theta
        self.tree_share = tree_share
        self.first_level_share = first_level_share
        self.depth = depth
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    @property
    def cluster_centers_(self) -> np.ndarray:
        """k-means on the released synopsis (post-processing), computed once when first read."""
        centers: np.ndarray | None = vars(self).get("_centers")
        if centers is None:
            self._check_fitted()
            # One k-means however many threads read it at once (the app's page and its preview-cache writer).
            with _CENTERS_LOCK:
                centers = vars(self).get("_centers")
                if centers is None:
                    synopsis = self.synopsis_
                    assert isinstance(synopsis, PointSynopsis)
                    centers = synopsis.kmeans(self.n_clusters, random_state=self._kmeans_seed)
                    self._centers = centers
        return centers

    @fit_doc("Release the point synopsis (``synopsis_``).")
    def fit(self, X, y=None, privacy_id=None):
        vars(self).pop("_centers", None)
        src, noise, n = self._begin_fit(X, privacy_id=privacy_id, histogram=self._first_histogram)
        method = str(self.method)
        d = src.n_features
        if d > MAX_DIM:   # the number of columns is the data's: not a parameter constraint
            raise ValueError(f"a point synopsis is offered for at most {MAX_DIM} columns (maps first), got {d}: "
                             "choose the columns to publish, or use a clustering algorithm for higher dimensions")
        eps = float(self.epsilon)
        if method == "auto":
            method = choose_method(d, eps, self.n_samples)
        dom = self.bounds_
        if method == "privtree":
            lower, upper, weights = self._privtree(src, noise, eps, d, dom)
        else:
            n_est, eps = self._public_or_noisy_size(n, noise, eps)
            if method == "uniform":
                lower, upper, weights = self._uniform(src, noise, eps, n_est, d, dom)
            else:
                lower, upper, weights = self._adaptive(src, noise, eps, n_est, d, dom)
        self.method_ = method
        self._kmeans_seed = int(noise.rng.integers(2 ** 31 - 1))   # data-independent: k-means' initialisation
        self.synopsis_ = PointSynopsis(points=(lower + upper) / 2, weights=np.asarray(weights, dtype=float),
                                       lower=lower, upper=upper, method=method,
                                       bounds=(dom.lower.copy(), dom.upper.copy()), budget_=self.budget_,
                                       privacy_unit_=getattr(self, "privacy_unit_", None))
        return self

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """PrivTree: ``tree_share`` of epsilon on the splits, the rest on the leaf counts.  The grids:
        the noisy size (``n_share``, none with a public ``n_samples``), then the cell counts (the
        adaptive grid: ``first_level_share`` of the rest on its first level).  ``method="auto"``
        chooses from public inputs (:func:`choose_method`).  See :meth:`DPClusterer.budget_plan`."""
        eps = float(self.epsilon)
        method = choose_method(n_features, eps, self.n_samples) if self.method == "auto" else str(self.method)
        if method == "privtree":
            tree = eps * float(self.tree_share)
            return {"PrivTree splits": (tree, 0.0), "leaf counts": (eps - tree, 0.0)}
        plan, left = self._size_step()
        if method == "uniform":
            return {**plan, "grid cell counts": (left, 0.0)}
        first = float(self.first_level_share) * left
        return {**plan, "first-level cell counts": (first, 0.0), "second-level cell counts": (left - first, 0.0)}

    def _first_histogram(self, d: int) -> tuple[int, ...] | None:
        """The histogram the fit reads, when public inputs fix it: counted with the rows in a source's one pass.

        PrivTree's finest level (d only); the grids' with a public ``n_samples``; the uniform grid's
        largest under a noisy size (the grid itself once the size reaches the cap).  None for the
        adaptive grid under a noisy size, whose histogram depends on it: then two passes.
        """
        if d > MAX_DIM:
            return None
        eps = float(self.epsilon)
        method = choose_method(d, eps, self.n_samples) if self.method == "auto" else str(self.method)
        if method == "privtree":
            return (2 ** self._depth(d),) * d
        if method == "uniform":
            if self.n_samples is None:
                return (max_cells_per_dim(d, MAX_FINE_CELLS),) * d
            return (eug_cells_per_dim(float(self.n_samples), eps, d, max_cells=MAX_FINE_CELLS),) * d
        if self.n_samples is None:
            return None
        m1, f = _adaptive_grid(float(self.n_samples), eps, float(self.first_level_share), d)
        return (m1 * f,) * d

    def _depth(self, d: int) -> int:
        return int(self.depth) if self.depth is not None else privtree_depth(d)

    def _privtree(self, src, noise, eps, d, dom):
        J = self._depth(d)
        side = 2 ** J
        fine, bits = _exact_counts(src.grid_counts(dom, (side,) * d), (side,) * d)    # the one pass
        pyramid = _pyramid(fine)
        eps_tree = eps * float(self.tree_share)
        flat = np.concatenate([c.reshape(-1) for c in pyramid])
        leaf = noise.privtree(_query(flat, bits), d=d, epsilon=eps_tree, theta=float(self.theta),
                              name="PrivTree splits")
        idx, lev = [], []
        start = 0
        for lv, c in enumerate(pyramid):
            nodes = np.nonzero(leaf[start:start + c.size])[0]
            start += c.size
            if nodes.size:
                idx.append(np.stack(np.unravel_index(nodes, (2 ** lv,) * d), axis=1))
                lev.append(np.full(nodes.size, lv))
        index, level = np.vstack(idx), np.concatenate(lev)
        exact = _query(flat[np.nonzero(leaf)[0]], bits)
        lower, upper = _boxes(dom, index, 2 ** level)
        # The leaves partition the box: one row (of weight at most 1) is in one leaf (sensitivity 1,
        # parallel composition).
        noisy = noise.laplace(exact, sensitivity=1.0, epsilon=eps - eps_tree, name="leaf counts", integer=True)
        return lower, upper, tree_norm_sub(level, index, noisy)

    def _uniform(self, src, noise, eps, n_est, d, dom):
        m = eug_cells_per_dim(n_est, eps, d, max_cells=MAX_FINE_CELLS)
        counts, bits = _exact_counts(src.grid_counts(dom, (m,) * d), (-1,))
        noisy = noise.laplace(_query(counts, bits), sensitivity=1.0, epsilon=eps, name="grid cell counts",
                              integer=True)
        index = np.stack(np.unravel_index(np.arange(m ** d), (m,) * d), axis=1)
        lower, upper = _boxes(dom, index, m)
        # Non-negative through a dyadic hierarchy over the grid (padded to 2^J cells a dimension; the
        # padding lies outside the box and is known empty, so it enters with count 0 and no noise).
        J = int(math.ceil(math.log2(m))) if m > 1 else 0
        pad = np.stack(np.unravel_index(np.arange((2 ** J) ** d), (2 ** J,) * d), axis=1)
        inside = (pad < m).all(axis=1)
        values = np.zeros(pad.shape[0])
        values[inside] = noisy          # C order of the m^d cells matches the inside cells' order
        weights = tree_norm_sub(np.full(pad.shape[0], J), pad, values, total=max(float(noisy.sum()), 0.0))
        return lower, upper, weights[inside]

    def _adaptive(self, src, noise, eps, n_est, d, dom):
        alpha = float(self.first_level_share)   # Qardaji et al.'s alpha
        e1, e2 = alpha * eps, eps - alpha * eps
        m1, f = _adaptive_grid(n_est, eps, alpha, d)
        K = f.bit_length() - 1
        fine, bits = _exact_counts(src.grid_counts(dom, (m1 * f,) * d), (m1 * f,) * d)   # one pass
        # (m1^d cells, f, ..., f): each first-level cell's sub-histogram.
        inter = fine.reshape(sum(((m1, f) for _ in range(d)), ()))
        cells = inter.transpose(tuple(range(0, 2 * d, 2)) + tuple(range(1, 2 * d, 2))).reshape((m1 ** d,) + (f,) * d)
        level1 = cells.reshape(m1 ** d, -1).sum(axis=1)
        v1 = noise.laplace(_query(level1, bits), sensitivity=1.0, epsilon=e1, name="first-level cell counts",
                           integer=True)
        # m2 from each cell's released count (Qardaji et al.: sqrt(N' (1 - alpha) eps / c2), c2 = 5), a power of 2.
        j = np.array([min(K, max(0, int(round(math.log2(max(eug_cells_per_dim(max(float(v), 1.0), e2, d, theta=5.0),
                                                                1)))))) for v in v1])
        parts, idx, per, owner = [], [], [], []
        cell_index = np.stack(np.unravel_index(np.arange(m1 ** d), (m1,) * d), axis=1)
        for jj in np.unique(j):
            sel = np.nonzero(j == jj)[0]
            sub = _block_sum(cells[sel], f // 2 ** jj).reshape(sel.size, -1)      # (cells, 2^(jj d))
            kids = np.stack(np.unravel_index(np.arange(2 ** (jj * d)), (2 ** jj,) * d), axis=1)
            for c, s in zip(sel, sub):
                parts.append(s)
                idx.append(cell_index[c][None, :] * 2 ** jj + kids)
                per.append(np.full(kids.shape[0], m1 * 2 ** jj))
                owner.append(c)
        order = np.argsort(owner, kind="stable")
        parts = [parts[i] for i in order]
        idx = [idx[i] for i in order]
        per = [per[i] for i in order]
        sizes = np.array([p.size for p in parts])
        # Sub-cells of all first-level cells are disjoint: one row in one sub-cell (sensitivity 1).
        v2 = noise.laplace(_query(np.concatenate(parts), bits), sensitivity=1.0, epsilon=e2,
                           name="second-level cell counts", integer=True)
        children = np.split(v2.astype(float), np.cumsum(sizes)[:-1])
        parent, children = two_level_consistency(v1.astype(float), 2.0 / e1 ** 2, children, 2.0 / e2 ** 2)
        totals = norm_sub(parent)
        # Within each first-level cell its 2^j sub-grid is a dyadic tree: non-negative top down onto the cell's total.
        weights = np.concatenate([tree_norm_sub(np.full(c.size, int(round(math.log2(p[0] // m1)))), i % (p[0] // m1),
                                                c, total=t)
                                  for c, t, i, p in zip(children, totals, idx, per)])
        lower, upper = _boxes(dom, np.vstack(idx), np.concatenate(per))
        return lower, upper, weights


def sanitize(X, *, epsilon, bounds, delta=0.0, privacy_id=None, max_contributions=None, method="auto",
             random_state=None, n_samples=None, contribution_bounding="weight"):
    """Publish the data once as a private point synopsis (a sanitized database), d <= 3.

    Parameters
    ----------
    X : array-like (n, d) or DataSource
        The rows, d <= 3; a :class:`~dpcore.sources.DataSource` is read where the data live (one
        histogram pass in the engine).
    epsilon : float > 0
        The whole budget (pure epsilon-DP).
    bounds : (lower, upper), data units
        The public box; rows outside it are clipped onto it (``n_clipped_`` of the estimator, a raw
        fact).
    delta : float, default 0
        Accepted for symmetry with the estimators; nothing is spent from it.
    privacy_id : array-like (n,) or str, optional
        The privacy unit of every row (a column name on a source); needs ``max_contributions``.
    max_contributions : int, optional
        L: each unit counts as at most L rows (``contribution_bounding``); every count's sensitivity is L.
    contribution_bounding : {"weight", "sample"}, default "weight"
        ``"weight"``: every row of a unit with m rows counts ``min(1, L / m)`` (Amin et al. 2019;
        :class:`Sanitizer`, Notes); ``"sample"``: at most L rows per unit are kept (a secret keyed sample).
    method : {"auto", "privtree", "adaptive", "uniform"}, default "auto"
        "auto" chooses from public inputs only (:func:`choose_method`).
    random_state : None, int or Generator
        None (the default) for a release; a seed makes a simulation and warns.
    n_samples : float, optional
        A public dataset size for the grid rules of "adaptive" and "uniform".

    Returns
    -------
    PointSynopsis
        ``points`` (m, d), ``weights`` (m,) >= 0, ``budget_``, ``privacy_unit_``; m and the cells are
        a function of public inputs and released noisy values only.

    Raises
    ------
    ValueError
        epsilon <= 0 or not finite, NaN or infinite values, d > 3, missing or bad bounds, a bad method.
    TypeError
        Non-numeric data.

    Notes
    -----
    **Privacy.** epsilon-DP for add/remove-one-row neighbours (one-unit neighbours with
    ``privacy_id``): the ledger in ``budget_`` lists each step and sums to epsilon.  PrivTree:
    the splits (``tree_share`` of epsilon, Zhang et al. 2016, Thm. 3.1) and the leaf counts
    (discrete Laplace, parallel over the disjoint leaves).  Adaptive grid: the two levels'
    counts (Qardaji et al. 2013, §IV-B), after a noisy size when no public one is given.  Uniform:
    the noisy size and the grid (Su et al. 2016, Eq. 4).  Counts are exact integers and the noise is
    integer; the consistency steps (constrained inference, Norm-Sub) are post-processing.

    Examples
    --------
    >>> import numpy as np
    >>> import dpcore
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
    >>> syn = dpcore.sanitize(X, epsilon=1.0, bounds=(0, 1))
    >>> syn.points.shape[1], bool((syn.weights >= 0).all()), syn.budget_.total()[0]
    (2, True, 1.0)
    """
    est = Sanitizer(epsilon=epsilon, bounds=bounds, delta=delta, method=method, n_samples=n_samples,
                    random_state=random_state, max_contributions=max_contributions,
                    contribution_bounding=contribution_bounding)
    if bounds is None:
        raise ValueError("sanitize needs public bounds (lower, upper) chosen without looking at the data")
    return est.fit(X, privacy_id=privacy_id).synopsis_
