"""The lattice, the noise scale, the ledger and every refusal are functions of public inputs only (issue 29).

A property test over every additive mechanism of :class:`~dpcore.privacy.mechanisms.NoiseSource`: the same
public inputs (sensitivity, epsilon or rho, delta, the query's shape, integer or not) with *any* values give
the identical ledger entry and the identical decision to refuse; and the issue's case at WaveCluster's
2^22-cell cap, where one cell holding more than 2^20 records used to double the lattice step.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore.privacy.accountant import BudgetLedger, ZCDPLedger
from dpcore.privacy.mechanisms import NoiseSource
from dpcore.utils.fixedpoint import FixedPoint

MECHANISMS = ["laplace", "gaussian", "gaussian_zcdp", "laplace_above"]


def _call(method, values, *, sensitivity, epsilon, integer):
    ledger = ZCDPLedger(1e4, 0.5) if method == "gaussian_zcdp" else BudgetLedger(1e5, 0.5)
    src = NoiseSource(np.random.default_rng(0), ledger)
    kw = dict(sensitivity=sensitivity, name="q")
    if method == "gaussian_zcdp":
        kw["rho"] = epsilon / 100
    else:
        kw["epsilon"] = epsilon
    if method == "gaussian":
        kw["delta"] = 1e-6
    if method == "laplace_above":
        kw["threshold"] = 0.0
    if not isinstance(values, FixedPoint):
        kw["integer"] = integer
    try:
        getattr(src, method)(values, **kw)
    except ValueError as exc:          # a refusal must be a function of public inputs too
        return ("refused", str(exc))
    return [(e.name, e.epsilon, e.delta, e.mechanism, e.sensitivity, e.granularity) for e in ledger]


magnitudes = st.sampled_from([0.0, 1.0, 2.0 ** 20, 2.0 ** 40, 2.0 ** 52, 2.0 ** 60, 2.0 ** 70])


@pytest.mark.parametrize("method", MECHANISMS)
@settings(max_examples=60, deadline=None, derandomize=True)
@given(size=st.integers(1, 6), sensitivity=st.sampled_from([1.0, 2.0, 3.5, 784.0]),
       epsilon=st.sampled_from([1e-3, 0.1, 1.0, 1e3, 1e4]), integer=st.booleans(),
       a=magnitudes, b=magnitudes, sign=st.sampled_from([1, -1]))
def test_ledger_and_refusal_are_functions_of_public_inputs(method, size, sensitivity, epsilon, integer, a, b, sign):
    va = np.full(size, sign * a)
    vb = np.arange(size) + b                 # other values, the same public inputs
    if integer:
        va, vb = np.rint(va), np.rint(vb)
    assert _call(method, va, sensitivity=sensitivity, epsilon=epsilon, integer=integer) == \
        _call(method, vb, sensitivity=sensitivity, epsilon=epsilon, integer=integer)


@pytest.mark.parametrize("method", MECHANISMS)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(size=st.integers(1, 6), epsilon=st.sampled_from([1e-3, 0.3, 1e4]),
       a=st.integers(-2 ** 62, 2 ** 62), b=st.integers(0, 2 ** 40))
def test_fixed_point_queries_have_public_ledgers(method, size, epsilon, a, b):
    fa = FixedPoint(np.full(size, a, dtype=np.int64))
    fb = FixedPoint(np.full(size, b, dtype=np.int64))
    assert _call(method, fa, sensitivity=3.0, epsilon=epsilon, integer=False) == \
        _call(method, fb, sensitivity=3.0, epsilon=epsilon, integer=False)


def test_scale_refusal_is_decided_before_any_value_is_read():
    class Unreadable(np.ndarray):
        def __array__(self, *a, **k):
            raise AssertionError("a value was read before the refusal")

    src = NoiseSource(np.random.default_rng(0), BudgetLedger(1.0))
    with pytest.raises(ValueError, match="noise scale .* exceeds"):
        # the fine lattice of 2^22 cells at epsilon = 1e-9: an infeasible scale, public inputs only
        src.laplace(FixedPoint(np.zeros(4, dtype=np.int64)), sensitivity=1.0, epsilon=1e-9, name="q")
    assert src.ledger.total() == (0.0, 0.0)         # nothing was spent either


@pytest.mark.parametrize("key", sorted(k for k, c in dpcore.ALGORITHMS.items() if c.private and c.family == "grid clusters"))
def test_wavecluster_at_the_grid_cap_one_heavy_cell(key):
    """At 2^22 cells, one cell with more than 2^20 records: D and D minus one row give identical ledgers."""
    import dpcore
    rng = np.random.default_rng(0)
    heavy = np.full((2 ** 20, 2), 0.9999)      # one cell of the 2048 x 2048 grid: 2^20 records in D, one less in D'
    X = np.concatenate([heavy, rng.uniform(0, 1, size=(20_000, 2))])
    cls = dpcore.ALGORITHMS[key]
    params = dict(epsilon=1.0, bounds=(0, 1), num_grid=2048, random_state=0)
    if "n_samples" in cls().get_params():
        params["n_samples"] = 1_100_000
    ledgers = []
    for data in (X, X[1:]):
        est = cls(**params).fit(data)
        ledgers.append([(e.name, e.epsilon, e.delta, e.mechanism, e.sensitivity, e.granularity)
                        for e in est.budget_])
    assert ledgers[0] == ledgers[1]
