"""Public fixed-point coordinates, so that every noised sum is an exact integer sum.

A sum that gets noise must be the exact sum of the rows' contributions: then one row moves it by at
most its stated sensitivity, whatever the order of addition (float running sums do not have that
property: values at binade edges round differently in neighbouring sums, issue 29).  So every
coordinate that enters a noised sum is first **normalised to the public box** (``z`` in ``[-r, r]``,
:meth:`dpcore.utils.domain.Domain.normalize`) and **quantised to a public grid**:
``q = floor(z * 2^SUM_BITS + 1/2)``, an int64.  Sums of ``q`` are exact in int64 (numpy), ``BIGINT`` /
``HUGEINT`` (DuckDB, Spark, PostgreSQL) in any order.

Public pre-processing, with a stated error: ``|q / 2^SUM_BITS - z| <= 2^-(SUM_BITS + 1)`` per
coordinate (2^-25 of the box's half-width at the default), and ``|q| <= r 2^SUM_BITS`` when
``|z| <= r``, so the integer sum's L1 sensitivity per coordinate is ``r 2^SUM_BITS`` exactly.

Headroom: with ``SUM_BITS = 24`` and r = 1 each ``|q| <= 2^24``, so an int64 sum holds up to
``2^39 ~ 5.5 x 10^11`` rows before it could overflow (the engines sum in 128-bit or DECIMAL anyway).
"""
from __future__ import annotations

import numpy as np

#: Bits after the binary point of a quantised normalised coordinate.  Public: part of every ledger's
#: sensitivity (one row moves a sum of quantised coordinates by at most ``r * 2^SUM_BITS``).
SUM_BITS = 24
#: ``2^SUM_BITS``: quantised units per unit of the normalised coordinate.
SUM_SCALE = 1 << SUM_BITS


def quantize(z) -> np.ndarray:
    """Quantise normalised coordinates onto the public fixed-point grid: ``floor(z 2^SUM_BITS + 1/2)``.

    Parameters
    ----------
    z : array-like of float
        Coordinates already normalised to the public box (``[-r, r]``) and clipped to it.

    Returns
    -------
    ndarray of int64, same shape: ``z`` in units of ``2^-SUM_BITS``.

    Raises
    ------
    ValueError
        A value is not finite or so large that ``z 2^SUM_BITS`` does not fit in int64 (it was not
        clipped to the box).

    Notes
    -----
    Multiplying by a power of two is exact in binary floating point, and ``floor(x + 1/2)`` of a
    double is computed exactly for ``|x| < 2^52``; so ``q`` is a deterministic function of each row
    alone, the same on every machine and engine.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.utils.fixedpoint import SUM_SCALE, quantize
    >>> quantize(np.array([0.5, -1.0, 1.0])) / SUM_SCALE
    array([ 0.5, -1. ,  1. ])
    """
    z = np.asarray(z, dtype=np.float64)
    if z.size and not (np.isfinite(z).all() and np.abs(z).max() < 2.0 ** (62 - SUM_BITS)):
        raise ValueError("fixed-point coordinates must be finite and normalised to the public box")
    return np.floor(z * SUM_SCALE + 0.5).astype(np.int64)


def dequantize(q) -> np.ndarray:
    """Back from fixed point to normalised units: ``q / 2^SUM_BITS`` (exact for |q| < 2^53).

    Parameters
    ----------
    q : array-like of int

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> from dpcore.utils.fixedpoint import SUM_SCALE, dequantize
    >>> float(dequantize(3 * SUM_SCALE // 2))
    1.5
    """
    return np.asarray(q, dtype=np.float64) / SUM_SCALE
