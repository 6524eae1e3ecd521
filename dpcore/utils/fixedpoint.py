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

import numba
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
    z = np.asarray(z)
    if z.dtype not in (np.float64, np.float32):
        z = z.astype(np.float64)
    q = np.empty(z.shape, dtype=np.int64)
    # One compiled pass (NumPy took five: product, sum, floor, cast and the checks): the same float64
    # operations in the same order, so the same integers.
    if z.size and not _quantize_into(np.ascontiguousarray(z).reshape(-1), q.reshape(-1), float(SUM_SCALE),
                                     2.0 ** (62 - SUM_BITS)):
        raise ValueError("fixed-point coordinates must be finite and normalised to the public box")
    return q


@numba.njit(cache=True, nogil=True)
def _quantize_into(z, out, scale, limit):  # pragma: no cover - compiled
    """``out[i] = floor(float64(z[i]) * scale + 0.5)``; False (out unfinished) at a value not finite or ``>= limit``."""
    for i in range(z.size):
        x = np.float64(z[i])
        if not (abs(x) < limit):      # NaN fails too
            return False
        out[i] = np.int64(np.floor(x * scale + 0.5))
    return True


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


#: Rows quantised at a time in an exact per-label sum (bounds the int64 copy: 2^20 rows x d x 8 bytes).
_EXACT_CHUNK = 1 << 20


class FixedPoint:
    """Exact sums in fixed point: the array ``q / 2^bits`` with integer ``q`` (int64, or Python ints).

    What a noised sum hands to :class:`~dpcore.privacy.mechanisms.NoiseSource`: the mechanism then
    rounds ``q`` onto its public lattice by an exact shift (never through a float), so the noised
    query's input differs between neighbouring datasets by at most its stated sensitivity, exactly.

    Parameters
    ----------
    q : array-like of int
        The numerators (int64; an object array of Python ints where int64 could overflow).
    bits : int, default :data:`SUM_BITS`
        The denominator is ``2^bits``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.utils.fixedpoint import FixedPoint, quantize
    >>> s = FixedPoint(quantize(np.array([0.25, 0.5])).reshape(1, 2))
    >>> s.to_float()
    array([[0.25, 0.5 ]])
    """

    __slots__ = ("q", "bits")

    def __init__(self, q, bits: int = SUM_BITS):
        q = np.asarray(q)
        if q.dtype.kind not in "iuO":
            raise TypeError(f"FixedPoint needs integer numerators, got dtype {q.dtype}")
        self.q = q.astype(np.int64) if q.dtype.kind == "u" else q
        self.bits = int(bits)

    @property
    def shape(self) -> tuple:
        return self.q.shape

    @property
    def size(self) -> int:
        return int(self.q.size)

    def to_float(self) -> np.ndarray:
        """The values as float64 (each rounded once to the nearest double; post-processing only).

        Returns
        -------
        ndarray of float64, shape of ``q``.
        """
        if self.q.dtype == object:
            flat = np.array([float(v) for v in self.q.ravel()], dtype=np.float64)
            return flat.reshape(self.q.shape) / (1 << self.bits)
        return self.q.astype(np.float64) / (1 << self.bits)

    def on_lattice(self, gamma: float) -> np.ndarray:
        """``floor(value / gamma)`` exactly, for a power of two ``gamma >= 2^-bits`` (an integer shift of ``q``).

        Parameters
        ----------
        gamma : float
            A power of two, at least ``2^-bits``.

        Returns
        -------
        ndarray of int64 (object of Python ints where ``q`` is).

        Raises
        ------
        ValueError
            ``gamma`` is not a power of two at least ``2^-bits``.

        Notes
        -----
        ``floor(a) - floor(b) < a - b + 1``: on the lattice, each coordinate of a neighbour's sum moves
        by at most its change in lattice units plus one (the ``m gamma`` that a mechanism adds to the
        sensitivity it states).
        """
        m, e = np.frexp(gamma)
        shift = int(e) - 1 + self.bits
        if m != 0.5 or shift < 0:
            raise ValueError(f"the lattice step must be a power of two >= 2^-{self.bits}, got {gamma!r}")
        if self.q.dtype == object:
            return np.array([int(v) >> shift for v in self.q.ravel()], dtype=object).reshape(self.q.shape)
        return self.q >> shift

    def __repr__(self) -> str:
        return f"FixedPoint(shape={self.shape}, bits={self.bits})"


def label_sums(labels: np.ndarray, values: np.ndarray, k: int, *,
               scale: float = 1.0) -> tuple[np.ndarray, FixedPoint]:
    """Exact per-label counts and sums of quantised values: ``(counts int64 (k,), FixedPoint (k, d))``.

    Parameters
    ----------
    labels : ndarray (n,) of int in ``[0, k)``
        Each row's cluster, a function of that row and public or released values only.
    values : ndarray (n, d) of float
        The rows' contributions; ``values / scale`` must lie in ``[-1, 1]`` (normalised to a public box).
    k : int
    scale : float, default 1
        Public scale: the sums are of ``quantize(values / scale)``, i.e. in units of ``scale``.

    Returns
    -------
    counts : ndarray (k,) int64
    sums : FixedPoint (k, d), in units of ``scale``

    Notes
    -----
    Integer additions in int64 (one compiled pass, chunks of ``2^20`` rows quantised at a time): exact, so
    the result does not depend on the order of the rows.
    """
    values = np.asarray(values)
    n = values.shape[0]
    values = values.reshape(n, values.shape[1] if values.ndim == 2 else 1)
    return _exact_label_sums(labels, values, k, lambda chunk: quantize(chunk / scale))


def quantized_label_sums(labels: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, FixedPoint]:
    """:func:`label_sums` of values already quantised: ``q = quantize(values / scale)``, computed once.

    For an iterative fit that sums the same rows under new labels at every step (zCDP-Lloyd): the
    quantisation, a pass over the whole data, is done once instead of once a step; the sums are the same
    integers as :func:`label_sums` would give.

    Parameters
    ----------
    labels : ndarray (n,) of int in ``[0, k)``
    q : ndarray (n, d) of integers (any integer dtype, e.g. int32: ``|q| <= 2^SUM_BITS``)
    k : int

    Returns
    -------
    counts : ndarray (k,) int64
    sums : FixedPoint (k, d), in the units ``q`` was quantised in
    """
    q = np.asarray(q)
    if q.dtype.kind not in "iu":
        raise ValueError(f"quantised values must be integers, got {q.dtype}")
    return _exact_label_sums(labels, q.reshape(q.shape[0], q.shape[1] if q.ndim == 2 else 1), k, lambda chunk: chunk)


def _exact_label_sums(labels, values, k, to_fixed):
    """Per-label counts and int64 sums of ``to_fixed(chunk)`` over chunks of ``_EXACT_CHUNK`` rows."""
    labels = np.asarray(labels, dtype=np.int64)
    n, d = values.shape
    counts = np.bincount(labels, minlength=k).astype(np.int64) if n else np.zeros(k, dtype=np.int64)
    if counts.size != k:      # a label >= k (bincount refuses negative ones): the compiled loop would write outside
        raise ValueError(f"labels must lie in [0, {k}), got {int(labels.max())}")
    sums = np.zeros((k, d), dtype=np.int64)
    for s in range(0, n, _EXACT_CHUNK):
        lab = labels[s:s + _EXACT_CHUNK]
        _add_label_sums(lab, np.ascontiguousarray(to_fixed(values[s:s + _EXACT_CHUNK])), sums)
    return counts, FixedPoint(sums)


@numba.njit(cache=True, nogil=True)
def _add_label_sums(labels, q, out):  # pragma: no cover - compiled
    """``out[labels[i]] += q[i]`` for every row, in int64 (exact)."""
    for i in range(q.shape[0]):
        row = out[labels[i]]
        for j in range(q.shape[1]):
            row[j] += q[i, j]


def weighted_label_sums(labels: np.ndarray, q: np.ndarray, weights: np.ndarray, k: int, *, weight_bits: int,
                        q_bits: int = SUM_BITS) -> tuple[FixedPoint, FixedPoint]:
    """Exact per-label sums of integer row weights and of weight times quantised value.

    For contribution bounding by weighting (:func:`dpcore.utils.contributions.contribution_weights`): a
    row of weight ``w / 2^weight_bits`` adds ``w`` to its label's count and ``w q`` to its sums.

    Parameters
    ----------
    labels : ndarray (n,) of int in ``[0, k)``
    q : ndarray (n, d) of integers, ``|q| <= 2^q_bits`` (:func:`quantize` of values normalised to ``[-1, 1]``)
    weights : ndarray (n,) of int in ``[0, 2^weight_bits]``
    k : int
    weight_bits, q_bits : int

    Returns
    -------
    counts : FixedPoint (k,), ``weight_bits`` bits
    sums : FixedPoint (k, d), ``q_bits + weight_bits`` bits

    Notes
    -----
    Each chunk of ``2^20`` rows is summed in int64 (``|w q| <= 2^(q_bits + weight_bits)``, so below
    ``2^57`` at the defaults), and the chunks' partial sums are added as Python integers: exact at any
    size, whatever the order of the rows.
    """
    labels = np.asarray(labels, dtype=np.int64)
    q = np.asarray(q)
    q = q.reshape(q.shape[0], q.shape[1] if q.ndim == 2 else 1)
    w = np.ascontiguousarray(weights, dtype=np.int64)
    n, d = q.shape
    if labels.size and (labels.min() < 0 or labels.max() >= k):
        raise ValueError(f"labels must lie in [0, {k})")
    counts = np.zeros(k, dtype=object)
    sums = np.zeros((k, d), dtype=object)
    counts[:], sums[:] = 0, 0
    for s in range(0, n, _EXACT_CHUNK):
        c = np.zeros(k, dtype=np.int64)
        part = np.zeros((k, d), dtype=np.int64)
        chunk = np.ascontiguousarray(q[s:s + _EXACT_CHUNK], dtype=np.int64)
        _add_weighted_label_sums(labels[s:s + _EXACT_CHUNK], chunk, w[s:s + _EXACT_CHUNK], c, part)
        counts += c.astype(object)
        sums += part.astype(object)
    return (FixedPoint(_int64_if_it_fits(counts), int(weight_bits)),
            FixedPoint(_int64_if_it_fits(sums), int(q_bits) + int(weight_bits)))


def _int64_if_it_fits(a: np.ndarray) -> np.ndarray:
    """An object array of Python ints as int64 when every value fits (else unchanged: exact either way)."""
    return a.astype(np.int64) if all(abs(int(v)) < 2 ** 62 for v in a.ravel()) else a


@numba.njit(cache=True, nogil=True)
def _add_weighted_label_sums(labels, q, w, counts, out):  # pragma: no cover - compiled
    """``counts[labels[i]] += w[i]``, ``out[labels[i]] += w[i] q[i]`` for every row, in int64 (exact per chunk)."""
    for i in range(q.shape[0]):
        lab = labels[i]
        counts[lab] += w[i]
        for j in range(q.shape[1]):
            out[lab, j] += w[i] * q[i, j]
