"""scikit-learn's parameter validation in every estimator (issue 58).

Every registered estimator (and the Sanitizer) declares ``_parameter_constraints`` with
:mod:`sklearn.utils._param_validation`, and ``fit`` checks them before anything else, with scikit-learn's
``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``) naming the parameter.  Parametrised
over the registry, so a new algorithm is covered as soon as it is registered.  After scikit-learn's
own ``check_param_validation`` (sklearn.utils.estimator_checks), which this package cannot run as is:
epsilon, delta and n_clusters keep the project's sentences (tests/test_bad_input.py matches them).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.utils._param_validation import (
    InvalidParameterError,
    generate_invalid_param_val,
    make_constraint,
)

import dpcore
from dpcore.algorithms.sanitize import Sanitizer

CLASSES = {**dpcore.ALGORITHMS, "sanitize": Sanitizer}
X = np.random.default_rng(0).uniform(0, 1, size=(30, 2))


def _instance(cls):
    return cls(bounds=(0, 1)) if cls.private else cls()


@pytest.mark.parametrize("key", sorted(CLASSES))
def test_every_parameter_has_a_constraint(key):
    cls = CLASSES[key]
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    missing = params - set(cls._parameter_constraints)
    assert not missing, f"{cls.__name__}: no constraint for {sorted(missing)}"


@pytest.mark.parametrize("key", sorted(CLASSES))
def test_a_value_of_no_valid_type_names_the_parameter(key):
    """scikit-learn's first probe: an object of a type no constraint accepts, for each parameter in turn."""
    est = _instance(CLASSES[key])
    bad = type("BadType", (), {})()
    for name in est.get_params(deep=False):
        with pytest.raises(InvalidParameterError, match=name):
            clone(est).set_params(**{name: bad}).fit(X)


@pytest.mark.parametrize("key", sorted(CLASSES))
def test_a_value_outside_each_constraint_is_refused(key):
    """scikit-learn's second probe: for each interval or set of strings, a value just outside it."""
    est = _instance(CLASSES[key])
    tried = 0
    for name, constraints in est._parameter_constraints.items():
        if name not in est.get_params(deep=False):
            continue
        made = [make_constraint(c) for c in constraints]
        for constraint in made:
            try:
                value = generate_invalid_param_val(constraint)
            except NotImplementedError:
                continue
            if any(c.is_satisfied_by(value) for c in made):
                continue   # another constraint of the same parameter accepts it (e.g. None or "auto")
            tried += 1
            with pytest.raises(InvalidParameterError, match=name):
                clone(est).set_params(**{name: value}).fit(X)
    assert tried or key in ("kmeans", "wavecluster"), "no constraint with a value outside it: nothing was probed"


def test_validation_ignores_sklearns_skip_setting():
    """The shares and epsilon the constraints guard keep the ledger honest: no global switch skips them."""
    est = dpcore.ALGORITHMS["dplloyd"](n_clusters=2, bounds=(0, 1), n_share=1.5)
    with sklearn.config_context(skip_parameter_validation=True):
        with pytest.raises(InvalidParameterError, match="'n_share' parameter of DPLloyd must be a float in the "
                                                        r"range \(0.0, 1.0\)"):
            est.fit(X)


@pytest.mark.parametrize("eps, exc, msg", [
    (float("nan"), ValueError, "epsilon must be a positive finite number"),
    (0.0, ValueError, "epsilon must be a positive finite number"),
    ("1.0", TypeError, "epsilon must be a number"),
])
def test_epsilon_keeps_the_projects_sentence(eps, exc, msg):
    with pytest.raises(exc, match=msg):
        dpcore.ALGORITHMS["eugkm"](n_clusters=2, epsilon=eps, bounds=(0, 1)).fit(X)
