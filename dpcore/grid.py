"""EUGkM: k-means on a differentially private uniform-grid synopsis (Su et al. 2016, §4.2).

The normalised domain ``[-1, 1]^d`` is cut into ``M`` equal cells with
``M = (N epsilon / theta)^(2d / (2 + d))`` (Eq. 4, theta = 10); every cell's
count gets ``Lap(1/epsilon)`` and stays signed and unrounded.  Lloyd's
algorithm then runs over the cell centres, each cell weighted by its noisy
count and assigned as a whole, from 30 data-independent initialisations; the
run with the lowest NICV *on the synopsis* is kept (choosing on the synopsis
is post-processing, so it costs nothing).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .base import DPClusterer
from .dplloyd import public_or_noisy_size, sphere_packing_centers
from .metrics import assign, cluster_sums
from .privacy.mechanisms import NoiseSource
from .regime import check_fit
from .sources import DataSource
from .synopsis import GridSynopsis, grid_points

#: Rows per chunk when counting points into cells.
_GRID_CHUNK = 1 << 18
#: Cap on the number of grid cells, so memory stays bounded in high dimension (8 bytes a cell).
MAX_CELLS = 1 << 22


def eug_cells_per_dim(n: float, epsilon: float, d: int, *, theta: float = 10.0,
                      max_cells: int = MAX_CELLS) -> int:
    """Cells per dimension of the EUG grid: ``round(M^(1/d))`` with M from Eq. 4.

    Parameters
    ----------
    n : float
        Dataset size (public or noisy).
    epsilon : float
        Budget of the cell counts.
    d : int
    theta : float, default 10

    Returns
    -------
    int >= 1, reduced if needed so that the grid has at most ``max_cells`` cells.
    """
    log_m_total = (2 * d / (2 + d)) * math.log(max(n * epsilon / theta, 1.0))
    m = max(1, int(round(math.exp(log_m_total / d))))
    while m > 1 and d * math.log(m) > math.log(max_cells):
        m -= 1
    return m


def noisy_grid(Z: np.ndarray, m: int, noise: NoiseSource, epsilon: float, *, r: float = 1.0,
               name: str = "grid cell counts", domain=None) -> tuple[np.ndarray, np.ndarray]:
    """Count points in an ``m^d`` uniform grid over ``[-r, r]^d`` and add ``Lap(1/epsilon)``.

    Parameters
    ----------
    Z : ndarray (n, d) in ``[-r, r]^d``, or in data units when ``domain`` is given (normalised
        chunk by chunk, r = 1)
    m : int, cells per dimension
    noise : NoiseSource
    epsilon : float

    Returns
    -------
    counts : ndarray, shape (m,)*d (flat when d > 32), signed noisy counts
    edges : ndarray (m + 1,), the normalised cell edges (same in every dimension)

    Notes
    -----
    **Privacy.** epsilon-DP: each point is in exactly one cell (sensitivity 1, parallel composition).
    """
    if isinstance(Z, DataSource):   # exact grid_counts where the data live (domain required, r = 1)
        d = Z.n_features
        counts = Z.grid_counts(domain, (m,) * d).ravel().astype(float)
        noisy = noise.laplace(counts, sensitivity=1.0, epsilon=epsilon, name=name, integer=True)
        return (noisy.reshape((m,) * d) if d <= 32 else noisy), np.linspace(-r, r, m + 1)
    n, d = Z.shape
    counts = np.zeros(m ** d)
    strides = (m ** np.arange(d - 1, -1, -1, dtype=np.int64)).astype(float)
    # Chunks keep the temporaries in cache; cell numbers are exact in float64 (M <= 2^22).
    for s in range(0, n, _GRID_CHUNK):
        z = Z[s:s + _GRID_CHUNK] if domain is None else domain.normalize(Z[s:s + _GRID_CHUNK])
        cell = (z + r) * (m / (2 * r))
        np.floor(cell, out=cell)
        np.clip(cell, 0, m - 1, out=cell)
        flat = (cell @ strides).astype(np.intp)  # C-order cell number
        counts += np.bincount(flat, minlength=m ** d)
    noisy = noise.laplace(counts, sensitivity=1.0, epsilon=epsilon, name=name, integer=True)
    return (noisy.reshape((m,) * d) if d <= 32 else noisy), np.linspace(-r, r, m + 1)


def weighted_lloyd(points: np.ndarray, weights: np.ndarray, init: np.ndarray, *, max_iter: int = 100,
                   tol: float = 1e-7, r: float = 1.0) -> np.ndarray:
    """Lloyd's algorithm on weighted points whose weights may be negative (Su et al. §4.2).

    A point with centre ``c`` and weight ``w`` contributes ``c * w`` to its
    cluster's sum and ``w`` to its mass; a cluster whose mass is not positive
    keeps its previous centre.  Centres are clipped to ``[-r, r]^d``.

    Returns
    -------
    ndarray (k, d)
    """
    return _lloyd(lambda c: cluster_sums(points, c, weights), init, max_iter=max_iter, tol=tol, r=r)


def _lloyd(sums, init: np.ndarray, *, max_iter: int, tol: float, r: float) -> np.ndarray:
    """The Lloyd loop of :func:`weighted_lloyd`; ``sums(centres)`` gives (mass (k,), sums (k, d))."""
    centers = np.array(init, dtype=float)
    for _ in range(max_iter):
        mass, total = sums(centers)[:2]
        new = centers.copy()
        ok = mass > 0
        new[ok] = total[ok] / mass[ok, None]
        np.clip(new, -r, r, out=new)
        shift = np.max(np.abs(new - centers))
        centers = new
        if shift <= tol:
            break
    return centers


def weighted_kmeanspp(points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007) on weighted points.

    Only positive weights count as mass when sampling; used on a released
    synopsis, so it is post-processing and costs no budget.

    Returns
    -------
    ndarray (k, d)
    """
    mass = np.clip(weights, 0.0, None)
    if mass.sum() <= 0:
        return points[rng.choice(points.shape[0], size=k, replace=points.shape[0] < k)]
    centers = [points[rng.choice(points.shape[0], p=mass / mass.sum())]]
    d2 = ((points - centers[0]) ** 2).sum(1)
    for _ in range(1, k):
        p = mass * d2
        tot = p.sum()
        idx = rng.choice(points.shape[0], p=p / tot) if tot > 0 else rng.integers(points.shape[0])
        centers.append(points[idx])
        d2 = np.minimum(d2, ((points - points[idx]) ** 2).sum(1))
    return np.array(centers)


def synopsis_nicv(points: np.ndarray, weights: np.ndarray, centers: np.ndarray) -> float:
    """NICV of ``centers`` measured on a weighted synopsis: sum w * d^2 / sum w."""
    _, d2 = assign(points, centers, return_distances=True)
    total_w = weights.sum()
    return float(np.dot(weights, d2) / total_w) if total_w > 0 else float("inf")


def _block_grid(counts: np.ndarray, f: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum f^d blocks of a d-dimensional grid over [-r, r]^d; return (block centres per axis, block weights).

    The coarse centre of a block is the mean of its fine cell centres, so
    blocks cut by the grid's upper edge are centred on what they cover.
    """
    d, m = counts.ndim, counts.shape[0]
    mc = -(-m // f)
    pad = mc * f - m
    padded = np.pad(counts, [(0, pad)] * d)
    shape = []
    for _ in range(d):
        shape += [mc, f]
    w = padded.reshape(shape).sum(axis=tuple(range(1, 2 * d, 2)))
    fine_mids = (np.arange(m) + 0.5) / m * 2 - 1
    block_mid = np.array([fine_mids[i * f:(i + 1) * f].mean() for i in range(mc)])
    return block_mid, w


def _block_sum(counts: np.ndarray, f: int) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`_block_grid`, as points: (coarse cell centres (M, d), coarse weights (M,))."""
    block_mid, w = _block_grid(counts, f)
    return grid_points([block_mid] * counts.ndim), w.ravel()


@numba.njit(cache=True, nogil=True)
def _row_interval_sums(P, PX, PXX, rows, xs, C):  # pragma: no cover - compiled
    """Weighted mass, sums and squared distances of the nearest-centre partition of a separable grid.

    The grid's points are ``rows[r] x xs[i]`` (the last axis is ``xs``).  Along one row, centre c
    is nearest on an interval of x (a Voronoi cell is convex), found from the k - 1 linear
    inequalities ``(x - c_x)^2 + a_c < (x - c'_x)^2 + a_c'`` (``<=`` against a later centre:
    ties go to the lowest index); its weight sums are differences of the row's prefix sums
    ``P`` (w), ``PX`` (w x) and ``PXX`` (w x^2).  O(rows k^2) instead of O(cells k).
    """
    R, d1 = rows.shape
    k, d = C.shape
    m = xs.shape[0]
    mass = np.zeros(k)
    sums = np.zeros((k, d))
    sq = np.zeros(k)
    a = np.empty(k)
    for r in range(R):
        for c in range(k):
            t = 0.0
            for j in range(d1):
                u = rows[r, j] - C[c, j]
                t += u * u
            a[c] = t
        for c in range(k):
            lo, lo_in, hi, hi_in, empty = -np.inf, False, np.inf, False, False
            cx = C[c, d - 1]
            for c2 in range(k):
                if c2 == c:
                    continue
                c2x = C[c2, d - 1]
                s = 2.0 * (c2x - cx)
                t = (c2x * c2x - cx * cx) + (a[c2] - a[c])
                incl = c < c2                        # c wins ties against later centres
                if s > 0.0:                          # x < t / s  (or <=)
                    q = t / s
                    if q < hi or (q == hi and not incl):
                        hi, hi_in = q, incl
                elif s < 0.0:                        # x > t / s  (or >=)
                    q = t / s
                    if q > lo or (q == lo and not incl):
                        lo, lo_in = q, incl
                elif not (0.0 < t or (t == 0.0 and incl)):
                    empty = True
            if empty:
                continue
            i0 = np.searchsorted(xs, lo, side="left") if lo_in else np.searchsorted(xs, lo, side="right")
            i1 = np.searchsorted(xs, hi, side="right") if hi_in else np.searchsorted(xs, hi, side="left")
            i1 = min(i1, m)
            if i1 <= i0:
                continue
            wsum = P[r, i1] - P[r, i0]
            wx = PX[r, i1] - PX[r, i0]
            wxx = PXX[r, i1] - PXX[r, i0]
            mass[c] += wsum
            for j in range(d1):
                sums[c, j] += wsum * rows[r, j]
            sums[c, d - 1] += wx
            sq[c] += a[c] * wsum + wxx - 2.0 * cx * wx + cx * cx * wsum
    return mass, sums, sq


class _GridSynopsisPoints:
    """A weighted product grid ``axes[0] x ... x axes[-1]`` with row prefix sums, for fast Lloyd passes."""

    def __init__(self, axes, weights: np.ndarray):
        self.d = len(axes)
        xs = np.ascontiguousarray(axes[-1], dtype=float)
        w = np.asarray(weights, dtype=float).reshape(-1, xs.size)
        zero = np.zeros((w.shape[0], 1))
        self.P = np.hstack([zero, np.cumsum(w, axis=1)])
        self.PX = np.hstack([zero, np.cumsum(w * xs, axis=1)])
        self.PXX = np.hstack([zero, np.cumsum(w * xs * xs, axis=1)])
        self.rows = (grid_points(list(axes[:-1])) if self.d > 1 else np.zeros((1, 0)))
        self.xs = xs
        self.total = float(w.sum())

    def sums(self, centers: np.ndarray):
        return _row_interval_sums(self.P, self.PX, self.PXX, self.rows, self.xs,
                                  np.ascontiguousarray(centers, dtype=float))

    def nicv(self, centers: np.ndarray) -> float:
        """As :func:`synopsis_nicv` (up to rounding): sum w d^2 / sum w."""
        _, _, sq = self.sums(centers)
        return float(sq.sum() / self.total) if self.total > 0 else float("inf")

    def lloyd(self, init: np.ndarray, *, max_iter: int = 100, tol: float = 1e-7, r: float = 1.0) -> np.ndarray:
        """:func:`weighted_lloyd` on the grid, each pass in O(rows k^2)."""
        return _lloyd(self.sums, init, max_iter=max_iter, tol=tol, r=r)


#: Above this many cells, initialisations are screened on a coarsened synopsis first.
COARSE_CELLS = 8_000
#: How many of the best screened initialisations are refined on the full synopsis.
N_REFINE = 3


def eugkm_fit(Z: np.ndarray, k: int, epsilon: float, n_est: float, noise: NoiseSource, *,
              theta: float = 10.0, n_init: int = 30, init: str = "k-means++", max_cells: int = MAX_CELLS,
              r: float = 1.0, domain=None, grid_name: str = "grid cell counts"):
    """The EUGkM core on normalised data; shared by :class:`EUGkM` and the Hybrid.

    Everything after :func:`noisy_grid` is post-processing of the released
    synopsis.  On large grids (more than ``COARSE_CELLS`` cells) the
    ``n_init`` runs are first made on the synopsis with blocks of cells
    summed, and the ``N_REFINE`` best are continued level by level on blocks
    half as wide each time, down to the full synopsis, with Lloyd passes that
    use the grid's product structure (per row of cells, each centre is
    nearest on one interval, summed from prefix sums); the final choice is
    always by NICV on the full synopsis (§5.1).  This keeps EUGkM fast up to the largest
    grid (``MAX_CELLS``, reached at about 10^8 points) without changing what
    is released.

    Returns
    -------
    centers : ndarray (k, d), normalised
    counts : ndarray (m,)*d, the noisy synopsis
    edges : ndarray (m + 1,), normalised edges
    """
    d = Z.n_features if isinstance(Z, DataSource) else Z.shape[1]
    m = eug_cells_per_dim(n_est, epsilon, d, theta=theta, max_cells=max_cells)
    counts, edges = noisy_grid(Z, m, noise, epsilon, r=r, domain=domain, name=grid_name)
    f = math.ceil((counts.size / COARSE_CELLS) ** (1 / d)) if counts.size > COARSE_CELLS else 1
    # The full grid as points only when it is small: larger ones are screened on blocks, then refined
    # on the grid's product structure (no (cells, d) array of a 4-million-cell synopsis).
    screen_cells, screen_w = (_block_sum(counts, f) if f > 1
                              else (grid_points([(edges[:-1] + edges[1:]) / 2] * d), counts.ravel()))

    def start():
        if init == "sphere_packing":
            return sphere_packing_centers(k, d, noise.rng, r=r)
        return weighted_kmeanspp(screen_cells, screen_w, k, noise.rng)

    # Moves under 2 % of a cell are below the synopsis' resolution (its points are cell centres).
    tol = 0.02 * 2 * r / m
    runs = []
    for _ in range(int(n_init)):
        c = weighted_lloyd(screen_cells, screen_w, start(), r=r, tol=tol * f)
        runs.append((synopsis_nicv(screen_cells, screen_w, c), c))
    if f > 1:
        runs.sort(key=lambda sc: sc[0])
        # Coarse to fine: blocks of f/2, f/4, ... cells, then the synopsis itself, each level started from
        # the previous one's centres.  Lloyd passes on a product grid cost O(rows k^2), not O(cells k).
        levels: list[int] = []
        while not levels or levels[-1] > 1:
            levels.append(max(1, (levels[-1] if levels else f) // 2))
        def level(lv):
            axis, w = ((edges[:-1] + edges[1:]) / 2, counts) if lv == 1 else _block_grid(counts, lv)
            return _GridSynopsisPoints([axis] * d, w)

        grids = {lv: level(lv) for lv in levels}
        refined = []
        for _, c in runs[:N_REFINE]:
            for lv in levels:
                c = grids[lv].lloyd(c, r=r, tol=tol * lv)
            refined.append(c)
        runs = [(grids[1].nicv(c), c) for c in refined]
    best = min(runs, key=lambda sc: sc[0])[1]
    return best, counts, edges


class EUGkM(DPClusterer):
    """k-means on an extended-uniform-grid synopsis, EUGkM (Su et al. 2016, §4.2.1).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total budget (epsilon-DP).
    bounds : (lower, upper), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    theta : float, default 10
        The constant of Eq. 4; 10 "works well in most cases" (§5.1).
    n_init : int, default 30
        Sphere-packing initialisations run on the synopsis (§5.1).
    n_samples : float or None
        A public dataset size for Eq. 4.  ``None`` spends ``n_share`` of
        epsilon on ``N + Lap(.)`` first (ledger entry "dataset size"), because
        N is private under add/remove neighbours.
    n_share : float, default 0.02
    max_cells : int, default 2**22
        Memory cap; ``round(M^(1/d))`` per dimension is lowered to respect it.
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    synopsis_ : GridSynopsis
        Data-unit cell edges and the signed noisy counts (publishable).
    cells_per_dim_ : int
    budget_ : BudgetLedger
    regime_ : dpcore.regime.Regime
        Whether Su et al.'s regime held for the public inputs (:func:`dpcore.regime.assess`).

    Raises
    ------
    OutOfRegimeError
        Before the grid is spent, when the grid for the public (or noisy) size, d, k and epsilon
        would be mostly noise or too large to finish in seconds (:mod:`dpcore.regime`); the
        message names a better-suited algorithm.  A :class:`~dpcore.regime.RegimeWarning` when
        the inputs are marginal.
    ValueError, TypeError
        Bad data or parameters.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.grid import EUGkM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "EUGkM"
    _regime_key = "eugkm"
    reference = "Su et al. 2016, §4.2.1 (Eq. 4)"
    summary = "Publishes a noisy uniform-grid synopsis, then runs k-means on the cells (non-interactive)."

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, theta=10.0, n_init=30, n_samples=None,
                 n_share=0.02, max_cells=MAX_CELLS, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.theta = theta
        self.n_init = n_init
        self.n_samples = n_samples
        self.n_share = n_share
        self.max_cells = max_cells
        self.random_state = random_state

    def _expected_failed_checks(self) -> dict[str, str]:
        reason = ("scikit-learn's check fits 10 columns of about 120 rows; there the noisy grid is mostly noise "
                  "(Su et al. 2016 §6), so the regime check refuses up front with OutOfRegimeError naming a "
                  "better-suited algorithm")
        return {**super()._expected_failed_checks(), "check_dtype_object": reason}

    def fit(self, X, y=None):
        """Release the grid synopsis and k centres computed from it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or :class:`~dpcore.sources.DataSource`
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``. A source (file, DuckDB, Spark, PostgreSQL) is not
            loaded: each aggregate runs where the data live.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : EUGkM
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.grid import EUGkM
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise, n_est, eps_left = self._start_fit(X)
        self.cluster_centers_ = self.bounds_.denormalize(self._fit_grid(X, noise, eps_left, n_est))
        return self

    # Shared with the Hybrid, which runs this on part of its budget.
    def _start_fit(self, X):
        """Validate, then the dataset size: returns (X, noise, n_est, epsilon left)."""
        X, noise, n = self._begin_source_fit(X)
        _check_grid_params(self.theta, self.n_init)
        n_est, eps_left = public_or_noisy_size(n, self.n_samples, self.n_share, float(self.epsilon), noise)
        # Su et al. §6.2's regime, on the public/noisy size only, before the grid is spent (dpcore.regime).
        check_fit(self, self._regime_key, n=n_est, d=X.n_features, epsilon=eps_left, theta=float(self.theta),
                  max_cells=int(self.max_cells), rho=float(getattr(self, "rho", 0.225)))
        return X, noise, n_est, eps_left

    def _fit_grid(self, X, noise, epsilon, n_est):
        """EUGkM on ``epsilon``: sets ``synopsis_`` and ``cells_per_dim_``, returns normalised centres."""
        centers, counts, edges = eugkm_fit(X, int(self.n_clusters), epsilon, n_est, noise, theta=float(self.theta),
                                           n_init=int(self.n_init), max_cells=int(self.max_cells),
                                           domain=self.bounds_)
        self.synopsis_ = _grid_synopsis(counts, edges, self.bounds_)
        self.cells_per_dim_ = counts.shape[0]
        return centers


def _check_grid_params(theta, n_init):
    if not (isinstance(theta, (int, float)) and theta > 0 and math.isfinite(theta)):
        raise ValueError(f"theta must be a positive number (the paper uses 10), got {theta!r}")
    if not (isinstance(n_init, (int, np.integer)) and n_init >= 1):
        raise ValueError(f"n_init must be a positive whole number, got {n_init!r}")


def _grid_synopsis(counts, edges, dom) -> GridSynopsis:
    d = dom.d
    data_edges = [edges * (dom.width[i] / 2) + dom.center[i] for i in range(d)]
    return GridSynopsis(edges=data_edges, counts=counts)
