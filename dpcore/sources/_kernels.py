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


@numba.njit(inline="always", cache=True)
def _cell(X, i, lower, upper, width, shape):  # pragma: no cover - compiled
    """The flat cell of row i: per coordinate floor((clip(x) - lower) / width * m) clamped to m - 1."""
    flat = 0
    for j in range(X.shape[1]):
        x = _clip(X[i, j], lower[j], upper[j])
        c = min(np.floor((x - lower[j]) / width[j] * shape[j]), shape[j] - 1.0)  # >= 0: x >= lower
        flat = flat * shape[j] + np.int64(c)
    return flat


#: Grids of more cells than this are counted through buckets (:func:`_grid_into_serial`).
BUCKET_MIN_CELLS = 1 << 18

#: Cells per bucket: 2^16 int64 counters (512 KB) stay in a core's cache while a bucket's rows are added.
BUCKET_CELLS_LOG2 = 16

#: Rows bucketed at a time (4 MB of int32 cell numbers per buffer).
BUCKET_ROWS = 1 << 20

#: The fine-cell statistics' buckets: 2^16 bytes of records each, 2^18 rows at a time (14 MB of buffers per
#: worker in 2-D).
CELL_BUCKET_BYTES_LOG2 = 16
CELL_BUCKET_ROWS = 1 << 18


@numba.njit(inline="always", cache=True)
def _finite_inside(X, i, lower, upper):  # pragma: no cover - compiled
    """(all coordinates finite, all inside [lower, upper]) for row i: the tests of the Ibis row count
    (``-max <= x <= max`` fails NaN, a NULL read as NaN, and +-inf)."""
    big = np.finfo(np.float64).max
    inside = True
    for j in range(X.shape[1]):
        x = X[i, j]
        if not (x >= -big and x <= big):
            return False, False
        if not (x >= lower[j] and x <= upper[j]):
            inside = False
    return True, inside


@numba.njit(inline="always", cache=True)
def _admit(X, i, lower, upper, profiled):  # pragma: no cover - compiled
    """(row i enters the aggregate, 1 if it is finite, 1 if it is also inside the box).

    Without a profile (``profiled`` False: the rows are known finite) every row enters.  With one, only a
    finite row does, and the caller adds the two flags into counters of its own, written to the profile
    array once after its loop: a store into that array on every row (the earlier ``_enters``) made the grid
    loop 5-6x slower (61 against 11 ns a row on 2048^2 cells: the compiler could not keep the histogram's
    increments apart from the profile's), the whole difference between a streamed pass and the engine's scan.
    """
    if not profiled:
        return True, 0, 0
    finite, inside = _finite_inside(X, i, lower, upper)
    return finite, 1 if finite else 0, 1 if (finite and inside) else 0


@numba.njit(cache=True, nogil=True)
def _grid_into_serial(X, lower, upper, width, shape, part, prof, cells, order):  # pragma: no cover - compiled
    """Add the rows of X to one partial histogram ``part`` (cells,), on one thread.

    ``prof`` (2,) or empty: when given, rows with a non-finite coordinate (NULL read as NaN) are skipped
    and ``prof`` counts the finite rows and those also inside the box (the profile of the same pass).
    ``cells`` and ``order`` (int32 buffers) or empty: a large histogram is filled through buckets,
    a counting sort of each block of rows by the high bits of their cell number first, so that each
    bucket's increments land in a 2^16-cell slice of ``part`` that stays in the core's cache instead
    of missing it on almost every row (a 2048^2 grid is 32 MB).  The counts are the same integers.
    """
    n = X.shape[0]
    step = cells.shape[0]
    profiled = prof.shape[0] > 0
    n_finite = 0
    n_inside = 0
    if step == 0:      # direct: a small histogram stays in the cache anyway
        for i in range(n):
            ok, fin, ins = _admit(X, i, lower, upper, profiled)
            n_finite += fin
            n_inside += ins
            if ok:
                part[_cell(X, i, lower, upper, width, shape)] += 1
    else:
        shift = BUCKET_CELLS_LOG2
        nb = ((part.shape[0] - 1) >> shift) + 1
        start = np.empty(nb + 1, dtype=np.int64)
        for s in range(0, n, step):
            e = min(n, s + step)
            start[:] = 0
            r = 0
            for i in range(s, e):
                ok, fin, ins = _admit(X, i, lower, upper, profiled)
                n_finite += fin
                n_inside += ins
                if not ok:
                    continue
                c = _cell(X, i, lower, upper, width, shape)
                cells[r] = c
                start[(c >> shift) + 1] += 1
                r += 1
            for b in range(nb):
                start[b + 1] += start[b]
            for i in range(r):
                b = cells[i] >> shift
                order[start[b]] = cells[i]
                start[b] += 1
            for i in range(r):
                part[order[i]] += 1
    if profiled:
        prof[0] += n_finite
        prof[1] += n_inside


@numba.njit(parallel=True, cache=True, nogil=True)
def _grid_into(X, lower, upper, width, shape, part, bucket_rows):  # pragma: no cover - compiled
    """Add the rows of X to the per-block partial histograms ``part`` (nb, cells), block b by thread b
    (:func:`_grid_into_serial` on each block; buffers of ``bucket_rows`` rows each, 0: direct)."""
    n = X.shape[0]
    nb = part.shape[0]
    step = (n + nb - 1) // nb
    for b in numba.prange(nb):
        m = min(bucket_rows, step)
        _grid_into_serial(X[b * step:min(n, (b + 1) * step)], lower, upper, width, shape, part[b],
                          np.zeros(0, dtype=np.int64), np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32))


class GridAccumulator:
    """Exact grid counts over a stream of row batches: one (threads, cells) partial for the whole pass.

    A fresh partial per batch would zero and add millions of cells per batch (a 2048^2 grid is 32 MB
    per thread); this keeps them for the pass and adds them up once at the end.  With ``profile``
    every row is offered (NULL read as NaN): rows with a non-finite coordinate are skipped and counted
    out of the profile (:meth:`profile`), so the pass that counts the grid also counts the rows.
    """

    def __init__(self, lower, upper, shape, workers: int | None = None, *, profile: bool = False):
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.width = self.upper - self.lower
        self.shape = np.asarray(shape, dtype=np.int64)
        rows = max(1, workers or numba.get_num_threads())
        cells = int(np.prod(self.shape))
        self.part = np.zeros((rows, cells), dtype=np.int64)
        self.prof = np.zeros((rows, 2 if profile else 0), dtype=np.int64)
        self.bucket_rows = BUCKET_ROWS if cells > BUCKET_MIN_CELLS else 0
        self._buffers: dict = {}

    def _scratch(self, worker: int, rows: int):
        """Worker ``worker``'s two int32 bucket buffers for batches of ``rows`` rows (empty: direct counts)."""
        m = min(self.bucket_rows, rows)
        got = self._buffers.get(worker)
        if got is None or got[0].shape[0] < m:
            got = self._buffers[worker] = (np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32))
        return got

    def add(self, X: np.ndarray, worker: int | None = None) -> None:
        """Add rows X (m, d): on all threads, or (``worker`` w) on this thread into partial w only."""
        if worker is None and self.prof.shape[1] == 0 and _blocks(X.shape[0]) > 1:
            nb = _blocks(X.shape[0])
            _grid_into(X, self.lower, self.upper, self.width, self.shape, self.part[:nb], self.bucket_rows)
        else:      # one block: numba's thread pool costs more to wake than the rows (see _row_cells_serial)
            w = worker or 0
            cells, order = self._scratch(w, X.shape[0])
            _grid_into_serial(X, self.lower, self.upper, self.width, self.shape, self.part[w], self.prof[w],
                              cells, order)

    def result(self) -> np.ndarray:
        """The counts (int64, C-order flat)."""
        return self.part.sum(axis=0)

    def profile(self) -> tuple[int, int]:
        """(rows with finite coordinates, those also inside the box), with ``profile=True``."""
        finite, inside = self.prof.sum(axis=0)
        return int(finite), int(inside)


@numba.njit(inline="always", cache=True)
def _nearest(z, C):  # pragma: no cover - compiled
    """(index, squared distance) of the centre in ``C`` (k, d) nearest the point ``z`` (d,); ties: lowest index."""
    best = 0
    bd = np.inf
    for c in range(C.shape[0]):
        u = z[0] - C[c, 0]
        t = u * u
        for j in range(1, z.shape[0]):
            u = z[j] - C[c, j]
            t += u * u
        if t < bd:
            bd = t
            best = c
    return best, bd


@numba.njit(inline="always", cache=True)
def _add_nearest(X, i, lower, upper, centre, scale, C, z, cnt, sm):  # pragma: no cover - compiled
    """Add row i to its nearest centre's count ``cnt`` (k,) and fixed-point sums ``sm`` (k, d)."""
    d = X.shape[1]
    for j in range(d):
        x = _clip(X[i, j], lower[j], upper[j])
        z[j] = (x - centre[j]) * scale[j]
    best, _ = _nearest(z, C)
    cnt[best] += 1
    for j in range(d):
        sm[best, j] += np.int64(math.floor(z[j] * SUM_SCALE + 0.5))


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
            _add_nearest(X, i, lower, upper, centre, scale, C, z, cnt[b], sm[b])
    return cnt.sum(axis=0), sm.sum(axis=0)


@numba.njit(cache=True, nogil=True)
def _sums_into_serial(X, lower, upper, centre, scale, C, cnt, sm):  # pragma: no cover - compiled
    """:func:`_sums` on one thread, added into one worker's partials ``cnt`` (k,), ``sm`` (k, d)."""
    z = np.empty(X.shape[1])
    for i in range(X.shape[0]):
        _add_nearest(X, i, lower, upper, centre, scale, C, z, cnt, sm)


@numba.njit(inline="always", cache=True)
def _coordinate(x, lower, upper, width, centre, scale, m, inv):  # pragma: no cover - compiled
    """One coordinate's (fine cell on its axis, fixed-point value, squared offset from the cell's middle).

    The cell as :func:`_cell`, the normalised coordinate as :func:`_add_nearest`: the same operations.
    The middle of cell c on an axis of m cells is ``(2 c + 1) / m - 1``; ``inv`` is ``1 / m`` (a
    product, not a division, in the hot loop; exact for the powers of two of :func:`fine_shape`).
    Scalars only: scratch arrays here made the pass twice as slow (46 vs 21 ns a row).
    """
    x = _clip(x, lower, upper)
    c = np.int64(min(np.floor((x - lower) / width * m), m - 1.0))
    z = (x - centre) * scale
    u = z - ((2.0 * c + 1.0) * inv - 1.0)
    return c, np.int64(math.floor(z * SUM_SCALE + 0.5)), u * u


@numba.njit(cache=True, nogil=True)
def _cells_into_serial(X, lower, upper, width, centre, scale, shape, inv, buf, fbuf, prof,
                       F, P, F2, P2, shift):  # pragma: no cover - compiled
    """Add the rows of X to one worker's dense fine-cell statistics (one thread).

    One record per cell, so a row touches one cache line: ``buf`` (cells, d + 2) int64 holds the row
    count (column 0) and the fixed-point coordinate sums (1..d); ``fbuf``, the same memory seen as
    float64, holds in column d + 1 the sum of squared distances to the cell's middle (normalised
    units).  ``prof`` (2,): rows with finite coordinates and rows also inside the box (the tests of
    :func:`_profile_into_serial`).  A row with a non-finite coordinate (NULL read as NaN) is skipped.

    Through buckets, as :func:`_grid_into_serial`: each block of rows (``F``'s length) is computed
    into ``F`` (its cells, int32) and ``P`` (its fixed-point coordinates and, as float64 bits, its
    squared offset), counting-sorted by ``cell >> shift`` into ``F2`` and ``P2``, then added bucket
    by bucket, so that the records a bucket touches stay in the core's cache (a 1024^2 grid of
    records is 32 MB).  The integers are the same as row by row; the float offsets are summed in
    another order.
    """
    n, d = X.shape
    Pf, P2f = P.view(np.float64), P2.view(np.float64)
    nb = ((buf.shape[0] - 1) >> shift) + 1
    start = np.empty(nb + 1, dtype=np.int64)
    step = F.shape[0]
    profiled = prof.shape[0] > 0
    n_finite = 0
    n_inside = 0
    for s in range(0, n, step):
        start[:] = 0
        r = 0
        for i in range(s, min(n, s + step)):
            ok, fin, ins = _admit(X, i, lower, upper, profiled)
            n_finite += fin
            n_inside += ins
            if not ok:
                continue
            flat = 0
            t = 0.0
            for j in range(d):
                c, P[r, j], u2 = _coordinate(X[i, j], lower[j], upper[j], width[j], centre[j], scale[j], shape[j],
                                             inv[j])
                flat = flat * shape[j] + c
                t += u2
            Pf[r, d] = t
            F[r] = flat
            start[(flat >> shift) + 1] += 1
            r += 1
        Fs, Ps, Psf = F, P, Pf
        if nb > 1:
            for b in range(nb):
                start[b + 1] += start[b]
            for i in range(r):
                b = F[i] >> shift
                o = start[b]
                start[b] = o + 1
                F2[o] = F[i]
                for j in range(d + 1):
                    P2[o, j] = P[i, j]
            Fs, Ps, Psf = F2, P2, P2f
        for i in range(r):
            f = Fs[i]
            buf[f, 0] += 1
            for j in range(d):
                buf[f, 1 + j] += Ps[i, j]
            fbuf[f, d + 1] += Psf[i, d]
    if profiled:
        prof[0] += n_finite
        prof[1] += n_inside


@numba.njit(cache=True, nogil=True)
def _row_stats(X, i, lower, upper, width, centre, scale, shape, inv, flat, qs, ss):  # pragma: no cover
    """Row ``i``'s flat fine cell, fixed-point coordinates and squared offset (a finite row)."""
    f = 0
    t = 0.0
    for j in range(X.shape[1]):
        c, qs[i, j], u2 = _coordinate(X[i, j], lower[j], upper[j], width[j], centre[j], scale[j], shape[j], inv[j])
        f = f * shape[j] + c
        t += u2
    flat[i] = f
    ss[i] = t


@numba.njit(parallel=True, cache=True)
def _row_cells(X, lower, upper, width, centre, scale, shape, inv, flat, qs, ss):  # pragma: no cover - compiled
    """Per row (finite rows only): :func:`_row_stats`, the rows spread over numba's threads."""
    for i in numba.prange(X.shape[0]):
        _row_stats(X, i, lower, upper, width, centre, scale, shape, inv, flat, qs, ss)


@numba.njit(cache=True, nogil=True)
def _row_cells_serial(X, lower, upper, width, centre, scale, shape, inv, flat, qs, ss):  # pragma: no cover
    """:func:`_row_cells` on one thread: for small arrays, where waking the thread pool costs more
    than the rows (about 1 ms per call on 20 rows, and tens under load: the privacy audits fit
    thousands of times on 20 rows)."""
    for i in range(X.shape[0]):
        _row_stats(X, i, lower, upper, width, centre, scale, shape, inv, flat, qs, ss)


#: Below this many rows :func:`row_cells` stays on one thread.
PARALLEL_ROWS = 1 << 16


class CellAccumulator:
    """Exact fine-cell statistics over a stream of row batches: dense partials, one per worker.

    Each partial holds ``cells * (16 + 8 d)`` bytes (32 MB for 1024^2 cells in 2-D), one record of
    count, sums and squared offsets per cell; they are added up and compressed to the occupied
    cells once, at the end of the pass.
    """

    def __init__(self, lower, upper, shape, workers: int | None = None):
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.width = self.upper - self.lower
        self.centre = (self.upper + self.lower) / 2
        self.scale = 2.0 / self.width
        self.shape = np.asarray(shape, dtype=np.int64)
        self.inv = 1.0 / self.shape
        w = max(1, workers or numba.get_num_threads())
        cells, self.d = int(np.prod(self.shape)), self.shape.size
        self.buf = np.zeros((w, cells, self.d + 2), dtype=np.int64)
        self.fbuf = self.buf.view(np.float64)
        self.prof = np.zeros((w, 2), dtype=np.int64)
        # Buckets of 2^16 bytes of records (2^11 cells in 2-D): measured fastest on the taxi data, about
        # 1.7x the row-by-row pass (72 vs 121-158 ns/row under load).  A small grid needs none (shift 62).
        rec = (self.d + 2) * 8
        self.shift = max(0, CELL_BUCKET_BYTES_LOG2 - (rec - 1).bit_length()) if cells > BUCKET_MIN_CELLS else 62
        self._buffers: dict = {}

    def _scratch(self, worker: int, rows: int):
        """Worker ``worker``'s bucket buffers (cells int32, payload (rows, d + 1) int64, and their sorted copies)."""
        m = max(1, min(CELL_BUCKET_ROWS, rows))
        got = self._buffers.get(worker)
        if got is None or got[0].shape[0] < m:
            got = self._buffers[worker] = (np.empty(m, dtype=np.int32), np.empty((m, self.d + 1), dtype=np.int64),
                                           np.empty(m, dtype=np.int32), np.empty((m, self.d + 1), dtype=np.int64))
        return got

    def add(self, X: np.ndarray, worker: int) -> None:
        F, P, F2, P2 = self._scratch(worker, X.shape[0])
        _cells_into_serial(X, self.lower, self.upper, self.width, self.centre, self.scale, self.shape, self.inv,
                           self.buf[worker], self.fbuf[worker], self.prof[worker], F, P, F2, P2, self.shift)

    def result(self):
        """(occupied flat cells (p,), counts (p,), fixed-point sums (p, d), squared offsets (p,), profile (2,))."""
        d = self.d
        ints, floats = self.buf[0, :, :d + 1], self.fbuf[0, :, d + 1]
        for w in range(1, self.buf.shape[0]):   # in place: no second dense copy; the offsets added as floats
            ints += self.buf[w, :, :d + 1]
            floats += self.fbuf[w, :, d + 1]
        idx = np.flatnonzero(ints[:, 0])
        return idx, ints[idx, 0], ints[idx, 1:], floats[idx], self.prof.sum(axis=0)


def row_cells(X: np.ndarray, lower, upper, shape):
    """Fine-cell statistics of an in-memory array of finite rows, by sorting: for few rows per cell.

    Returns the same as :meth:`CellAccumulator.result` (integers identical; the float squared
    offsets summed in another order).
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    width = upper - lower
    n, d = X.shape
    flat, qs, ss = np.empty(n, dtype=np.int64), np.empty((n, d), dtype=np.int64), np.empty(n)
    shape = np.asarray(shape, dtype=np.int64)
    kernel = _row_cells if n >= PARALLEL_ROWS else _row_cells_serial
    kernel(X, lower, upper, width, (upper + lower) / 2, 2.0 / width, shape, 1.0 / shape, flat, qs, ss)
    order = np.argsort(flat, kind="stable")
    flat = flat[order]
    start = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]]) if n else np.zeros(0, dtype=np.intp)
    counts = np.diff(np.r_[start, n]).astype(np.int64)
    sums = np.add.reduceat(qs[order], start, axis=0) if n else np.zeros((0, d), dtype=np.int64)
    sq = np.add.reduceat(ss[order], start) if n else np.zeros(0)
    inside = int(((X >= lower) & (X <= upper)).all(axis=1).sum())
    return flat[start], counts, sums, sq, np.array([n, inside], dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def cells_to_clusters(mids, cnt, qs, C, out_cnt, out_sm):  # pragma: no cover - compiled
    """Add each occupied cell's count and fixed-point sums to the centre nearest its middle (ties: lowest)."""
    p, d = mids.shape
    for i in range(p):
        best, _ = _nearest(mids[i], C)
        out_cnt[best] += cnt[i]
        for j in range(d):
            out_sm[best, j] += qs[i, j]


@numba.njit(cache=True, nogil=True)
def cells_inertia(mids, cnt, offs, ss, C):  # pragma: no cover - compiled
    """Sum of squared distances of the rows to the centre nearest their cell's middle.

    ``offs`` (p, d): per cell the sum of (z - middle) over its rows; per row
    ``|z - c|^2 = |z - m|^2 + 2 (m - c).(z - m) + |m - c|^2``, summed over the cell.
    """
    p, d = mids.shape
    total = 0.0
    for i in range(p):
        best, bd = _nearest(mids[i], C)
        cross = 0.0
        for j in range(d):
            cross += (mids[i, j] - C[best, j]) * offs[i, j]
        total += ss[i] + 2.0 * cross + cnt[i] * bd
    return total


def n_outside(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> int:
    """Rows of ``X`` with a coordinate outside ``[lower, upper]`` (one pass)."""
    nb = _blocks(X.shape[0])
    if nb == 1:     # one block: NumPy, without waking numba's thread pool (NaN is neither below nor above)
        return int(((X < lower) | (X > upper)).any(axis=1).sum())
    return int(_outside(X, lower, upper, nb))


def grid_counts(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, shape) -> np.ndarray:
    """Exact counts (int64, C-order flat) of the clipped rows on a ``shape`` grid over the box."""
    acc = GridAccumulator(lower, upper, shape)
    acc.add(X)
    return acc.result()


@numba.njit(cache=True, nogil=True)
def _profile_into_serial(X, lower, upper, out):  # pragma: no cover - compiled
    """Add to ``out`` (2,): rows whose coordinates are all finite, and those also inside [lower, upper]
    (the tests of the Ibis row count, :func:`_finite_inside`)."""
    n_finite = 0
    n_inside = 0
    for i in range(X.shape[0]):
        _, fin, ins = _admit(X, i, lower, upper, True)
        n_finite += fin
        n_inside += ins
    out[0] += n_finite
    out[1] += n_inside


class ProfileAccumulator:
    """Finite rows and rows inside a box, over a stream of batches (one partial per worker)."""

    def __init__(self, lower, upper, workers: int | None = None):
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.part = np.zeros((max(1, workers or numba.get_num_threads()), 2), dtype=np.int64)

    def add(self, X: np.ndarray, worker: int) -> None:
        _profile_into_serial(X, self.lower, self.upper, self.part[worker])

    def result(self) -> tuple[int, int]:
        """(finite rows, rows inside the box)."""
        finite, inside = self.part.sum(axis=0)
        return int(finite), int(inside)


class SumsAccumulator:
    """Nearest-centre counts and fixed-point sums over a stream of row batches, one partial per worker."""

    def __init__(self, lower, upper, centers, workers: int | None = None):
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        self.centre = (self.upper + self.lower) / 2
        self.scale = 2.0 / (self.upper - self.lower)
        self.C = np.ascontiguousarray(centers, dtype=float)
        w = max(1, workers or numba.get_num_threads())
        k, d = self.C.shape
        self.cnt = np.zeros((w, k), dtype=np.int64)
        self.sm = np.zeros((w, k, d), dtype=np.int64)

    def add(self, X: np.ndarray, worker: int) -> None:
        _sums_into_serial(X, self.lower, self.upper, self.centre, self.scale, self.C, self.cnt[worker],
                          self.sm[worker])

    def result(self):
        """(counts (k,) int64, sums (k, d) int64)."""
        return self.cnt.sum(axis=0), self.sm.sum(axis=0)


def cluster_sums(X: np.ndarray, lower: np.ndarray, upper: np.ndarray, centers: np.ndarray):
    """Nearest-centre counts (int64 k) and fixed-point coordinate sums (int64 k x d) of clipped rows."""
    width = upper - lower
    centre = (upper + lower) / 2
    scale = 2.0 / width
    C = np.ascontiguousarray(centers, dtype=float)
    nb = _blocks(X.shape[0])
    if nb == 1:     # one block: the serial kernel, without waking numba's thread pool
        cnt, sm = np.zeros(C.shape[0], dtype=np.int64), np.zeros(C.shape, dtype=np.int64)
        _sums_into_serial(X, lower, upper, centre, scale, C, cnt, sm)
        return cnt, sm
    return _sums(X, lower, upper, centre, scale, C, nb)
