"""Exact sufficient statistics on a fine public grid: one pass over the data, then Lloyd in memory (issue 26).

Lloyd-type work (DPLloyd's iterations, the Hybrid's Lloyd phase, the non-private k-means on a
source, inertia and NICV) reads the data once per iteration when every row is assigned to its
nearest centre.  Instead, one pass keeps, for every occupied cell of a fine grid over the public
box, the exact row count, the exact fixed-point coordinate sums (:mod:`dpcore.utils.fixedpoint`)
and the sum of squared offsets from the cell's middle; every later step assigns **cells, not rows**:
a whole cell goes to the centre nearest its middle.

**Privacy.**  The fine grid is a function of public inputs alone (the bounds and d,
:func:`fine_shape`).  Which cluster a row joins is then a function of the row's cell (public map)
and of the current centres (already private, or public), exactly as nearest-centre assignment
is a function of the row and the centres: every row still joins exactly one cluster.  A
cluster's count is still a sum of 1s and its coordinate sums still sums of the rows' own
fixed-point coordinates (``|q| <= 2^SUM_BITS``), so adding or removing one row moves the joint
count-and-sum query by at most ``d r + 1`` (fixed-point units: ``d r 2^SUM_BITS + 2^SUM_BITS``) in
L1, as before.  The sensitivity, the noise and the ledger entries are unchanged, and so is the
guarantee.  The statistics themselves are exact and private: they never leave the estimator.

:class:`GridSource` is the same idea for a fit that reads one histogram: the pass that counts the rows
(its noisy size, its raw facts) also counts them into the histogram, so the data are read once.

**Utility.**  Only rows in a cell cut by a boundary between two clusters can join another cluster
than their nearest centre's; at 1024 cells per side that is a band of width 1/512 of the box's
half-width around each boundary (docs/guide/sources.rst gives the measured NICV difference).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..utils.domain import Domain
from ..utils.fixedpoint import SUM_SCALE, FixedPoint
from . import _kernels as K
from .base import as_domain, check_centers, check_shape

#: Cells of the fine grid: 2^20 (1024^2 in 2-D).  Dense partials cost ``(16 + 8 d)`` bytes per cell and
#: worker (32 MB in 2-D), the compressed statistics the same per *occupied* cell.  2^22 cells (2048^2)
#: moved as few rows to another cluster on the taxi data (42 vs 30 of 181,446 in one step) and made the
#: pass 1.6-1.8x slower: 134 MB partials per worker miss the caches on every row (41-47 vs 26 ns/row).
FINE_CELLS_LOG2 = 20

#: Up to this dimension ``assignment="auto"`` assigns cells: the fine grid then has at least 2^10 cells
#: per side.  In 3-D the same memory buys 2^6 per side, too coarse to stay within 0.1 % of per-row NICV.
AUTO_MAX_D = 2


def fine_shape(d: int) -> tuple[int, ...]:
    """The fine grid's shape for ``d`` dimensions: ``2^floor(20 / d)`` cells per side (public: d only).

    Parameters
    ----------
    d : int, >= 1

    Returns
    -------
    tuple of d ints (1048576 in 1-D, 1024 per side in 2-D, 64 in 3-D, ..., at least 1).

    Examples
    --------
    >>> from dpcore.sources.cells import fine_shape
    >>> fine_shape(2)
    (1024, 1024)
    """
    d = int(d)
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    return (1 << (FINE_CELLS_LOG2 // d),) * d


def use_cells(assignment: str, d: int, source=None) -> bool:
    """Whether a Lloyd-type fit assigns cells (True) or rows: from public inputs only.

    Parameters
    ----------
    assignment : {"auto", "cells", "rows"}
        ``"auto"``: cells up to :data:`AUTO_MAX_D` dimensions.
    d : int
    source : DataSource, optional
        A source that cannot compute the statistics (a weighted source, a user's own class) gets rows.

    Raises
    ------
    ValueError
        An unknown ``assignment``.
    """
    if assignment not in ("auto", "cells", "rows"):
        raise ValueError(f"assignment must be 'auto', 'cells' or 'rows', got {assignment!r}")
    if source is not None and not callable(getattr(source, "_cell_statistics", None)):
        return False
    return assignment == "cells" or (assignment == "auto" and int(d) <= AUTO_MAX_D)


@dataclass(frozen=True)
class CellStatistics:
    """Exact statistics of the rows in each occupied cell of a fine grid over the public box.

    Attributes
    ----------
    domain : Domain
        The public box (data units); rows were clipped onto it.
    shape : tuple of int
        The fine grid (public, :func:`fine_shape`).
    index : ndarray (p,) int64
        Flat (C-order) index of each occupied cell.
    counts : ndarray (p,) int64
        Rows per cell (exact).
    sums : ndarray (p, d) int64
        Exact fixed-point sums of the rows' normalised coordinates (units ``2^-SUM_BITS``).
    sq_offsets : ndarray (p,) float64
        Sum over the cell's rows of ``|z - middle|^2`` (normalised units; for inertia only).
    n_inside : int
        Rows inside the box before clipping.

    Notes
    -----
    Exact, not private: for an estimator (which adds noise) or the data owner only.
    """

    domain: Domain
    shape: tuple
    index: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    sq_offsets: np.ndarray
    n_inside: int

    @property
    def n(self) -> int:
        """Rows with finite coordinates (all of them are in some cell)."""
        return int(self.counts.sum())

    @property
    def middles(self) -> np.ndarray:
        """Middle of each occupied cell, normalised to ``[-1, 1]^d``: ``-1 + (2 i + 1) / m`` per axis, (p, d)."""
        axes = np.unravel_index(self.index, self.shape)
        m = np.asarray(self.shape, dtype=float)
        return np.stack([-1.0 + (2.0 * a + 1.0) / m[j] for j, a in enumerate(axes)], axis=1) if axes \
            else np.zeros((0, len(self.shape)))

    def cluster_sums(self, centers) -> tuple[np.ndarray, FixedPoint]:
        """Counts (k,) and exact fixed-point sums (k, d) with each cell joining the centre nearest its middle.

        Parameters
        ----------
        centers : ndarray (k, d), normalised

        Returns
        -------
        (counts int64 (k,), FixedPoint (k, d)): the integers a per-row pass would give for the same
        partition of the rows.  Ties go to the lowest centre index.
        """
        C = np.ascontiguousarray(centers, dtype=float)
        cnt = np.zeros(C.shape[0], dtype=np.int64)
        sm = np.zeros(C.shape, dtype=np.int64)
        K.cells_to_clusters(self._mids, self.counts, self.sums, C, cnt, sm)
        return cnt, FixedPoint(sm)

    def inertia(self, centers) -> float:
        """Sum of the rows' squared distances (normalised units) to the centre nearest their cell's middle."""
        C = np.ascontiguousarray(centers, dtype=float)
        offs = self.sums / SUM_SCALE - self.counts[:, None] * self._mids
        return float(K.cells_inertia(self._mids, self.counts, offs, self.sq_offsets, C))

    def grid_counts(self, shape) -> np.ndarray:
        """Counts on a coarser grid of ``shape``, each fine cell going to the coarse cell of its middle.

        Equal to the per-row grid counts when every coarse side divides the fine one; otherwise a
        public re-grouping (each row still counted once: sensitivity 1).  Returns int64 of ``shape``.
        """
        shape = tuple(int(m) for m in shape)
        mids = self._mids
        flat = np.zeros(mids.shape[0], dtype=np.int64)
        for j, m in enumerate(shape):
            u = (mids[:, j] + 1.0) / 2.0 * m
            flat = flat * m + np.minimum(np.floor(u), m - 1).astype(np.int64)
        out = np.bincount(flat, weights=self.counts, minlength=int(np.prod(shape))).astype(np.int64) \
            if flat.size else np.zeros(int(np.prod(shape)), dtype=np.int64)
        return out.reshape(shape)

    @property
    def _mids(self) -> np.ndarray:
        cached = self.__dict__.get("_mid_cache")
        if cached is None:
            cached = np.ascontiguousarray(self.middles)
            object.__setattr__(self, "_mid_cache", cached)
        return cached


def cell_statistics(source, bounds, shape=None) -> CellStatistics:
    """The fine-cell statistics of a source: one pass over its rows, cached on the source.

    Parameters
    ----------
    source : DataSource with a ``_cell_statistics`` method (:class:`~dpcore.sources.ArraySource`,
        :class:`~dpcore.sources.ibis_source.IbisSource`)
    bounds : Domain or (lower, upper), public
    shape : tuple of int, optional
        Default :func:`fine_shape` (d).

    Returns
    -------
    CellStatistics (exact, not private)

    Raises
    ------
    TypeError
        The source cannot compute them.
    """
    dom = as_domain(bounds, source.n_features)
    shape = fine_shape(source.n_features) if shape is None else tuple(int(m) for m in shape)
    make = getattr(source, "_cell_statistics", None)
    if not callable(make):
        raise TypeError(f"{type(source).__name__} cannot compute fine-cell statistics: use assignment='rows'")
    key = (tuple(dom.lower), tuple(dom.upper), shape)
    cache = source.__dict__.setdefault("_cells_cache", {})
    if key not in cache:
        cache.clear()   # one set per source: a different box replaces it (memory stays bounded)
        idx, cnt, qs, ss, prof = make(dom, shape)
        cache[key] = CellStatistics(dom, shape, idx, cnt, qs, ss, int(prof[1]))
    return cache[key]


class _OnePass:
    """What :class:`CellSource` and :class:`GridSource` share: the source they read once, its description and
    progress callback, and the box of their one pass (other boxes go to the source)."""

    def __init__(self, source, domain: Domain):
        self.source = source
        self.domain = domain
        self.columns = source.columns
        self.n_features = source.n_features
        self.engine = source.engine

    @property
    def on_pass(self) -> Callable[[str], None] | None:
        return self.source.on_pass

    @on_pass.setter
    def on_pass(self, f) -> None:
        self.source.on_pass = f

    def _same(self, bounds) -> bool:
        dom = as_domain(bounds, self.n_features)
        return bool(np.array_equal(dom.lower, self.domain.lower) and np.array_equal(dom.upper, self.domain.upper))

    def column_range(self):
        return self.source.column_range()


class CellSource(_OnePass):
    """A :class:`~dpcore.sources.DataSource` answering from a source's fine-cell statistics (one pass).

    Over the statistics' box, ``count``, ``n_outside``, ``cluster_sums``, ``inertia`` and
    ``grid_counts`` come from memory (cell-level assignment, :class:`CellStatistics`); any other box
    goes to the underlying source.

    Parameters
    ----------
    source : DataSource
    bounds : Domain or (lower, upper), public
    shape : tuple of int, optional
        The fine grid; default :func:`fine_shape`.

    Notes
    -----
    **Privacy.** Exact values, as every source's; the module docstring states why assigning cells
    leaves each noisy step's sensitivity unchanged.
    """

    def __init__(self, source, bounds, shape=None):
        self.stats = cell_statistics(source, bounds, shape)
        super().__init__(source, self.stats.domain)

    def __repr__(self) -> str:
        return f"CellSource({self.source!r}, {len(self.stats.index)} occupied cells of {self.stats.shape})"

    def count(self) -> int:
        return self.stats.n

    def n_dropped(self) -> int:
        return self.source.n_dropped()

    def n_outside(self, bounds) -> int:
        return self.stats.n - self.stats.n_inside if self._same(bounds) else self.source.n_outside(bounds)

    def grid_counts(self, bounds, shape) -> np.ndarray:
        if self._same(bounds):
            return self.stats.grid_counts(shape)
        return self.source.grid_counts(bounds, shape)

    def cluster_sums(self, centers, bounds):
        C = check_centers(centers, self.n_features)
        return self.stats.cluster_sums(C) if self._same(bounds) else self.source.cluster_sums(C, bounds)

    def inertia(self, centers, bounds) -> float:
        C = check_centers(centers, self.n_features)
        return self.stats.inertia(C) if self._same(bounds) else self.source.inertia(C, bounds)


def _block_counts(counts: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``counts`` summed into a coarser ``shape`` whose sides divide its own by powers of two; else None.

    Exact: a cell on an axis of ``m`` cells is ``floor(u m)`` with ``u = (clip(x) - lower) / width``;
    on ``m 2^j`` cells it is ``floor(u m 2^j)``, and ``u m 2^j`` is ``u m`` times a power of two exactly
    (no rounding), so ``floor(u m 2^j) // 2^j == floor(u m)`` (the clamp of the upper edge too): every
    row is in the block of the cell it would be counted in directly.
    """
    fine = counts.shape
    if len(shape) != len(fine):
        return None
    factors = []
    for m, f in zip(shape, fine):
        r = f // m if m > 0 and f % m == 0 else 0
        if r < 1 or r & (r - 1):
            return None
        factors.append(r)
    split = sum(((m, r) for m, r in zip(shape, factors)), ())
    return counts.reshape(split).sum(axis=tuple(range(1, 2 * len(shape), 2)))


class GridSource(_OnePass):
    """A :class:`~dpcore.sources.DataSource` whose row count, rows outside the box and one histogram come
    from ONE pass over a source's rows.

    A fit that counts the rows (for its noisy size and its raw facts) and then reads a histogram
    reads the data twice; a source offering ``_grid_profile`` (:class:`~dpcore.sources.ibis_source.IbisSource`)
    computes both from the same aggregate.  Over the histogram's box, ``count``, ``n_dropped``,
    ``n_outside`` and ``grid_counts`` of that shape (or of a coarser one whose sides divide it by
    powers of two, exactly: :func:`_block_counts`) come from memory; anything else goes to the
    underlying source.

    Parameters
    ----------
    source : DataSource with a ``_grid_profile`` method
    bounds : Domain or (lower, upper), public
    shape : tuple of int
        The histogram: public inputs only (PrivTree's finest level, or the largest grid a fit's rule
        can ask for, which its noisy size then may or may not choose).

    Notes
    -----
    **Privacy.** Exact values, as every source's; the histogram is the one :meth:`grid_counts` would
    compute, so every noisy step on it keeps its sensitivity.  How many passes a fit makes then
    depends on public inputs and released values only (its noisy size choosing the grid).
    """

    def __init__(self, source, bounds, shape):
        super().__init__(source, as_domain(bounds, source.n_features))
        self.shape = check_shape(shape, source.n_features)
        flat, (self._total, self._finite, self._inside) = source._grid_profile(self.domain, self.shape)
        self.counts = flat.reshape(self.shape) if len(self.shape) <= 32 else flat

    def __repr__(self) -> str:
        return f"GridSource({self.source!r}, {self.shape})"

    def count(self) -> int:
        return self._finite

    def n_dropped(self) -> int:
        return self._total - self._finite

    def n_outside(self, bounds) -> int:
        return self._finite - self._inside if self._same(bounds) else self.source.n_outside(bounds)

    def grid_counts(self, bounds, shape) -> np.ndarray:
        shape = check_shape(shape, self.n_features)
        if self._same(bounds) and len(shape) <= 32:
            got = _block_counts(self.counts, shape)
            if got is not None:
                return got
        return self.source.grid_counts(bounds, shape)

    def cluster_sums(self, centers, bounds):
        return self.source.cluster_sums(centers, bounds)

    def inertia(self, centers, bounds) -> float:
        return self.source.inertia(centers, bounds)


def one_pass_histogram(source, bounds, shape):
    """``source`` as a :class:`GridSource` of ``shape`` when that saves a pass, else ``source`` itself.

    A source whose passes read the data and that can profile a histogram (``_grid_profile``) and has
    not counted its rows yet is wrapped: its first pass gives the row count, the rows outside the box
    and the histogram together.  An in-memory array, a source whose counts are already known (cached
    by an earlier fit) or one that cannot is returned as it is.

    Parameters
    ----------
    source : DataSource
    bounds : Domain or (lower, upper), public
    shape : tuple of int, public

    Returns
    -------
    DataSource
    """
    profile = getattr(source, "_grid_profile", None)
    counted = getattr(source, "_counted", None)
    if not callable(profile) or not callable(counted) or counted(bounds):
        return source
    return GridSource(source, bounds, shape)
