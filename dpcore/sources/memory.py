"""The in-memory source: a numpy array, aggregated by single-pass numba kernels."""
from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..utils.fixedpoint import FixedPoint
from ..utils.validation import check_array
from . import _kernels as K
from ._pipeline import Pipeline
from .base import as_domain, check_centers, check_shape

# numba's default (workqueue) threading layer must not be entered from two threads at once;
# Streamlit runs sessions in threads, so the parallel kernels take turns.
_LOCK = threading.Lock()


class ArraySource:
    """A :class:`~dpcore.sources.DataSource` over an in-memory array (no copy when already float64, C order).

    Parameters
    ----------
    X : array-like (n, d) or pandas.DataFrame
        Finite numeric data (validated by :func:`dpcore.utils.validation.check_array`,
        which raises on NaN: drop NaN rows first, or open a file source, which
        skips and counts them).
    columns : sequence of str, optional
        Column names; default ``x0, x1, ...`` (a DataFrame's own names).
    min_samples : int, default 1

    Attributes
    ----------
    X : ndarray (n, d) float64, the data (not private)

    Notes
    -----
    Each aggregate is one parallel pass over the rows with per-thread
    partials of O(k d) or O(cells) memory (:mod:`dpcore.sources._kernels`).
    """

    engine = "numpy"

    def __init__(self, X, columns=None, *, min_samples: int = 1):
        if columns is None and hasattr(X, "columns"):
            columns = [str(c) for c in X.columns]
        self.X = check_array(X, min_samples=min_samples)
        d = self.X.shape[1]
        self.columns = tuple(columns) if columns is not None else tuple(f"x{j}" for j in range(d))
        if len(self.columns) != d:
            raise ValueError(f"{len(self.columns)} column names given for {d} columns")
        self.n_features = d
        self.on_pass: Callable[[str], None] | None = None

    def __repr__(self) -> str:
        return f"ArraySource({self.X.shape[0]} rows x {self.n_features} columns)"

    def _pass(self, label):
        if self.on_pass is not None:
            self.on_pass(label)

    def count(self) -> int:
        return int(self.X.shape[0])

    def n_dropped(self) -> int:
        return 0

    def n_outside(self, bounds) -> int:
        dom = as_domain(bounds, self.n_features)
        with _LOCK:
            return K.n_outside(self.X, dom.lower, dom.upper)

    def column_range(self):
        return self.X.min(axis=0), self.X.max(axis=0)

    def grid_counts(self, bounds, shape) -> np.ndarray:
        dom = as_domain(bounds, self.n_features)
        shape = check_shape(shape, self.n_features)
        self._pass("grid counts")
        with _LOCK:
            flat = K.grid_counts(self.X, dom.lower, dom.upper, shape)
        return flat.reshape(shape) if len(shape) <= 32 else flat

    def cluster_sums(self, centers, bounds):
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        self._pass("cluster sums")
        with _LOCK:
            counts, sums = K.cluster_sums(self.X, dom.lower, dom.upper, C)
        return counts, FixedPoint(sums)

    def _cell_statistics(self, dom, shape):
        """One pass for :func:`dpcore.sources.cells.cell_statistics`: (flat cells, counts, sums, offsets, profile).

        Dense per-worker arrays when the rows are many for the grid (two threads over slices of the
        rows), else per-row cells sorted: the same integers either way.
        """
        self._pass("cell statistics")
        n = self.X.shape[0]
        if 8 * n < int(np.prod(shape)):
            with _LOCK:
                return K.row_cells(self.X, dom.lower, dom.upper, shape)
        acc = K.CellAccumulator(dom.lower, dom.upper, shape)
        step = 1 << 20
        Pipeline(acc.add, acc.buf.shape[0]).run(self.X[s:s + step] for s in range(0, n, step))
        return acc.result()

    def inertia(self, centers, bounds) -> float:
        from ..utils.nearest import inertia
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        self._pass("inertia")
        Xc, _ = dom.clip(self.X)
        return inertia(dom.normalize(Xc), C)


class WeightedArraySource(ArraySource):
    """An in-memory source whose rows carry integer weights (contribution bounding by weighting, issue 23).

    Every aggregate is weighted: counts are sums of the weights (a
    :class:`~dpcore.utils.fixedpoint.FixedPoint` with ``weight_bits``), coordinate sums are sums of
    weight times the quantised coordinate (bits ``SUM_BITS + weight_bits``), all exact integers.

    Parameters
    ----------
    X : array-like (n, d)
    weights : ndarray (n,) int, in units of ``2^-weight_bits`` (:func:`dpcore.utils.contributions.contribution_weights`)
    weight_bits : int
    columns : sequence of str, optional
    """

    def __init__(self, X, weights, *, weight_bits: int, columns=None):
        super().__init__(X, columns, min_samples=0)
        w = np.asarray(weights, dtype=np.int64)
        if w.shape != (self.X.shape[0],) or (w.size and w.min() < 0):
            raise ValueError("weights must be one non-negative integer per row")
        self.weights = w
        self.weight_bits = int(weight_bits)

    def __repr__(self) -> str:
        return f"WeightedArraySource({self.X.shape[0]} rows x {self.n_features} columns)"

    #: Weighted rows have no fine-cell statistics (their counts are fixed point): Lloyd assigns rows.
    _cell_statistics = None  # type: ignore[assignment]

    def count(self) -> FixedPoint:  # type: ignore[override]
        return FixedPoint(np.array(int(self.weights.sum()), dtype=np.int64), self.weight_bits)

    def grid_counts(self, bounds, shape) -> FixedPoint:  # type: ignore[override]
        dom = as_domain(bounds, self.n_features)
        shape = check_shape(shape, self.n_features)
        self._pass("grid counts")
        Xc, _ = dom.clip(self.X)
        flat = np.zeros(self.X.shape[0], dtype=np.int64)
        for j, m in enumerate(shape):
            idx = np.minimum(np.floor((Xc[:, j] - dom.lower[j]) / dom.width[j] * m), m - 1).astype(np.int64)
            flat = flat * m + idx
        cells = int(np.prod(shape))
        # Weighted counts of integers below 2^13: float64 bincount is exact below 2^53 (2^40 rows).
        out = np.bincount(flat, weights=self.weights.astype(np.float64), minlength=cells).astype(np.int64)
        return FixedPoint(out.reshape(shape) if len(shape) <= 32 else out, self.weight_bits)

    def cluster_sums(self, centers, bounds):
        from ..utils.fixedpoint import quantize, weighted_label_sums
        from ..utils.nearest import assign
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        self._pass("cluster sums")
        Xc, _ = dom.clip(self.X)
        Z = (Xc - dom.center) * (2.0 / dom.width)
        return weighted_label_sums(assign(Z, C), quantize(Z), self.weights, C.shape[0], weight_bits=self.weight_bits)

    def inertia(self, centers, bounds) -> float:
        """The weighted k-means cost in normalised units (the data owner's figure; not private)."""
        from ..utils.nearest import assign
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        self._pass("inertia")
        Xc, _ = dom.clip(self.X)
        Z = dom.normalize(Xc)
        lab = assign(Z, C)
        d2 = ((Z - C[lab]) ** 2).sum(axis=1)
        return float(np.dot(self.weights.astype(np.float64), d2)) / (1 << self.weight_bits)
