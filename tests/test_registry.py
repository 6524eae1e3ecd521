"""Properties every estimator in dpcore.ALGORITHMS must have (CONTRACT.md), whatever its family."""
import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import InfeasibleBudgetError, PrivacyLeakWarning

KEYS = sorted(dpcore.ALGORITHMS)
PRIVATE = [k for k in KEYS if dpcore.ALGORITHMS[k].private]


def make(key, *, k=3, eps=1.0, bounds=(0.0, 10.0), seed=0, **kw):
    cls = dpcore.ALGORITHMS[key]
    params = inspect.signature(cls).parameters
    args = dict(bounds=bounds, random_state=seed, **kw)
    if "n_clusters" in params:
        args["n_clusters"] = k
    args["epsilon"] = eps if cls.private else None
    if cls.needs_delta and "delta" not in kw:
        args["delta"] = 1e-6
    return cls(**args)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centres = np.array([[2.0, 2.0], [8.0, 3.0], [5.0, 8.0]])
    return np.clip(np.concatenate([rng.normal(c, 0.5, (1500, 2)) for c in centres]), 0, 10)


def fit_or_infeasible(est, X):
    try:
        return est.fit(X)
    except InfeasibleBudgetError:
        return None


def test_contract_keys_present():
    for key in ("kmeans", "dplloyd", "eugkm", "hybrid"):
        assert key in dpcore.ALGORITHMS


@pytest.mark.parametrize("key", KEYS)
def test_metadata(key):
    cls = dpcore.ALGORITHMS[key]
    assert cls.display_name and cls.reference and cls.summary and cls.__doc__
    assert cls.family in ("centroids", "grid clusters")


def test_every_algorithm_name_fits_the_sidebar_box_and_is_unique():
    """Issue 56, layout: the Algorithm select box shows ~30 characters ("zCDP-Lloyd (high-dimensional: s…" was cut)."""
    from ui.data_picker import LABEL_FITS
    names = {k: cls.display_name for k, cls in dpcore.ALGORITHMS.items()}
    assert not {k: n for k, n in names.items() if len(n) > LABEL_FITS}, names
    assert len(set(names.values())) == len(names)


@pytest.mark.parametrize("key", KEYS)
def test_fit_predict_protocol(key, data):
    est = fit_or_infeasible(make(key), data)
    if est is None:
        pytest.skip(f"{key}: budget infeasible for 4500 points (its own tests cover feasibility)")
    C = est.cluster_centers_
    assert C.ndim == 2 and C.shape[1] == 2 and np.isfinite(C).all()
    labels = est.predict(data)
    assert labels.shape == (len(data),) and labels.min() >= -1
    eps, delta = est.budget_.total()
    if est.private:
        assert eps <= 1.0 * (1 + 1e-9) and delta <= est.budget_.delta * (1 + 1e-9)
        assert eps > 0
    else:
        assert len(est.budget_) == 0


@pytest.mark.parametrize("key", PRIVATE)
def test_same_seed_same_release(key, data):
    a = fit_or_infeasible(make(key, seed=11), data)
    if a is None:
        pytest.skip("infeasible budget")
    b = make(key, seed=11).fit(data)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.budget_.to_records() == b.budget_.to_records()
    c = make(key, seed=12).fit(data)
    assert not np.array_equal(a.cluster_centers_, c.cluster_centers_)


@pytest.mark.parametrize("key", PRIVATE)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eps=st.floats(0.01, 20.0), k=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_ledger_never_exceeds_epsilon(key, eps, k, seed, data):
    est = fit_or_infeasible(make(key, k=k, eps=eps, seed=seed), data[::3])
    if est is None:
        return
    spent_eps, spent_delta = est.budget_.total()
    assert spent_eps <= eps * (1 + 1e-9)
    assert spent_delta <= est.budget_.delta * (1 + 1e-9) + 1e-15
    assert math.isclose(sum(e.epsilon for e in est.budget_), spent_eps)


@pytest.mark.parametrize("key", PRIVATE)
def test_missing_bounds_warn(key, data):
    with pytest.warns(PrivacyLeakWarning):
        fit_or_infeasible(make(key, bounds=None), data)


@pytest.mark.parametrize("key", PRIVATE)
@pytest.mark.parametrize("bad, exc", [
    (dict(eps=0.0), ValueError), (dict(eps=-1.0), ValueError), (dict(eps=float("nan")), ValueError),
    (dict(bounds=(10.0, 0.0)), ValueError),
])
def test_bad_parameters(key, bad, exc, data):
    with pytest.raises(exc):
        make(key, **bad).fit(data)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("X, exc", [
    (np.array([[1.0, np.nan], [2.0, 3.0], [4.0, 5.0]]), ValueError),
    (np.array([["a", "b"], ["c", "d"]]), TypeError),
])
def test_bad_data(key, X, exc):
    with pytest.raises(exc):
        make(key).fit(X)


@pytest.mark.parametrize("key", KEYS)
def test_empty_data(key):
    """n = 0 and n = 1 are neighbours: a private fit of no rows is a release of pure noise (issue #19);
    only the non-private baselines refuse it."""
    if dpcore.ALGORITHMS[key].private:
        est = fit_or_infeasible(make(key), np.zeros((0, 2)))
        if est is not None:
            assert np.isfinite(est.cluster_centers_).all() and est.cluster_centers_.shape[1] == 2
    else:
        with pytest.raises(ValueError, match="at least 1 needed"):
            make(key).fit(np.zeros((0, 2)))


@pytest.mark.parametrize("key", [k for k in KEYS if "n_clusters" in inspect.signature(dpcore.ALGORITHMS[k]).parameters])
def test_k_larger_than_n(key):
    """k > n is an error only for the non-private baseline; a private fit decides from public inputs
    and gives every cluster a centre (issue #19; tests/audit/test_structural_audit.py checks the rest)."""
    if not dpcore.ALGORITHMS[key].private:
        with pytest.raises(ValueError, match="larger than the number of points"):
            make(key, k=10).fit(np.ones((5, 2)))
        return
    est = fit_or_infeasible(make(key, k=10), np.ones((5, 2)))
    if est is None:  # decided on the noisy size and epsilon, as for any n
        est = make(key, k=10, eps=200.0, n_samples=20000).fit(np.ones((5, 2)))
    assert est.cluster_centers_.shape == (10, 2) and np.isfinite(est.cluster_centers_).all()


@pytest.mark.parametrize("key", PRIVATE)
def test_points_outside_bounds_are_clipped_and_counted(key, data):
    X = data.copy()
    X[:7] += 100
    est = fit_or_infeasible(make(key), X)
    if est is None:
        pytest.skip("infeasible budget")
    assert est.n_clipped_ == 7
    assert (est.cluster_centers_ >= -1e-9).all() and (est.cluster_centers_ <= 10 + 1e-9).all()
