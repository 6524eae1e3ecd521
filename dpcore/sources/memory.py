"""The in-memory source: a numpy array, aggregated by single-pass numba kernels."""
from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..utils.fixedpoint import FixedPoint
from ..utils.validation import check_array
from . import _kernels as K
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

    def inertia(self, centers, bounds) -> float:
        from ..utils.nearest import inertia
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        self._pass("inertia")
        Xc, _ = dom.clip(self.X)
        return inertia(dom.normalize(Xc), C)
