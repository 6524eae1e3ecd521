"""The shared privacy core: ledger, noise module, validation."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpcore import BudgetExceededError, BudgetLedger, NoiseSource, PrivacyLeakWarning, split_budget
from dpcore.privacy.calibration import analytic_gaussian_sigma
from dpcore.privacy.rng import check_random_state
from dpcore.utils.domain import check_bounds
from dpcore.utils.validation import check_array, check_delta, check_epsilon, check_n_clusters


def source(eps=1.0, delta=0.0, seed=0):
    return NoiseSource(np.random.default_rng(seed), BudgetLedger(eps, delta))


# -- ledger -------------------------------------------------------------------
def test_ledger_refuses_overspend_before_drawing():
    noise = source(1.0)
    noise.laplace(np.zeros(3), sensitivity=1, epsilon=0.6, name="a")
    state = noise.rng.bit_generator.state
    with pytest.raises(BudgetExceededError, match="only 0.4"):
        noise.laplace(np.zeros(3), sensitivity=1, epsilon=0.5, name="b")
    assert noise.rng.bit_generator.state == state  # nothing was drawn
    assert noise.ledger.total() == (0.6, 0.0)
    assert [e.name for e in noise.ledger] == ["a"]


def test_ledger_non_private_refuses_everything():
    with pytest.raises(BudgetExceededError):
        BudgetLedger(None).spend("x", 0.1)


@given(st.floats(0.01, 10), st.lists(st.floats(0.0, 5.0), min_size=1, max_size=8).filter(lambda s: sum(s) > 0))
def test_split_budget_spends_exactly_the_total(total, shares):
    parts = split_budget(total, shares)
    ledger = BudgetLedger(total)
    for i, p in enumerate(parts):
        if p > 0:
            ledger.spend(f"part {i}", p)
    assert math.isclose(ledger.total()[0], total, rel_tol=1e-12)
    assert ledger.total()[0] <= total * (1 + 1e-9)


def test_sub_reserves_one_entry_and_caps_children():
    noise = source(1.0)
    child = noise.sub("composite", 0.4)
    child.laplace(0.0, sensitivity=1, epsilon=0.3, name="inner")
    with pytest.raises(BudgetExceededError):
        child.laplace(0.0, sensitivity=1, epsilon=0.2, name="inner 2")
    assert noise.ledger.total()[0] == pytest.approx(0.4)
    assert child.ledger[0].name == "composite / inner"


# -- mechanisms ---------------------------------------------------------------
def test_laplace_scale_is_sensitivity_over_epsilon():
    noise = source(1.0, seed=1)
    draws = noise.laplace(np.zeros(200_000), sensitivity=3.0, epsilon=0.5, name="x")
    # KS test against Lap(0, 6): a wrong scale (e.g. sensitivity ignored) fails by far.
    assert stats.kstest(draws, stats.laplace(scale=6.0).cdf).pvalue > 1e-3
    entry = noise.ledger[0]
    # Rounding onto the lattice adds at most m * gamma <= sensitivity * 2^-10 (mechanisms.laplace).
    assert 3.0 < entry.sensitivity <= 3.0 * (1 + 2.0 ** -10)
    assert entry.sensitivity == 3.0 + draws.size * entry.granularity
    assert math.frexp(entry.granularity)[0] == 0.5          # a power of two
    np.testing.assert_array_equal(draws / entry.granularity, np.rint(draws / entry.granularity))


def test_exponential_mechanism_probabilities():
    scores = np.array([0.0, 1.0, 2.0])
    eps, sens = 2.0, 1.0
    counts = np.zeros(3)
    rng = np.random.default_rng(2)
    for _ in range(20_000):
        noise = NoiseSource(rng, BudgetLedger(eps))
        counts[noise.exponential(scores, sensitivity=sens, epsilon=eps, name="pick")] += 1
    expected = np.exp(eps * scores / (2 * sens))
    expected /= expected.sum()
    assert stats.chisquare(counts, expected * counts.sum()).pvalue > 1e-3


def test_permute_and_flip_prefers_best_and_never_beats_its_bound():
    scores = np.array([0.0, 5.0, 1.0])
    rng = np.random.default_rng(3)
    picks = [NoiseSource(rng, BudgetLedger(1.0)).permute_and_flip(scores, sensitivity=1, epsilon=1.0, name="p")
             for _ in range(5000)]
    freq = np.bincount(picks, minlength=3) / len(picks)
    assert freq[1] > 0.8
    # Pr[worst] <= e^{eps/2 * (q - q*)} / ... : at least it is rarer than the exponential mechanism's weight ratio.
    assert freq[0] < math.exp(-5 / 2) + 0.02


def test_analytic_gaussian_is_tight():
    sigma = analytic_gaussian_sigma(1.0, 1.0, 1e-5)
    classic = math.sqrt(2 * math.log(1.25 / 1e-5))
    assert 0.5 * classic < sigma < classic  # the analytic calibration needs less noise than the classic bound
    # The privacy-loss condition holds with equality at sigma (Balle & Wang 2018, Thm. 8).
    a, b = 1 / (2 * sigma), sigma
    gap = stats.norm.cdf(a - b) - math.e * stats.norm.cdf(-a - b)
    assert gap == pytest.approx(1e-5, rel=1e-4)


def test_same_seed_same_noise():
    a = source(seed=7).laplace(np.arange(5.0), sensitivity=1, epsilon=1, name="x")
    b = source(seed=7).laplace(np.arange(5.0), sensitivity=1, epsilon=1, name="x")
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_mechanisms_reject_bad_epsilon(eps):
    with pytest.raises(ValueError):
        source().laplace(0.0, sensitivity=1, epsilon=eps, name="x")


# -- validation ---------------------------------------------------------------
@pytest.mark.parametrize("X, exc, match", [
    ([[1.0, np.nan]], ValueError, "NaN"),
    ([[1.0, np.inf]], ValueError, "infinite"),
    ([["a", "b"]], TypeError, "text"),
    (np.zeros((0, 2)), ValueError, r"0 sample\(s\).*give more rows"),
    (np.zeros(5), ValueError, "Expected a 2D array.*Reshape your data"),
    (np.zeros((3, 0)), ValueError, r"0 feature\(s\).*choose at least one numeric column"),
])
def test_check_array_errors(X, exc, match):
    with pytest.raises(exc, match=match):
        check_array(X)


def test_check_array_rejects_text_dataframe_columns():
    import pandas as pd
    with pytest.raises(TypeError, match="non-numeric column"):
        check_array(pd.DataFrame({"x": [1.0, 2.0], "name": ["a", "b"]}))


@pytest.mark.parametrize("eps", [0, -0.5, float("nan"), float("inf"), 1e9, "1"])
def test_check_epsilon(eps):
    with pytest.raises((ValueError, TypeError)):
        check_epsilon(eps)


@pytest.mark.parametrize("delta", [-0.1, 1.0, 2.0, float("nan")])
def test_check_delta(delta):
    with pytest.raises(ValueError):
        check_delta(delta)


def test_check_n_clusters():
    with pytest.raises(ValueError, match="larger than the number of points"):
        check_n_clusters(11, 10)
    with pytest.raises(ValueError):
        check_n_clusters(0)
    with pytest.raises(TypeError):
        check_n_clusters(2.5)


def test_bounds_inverted_and_missing():
    X = np.array([[0.0, 1.0], [2.0, 3.0]])
    with pytest.raises(ValueError, match="inverted"):
        check_bounds(([0, 5], [1, 4]), X)
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        dom = check_bounds(None, X)
    assert dom.from_data


def test_domain_clip_counts_and_normalise_roundtrip():
    dom = check_bounds((0.0, 10.0), d=2)
    X = np.array([[-1.0, 5.0], [3.0, 4.0], [11.0, 12.0]])
    Xc, n_out = dom.clip(X)
    assert n_out == 2 and Xc.min() >= 0 and Xc.max() <= 10
    Z = dom.normalize(Xc)
    assert Z.min() >= -1 and Z.max() <= 1
    np.testing.assert_allclose(dom.denormalize(Z), Xc)


def test_check_random_state():
    assert isinstance(check_random_state(3), np.random.Generator)
    with pytest.raises(TypeError):
        check_random_state(np.random.RandomState(0))
