"""The public surface of ../shared/CONTRACT.md, checked as other code relies on it."""
import numpy as np
import pytest

import dpcore
from dpcore import datasets

CONTRACT_KEYS = ["kmeans", "dplloyd", "eugkm", "hybrid", "gkm", "gkm3k", "pgkm", "kmeans_guarantee", "subcluster",
                 "coreset", "balcan", "wavecluster", "privbasic", "privqt", "privthr", "privthr_em"]


def test_every_contract_key_is_registered():
    assert isinstance(dpcore.ALGORITHMS, dict)
    assert [k for k in CONTRACT_KEYS if k not in dpcore.ALGORITHMS] == []
    assert all(isinstance(cls, type) for cls in dpcore.ALGORITHMS.values())


def test_privacy_leak_warning_is_a_user_warning():
    assert issubclass(dpcore.PrivacyLeakWarning, UserWarning)


@pytest.fixture(scope="module")
def taxi(shared_data):
    return datasets.load("nyc_taxi_2009-2015_bq_sample_pickups", max_rows=60_000)


@pytest.mark.parametrize("key, kind", [("eugkm", "grid"), ("hybrid", "grid"), ("coreset", "coreset"),
                                       ("privthr", "wavelet_grid"), ("dplloyd", None)])
def test_synopsis_shapes(key, kind, taxi):
    cls = dpcore.ALGORITHMS[key]
    kw = dict(epsilon=8.0, bounds=taxi.bounds, random_state=0)
    if "n_clusters" in cls().get_params():
        kw["n_clusters"] = 3
    if cls.needs_delta:
        kw["delta"] = 1e-6
    est = cls(**kw).fit(taxi.X)
    eps, delta = est.budget_.total()
    assert eps <= 8.0 * (1 + 1e-9)
    assert all(hasattr(e, a) for e in est.budget_ for a in ("name", "epsilon", "delta"))
    syn = est.synopsis_
    if kind is None:
        assert syn is None
        return
    assert syn.kind == kind
    if kind == "grid":
        assert len(syn.edges) == 2 and syn.counts.shape == tuple(len(e) - 1 for e in syn.edges)
    elif kind == "coreset":
        assert syn.points.shape[1] == 2 and syn.weights.shape == (len(syn.points),) and (syn.weights > 0).all()
    else:
        assert len(syn.edges) == 2 and syn.labels.ndim == 2 and syn.labels.min() >= -1
    labels = est.predict(taxi.X[:100])
    assert labels.shape == (100,) and labels.min() >= -1


def test_non_private_keys_accept_epsilon_none(taxi):
    for key in ("kmeans", "wavecluster"):
        cls = dpcore.ALGORITHMS[key]
        kw = {"n_clusters": 3} if "n_clusters" in cls().get_params() else {}
        est = cls(epsilon=None, bounds=taxi.bounds, random_state=0, **kw).fit(taxi.X)
        assert len(est.budget_) == 0 and est.cluster_centers_.shape[1] == 2


def test_dataset_contract(taxi):
    assert "nyc_taxi_2009-2015_bq_sample_pickups" in datasets.available()
    assert taxi.geo and taxi.X.shape[1] == 2 and len(taxi.columns) == 2
    lower, upper = taxi.bounds
    np.testing.assert_allclose(lower, [-74.1, 40.7])
    np.testing.assert_allclose(upper, [-73.9, 40.9])
    assert ((taxi.X >= lower) & (taxi.X <= upper)).all()


def test_contract_paths_outside_the_layers_still_import():
    """CONTRACT.md names ``dpcore.regime.assess`` and ``dpcore.session_budget.SessionBudget``; the other old
    flat paths (issue 27's deprecated aliases) are gone in 0.x (issue 58)."""
    import importlib
    import warnings

    from dpcore.algorithms.registry import assess
    from dpcore.store.session_budget import SessionBudget

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # importing a contract path does not warn
        regime = importlib.import_module("dpcore.regime")
        session_budget = importlib.import_module("dpcore.session_budget")
    assert regime.assess is assess and session_budget.SessionBudget is SessionBudget
    assert regime.assess("dplloyd", n=100_000, d=2, k=3, epsilon=1.0).status in ("ok", "warn", "refuse")
    for old in ("grid", "dplloyd", "mechanisms", "accountant", "validation", "base", "coreset", "wavecluster"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"dpcore.{old}")
