"""Preprocessing that keeps a scikit-learn ``Pipeline`` private.

A transformer fitted on the private data (``StandardScaler``, ``MinMaxScaler``,
``PCA``, ...) learns non-private statistics (mean, scale, range, components)
and changes the units the next step sees, so the public ``bounds`` given to a
private estimator after it no longer describe its input.  :class:`BoundsScaler`
maps the *public* bounds to ``[-1, 1]`` without looking at the data; a private
estimator placed after any other fitted transformer warns
(:func:`warn_if_after_fitted_transformer`, called by every private ``fit``).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import NotFittedError

from .exceptions import PrivacyLeakWarning
from .utils.domain import check_bounds
from .utils.validation import check_array

__all__ = ["BoundsScaler", "warn_if_after_fitted_transformer"]


class BoundsScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Affine map of the public box ``bounds`` onto ``feature_range``; learns nothing from the data.

    Parameters
    ----------
    bounds : pair (lower, upper) of scalars or arrays of shape (d,)
        Public bounds in data units, known without looking at the data.
    feature_range : pair of float, default (-1.0, 1.0)
        The output box; give the next private estimator ``bounds=feature_range``.
    clip : bool, default True
        Move rows outside ``bounds`` onto them (as every dpcore estimator does).

    Attributes
    ----------
    n_features_in_ : int
    scale_, min_ : ndarray (d,)
        ``X * scale_ + min_`` maps ``bounds`` onto ``feature_range``; functions of
        the public bounds only.

    Raises
    ------
    ValueError
        From ``fit``: missing, inverted or non-finite bounds, or an empty feature range.

    Notes
    -----
    Privacy: ``fit`` reads only the number of columns, so the map is public and
    the pipeline's guarantee is that of the private estimator after it, whose
    bounds are ``feature_range``.  Each record still maps to one record, so
    add/remove-one neighbours stay neighbours.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from dpcore.preprocessing import BoundsScaler
    >>> from dpcore.algorithms import DPLloyd
    >>> pipe = make_pipeline(BoundsScaler(bounds=(0, 100)), DPLloyd(n_clusters=3, bounds=(-1, 1)))
    """

    def __init__(self, bounds=None, *, feature_range=(-1.0, 1.0), clip: bool = True):
        self.bounds = bounds
        self.feature_range = feature_range
        self.clip = clip

    def fit(self, X, y=None):
        """Check the public bounds against the number of columns of ``X``; no value of ``X`` is read."""
        X = check_array(X)
        if self.bounds is None:
            raise ValueError("BoundsScaler needs public bounds=(lower, upper) in data units; it never reads "
                             "them from the data")
        lo, hi = (float(v) for v in self.feature_range)
        if not lo < hi:
            raise ValueError(f"feature_range must be (low, high) with low < high, got {self.feature_range}")
        domain = check_bounds(self.bounds, d=X.shape[1])
        self.n_features_in_ = X.shape[1]
        self.scale_ = (hi - lo) / domain.width
        self.min_ = lo - domain.lower * self.scale_
        self.bounds_ = domain
        return self

    def _check(self, X) -> np.ndarray:
        if not hasattr(self, "scale_"):
            raise NotFittedError("This BoundsScaler instance is not fitted yet. Call 'fit' with appropriate "
                                 "arguments before using this estimator.")
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but BoundsScaler is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def transform(self, X) -> np.ndarray:
        """Map ``X`` (n, d) in data units to ``feature_range`` (clipped to it when ``clip``)."""
        X = self._check(X)
        Z = X * self.scale_ + self.min_
        if self.clip:
            lo, hi = (float(v) for v in self.feature_range)
            np.clip(Z, lo, hi, out=Z)
        return Z

    def inverse_transform(self, Z) -> np.ndarray:
        """Map ``Z`` (n, d) from ``feature_range`` back to data units (e.g. released centres)."""
        Z = self._check(Z)
        return (Z - self.min_) / self.scale_


# Transformers that learn nothing from the data they are fitted on.
_STATELESS = ("FunctionTransformer", "Normalizer", "PolynomialFeatures", "SplineTransformer")


def warn_if_after_fitted_transformer(estimator, *, stacklevel: int = 4) -> None:
    """Warn when ``estimator`` is fitted as a step of a ``Pipeline`` after a data-fitted transformer.

    Looks up the call stack for the scikit-learn ``Pipeline`` (or
    ``FeatureUnion``-free chain) that is fitting ``estimator``.  A step before
    it that is neither a :class:`BoundsScaler` nor a stateless transformer has
    learned statistics of the private data, which are released with the
    pipeline and are not differentially private; and ``estimator.bounds`` then
    applies to that step's output, not to the data units.

    Parameters
    ----------
    estimator : DPClusterer
        A private estimator whose ``fit`` is running.
    stacklevel : int
        Passed to :func:`warnings.warn`.

    Warns
    -----
    PrivacyLeakWarning
        Naming the step, what leaked, and the public transformer to use instead;
        also when a :class:`BoundsScaler`'s output range differs from the
        estimator's bounds.

    Notes
    -----
    Depends only on the pipeline's composition (public), never on the data.
    """
    pipe = _enclosing_pipeline(estimator)
    if pipe is None:
        return
    name = type(estimator).__name__
    for step_name, step in pipe.steps:
        if step is estimator:
            break
        if step is None or step == "passthrough" or type(step).__name__ in _STATELESS:
            continue
        if isinstance(step, BoundsScaler):
            want = tuple(float(v) for v in step.feature_range)
            got = getattr(estimator, "bounds", None)
            if not _same_box(got, want):
                warnings.warn(f"{name} follows BoundsScaler(feature_range={want}) but has "
                              f"bounds={got!r}: give it bounds={want} so its public box is the scaler's "
                              "output range", PrivacyLeakWarning, stacklevel=stacklevel)
            continue
        warnings.warn(
            f"Pipeline step {step_name!r} ({type(step).__name__}) is fitted on the private data before {name}: "
            "what it learns (e.g. a mean, a scale, a range or components) is a non-private function of the data, "
            f"and {name}'s bounds apply to that step's output, not to the data units, so rows may be clipped "
            "silently. Use dpcore.preprocessing.BoundsScaler(bounds=<public bounds in data units>) and give "
            f"{name} bounds=(-1, 1).", PrivacyLeakWarning, stacklevel=stacklevel)
        return


def _same_box(bounds, want) -> bool:
    if bounds is None:
        return False
    try:
        lo, hi = bounds
        return bool(np.all(np.asarray(lo, dtype=float) == want[0]) and np.all(np.asarray(hi, dtype=float) == want[1]))
    except (TypeError, ValueError):
        return False


def _enclosing_pipeline(estimator, max_depth: int = 40):
    try:
        from sklearn.pipeline import Pipeline
    except ImportError:  # pragma: no cover
        return None
    frame = inspect.currentframe()
    try:
        for _ in range(max_depth):
            if frame is None:
                return None
            obj = frame.f_locals.get("self")
            if isinstance(obj, Pipeline) and any(step is estimator for _, step in obj.steps):
                return obj
            frame = frame.f_back
    finally:
        del frame
    return None
