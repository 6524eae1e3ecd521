"""The public data domain: :class:`Domain` (the bounds) and :func:`check_bounds`.

With the normalisation to ``[-r, r]^d`` that Su et al. (2016, §4.1.1) use to bound
sensitivities.  It lives on the ground floor so that the sources (which clip rows onto the
bounds) never need the privacy layer.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import PrivacyLeakWarning


@dataclass(frozen=True)
class Domain:
    """The public box ``[lower, upper]`` that contains the data, in data units.

    Attributes
    ----------
    lower, upper : ndarray (d,)
    from_data : bool
        True when the box was read from the data (not private).
    """

    lower: np.ndarray
    upper: np.ndarray
    from_data: bool = False

    @property
    def d(self) -> int:
        return self.lower.size

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    @property
    def center(self) -> np.ndarray:
        return (self.upper + self.lower) / 2

    def clip(self, X: np.ndarray) -> tuple[np.ndarray, int]:
        """Clip rows into the box; return the clipped copy and how many rows moved."""
        # Column extremes first: data inside the box (the common case) costs two passes, no copy.
        if X.shape[0] == 0 or self._inside(X):
            return X, 0
        outside = ((X < self.lower) | (X > self.upper)).any(axis=1)
        return np.clip(X, self.lower, self.upper), int(outside.sum())

    def _inside(self, X: np.ndarray) -> bool:
        """Every row of ``X`` (n, d) lies in the box, from the columns' extremes.

        Up to 8 columns: column by column (numpy's axis-0 reduction of a tall, narrow C-ordered array is
        up to ~3x slower); more (MNIST's 784): one axis-0 reduction (column by column is ~10x slower there).
        """
        if X.shape[1] <= 8:
            return all(X[:, j].min() >= self.lower[j] and X[:, j].max() <= self.upper[j] for j in range(X.shape[1]))
        return bool((X.min(axis=0) >= self.lower).all() and (X.max(axis=0) <= self.upper).all())

    def contains(self, X: np.ndarray) -> np.ndarray:
        """Boolean mask (n,) of the rows inside the box."""
        return np.asarray(((X >= self.lower) & (X <= self.upper)).all(axis=1))

    def normalize(self, X, r: float = 1.0) -> np.ndarray:
        """Affine map of each dimension from ``[lower, upper]`` to ``[-r, r]`` (Su et al. §4.1.1)."""
        Z = np.subtract(X, self.center, dtype=float)
        Z *= 2 * r / self.width  # in place: one n x d allocation, not two
        return Z

    def denormalize(self, Z, r: float = 1.0) -> np.ndarray:
        """Inverse of :meth:`normalize`."""
        return np.asarray(Z, dtype=float) * (self.width / (2 * r)) + self.center

    def as_lists(self) -> tuple[list[float], list[float]]:
        return self.lower.tolist(), self.upper.tolist()


def check_bounds(bounds, X: np.ndarray | None = None, *, d: int | None = None) -> Domain:
    """Validate public ``bounds`` ``(lower, upper)``, scalars or arrays of shape (d,).

    When ``bounds`` is None the data's own range is used and a
    :class:`~dpcore.exceptions.PrivacyLeakWarning` is issued: the min and max
    of the data are then released implicitly and the guarantee no longer
    covers the records at the extremes.

    Raises
    ------
    ValueError
        Wrong shape, non-finite values, or ``lower >= upper`` in some dimension.
    """
    if d is None:
        if X is None:
            raise ValueError("check_bounds needs X or d")
        d = X.shape[1]
    if bounds is None:
        if X is None:
            raise ValueError("bounds are required")
        if X.shape[0] == 0:
            raise ValueError("bounds were not given and X has no rows to read them from: "
                             "pass bounds=(lower, upper) known without looking at the data")
        warnings.warn(
            "No public bounds were given, so they are read from the data (its min and max). "
            "That release is NOT differentially private for the extreme records: anyone who sees "
            "the output can learn the data's range. Pass bounds=(lower, upper) known without "
            "looking at the data (e.g. the city's bounding box).",
            PrivacyLeakWarning, stacklevel=3)
        lower, upper = X.min(axis=0), X.max(axis=0)
        with np.errstate(over="ignore"):
            span = upper - lower
        _check_span(span, "the data's range")
        # A constant column still needs a non-empty box.
        pad = np.where(span > 0, 0.0, np.maximum(np.abs(upper), 1.0) * 1e-6)
        return Domain(lower - pad, upper + pad, from_data=True)
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (lower, upper) of numbers or of arrays of shape (d,)") from None
    try:
        lower = np.broadcast_to(np.asarray(lower, dtype=float), (d,)).copy()
        upper = np.broadcast_to(np.asarray(upper, dtype=float), (d,)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be scalars or arrays of length {d} (one per column)") from None
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise ValueError("bounds must be finite numbers")
    if np.any(lower >= upper):
        dims = np.flatnonzero(lower >= upper).tolist()
        raise ValueError(f"bounds are inverted or empty in dimension(s) {dims}: each lower bound must be "
                         "smaller than its upper bound")
    with np.errstate(over="ignore"):
        _check_span(upper - lower, "the bounds")
    return Domain(lower, upper)


def _check_span(span: np.ndarray, what: str) -> None:
    """Refuse a box wider than floating point can hold (upper - lower overflows to inf)."""
    if not np.isfinite(span).all():
        dims = np.flatnonzero(~np.isfinite(span)).tolist()
        raise ValueError(f"{what} in dimension(s) {dims} span more than the largest floating-point number "
                         "(about 1.8e308): rescale those columns (e.g. to other units) before clustering")
