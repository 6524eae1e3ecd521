"""A query's values on a public lattice: the integer path every noisy release of :mod:`.mechanisms` takes.

Why integer noise on a lattice, and not float noise, is told in :mod:`dpcore.privacy.mechanisms`.
These helpers turn a query (a float array, or an exact :class:`~dpcore.utils.fixedpoint.FixedPoint`
sum) into lattice indices and back, decide the integer path, and refuse a noise scale the samplers
cannot draw, all from public inputs (a shape, a lattice step, a scale), never from the values.
"""
from __future__ import annotations

import numpy as np

from ..utils.fixedpoint import FixedPoint
from .samplers import MAX_SCALE

#: Lattice indices up to this stay int64; beyond, Python integers (exact at any size).
_INT64_SAFE = 2.0 ** 62


def _integer_query(values: np.ndarray, integer) -> bool:
    """Decide the integer path: an explicit ``integer`` flag, else the dtype."""
    if integer is None:
        return values.dtype.kind in "biu"
    if integer and values.dtype.kind not in "biu":
        if not np.all(np.isfinite(values)) or not np.array_equal(values, np.rint(values)):
            raise ValueError("integer=True needs whole-number values (counts)")
    return bool(integer)


def _as_float(values) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("the query's values must be finite numbers")
    return arr


def _size(values) -> int:
    """The number of coordinates of a query (public: its shape), without reading the values."""
    return int(values.size) if isinstance(values, FixedPoint) else int(np.size(values))


def _on_lattice(values, gamma: float) -> np.ndarray:
    """The query's values in lattice units: an exact shift for fixed-point sums, else ``rint(value / gamma)``.

    ``value / gamma`` is exact in binary floating point (``gamma`` is a power of two) and so is
    ``rint``; indices beyond int64 are carried as Python integers, so nothing about the values changes
    the lattice, the scale or the ledger.
    """
    if isinstance(values, FixedPoint):
        return values.on_lattice(gamma)
    return _integer_indices(np.rint(_as_float(values) / gamma))


def _integer_indices(arr: np.ndarray) -> np.ndarray:
    """An integer query's whole-number values as int64, or as Python integers beyond int64's range.

    ``astype(np.int64)`` turns a whole float of 2^63 or more (or a uint64 above 2^63 - 1) into
    INT64_MIN: one more count there would move the query by 2^64, not by its sensitivity.  As
    :func:`_on_lattice` does, such values are carried exactly; nothing about them changes the
    scale or the ledger.
    """
    if arr.size and arr.dtype.kind in "fu" and np.abs(arr).max() >= _INT64_SAFE:
        return np.array([int(v) for v in arr.ravel()], dtype=object).reshape(arr.shape)
    return arr.astype(np.int64)


def _from_lattice(k: np.ndarray, gamma: float) -> np.ndarray:
    """Noisy lattice indices back to values (post-processing)."""
    if k.dtype == object:
        return np.array([float(v) for v in k.ravel()], dtype=np.float64).reshape(k.shape) * gamma
    return k * gamma


def _sampled(kind: str, value: float, gamma: float) -> dict:
    """What a ledger entry says was drawn: the distribution, its parameter in lattice units, the lattice step."""
    if kind == "laplace":
        return {"distribution": "discrete laplace", "parameter": "scale", "value": float(value),
                "granularity": float(gamma), "measure": "pure"}
    return {"distribution": "discrete gaussian", "parameter": "sigma", "value": float(value),
            "granularity": float(gamma), "measure": "approximate"}


def _check_scale(t: float, what: str) -> float:
    """Refuse a noise scale the sampler cannot draw, from public inputs only (before any value is read)."""
    if t > MAX_SCALE:
        raise ValueError(f"{what} noise scale {t:g} exceeds {MAX_SCALE:g} lattice units: the budget is too small "
                         "for this query (choose a larger epsilon)")
    return t
