"""Privacy-utility curves (seeded or unseeded releases, band, cancel, measures) and the Su et al. (2016, §6) advisor."""
import itertools
import math

import numpy as np
import pytest

from dpcore import evaluation as E
from dpcore.advisor import model as C
from dpcore.advisor import plan as P
from dpcore.algorithms import DPLloyd, EUGkM, Hybrid
from dpcore.algorithms._blocks.grid import grid_cells
from dpcore.algorithms.centroid.hybrid import hybrid_min_epsilon


@pytest.fixture(scope="module")
def curve(blobs):
    X, bounds, _ = blobs
    return E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[5.0, 0.05], n_seeds=20, n_clusters=3,
                                   max_rows=1500, random_state=0)


def test_curve_has_20_releases_per_epsilon_and_a_band(curve):
    s = curve.summary()
    assert curve.measure == "NICV ratio" and curve.reference_line == 1.0 and curve.complete
    assert list(s["epsilon"]) == [0.05, 5.0] and list(s["n"]) == [20, 20]      # sorted, all seeds measured
    assert curve.values.shape == (2, 20) and np.isfinite(curve.values).all()
    assert (s["q10"] <= s["median"]).all() and (s["median"] <= s["q90"]).all()
    assert curve.n_rows == 1500
    # More budget, better utility; at eps = 5 the median is close to non-private k-means.
    assert s["median"].iloc[1] < s["median"].iloc[0]
    assert s["median"].iloc[1] < 1.25
    # The seeds really are different releases (a band, not a line).
    assert np.unique(curve.values[0]).size == 20


def test_curve_is_reproducible(blobs, curve):
    X, bounds, _ = blobs
    again = E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[0.05, 5.0], n_seeds=20, n_clusters=3,
                                    max_rows=1500, random_state=0)
    assert np.array_equal(again.values, curve.values)
    fresh = E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[0.05, 5.0], n_seeds=20, n_clusters=3,
                                    max_rows=1500)                  # default: unpredictable noise
    assert not np.array_equal(fresh.values, curve.values)


def test_unseeded_curve_draws_fresh_noise_for_every_release(blobs, curve):
    """random_state=None: no release of the curve shares its noise with another or with a seeded run."""
    X, bounds, _ = blobs
    fresh = [E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[0.05, 5.0], n_seeds=20, n_clusters=3,
                                     max_rows=1500, random_state=None) for _ in range(2)]
    for c in fresh:
        assert np.isfinite(c.values).all() and np.unique(c.values[0]).size == 20
        assert not np.any(np.isin(c.values, curve.values))   # none equals a seeded release's
    assert not np.any(np.isin(fresh[0].values, fresh[1].values))
    # Same distribution: the unseeded medians sit inside the seeded band.
    s, f = curve.summary(), fresh[0].summary()
    assert ((f["median"] >= s["q10"] * 0.8) & (f["median"] <= s["q90"] * 1.25)).all()


def test_progress_returning_false_cancels(blobs):
    X, bounds, _ = blobs
    calls = []

    def progress(frac, msg):
        calls.append((frac, msg))
        return len(calls) < 5

    c = E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[0.1, 1.0], n_seeds=20, n_clusters=3,
                                max_rows=600, progress=progress)
    assert not c.complete and len(calls) == 5
    assert np.isfinite(c.values).sum() == 5
    assert calls[-1][0] == pytest.approx(5 / 40) and "release 5 of 20" in calls[-1][1]
    many = E.compare_curves(X, bounds, ["dplloyd", "eugkm"], epsilons=[1.0], n_seeds=20, n_clusters=3,
                            max_rows=600, progress=lambda f, m: f < 0.5)
    assert len(many) == 1 and not many[0].complete        # eugkm never started


def test_measures_per_family(blobs):
    assert E.measure_for("eugkm") == "NICV ratio"
    assert E.measure_for("privthr") == "UD" and E.baseline_key("privthr") == "wavecluster"
    assert E.measure_for("coreset") == "relative cost error"
    X, bounds, _ = blobs
    c = E.privacy_utility_curve(X, bounds, "privthr", epsilons=[10.0], n_seeds=20, max_rows=2000,
                                params={"num_grid": 16})
    assert c.measure == "UD" and c.reference_line == 0.0
    assert np.all(c.values >= 0) and np.median(c.values) < 1.0


def test_curve_errors(blobs):
    X, bounds, _ = blobs
    with pytest.raises(ValueError, match="not a private"):
        E.privacy_utility_curve(X, bounds, "kmeans", n_clusters=3)
    with pytest.raises(ValueError, match="positive"):
        E.privacy_utility_curve(X, bounds, "dplloyd", epsilons=[], n_clusters=3)
    with pytest.raises(ValueError, match="n_seeds"):
        E.privacy_utility_curve(X, bounds, "dplloyd", n_seeds=0, n_clusters=3)


# -- the advisor --------------------------------------------------------------------------------
def mse_dplloyd(n, d, k, epsilon, t):
    return DPLloyd.su_mse(n, d, k, epsilon, t=t)


def var_eugkm(n, d, k, epsilon):
    return EUGkM.su_mse(n, d, k, epsilon, t=1)     # t is DPLloyd's: EUGkM's variance ignores it


def mse_hybrid(n, d, k, epsilon):
    mse = Hybrid.su_mse(n, d, k, epsilon, t=2)
    assert mse is not None, "Inequality 15 does not hold: the Hybrid runs as EUGkM, no Eq. 13"
    return mse


def test_formulas_match_the_paper():
    """Each class declares its own formula (Eq. 7, Eq. 12, Eq. 13); the Hybrid has none below Inequality 15."""
    n, d, k = 1e5, 2, 5
    # Eq. 7 scales as 1/eps^2 and t^2; Eq. 12 as eps^(-4/(2+d)); Eq. 13 is Eq. 7 at t = 1, eps / 2.
    assert mse_dplloyd(n, d, k, 0.1, 5) / mse_dplloyd(n, d, k, 1.0, 5) == pytest.approx(100)
    assert mse_dplloyd(n, d, k, 1.0, 4) / mse_dplloyd(n, d, k, 1.0, 2) == pytest.approx(4)
    for dd in (2, 4, 8):
        assert var_eugkm(n, dd, k, 0.1) / var_eugkm(n, dd, k, 1.0) == pytest.approx(10 ** (4 / (2 + dd)))
    assert mse_hybrid(n, d, k, 1.0) == pytest.approx(mse_dplloyd(n, d, k, 0.5, 1))
    # Eq. 7 by hand: 2 d (1 + (2 rho)^2) (k t (d + 1) / (N eps))^2 with rho = 0.225.
    assert mse_dplloyd(1000, 2, 3, 1.0, 5) == pytest.approx(2 * 2 * (1 + 0.45 ** 2) * (3 * 5 * 3 / 1000) ** 2)
    # At Inequality 15's threshold, Eq. 13 equals Eq. 12.
    for n, d, k in itertools.product([1e4, 1e6], [2, 3, 6], [3, 10]):
        thr = hybrid_min_epsilon(n, d, k)
        assert mse_hybrid(n, d, k, thr) == pytest.approx(var_eugkm(n, d, k, thr), rel=1e-9)
        assert Hybrid.su_mse(n, d, k, 0.99 * thr, t=2) is None and Hybrid.su_mse(n, d, k, thr, t=1) is None
    # EUGkM's variance leaves out its squared bias (Inequality 10); the others leave out nothing.
    assert EUGkM.su_bias2_bound(n, d, 1.0) == pytest.approx(d / grid_cells(n, d, 1.0) ** (2 / d))
    assert DPLloyd.su_bias2_bound(n, d, 1.0) is None and Hybrid.su_bias2_bound(n, d, 1.0) is None


def test_advisor_follows_inequalities_14_and_15():
    for n, d, k, eps in itertools.product([1e3, 1e5, 1e7], [2, 5, 20], [3, 10], [0.01, 0.1, 1.0, 5.0]):
        a = E.advise(n, d, k, eps)
        thr = hybrid_min_epsilon(n, d, k)
        assert ("hybrid" in a.mse) == (eps >= thr)          # Eq. 13 only where Inequality 15 holds
        # outside a grid's regime (dpcore.algorithms.regime, public inputs) the formulas do not hold: never picked
        assert a.regime[a.su_best].status != "refuse"
        if any(r.status == "refuse" for r in a.regime.values()):
            continue
        assert (a.su_best == "hybrid") == (eps >= thr)
        # With t >= 2 the Hybrid dominates DPLloyd (Ineq. 14), so DPLloyd is never predicted best.
        assert a.su_best != "dplloyd" and a.t >= 2
        if a.su_best == "hybrid":
            assert a.mse["hybrid"] <= a.mse["eugkm"] and a.mse["hybrid"] <= a.mse["dplloyd"]
        assert "Eq" in a.reason
    # With one iteration DPLloyd can win: just below the threshold its MSE is a quarter of Eq. 13's.
    n, d, k = 1e4, 2, 5
    a = E.advise(n, d, k, 0.99 * hybrid_min_epsilon(n, d, k), t=1)
    assert a.su_best == "dplloyd" and "hybrid" not in a.mse
    # The taxi case: N ~ 181k, d = 2, k = 5.
    assert E.advise(181_000, 2, 5, 0.05).formula_best == "eugkm"
    assert E.advise(181_000, 2, 5, 1.0).formula_best == "hybrid"
    f = E.advice_frame(181_000, 2, 5, [0.05, 1.0])
    assert list(f["formula_best"]) == ["eugkm", "hybrid"]
    with pytest.raises(ValueError):
        E.advise(0, 2, 5, 1.0)
    with pytest.raises(ValueError):
        E.advise(100, 2, 5, -1.0)


def test_advisor_never_recommends_worse_than_the_dp_mean():
    """The formulas' pick (kept beside the calibrated one): a pick whose predicted MSE reaches d r^2 is replaced
    by the DP mean; high d goes to zCDP-Lloyd.  The calibrated pick is never predicted above the trivial answer."""
    for n, d, k, eps in itertools.product([1e2, 1e3, 1e5], [2, 20, 784], [3, 10], [0.01, 0.1, 1.0]):
        a = E.advise(n, d, k, eps)
        assert a.trivial_mse == pytest.approx(d)
        grid_ok = grid_cells(n, d, eps) ** (1 / d) >= 2      # else EUGkM/Hybrid's Eq. 12 does not apply
        if a.formula_best == E.TRIVIAL:
            assert a.mse["zcdp_lloyd"] >= d and a.mse["dplloyd"] >= d
            assert not grid_ok or a.mse[a.su_best] >= d
        else:
            assert a.mse[a.formula_best] < d
            assert a.formula_best in (a.su_best, "zcdp_lloyd", "dplloyd")
        if a.best == E.TRIVIAL:
            # the lowest-regret key is not better than the trivial answer on both scales (calibrated.first_pick)
            top = a.ranking[0] if a.ranking else None
            assert top is None or top.regret >= a.trivial.regret or top.ratio >= a.trivial.ratio
            assert "DP mean" in a.reason
        elif a.best == "auto":        # no single key holds up whatever the separation: a private choice
            assert len(a.plan.keys) >= 2 and set(a.plan.keys) <= {p.key for p in a.ranking}
        else:   # the lowest-regret key, or the minimax single key where its worst case is GUARD times better
            regret_pick = P.selection_plan(n, d, k, eps, max_candidates=1, pool=(a.ranking[0].key,))
            assert a.best == a.ranking[0].key or regret_pick.worst > C.GUARD * a.plan.worst
            assert {p.key: p for p in a.ranking}[a.best].ratio < a.trivial.ratio
    tiny = E.advise(100, 784, 10, 0.01)              # hopeless: 10 centres from 100 images
    assert tiny.formula_best == E.TRIVIAL and E.advice_name(E.TRIVIAL) == "DP mean (one centre)"
    mnist = E.advise(70_000, 784, 10, 1.0)           # the MNIST case: Gaussian noise wins in high d
    assert mnist.formula_best == "zcdp_lloyd" and mnist.mse["zcdp_lloyd"] < mnist.mse[mnist.su_best]
    assert set(E.advice_frame(70_000, 784, 10, [0.1, 1.0])["formula_best"]) <= {"zcdp_lloyd", E.TRIVIAL}


def test_measured_best_picks_lowest_median(blobs):
    X, bounds, _ = blobs
    curves = E.compare_curves(X, bounds, ["dplloyd", "eugkm"], epsilons=[0.05], n_seeds=20, n_clusters=3,
                              max_rows=800)
    frame = E.curves_frame(curves)
    best = E.measured_best(curves)
    low = frame.loc[frame["median"].idxmin(), "algorithm"]
    assert best["measured_best"].tolist() == [low]
    assert math.isfinite(frame["median"].max())


def test_a_curve_on_a_sample_predicts_releases_on_all_rows():
    """Compare's curve runs on a uniform sample of at most 20,000 rows by default; each release on it runs at
    ε·N/n (the error depends on N and ε through Nε, Su et al. 2016, §6), so its centre errors are those of
    releases on all N rows, as the Explorer's band is; a curve of the sample taken as the data is several times
    worse (what the curve showed before at ε = 1 on the taxi sample)."""
    from dpcore import datasets
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)              # 181,446 rows, public
    X, bounds = np.asarray(ds.X, float), tuple(np.asarray(b, float) for b in ds.bounds)
    kw = dict(epsilons=[1.0], n_seeds=16, n_clusters=5, measure=E.CENTRE_ERROR, geo=True)
    full = E.privacy_utility_curve(X, bounds, "eugkm", random_state=1, **kw)
    sampled = E.privacy_utility_curve(X, bounds, "eugkm", max_rows=20_000, random_state=2, **kw)
    as_data = E.privacy_utility_curve(X[np.random.default_rng(0).permutation(len(X))[:20_000]], bounds, "eugkm",
                                      random_state=2, **kw)
    f, s, a = (float(np.median(c.values)) for c in (full, sampled, as_data))
    assert sampled.n_rows == 20_000
    assert abs(math.log(s / f)) < math.log(1.5), (f, s)
    assert a > 2 * f, (f, a)


def test_a_curve_on_a_sample_marks_an_epsilon_all_rows_would_refuse():
    """PRIVATE-K-MEAN at ε = 1 refuses the taxi sample's 181,446 rows (fewer than its t_min): a curve on a
    20,000-row sample (at ε·N/n, where it would run) reports the refusal at that ε instead of a point."""
    from dpcore import datasets
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
    X, bounds = np.asarray(ds.X, float), tuple(np.asarray(b, float) for b in ds.bounds)
    (curve,) = E.compare_curves(X, bounds, ["coreset"], epsilons=[1.0], n_seeds=2, n_clusters=5,
                                params={"delta": 1e-8}, max_rows=20_000, measure=E.CENTRE_ERROR, geo=True)
    assert 1.0 in curve.failures and "t_min" in curve.failures[1.0] and np.isnan(curve.values).all()
