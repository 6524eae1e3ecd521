"""zCDP-Lloyd (dpcore/zcdp_lloyd.py) and the Gaussian-DP ledger it spends on.

Utility runs on the real MNIST sample shipped in ``sample_data/`` (15,000 images), so
these tests need no DPCORE_DATA.
"""
import warnings

import numpy as np
import pytest

import dpcore
from dpcore import datasets
from dpcore.algorithms.highdim.zcdp_lloyd import ZCDPLloyd, split_schedule
from dpcore.exceptions import BudgetExceededError
from dpcore.metrics import inertia
from dpcore.privacy.accountant import BudgetLedger, ZCDPLedger
from dpcore.privacy.calibration import analytic_gaussian_sigma, zcdp_delta, zcdp_rho
from dpcore.privacy.mechanisms import NoiseSource


@pytest.fixture(scope="module")
def mnist():
    return datasets.load("mnist_sample").X


def fit(X, **kw):
    kw.setdefault("bounds", (0, 255))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)   # seeded = simulation, on purpose
        return ZCDPLloyd(**kw).fit(X)


# -- accounting --------------------------------------------------------------------------------
@pytest.mark.parametrize("eps, delta", [(1.0, 1e-6), (0.1, 1e-6), (4.0, 1e-8), (1.0, 1e-2)])
def test_zcdp_rho_inverts_the_cks_conversion(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_delta(rho, eps) <= delta
    assert zcdp_delta(rho * 1.001, eps) > delta          # the largest such rho
    # never looser than the Gaussian mechanism's exact (analytic) calibration: rho <= 1 / (2 sigma^2)
    assert rho <= 1.0 / (2.0 * analytic_gaussian_sigma(1.0, eps, delta) ** 2)


def test_zcdp_ledger_adds_rho_and_refuses_overspending():
    led = ZCDPLedger(1.0, 1e-6)
    rho = led.rho_total
    led.spend_zcdp("a", rho * 0.36)
    led.spend_zcdp("b", rho * 0.64)                      # all of it
    eps, delta = led.total()
    assert eps == pytest.approx(1.0) and delta == pytest.approx(1e-6)
    assert eps <= 1.0 * (1 + 1e-9) and delta <= 1e-6 * (1 + 1e-9)
    with pytest.raises(BudgetExceededError):
        led.spend_zcdp("c", rho * 0.01)
    with pytest.raises(BudgetExceededError):
        ZCDPLedger(1.0, 1e-6).spend("laplace step", 0.1)   # pure-DP steps do not compose here
    with pytest.raises(ValueError):
        ZCDPLedger(1.0, 0.0)


def test_gaussian_zcdp_noise_scale_integer_output_and_ledger_type():
    led = ZCDPLedger(1.0, 1e-6)
    src = NoiseSource(np.random.default_rng(0), led)
    rho = 0.25 * led.rho_total
    draws = src.gaussian_zcdp(np.zeros(200_000, dtype=np.int64), sensitivity=3.0, rho=rho, name="counts")
    assert draws.dtype == np.int64                                        # integer noise on a count
    assert np.std(draws) == pytest.approx(3.0 / np.sqrt(2 * rho), rel=0.01)
    assert led[0].sensitivity == 3.0 and led[0].epsilon == pytest.approx(0.25)
    real = src.gaussian_zcdp(np.full(1000, 0.3), sensitivity=1.0, rho=rho, name="sums")
    gamma = led[1].granularity
    assert gamma > 0 and np.all(real / gamma == np.rint(real / gamma))   # on the public lattice
    with pytest.raises(TypeError):
        NoiseSource(np.random.default_rng(0), BudgetLedger(1.0, 1e-6)).gaussian_zcdp(
            np.zeros(3), sensitivity=1.0, rho=0.1, name="x")


# -- the estimator -----------------------------------------------------------------------------
def test_registered_with_its_source():
    cls = dpcore.ALGORITHMS["zcdp_lloyd"]
    assert cls is ZCDPLloyd and cls.needs_delta and cls.private
    assert "Bun & Steinke" in cls.reference


@pytest.mark.heavy
def test_beats_the_trivial_answer_and_approaches_kmeans(mnist):
    """On 15,000 real digits at (1, 1e-6)-DP: well below one centre at the mean, near k-means++."""
    mean_cost = inertia(mnist, mnist.mean(axis=0, keepdims=True))
    km = dpcore.ALGORITHMS["kmeans"](n_clusters=10, epsilon=None, bounds=(0, 255), random_state=0).fit(mnist)
    costs = [inertia(mnist, fit(mnist, n_clusters=10, epsilon=1.0, random_state=s).cluster_centers_)
             for s in range(3)]
    med = float(np.median(costs))
    assert med < 0.9 * mean_cost, (med, mean_cost)
    assert med < 1.2 * km.inertia_, (med, km.inertia_)


def test_the_dp_mean_is_released_and_accurate(mnist):
    """The trivial answer comes with the fit, and costs at most 3 % more than the exact mean's."""
    est = fit(mnist, n_clusters=10, epsilon=1.0, random_state=0)
    exact = inertia(mnist, mnist.mean(axis=0, keepdims=True))
    assert inertia(mnist, est.mean_[None, :]) < 1.03 * exact
    assert abs(est.n_samples_estimate_ - mnist.shape[0]) < 0.05 * mnist.shape[0]


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-6), (0.3, 1e-5)])
def test_ledger_spends_exactly_the_grant(mnist, eps, delta):
    est = fit(mnist[:3000], n_clusters=10, epsilon=eps, delta=delta, random_state=0)
    spent_e, spent_d = est.budget_.total()
    assert spent_e <= eps * (1 + 1e-9) and spent_d <= delta * (1 + 1e-9)
    assert spent_e == pytest.approx(eps, rel=1e-6) and spent_d == pytest.approx(delta, rel=1e-6)
    # two entries (counts, sums) per released step, rho added up
    assert len(est.budget_) == 2 * est.n_iter_
    assert sum(est.step_rhos_[:-1]) <= est.rho_ * (1 + 1e-9)
    assert est.budget_.rho_spent <= est.rho_ * (1 + 1e-9)
    assert all("discrete gaussian" in e.mechanism for e in est.budget_)


def test_schedule_follows_the_noisy_size(mnist):
    small = fit(mnist[:2000], n_clusters=10, epsilon=1.0, random_state=0)
    large = fit(mnist, n_clusters=10, epsilon=8.0, random_state=0)
    assert small.n_iter_ < large.n_iter_                      # fewer, less noisy steps on little data
    assert large.schedule_ == [1] + split_schedule(10, 2, 4)
    fixed = fit(mnist[:2000], n_clusters=4, epsilon=1.0, n_iter_per_split=3, n_final_iter=2, random_state=0)
    assert fixed.schedule_ == [1, 2, 2, 2, 4, 4, 4, 4, 4]


def test_same_seed_same_release_other_seed_other_release(mnist):
    X = mnist[:3000]
    a = fit(X, n_clusters=5, epsilon=1.0, random_state=7)
    b = fit(X, n_clusters=5, epsilon=1.0, random_state=7)
    c = fit(X, n_clusters=5, epsilon=1.0, random_state=8)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert not np.allclose(a.cluster_centers_, c.cluster_centers_)


def test_centres_inside_the_public_box_and_predict(mnist):
    est = fit(mnist[:3000], n_clusters=6, epsilon=0.5, random_state=0)
    assert est.cluster_centers_.shape == (6, 784)
    assert est.cluster_centers_.min() >= 0 and est.cluster_centers_.max() <= 255
    assert set(np.unique(est.predict(mnist[:100]))) <= set(range(6))


@pytest.mark.parametrize("bad, match", [
    (dict(n_iter_per_split=0, n_final_iter=2), "n_iter_per_split"),
    (dict(n_iter_per_split="auto", n_final_iter=3), "both be 'auto'"),
    (dict(split_scale=0.0), "split_scale"),
    (dict(min_count=-1), "min_count"),
    (dict(delta=0.0), "delta"),
])
def test_bad_parameters_raise_a_sentence(mnist, bad, match):
    with pytest.raises(ValueError, match=match):
        fit(mnist[:200], n_clusters=3, epsilon=1.0, random_state=0, **bad)
