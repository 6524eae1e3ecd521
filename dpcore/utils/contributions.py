"""Bounding each privacy unit's contribution: at most L rows per unit (sampling), or weights summing to L.

A *privacy unit* is whatever must be protected as a whole: a user, all of whose check-ins form one
unit.  Neighbouring datasets then differ by all the rows of one unit (issue 23), and a unit with m
rows would be protected only at m epsilon by a row-level release (group privacy, Dwork & Roth 2014,
Thm. 2.2).  Bounding caps m at a public ``L`` before any noise:

* **sampling** (:func:`sample_mask`): keep at most ``L`` rows of each unit, chosen uniformly by a keyed
  hash whose key comes from the secure generator (so nobody can predict which rows are kept).  Then
  every query's sensitivity is ``L`` times one row's;
* **weighting** (:func:`contribution_weights`; Amin et al. 2019): every row of a unit with ``m`` rows
  weighs ``min(1, L / m)``, quantised down to ``2^-WEIGHT_BITS`` so that a unit's weights sum to at
  most ``L`` exactly; a weighted count or sum moves by at most ``L`` times one row's bound.

The keyed hash is portable arithmetic on the public fixed-point grid of the rows' normalised
coordinates (:mod:`dpcore.utils.fixedpoint`): ``s = sum_j A_j (q_j + 2^SUM_BITS) mod P``,
``t = (k1 s + k2) mod P``, ``h = (t^2 + k1) mod P`` with ``P = 2^31 - 1`` and the secret ``k1, k2`` from
the key (a key that only shifted ``s`` would leave the order, and so the rows kept, predictable);
every product stays below 2^62, and the engines compute the same integers in SQL
(:func:`dpcore.sources.sampling.sampled`), so DuckDB, Spark, PostgreSQL and numpy keep
the same rows.  Ties (the same unit, hash and coordinates) are identical rows: which one is kept does
not change any aggregate.

This module knows no noise: the key is an argument (the estimator draws it), and it runs below both
the sources and the privacy layer.

References
----------
Amin, Dick, Kulesza, Munoz Medina, Vassilvitskii (2019). Bounding user contributions: a bias-variance
trade-off in differential privacy. ICML.
Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo, Gipson (2020). Differentially private SQL with
bounded user contribution. PoPETs.
"""
from __future__ import annotations

import numpy as np

from .domain import Domain
from .fixedpoint import SUM_BITS, quantize

#: The hash's modulus: the Mersenne prime 2^31 - 1 (products with coordinates below 2^26 stay in int64).
HASH_PRIME = (1 << 31) - 1
#: One odd multiplier per coordinate (cycled beyond 8 columns), each below 2^31.
HASH_MULTIPLIERS = (1_000_003, 2_147_483_629, 1_234_567_891, 998_244_353, 1_610_612_741, 805_306_457,
                    402_653_189, 201_326_611)
#: Bits of a quantised weight: weights are multiples of 2^-WEIGHT_BITS in [0, 1].
WEIGHT_BITS = 12


def check_max_contributions(value, *, allow_auto: bool = True) -> int | str:
    """A public bound L on the rows one unit may contribute: a whole number >= 1 (or ``"auto"``).

    Returns
    -------
    int or "auto"

    Raises
    ------
    ValueError
        Anything else, with a sentence.
    """
    if allow_auto and isinstance(value, str) and value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        also = ' or "auto"' if allow_auto else ""
        raise ValueError(f"max_contributions must be a whole number of rows >= 1 per privacy unit{also}, "
                         f"got {value!r}")
    return int(value)


def unit_codes(ids) -> tuple[np.ndarray, int]:
    """Integer codes ``0 .. n_units - 1`` of the rows' privacy-unit ids (ints or strings), and ``n_units``.

    Returns
    -------
    codes : ndarray (n,) int64
    n_units : int
    """
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"privacy_id must be one id per row (1-D), got shape {ids.shape}")
    if ids.dtype.kind == "f" and not np.isfinite(ids).all():
        raise ValueError("privacy_id has missing values: every row needs the id of its privacy unit")
    if ids.dtype == object and any(v is None for v in ids):
        raise ValueError("privacy_id has missing values: every row needs the id of its privacy unit")
    uniq, codes = np.unique(ids, return_inverse=True)
    return codes.astype(np.int64), int(uniq.size)


def hash_keys(key: int) -> tuple[int, int]:
    """The two secret multipliers of the hash from one key: ``k1`` in ``[1, P)``, ``k2`` in ``[0, P)``.

    Returns
    -------
    (k1, k2) : ints
    """
    key = int(key)
    return key % (HASH_PRIME - 1) + 1, (key // HASH_PRIME) % HASH_PRIME


def keyed_hash(Xc: np.ndarray, domain: Domain, key: int) -> np.ndarray:
    """The portable keyed hash of each (clipped) row (see the module docstring).

    Parameters
    ----------
    Xc : ndarray (n, d), rows clipped to ``domain``
    domain : Domain, the public bounds
    key : int in ``[0, P^2)``, secret, from the secure generator

    Returns
    -------
    ndarray (n,) int64 in ``[0, P)``
    """
    q = quantize((Xc - domain.center) * (2.0 / domain.width)) + (1 << SUM_BITS)     # in [0, 2^(SUM_BITS+1)]
    s = np.zeros(q.shape[0], dtype=np.int64)
    for j in range(q.shape[1]):
        s = (s + HASH_MULTIPLIERS[j % len(HASH_MULTIPLIERS)] * q[:, j]) % HASH_PRIME
    k1, k2 = hash_keys(key)
    t = (s * k1 + k2) % HASH_PRIME
    return (t * t + k1) % HASH_PRIME


def sample_mask(Xc: np.ndarray, codes: np.ndarray, max_contributions: int, domain: Domain, key: int) -> np.ndarray:
    """Which rows to keep: the ``L`` rows of each unit with the smallest keyed hash (then coordinates).

    Parameters
    ----------
    Xc : ndarray (n, d), rows clipped to the public bounds
    codes : ndarray (n,) int, the rows' unit codes (:func:`unit_codes`)
    max_contributions : int, L
    domain : Domain
    key : int, the hash key

    Returns
    -------
    ndarray (n,) bool
    """
    n = Xc.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    h = keyed_hash(Xc, domain, key)
    # Order by unit, then hash, then the coordinates (ties are identical rows).
    order = np.lexsort(tuple(Xc[:, j] for j in range(Xc.shape[1] - 1, -1, -1)) + (h, codes))
    sorted_codes = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    rank = np.arange(n) - first
    keep = np.zeros(n, dtype=bool)
    keep[order[rank < int(max_contributions)]] = True
    return keep


def contribution_weights(codes: np.ndarray, max_contributions: int) -> np.ndarray:
    """Each row's weight ``min(1, L / m)`` in units of ``2^-WEIGHT_BITS``, rounded down (Amin et al. 2019).

    Parameters
    ----------
    codes : ndarray (n,) int, the rows' unit codes
    max_contributions : int, L

    Returns
    -------
    ndarray (n,) int64 in ``[0, 2^WEIGHT_BITS]``; a unit's weights sum to at most ``L 2^WEIGHT_BITS``.
    """
    counts = np.bincount(codes) if codes.size else np.zeros(0, dtype=np.int64)
    one = 1 << WEIGHT_BITS
    per_unit = np.minimum(one, (int(max_contributions) * one) // np.maximum(counts, 1))
    return per_unit[codes].astype(np.int64)


def contribution_histogram(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many units contributed how many rows: ``(rows per unit, number of units)``, sorted (raw facts).

    Returns
    -------
    (values, counts) : ndarrays of int
    """
    per_unit = np.bincount(codes) if codes.size else np.zeros(0, dtype=np.int64)
    return np.unique(per_unit[per_unit > 0], return_counts=True)
