"""One validation layer that every estimator calls.

Bad input gets the same clear, actionable message everywhere.  The public
data domain (``bounds``) lives here too, with the normalisation to
``[-r, r]^d`` that Su et al. (2016, §4.1.1) use to bound sensitivities.
"""
from __future__ import annotations

import functools
import math
import numbers
import secrets
import warnings
from dataclasses import dataclass

import numpy as np

from .exceptions import PrivacyLeakWarning, SeededNoiseWarning

#: Largest epsilon accepted; beyond it noise is negligible and "privacy" is a misnomer.
MAX_EPSILON = 1e4


def secure_generator() -> np.random.Generator:
    """A Generator whose stream no one can reproduce: the generator of every private release.

    AES-128 in counter mode (``randomgen.AESCounter``, hardware AES-NI) when
    the CPU has AES instructions, else ChaCha20 (``randomgen.ChaCha``,
    20 rounds); both are cryptographically secure stream ciphers used as
    BitGenerators, so past and future outputs cannot be predicted from
    observed ones (unlike PCG64, whose state can be recovered from its
    outputs: Bouillaguet, Martinez & Sauvage 2020).  The key is 128 (AES) or
    256 (ChaCha) bits from the operating system's CSPRNG (``secrets``) and is
    never stored, logged or returned: the Generator lives only for one fit.
    Measured (one core, ``python -m benchmarks.noise_speed``): AES-NI about
    2 x 10^8 64-bit words/s, ChaCha20 about 6 x 10^7, OS random bytes
    (``os.urandom``) about 2 x 10^7.

    Returns
    -------
    numpy.random.Generator
    """
    from randomgen import AESCounter, ChaCha  # compiled BitGenerators for numpy

    if _has_aesni():
        return np.random.Generator(AESCounter(key=secrets.randbits(128), counter=0))
    return np.random.Generator(ChaCha(key=secrets.randbits(256), counter=0, rounds=20))


@functools.cache
def _has_aesni() -> bool:
    from randomgen import AESCounter
    return bool(AESCounter(key=0).use_aesni)


def is_seeded(random_state) -> bool:
    """True when ``random_state`` makes the noise reproducible (anything but None)."""
    return random_state is not None


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``random_state`` into the Generator that draws a fit's noise.

    * ``None`` (the default, the only private setting): :func:`secure_generator`,
      a cryptographically secure stream keyed from OS entropy that no one, the
      caller included, can reproduce.
    * an int >= 0 or a SeedSequence: ``numpy.random.default_rng(random_state)``
      (PCG64), reproducible: a *simulation* (tests, papers' figures, teaching
      on public data); estimators warn with
      :class:`~dpcore.exceptions.SeededNoiseWarning`.
    * a Generator: used as is (also a simulation: whoever holds its state
      reproduces the noise).

    Raises
    ------
    TypeError
        For anything else (notably the legacy ``numpy.random.RandomState``,
        which has no ``permuted``/``gumbel`` parity guarantees we rely on).
    ValueError
        For a negative integer.
    """
    if random_state is None:
        return secure_generator()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(random_state, bool):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(random_state if isinstance(random_state, np.random.SeedSequence)
                                     else int(random_state))
    raise TypeError(f"random_state must be None, an int or a numpy.random.Generator, got {type(random_state).__name__}")


def warn_seeded(random_state, *, stacklevel: int = 3) -> None:
    """Issue the :class:`~dpcore.exceptions.SeededNoiseWarning` for a seeded private fit."""
    what = (f"random_state={random_state!r}" if isinstance(random_state, numbers.Integral)
            else f"a caller-supplied {type(random_state).__name__} as random_state")
    warnings.warn(
        f"{what} seeds the privacy noise: the seed reproduces the noise, so anyone who knows it can subtract "
        "the noise and read the exact answers. This result is a simulation, not a private release. "
        "Leave random_state=None (the default) to publish.",
        SeededNoiseWarning, stacklevel=stacklevel + 1)


def check_array(X, *, name: str = "X", min_samples: int = 1) -> np.ndarray:
    """Validate data as a finite float array of shape (n, d).

    Messages follow scikit-learn's wording (so ``check_estimator`` and users who
    know scikit-learn recognise them) and then say what to do.

    Parameters
    ----------
    X : array-like (n, d) or pandas.DataFrame
        Dense numeric data.  Sparse matrices are refused (every algorithm here
        clips and normalises rows, which densifies them anyway).
    name : str, default "X"
        How the data is called in messages.
    min_samples : int, default 1

    Returns
    -------
    ndarray float64 (n, d), C-contiguous.

    Raises
    ------
    TypeError
        Sparse input; non-numeric (text), complex or object columns.
    ValueError
        Wrong number of dimensions, fewer than ``min_samples`` rows, no
        columns, NaN or infinite values.
    """
    if _is_sparse(X):
        raise TypeError(f"Sparse data was passed for {name}, but dense data is required: "
                        "call X.toarray() first (dpcore clips and normalises rows, which densifies them anyway)")
    if hasattr(X, "select_dtypes") and hasattr(X, "columns"):  # pandas DataFrame
        bad = [str(c) for c in X.columns if not np.issubdtype(np.asarray(X[c]).dtype, np.number)
               and not np.issubdtype(np.asarray(X[c]).dtype, np.bool_)]
        if bad:
            raise TypeError(f"{name} has non-numeric column(s) {bad}: choose numeric columns only, "
                            "or convert them to numbers first")
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has complex values; "
                         "pass the real part (X.real) or the magnitude (abs(X))")
    if arr.dtype.kind in "OUSV":
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} contains text or other non-numeric values (argument must be a string or "
                            "a number convertible to float): pass numeric columns only") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 1:
        raise ValueError(f"Expected a 2D array for {name}, got a 1D array instead. Reshape your data either "
                         "using array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
                         "if it contains a single sample.")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got {arr.ndim} dimensions")
    n, d = arr.shape
    if d == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required: "
                         "choose at least one numeric column")
    if n < min_samples:
        raise ValueError(f"Found array with {n} sample(s) (shape=({n}, {d})) while a minimum of {min_samples} "
                         f"is required (at least {min_samples} needed: give more rows of data)")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        bad_rows = int((~finite.all(axis=1)).sum())
        raise ValueError(f"Input {name} contains NaN or infinity: {bad_rows} row(s) with NaN or infinite "
                         "values: drop or impute them before clustering")
    return arr


def _is_sparse(X) -> bool:
    try:
        from scipy import sparse
    except ImportError:  # pragma: no cover - scipy is a hard dependency
        return False
    return sparse.issparse(X)


def check_epsilon(epsilon, *, allow_none: bool = False) -> float | None:
    """Validate a privacy budget: finite, > 0, at most :data:`MAX_EPSILON`.

    Raises
    ------
    ValueError
        Otherwise, saying what range is valid.
    """
    if epsilon is None:
        if allow_none:
            return None
        raise ValueError("epsilon is required for a private algorithm: give a positive number such as 1.0")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a number, got {type(epsilon).__name__}")
    eps = float(epsilon)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be a positive finite number (for example 0.1 to 2), got {epsilon}")
    if eps > MAX_EPSILON:
        raise ValueError(f"epsilon={eps:g} gives no meaningful privacy; use at most {MAX_EPSILON:g} "
                         "(or the non-private 'kmeans' baseline)")
    return eps


def check_delta(delta, *, required: bool = False) -> float:
    """Validate delta in [0, 1) (strictly positive when ``required``).

    Raises
    ------
    ValueError
    """
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a number, got {type(delta).__name__}")
    d = float(delta)
    if not math.isfinite(d) or d < 0 or d >= 1:
        raise ValueError(f"delta must be in [0, 1) and should be much smaller than 1/n, got {delta}")
    if required and d == 0:
        raise ValueError("this algorithm is (epsilon, delta)-DP and needs delta > 0, e.g. delta = 1/n^1.5")
    return d


def check_n_clusters(n_clusters, n_samples: int | None = None) -> int:
    """Validate the number of clusters k: an integer with 1 <= k <= n.

    Raises
    ------
    TypeError, ValueError
    """
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral):
        raise TypeError(f"n_clusters must be a whole number, got {n_clusters!r}")
    k = int(n_clusters)
    if k < 1:
        raise ValueError(f"n_clusters must be at least 1, got {k}")
    if n_samples is not None and k > n_samples:
        raise ValueError(f"n_clusters={k} is larger than the number of points ({n_samples}): "
                         "choose fewer clusters or more data")
    return k


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
        # Column by column: numpy's axis-0 reduction of an (n, d) array is ~15x slower.
        if X.shape[0] == 0 or all(X[:, j].min() >= self.lower[j] and X[:, j].max() <= self.upper[j]
                                  for j in range(X.shape[1])):
            return X, 0
        outside = ((X < self.lower) | (X > self.upper)).any(axis=1)
        return np.clip(X, self.lower, self.upper), int(outside.sum())

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
