"""Single-pass, chunked numba kernels behind :class:`~dpcore.sources.ArraySource`.

Each kernel reads every row once, clips it onto the public box on the fly
(no clipped copy), and accumulates into per-thread partials of size
O(k d) or O(cells): the only temporaries.  The arithmetic is written
operation by operation exactly as :mod:`dpcore.sources.ibis_source` writes
its one Ibis expression, so DuckDB, Spark, PostgreSQL and this path return
identical values (IEEE-754 doubles, no fused multiply-add: numba's default
``fastmath=False``):

* cell of coordinate j: ``floor((clip(x) - lower) / width * m)`` clamped to
  ``m - 1`` (never below 0, as clip(x) >= lower): a point on an interior edge
  goes to the upper cell, the upper bound to the last cell;
* normalised coordinate: ``(clip(x) - centre) * (2 / width)`` (Su et al. 2016,
  §4.1.1), nearest centre by the squared distance accumulated dimension by
  dimension, ties to the lowest index;
* coordinate sums in fixed point, ``floor(z * 2**SUM_BITS + 0.5)`` (the public grid of
  :mod:`dpcore.utils.fixedpoint`) summed as 64-bit integers: integer sums do not depend on
  the order rows are added in (a float sum would differ by rounding between engines and
  between neighbouring datasets), and ``|z| <= 1`` stays ``<= 1`` after rounding, so the
  sensitivity is exact.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ..utils.fixedpoint import SUM_SCALE as _SUM_SCALE_INT

#: Fixed-point scale of the coordinate sums (2**SUM_BITS; exact for up to 2**39 rows in 64-bit integers).
SUM_SCALE = float(_SUM_SCALE_INT)


def _blocks(n: int) -> int:
    """Number of parallel blocks: one per thread, so partial histograms stay few."""
    return max(1, min(numba.get_num_threads(), n // 65_536 + 1))


@numba.njit(inline="always", cache=True)
def _clip(x, lo, hi):  # pragma: no cover - compiled
    # The CASE of the Ibis expression: lo below, hi above, else x.
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@numba.njit(parallel=True, cache=True, nogil=True)
def _outside(X, lower, upper, nb):  # pragma: no cover - compiled
    n, d = X.shape
    part = np.zeros(nb, dtype=np.int64)
    step = (n + nb - 1) // nb
    for b in numba.prange(nb):
        c = 0
        for i in range(b * step, min(n, (b + 1) * step)):
            for j in range(d):
                if X[i, j] < lower[j] or X[i, j] > upper[j]:
                    c += 1
                    break
        part[b] = c
    return part.sum()


@numba.njit(parallel=True, cache=True, nogil=True)
def _grid(X, lower, upper, width, shape, nb):  # pragma: no cover - compiled
    n, d = X.shape
    ncell = 1
    for j in range(d):
        ncell *= shape[j]
    part = np.zeros((nb, ncell), dtype=np.int64)
    step = (n + nb - 1) // nb
    for b in numba.prange(nb):
        for i in range(b * step, min(n, (b + 1) * step)):
            flat = 0
            for j in range(d):
                x = _clip(X[i, j], lower[j], upper[j])
                c = min(np.floor((x - lower[j]) / width[j] * shape[j]), shape[j] - 1.0)  # >= 0: x >= lower
                flat = flat * shape[j] + np.int64(c)
            part[b, flat] += 1
    out = np.zeros(ncell, dtype=np.int64)
    for b in range(nb):
        out += part[b]
    return out


@numba.njit(parallel=True, cache=True, nogil=True)
def _sums(X, lower, upper, centre, scale, C, nb):  # pragma: no cover - compiled
    n, d = X.shape
    k = C.shape[0]
    cnt = np.zeros((nb, k), dtype=np.int64)
    sm = np.zeros((nb, k, d), dtype=np.int64)
    step = (n + nb - 1) // nb
    for b in numba.prange(nb):
        z = np.empty(d)
        for i in range(b * step, min(n, (b + 1) * step)):
            for j in range(d):
                x = _clip(X[i, j], lower[j], upper[j])
                z[j] = (x - centre[j]) * scale[j]
            best = 0
            bd = np.inf
            for c in range(k):
                u = z[0] - C[c, 0]
                t = u * u
                for j in range(1, d):
                    u = z[j] - C[c, j]
                    t += u * u
                if t < bd:
                    bd = t
                    best = c
            cnt[b, best] += 1
            for j in range(d):
                sm[b, best, j] += np.int64(math.floor(z[j] * SUM_SCALE + 0.5))
    return cnt.sum(axis=0), sm.sum(axis=0)


def n_outside(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> int:
    """Rows of ``X`` with a coordinate outside ``[lower, upper]`` (one pass)."""
    return int(_outside(X, lower, upper, _blocks(X.shape[0])))


def grid_counts(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, shape) -> np.ndarray:
    """Exact counts (int64, C-order flat) of the clipped rows on a ``shape`` grid over the box."""
    shape = np.asarray(shape, dtype=np.int64)
    return _grid(X, lower, upper, upper - lower, shape, _blocks(X.shape[0]))


def cluster_sums(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, centers: np.ndarray):
    """Nearest-centre counts (int64 k) and fixed-point coordinate sums (int64 k x d) of clipped rows."""
    width = upper - lower
    centre = (upper + lower) / 2
    scale = 2.0 / width
    return _sums(X, lower, upper, centre, scale, np.ascontiguousarray(centers, dtype=float),
                 _blocks(X.shape[0]))
