"""Shared block: k-means on a released grid synopsis (the EUGkM core, Su et al. 2016, §4.2).

Everything here is post-processing of the noisy grid of :mod:`._blocks.grid`: weighted k-means++
and Lloyd over the cell centres, coarse to fine on large grids.  :func:`eugkm_fit` is called by
EUGkM, the Hybrid and DPLloyd's grid start.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numba
import numpy as np

from ...privacy.mechanisms import NoiseSource
from ...sources import DataSource
from ...synopsis import GridSynopsis, grid_points
from ...utils.nearest import assign
from ...utils.threads import available_cores
from ..regime import GRID_ROW_PASS_CELLS
from .grid import MAX_CELLS, eug_cells_per_dim, noisy_grid
from .sphere_packing import sphere_packing_centers


def weighted_lloyd(points: np.ndarray, weights: np.ndarray, init: np.ndarray, *, max_iter: int = 100,
                   tol: float = 1e-7, r: float = 1.0, cost_rtol: float | None = None) -> np.ndarray:
    """Lloyd's algorithm on weighted points whose weights may be negative (Su et al. §4.2).

    A point with centre ``c`` and weight ``w`` contributes ``c * w`` to its
    cluster's sum and ``w`` to its mass; a cluster whose mass is not positive
    keeps its previous centre.  Centres are clipped to ``[-r, r]^d``.  Stops
    when no centre moves more than ``tol``, or when a pass lowered the weighted
    cost by less than ``cost_rtol`` of it (default :data:`COST_RTOL`, the rule of
    the grid passes, :func:`_lloyd`; ``-inf`` runs until the centres settle).
    Post-processing of a released synopsis: no budget.

    Parameters
    ----------
    points : ndarray (M, d), the synopsis' points (cell centres)
    weights : ndarray (M,), their noisy counts
    init : ndarray (k, d), the starting centres

    Returns
    -------
    ndarray (k, d)
    """
    P = np.ascontiguousarray(points, dtype=np.float64)
    W = np.ascontiguousarray(weights, dtype=np.float64)
    # One compiled call for the whole loop: the synopses are small (at most COARSE_CELLS points when
    # screening), so per-iteration Python and numpy set-up cost more than the arithmetic.  EUGkM runs
    # 30 initialisations per fit and the privacy-utility curve hundreds of fits (issue 31).
    return _weighted_lloyd_kernel(P, W, np.array(init, dtype=np.float64), int(max_iter), float(tol), float(r),
                                  COST_RTOL if cost_rtol is None else float(cost_rtol))


@numba.njit(cache=True, nogil=True)
def _weighted_lloyd_kernel(P, W, C, max_iter, tol, r, cost_rtol):  # pragma: no cover - compiled
    """The loop of :func:`_lloyd` on points, with :func:`dpcore.utils.nearest.cluster_sums` fused: ties go to the
    lowest centre index, a cluster of non-positive mass keeps its centre, centres are clipped, and the loop ends
    on a move under ``tol`` or a cost change under ``cost_rtol`` of the cost."""
    M, d = P.shape
    k = C.shape[0]
    C = C.copy()
    mass = np.empty(k)
    tot = np.empty((k, d))
    previous = np.inf
    for _ in range(max_iter):
        mass[:] = 0.0
        tot[:] = 0.0
        cost = 0.0
        for i in range(M):
            best = np.inf
            lab = 0
            for j in range(k):
                s = 0.0
                for a in range(d):
                    t = P[i, a] - C[j, a]
                    s += t * t
                if s < best:
                    best = s
                    lab = j
            w = W[i]
            cost += w * best
            mass[lab] += w
            for a in range(d):
                tot[lab, a] += w * P[i, a]
        # The cost of the centres before this pass's move: as _lloyd, stop once a pass no longer lowers it.
        if previous < np.inf and previous - cost <= cost_rtol * abs(previous):
            break
        previous = cost
        shift = 0.0
        for j in range(k):
            for a in range(d):
                v = tot[j, a] / mass[j] if mass[j] > 0 else C[j, a]
                v = min(max(v, -r), r)
                shift = max(shift, abs(v - C[j, a]))
                C[j, a] = v
        if shift <= tol:
            break
    return C


#: A Lloyd pass on a synopsis grid that lowers its weighted cost by less than this share ends the loop.
COST_RTOL = 1e-4


def _lloyd(sums, init: np.ndarray, *, max_iter: int, tol: float, r: float) -> np.ndarray:
    """The Lloyd loop of :func:`weighted_lloyd`; ``sums(centres)`` gives (mass (k,), sums (k, d), cost (k,)).

    Stops when no centre moves more than ``tol``, or when a pass lowered the synopsis' cost by less
    than :data:`COST_RTOL` of it: on a noisy synopsis the centres can keep drifting by more than
    ``tol`` without the cost changing (in 5-d with 30 centres, 100 passes of 0.2 s each changed it
    by under 1 %), and each pass costs O(rows k^2).  Post-processing of the released synopsis.
    """
    centers = np.array(init, dtype=float)
    previous = math.inf
    for _ in range(max_iter):
        mass, total, sq = sums(centers)
        cost = float(sq.sum())
        if math.isfinite(previous) and previous - cost <= COST_RTOL * abs(previous):
            break
        previous = cost
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
    synopsis, so it is post-processing and costs no budget.  Each centre takes
    one uniform of ``rng``, drawn as ``rng.choice(M, p=...)`` draws it (the
    cumulative masses searched on the right), so a seeded generator gives
    the centres one call of ``rng.choice`` per centre gave.

    Parameters
    ----------
    points : ndarray (M, d); weights : ndarray (M,); k : int >= 1

    Returns
    -------
    ndarray (k, d)
    """
    mass = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
    if mass.sum() <= 0:
        return points[rng.choice(points.shape[0], size=k, replace=points.shape[0] < k)]
    # One compiled call per start (EUGkM draws 30 a fit; the expected-error line simulates 50 fits).
    return _kmeanspp_kernel(np.ascontiguousarray(points, dtype=np.float64), mass, rng.random(int(k)))


@numba.njit(inline="always", cache=True)
def _pick(p, u):  # pragma: no cover - compiled
    """The index ``rng.choice(p.size, p=p / p.sum())`` returns for the uniform ``u``; a uniform index if p sums to 0."""
    n = p.shape[0]
    tot = 0.0
    for i in range(n):
        tot += p[i]
    if not tot > 0.0:
        return min(int(u * n), n - 1)
    run = 0.0
    for i in range(n):
        run += p[i] / tot
        p[i] = run                     # the cumulative share, as rng.choice's cdf, normalised by its last value
    last = p[n - 1]
    for i in range(n):
        if p[i] / last > u:
            return i
    return n - 1


@numba.njit(cache=True, nogil=True)
def _kmeanspp_kernel(P, mass, u):  # pragma: no cover - compiled
    """k-means++ on the weighted points ``P`` (M, d), one uniform of ``u`` (k,) a centre (:func:`weighted_kmeanspp`)."""
    M, d = P.shape
    k = u.shape[0]
    out = np.empty((k, d))
    d2 = np.empty(M)
    p = mass.copy()
    idx = _pick(p, u[0])
    for a in range(d):
        out[0, a] = P[idx, a]
    for i in range(M):
        s = 0.0
        for a in range(d):
            t = P[i, a] - out[0, a]
            s += t * t
        d2[i] = s
    for j in range(1, k):
        for i in range(M):
            p[i] = mass[i] * d2[i]
        idx = _pick(p, u[j])
        for a in range(d):
            out[j, a] = P[idx, a]
        for i in range(M):
            s = 0.0
            for a in range(d):
                t = P[i, a] - out[j, a]
                s += t * t
            if s < d2[i]:
                d2[i] = s
    return out


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


@numba.njit(cache=True, nogil=True)
def _row_prefix_sums(w, xs):  # pragma: no cover - compiled
    """Per row of ``w`` (rows, m), the prefix sums (rows, m + 1) of ``w``, ``w x`` and ``w x x`` (x = ``xs``).

    One pass, no temporaries; the same additions in the same order as ``np.cumsum`` along a row
    (the first prefix is the first value itself), so the same doubles.
    """
    R, m = w.shape
    P, PX, PXX = np.zeros((R, m + 1)), np.zeros((R, m + 1)), np.zeros((R, m + 1))
    for r in range(R):
        if m == 0:
            continue
        a = w[r, 0]
        b = a * xs[0]
        c = b * xs[0]
        P[r, 1], PX[r, 1], PXX[r, 1] = a, b, c
        for i in range(1, m):
            v = w[r, i] * xs[i]
            a += w[r, i]
            b += v
            c += v * xs[i]
            P[r, i + 1], PX[r, i + 1], PXX[r, i + 1] = a, b, c
    return P, PX, PXX


class _GridSynopsisPoints:
    """A weighted product grid ``axes[0] x ... x axes[-1]`` with row prefix sums, for fast Lloyd passes."""

    def __init__(self, axes, weights: np.ndarray):
        self.d = len(axes)
        xs = np.ascontiguousarray(axes[-1], dtype=float)
        w = np.ascontiguousarray(np.asarray(weights, dtype=float).reshape(-1, xs.size))
        self.P, self.PX, self.PXX = _row_prefix_sums(w, xs)
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


#: Above this many cells, initialisations are screened on a coarsened synopsis first (the regime's
#: run-time rule counts the row passes from the same size).
COARSE_CELLS = GRID_ROW_PASS_CELLS


#: How many of the best screened initialisations are refined on the full synopsis.
N_REFINE = 3
#: ... and on a small synopsis (screened on its own cells, stopped by the cost rule): how many best runs go on
#: until their centres settle.  Six keep the NICV of the 100-pass runs (48 paired fits on the taxi sample, k = 10
#: and 20, ε = 0.1 and 0.3: within 0.7 % ± 0.4 %) at 1.7-3.9x less time.
N_REFINE_SMALL = 6

#: From this many cells (N epsilon of about 10^7 in 2-D), the runs and the levels go side by side in threads:
#: their compiled loops release the GIL.  Smaller grids (the previews' fits, themselves side by side) stay
#: in the caller's thread.
PARALLEL_CELLS = 1 << 20


@contextlib.contextmanager
def _side_by_side(cells: int):
    """A thread pool of the machine's cores for a grid of ``cells`` cells, or a stand-in running in this thread."""
    workers = available_cores() if cells >= PARALLEL_CELLS else 1
    if workers == 1:
        yield _InThread()
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield pool


class _InThread:
    """The part of :class:`concurrent.futures.Executor` :func:`eugkm_fit` uses, run in the caller's thread."""

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        fut.set_result(fn(*args))
        return fut

    def map(self, fn, items) -> Iterator:
        return map(fn, items)


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
    is released.  On a small grid the runs are screened on the synopsis with
    the cost rule of :func:`weighted_lloyd` and the ``N_REFINE_SMALL`` best run
    on until their centres settle (a run stopped at 100 passes was the usual
    case: the noisy cells keep the centres drifting by more than ``tol``).

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
    # Every start is drawn first, in the order the runs used to draw them one by one; what follows uses
    # no randomness, so the runs (and the levels below) may go side by side with the same results.
    starts = [start() for _ in range(int(n_init))]

    def screened(c):
        c = weighted_lloyd(screen_cells, screen_w, c, r=r, tol=tol * f)
        return synopsis_nicv(screen_cells, screen_w, c), c

    # Coarse to fine: blocks of f/2, f/4, ... cells, then the synopsis itself, each level started from
    # the previous one's centres.  Lloyd passes on a product grid cost O(rows k^2), not O(cells k).
    levels: list[int] = []
    while f > 1 and (not levels or levels[-1] > 1):
        levels.append(max(1, (levels[-1] if levels else f) // 2))

    def level(lv):
        axis, w = ((edges[:-1] + edges[1:]) / 2, counts) if lv == 1 else _block_grid(counts, lv)
        return _GridSynopsisPoints([axis] * d, w)

    with _side_by_side(counts.size) as pool:
        building = [pool.submit(level, lv) for lv in levels]    # the levels, while the runs are screened
        runs = sorted(pool.map(screened, starts), key=lambda sc: sc[0])
        grids = {lv: b.result() for lv, b in zip(levels, building)}

        def refine(c):
            if f == 1:    # screened on the synopsis itself: run on until the centres settle (no cost rule)
                c = weighted_lloyd(screen_cells, screen_w, c, r=r, tol=tol, cost_rtol=-math.inf)
                return synopsis_nicv(screen_cells, screen_w, c), c
            for lv in levels:
                c = grids[lv].lloyd(c, r=r, tol=tol * lv)
            return grids[1].nicv(c), c
        runs = list(pool.map(refine, [c for _, c in runs[:(N_REFINE if f > 1 else N_REFINE_SMALL)]]))
    best = min(runs, key=lambda sc: sc[0])[1]
    return best, counts, edges


def _grid_synopsis(counts, edges, dom) -> GridSynopsis:
    d = dom.d
    data_edges = [edges * (dom.width[i] / 2) + dom.center[i] for i in range(d)]
    return GridSynopsis(edges=data_edges, counts=counts)
