"""The export says what was sampled (issue 29 item 5): per ledger entry the distribution, its parameter in
lattice units, the lattice step and the measure, equal to what the sampler was called with."""
from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore.privacy import mechanisms as M
from dpcore.privacy.accountant import BudgetLedger, ZCDPLedger
from dpcore.privacy.mechanisms import NoiseSource
from dpcore.release import build_release, validate_release
from dpcore.utils.fixedpoint import FixedPoint


@pytest.fixture
def drawn(monkeypatch):
    """The parameters the samplers were actually called with, in call order."""
    calls = []
    real_l, real_g = M.discrete_laplace, M.discrete_gaussian

    def lap(rng, scale, size=()):
        calls.append(("discrete laplace", float(scale)))
        return real_l(rng, scale, size)

    def gauss(rng, sigma, size=()):
        calls.append(("discrete gaussian", float(sigma)))
        return real_g(rng, sigma, size)
    monkeypatch.setattr(M, "discrete_laplace", lap)
    monkeypatch.setattr(M, "discrete_gaussian", gauss)
    return calls


CASES = [
    ("laplace", dict(values=np.array([3, 4]), sensitivity=1.0, epsilon=0.5), "pure"),
    ("laplace", dict(values=np.array([0.25, 0.5]), sensitivity=2.0, epsilon=0.5), "pure"),
    ("laplace", dict(values=FixedPoint(np.array([1 << 20, 3 << 22])), sensitivity=3.0, epsilon=0.2), "pure"),
    ("gaussian", dict(values=np.array([3, 4]), sensitivity=1.0, epsilon=0.5, delta=1e-6), "approximate"),
    ("gaussian", dict(values=np.array([0.25, 0.5]), sensitivity=1.5, epsilon=0.5, delta=1e-6), "approximate"),
    ("gaussian_zcdp", dict(values=np.array([0.25, 0.5]), sensitivity=1.5, rho=0.01), "zcdp"),
    ("gaussian_zcdp", dict(values=np.array([3, 4]), sensitivity=1.0, rho=0.01), "zcdp"),
]


@pytest.mark.parametrize("method, kw, measure", CASES)
def test_the_ledger_records_what_the_sampler_drew(method, kw, measure, drawn):
    ledger = ZCDPLedger(1.0, 1e-6) if method == "gaussian_zcdp" else BudgetLedger(1.0, 1e-5)
    NoiseSource(np.random.default_rng(0), ledger).__getattribute__(method)(name="q", **kw)
    (entry,) = list(ledger)
    (dist, value), = drawn
    s = entry.sampler
    assert (s["distribution"], s["value"], s["measure"]) == (dist, value, measure)
    assert s["granularity"] == entry.granularity
    if measure == "zcdp":
        assert s["rho"] == kw["rho"]


def test_export_gives_the_sampled_noise_and_validates(drawn):
    X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
    for key, extra in (("dplloyd", {}), ("zcdp_lloyd", {"delta": 1e-6}), ("eugkm", {"n_init": 2})):
        drawn.clear()
        est = dpcore.ALGORITHMS[key](n_clusters=3, epsilon=1.0, bounds=(0, 1), **extra).fit(X)
        rel = build_release(est, algorithm=key)
        validate_release(rel)
        rows = [r for r in rel["ledger"] if r["sampler"]]
        assert [(r["sampler"]["distribution"], r["sampler"]["value"]) for r in rows] == drawn
        for r in rows:
            assert r["noise_scale"] == r["sampler"]["value"] * r["sampler"]["granularity"]
