"""One validation layer that every estimator calls: arrays, epsilon, delta, n_clusters.

Bad input gets the same clear, actionable message everywhere.  The public data domain
(``bounds``) is in :mod:`dpcore.utils.domain`; the generator rule in :mod:`dpcore.privacy.rng`.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from sklearn.utils._param_validation import Options

#: Largest epsilon accepted; beyond it noise is negligible and "privacy" is a misnomer.
MAX_EPSILON = 1e4


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
        # Say that such values are present, never how many or where: the count is a fact about the rows
        # (the raw-facts panel, for the data owner, may show it).
        raise ValueError(f"Input {name} contains NaN or infinity: drop or impute the rows with NaN or infinite "
                         "values before clustering")
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




class Checked(Options):
    """A scikit-learn parameter constraint that is one of this module's checks.

    Estimators declare ``_parameter_constraints`` with scikit-learn's own machinery
    (:mod:`sklearn.utils._param_validation`); for ``epsilon``, ``delta`` and ``n_clusters`` the
    constraint is the project's check, so a bad value gets the project's sentence (which the app shows
    and the tests match) rather than scikit-learn's generic one
    (:meth:`dpcore.algorithms.base.DPClusterer._validate_params` re-raises it).

    Parameters
    ----------
    check : callable
        Called with the value; raises ``ValueError`` or ``TypeError`` when the value is invalid.
    description : str
        What a valid value is, in words (scikit-learn's messages and ``str`` show it).
    """

    # An Options subclass only because scikit-learn's make_constraint accepts no other constraint
    # class of a third party; the options themselves are unused.
    def __init__(self, check, description: str):
        super().__init__(object, set())
        self.check = check
        self.description = description

    def is_satisfied_by(self, val) -> bool:
        try:
            self.check(val)
        except (TypeError, ValueError):
            return False
        return True

    def __str__(self) -> str:
        return self.description


#: ``epsilon`` of a private estimator: :func:`check_epsilon`'s rule and sentence.
EPSILON = Checked(check_epsilon, f"a positive finite number at most {MAX_EPSILON:g}")
#: ``delta`` of an estimator that may run without one (pure epsilon-DP steps): [0, 1).
DELTA = Checked(check_delta, "a number in [0, 1)")
#: ``delta`` of an (epsilon, delta)-DP estimator: (0, 1).
DELTA_REQUIRED = Checked(functools.partial(check_delta, required=True), "a number in (0, 1)")
#: ``n_clusters``: a whole number >= 1 (whether it exceeds n is the non-private baselines' data check).
N_CLUSTERS = Checked(check_n_clusters, "a whole number >= 1")
