"""PRIVATE-K-MEAN (Feldman et al. 2017): ledger, coreset, reproducibility, utility on real taxi data, errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore
from dpcore import InfeasibleBudgetError
from dpcore.algorithms.coreset.plan import grid_side, min_feasible_epsilon, plan_coreset
from dpcore.algorithms.coreset.private_kmeans import PrivateKMeans
from dpcore.algorithms.coreset.small_ball import _CellSet, radius_profile
from dpcore.metrics import inertia, relative_error


# The numpy reference of GOOD-RADIUS's profile (the library's code before it was compiled, issue 66).
def _ball_counts(cs: _CellSet, S: np.ndarray, r: int) -> np.ndarray:
    """``B_r(x, P)`` for every occupied cell x: points within L-infinity distance r (§4.3).

    Inclusion–exclusion over the ``2^d`` corners of the box ``[x - r, x + r]``.
    """
    side = cs.side
    lo = np.clip(cs.cells - r, 0, side)
    hi = np.clip(cs.cells + r + 1, 0, side)
    out = np.zeros(cs.cells.shape[0], dtype=np.int64)
    flatS = S.ravel()
    shape = S.shape
    for corner in range(1 << cs.d):
        idx = []
        sign = 1
        for ax in range(cs.d):
            if corner >> ax & 1:
                idx.append(hi[:, ax])
            else:
                idx.append(lo[:, ax])
                sign = -sign
        out += sign * flatS[np.ravel_multi_index(tuple(idx), shape)]
    return out


def _top_t_mean(values: np.ndarray, mult: np.ndarray, t: int) -> float:
    """``L``: mean of the ``t`` largest ``min(B, t)`` over the points (with multiplicity), zeros padding."""
    v = np.minimum(values, t)
    h = np.bincount(v, weights=mult, minlength=t + 1)[::-1]  # mass at value t, t-1, ..., 0
    vals = np.arange(t, -1, -1, dtype=float)
    cm = np.cumsum(h)
    j = int(np.searchsorted(cm, t))
    if j >= cm.size:
        return float(np.dot(h, vals)) / t
    above = float(cm[j - 1]) if j > 0 else 0.0
    return (float(np.dot(h[:j], vals[:j])) + (t - above) * vals[j]) / t


def test_registry_and_metadata():
    assert dpcore.ALGORITHMS["coreset"] is PrivateKMeans
    assert PrivateKMeans.needs_delta and PrivateKMeans.private
    assert PrivateKMeans.display_name and PrivateKMeans.reference and PrivateKMeans.summary


def test_grid_side_is_smallest_power_of_two_above_n():
    for n, d in [(1, 2), (1000, 2), (181_446, 2), (10 ** 6, 2), (10 ** 4, 4)]:
        s = grid_side(n, d)
        assert s ** d > n and (s // 2) ** d <= n and s & (s - 1) == 0


@pytest.mark.parametrize("budget", ["paper", "schedule"])
def test_ledger_never_exceeds_grant(blobs, budget):
    X, bounds, _ = blobs
    for eps, delta in [(40.0, 1e-6), (400.0, 1e-9)]:
        est = PrivateKMeans(3, epsilon=eps, delta=delta, bounds=bounds, budget=budget, random_state=1).fit(X)
        spent_eps, spent_delta = est.budget_.total()
        assert spent_eps <= eps * (1 + 1e-9) and spent_delta <= delta * (1 + 1e-9)
        rounds = [e for e in est.budget_ if e.name.startswith("round ")]
        assert len(rounds) == est.plan_.n_rounds == est.coreset_size_
        # every round is the per-round budget of Alg. 1 line 1 (or eps / R for "schedule")
        assert all(math.isclose(e.epsilon, est.plan_.eps_round) for e in rounds)
        if budget == "paper":
            n = est.plan_.n
            assert math.isclose(est.plan_.eps_round, 3 * (eps * 0.98) / (8 * 3 * math.log(n)))
        else:
            assert spent_eps > 0.9 * eps  # the schedule spends (nearly) everything


def test_coreset_synopsis_weights_positive_and_in_bounds(blobs):
    X, bounds, _ = blobs
    est = PrivateKMeans(3, epsilon=60.0, delta=1e-6, bounds=bounds, random_state=0).fit(X)
    syn = est.synopsis_
    assert isinstance(syn, dpcore.synopsis.CoresetSynopsis)
    assert syn.points.shape == (est.coreset_size_, 2) and syn.weights.shape == (est.coreset_size_,)
    assert np.all(syn.weights > 0)
    assert np.all(syn.points >= 0) and np.all(syn.points <= 10)
    # the weights are the schedule's 3 n_i / (8k): together at most n, at least n - t_min
    assert syn.weights.sum() <= est.plan_.n and syn.weights.sum() >= est.plan_.n - est.plan_.t_min - 1
    assert est.cluster_centers_.shape == (3, 2)
    assert est.predict(X).shape == (X.shape[0],)


def test_same_seed_reproduces_and_other_seed_differs(blobs):
    X, bounds, _ = blobs
    a = PrivateKMeans(3, epsilon=60.0, delta=1e-6, bounds=bounds, random_state=7).fit(X)
    b = PrivateKMeans(3, epsilon=60.0, delta=1e-6, bounds=bounds, random_state=7).fit(X)
    c = PrivateKMeans(3, epsilon=60.0, delta=1e-6, bounds=bounds, random_state=8).fit(X)
    np.testing.assert_array_equal(a.synopsis_.points, b.synopsis_.points)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert not np.array_equal(a.synopsis_.points, c.synopsis_.points)


def test_radius_profile_matches_brute_force():
    rng = np.random.default_rng(0)
    side, t = 16, 9
    pts = rng.integers(0, side, size=(60, 2))
    cells, mult = np.unique(pts, axis=0, return_counts=True)
    cs = _CellSet(cells.astype(np.int64), mult.astype(np.int64), side)
    radii = np.array([0, 1, 2, 4, 8, 15])
    L = radius_profile(cs, radii, t)
    for r, l in zip(radii, L):
        cheb = np.abs(pts[:, None, :] - pts[None, :, :]).max(axis=2)
        b = np.minimum((cheb <= r).sum(axis=1), t)
        assert math.isclose(l, np.sort(b)[::-1][:t].mean())
    assert np.all(np.diff(L) >= 0)
    # fewer points than t: zeros pad the mean
    assert math.isclose(_top_t_mean(np.array([3, 3]), np.array([1, 1]), 4), 6 / 4)


def test_infeasible_epsilon_names_smallest_epsilon(blobs):
    X, bounds, _ = blobs
    need = min_feasible_epsilon(X.shape[0], 3, 2, 1e-6, n_share=0.0)
    with pytest.raises(InfeasibleBudgetError, match=r"smallest epsilon that works here is about") as info:
        PrivateKMeans(3, epsilon=need / 3, delta=1e-6, bounds=bounds, n_samples=X.shape[0],
                      random_state=0).fit(X)
    msg = str(info.value)
    assert f"{need:.3g}" in msg and "k=3" in msg and "t_min" in msg
    # just above the threshold a round runs
    est = PrivateKMeans(3, epsilon=need * 1.01, delta=1e-6, bounds=bounds, n_samples=X.shape[0],
                        random_state=0).fit(X)
    assert est.coreset_size_ >= 1


def test_min_feasible_epsilon_shape_of_table_2():
    # Table 2: larger n needs less epsilon, larger k needs more.
    e = {(k, n): min_feasible_epsilon(n, k, 2, 1e-10) for k in (1, 5, 10) for n in (10 ** 5, 10 ** 6)}
    for k in (1, 5, 10):
        assert e[k, 10 ** 6] < e[k, 10 ** 5]
    for n in (10 ** 5, 10 ** 6):
        assert e[1, n] < e[5, n] < e[10, n]
    # the threshold is sharp: a plan just below runs no round, just above runs one
    eps = e[5, 10 ** 6]
    assert plan_coreset(10 ** 6, 5, 2, eps * 0.99, 1e-10).n_rounds == 0
    assert plan_coreset(10 ** 6, 5, 2, eps * 1.01, 1e-10).n_rounds >= 1


def test_bad_parameters(blobs):
    X, bounds, _ = blobs
    with pytest.raises(ValueError, match="delta"):
        PrivateKMeans(3, epsilon=10.0, delta=0.0, bounds=bounds).fit(X)
    with pytest.raises(ValueError, match="budget_shares"):
        PrivateKMeans(3, epsilon=10.0, bounds=bounds, budget_shares=(1, 0, 1)).fit(X)
    with pytest.raises(ValueError, match="budget"):
        PrivateKMeans(3, epsilon=10.0, bounds=bounds, budget="all").fit(X)


def test_higher_dimension_runs_with_guarantee():
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(c, 0.05, size=(3000, 4)) for c in (0.25, 0.75)])
    est = PrivateKMeans(2, epsilon=30.0, delta=1e-6, bounds=(0.0, 1.0), budget="schedule", random_state=0).fit(X)
    assert est.cluster_centers_.shape == (2, 4)
    assert est.budget_.total()[0] <= 30.0 * (1 + 1e-9)
    assert np.all(est.synopsis_.weights > 0)


def test_error_falls_as_epsilon_grows_on_taxi(taxi_X, taxi_bounds):
    """§5.4 relative k-means cost error on the real taxi sample (k = 5), averaged over seeds."""
    k = 5
    base = dpcore.ALGORITHMS["kmeans"](k, bounds=taxi_bounds, random_state=0).fit(taxi_X)
    cost_opt = inertia(taxi_X, base.cluster_centers_)
    means = {}
    for eps in (8.0, 128.0):
        errs = []
        for seed in range(3):
            est = PrivateKMeans(k, epsilon=eps, delta=1e-8, bounds=taxi_bounds, random_state=seed).fit(taxi_X)
            errs.append(relative_error(inertia(taxi_X, est.cluster_centers_), cost_opt))
        means[eps] = float(np.mean(errs))
        assert est.budget_.total()[0] <= eps * (1 + 1e-9)
    assert means[128.0] < means[8.0]
    assert means[128.0] < 0.25  # a useful clustering at weak privacy


def test_feasible_at_epsilon_two_for_k5_n1e5_with_proved_constants():
    """Issue 16: k = 5, n = 10^5 runs at epsilon = 2 (public inputs only: no data needed)."""
    n, delta = 100_000, 1e-5 ** 1.5
    need = min_feasible_epsilon(n, 5, 2, delta, n_share=0.02)
    assert need <= 2.0
    assert plan_coreset(n, 5, 2, 2.0 * 0.98, delta).n_rounds >= 1
    # the paper's experimental constants (no proof) are cheaper still, near its Table 2 (0.8)
    assert min_feasible_epsilon(n, 5, 2, delta, constants="paper_experiments") < need
    assert 0.6 < min_feasible_epsilon(n, 5, 2, delta, constants="paper_experiments") < 1.1


def test_half_shifted_partitions_hold_every_ball_in_one_box():
    """The argument behind the heavy-box bound: some partition shifted by 0 or l/2 contains the cube."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        d, r = int(rng.integers(1, 4)), int(rng.integers(0, 6))
        ell = 2 * (2 * r + 1)
        shift = rng.integers(0, ell, size=d)
        lo = rng.integers(0, 200, size=d)
        cube = lo + np.array(np.unravel_index(np.arange((2 * r + 1) ** d), (2 * r + 1,) * d)).T
        ok = False
        for bits in range(2 ** d):
            o = np.array([(bits >> a) & 1 for a in range(d)]) * (ell // 2)
            boxes = (cube + shift + o) // ell
            ok |= bool((boxes == boxes[0]).all())
        assert ok


def test_paper_experimental_constants_are_labelled_and_private(blobs):
    X, bounds, _ = blobs
    est = PrivateKMeans(3, epsilon=6.0, delta=1e-6, bounds=bounds, constants="paper_experiments",
                        n_samples=X.shape[0], random_state=0).fit(X)
    assert est.plan_.slack == 8
    assert est.budget_.total()[0] <= 6.0 * (1 + 1e-9) and est.budget_.total()[1] <= 1e-6 * (1 + 1e-9)
    with pytest.raises(ValueError, match="no proof"):
        PrivateKMeans(3, epsilon=3.0, bounds=bounds, constants="tight").fit(X)


def test_compiled_radius_profile_equals_the_ball_counts_and_top_t_mean():
    """GOOD-RADIUS's L(r, P) from the compiled pass (issue 66: the coreset preview's hot loop) is, value for value,
    the mean of the top t of :func:`_ball_counts` (:func:`_top_t_mean`), in 1 to 3 dimensions, with t above
    and below the number of points."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        d, side = int(rng.integers(1, 4)), int(rng.integers(2, 60))
        pts = rng.integers(0, side, size=(int(rng.integers(1, 800)), d))
        cells, mult = np.unique(pts, axis=0, return_counts=True)
        cs = _CellSet(cells.astype(np.int64), mult.astype(np.int64), side)
        t = int(rng.integers(1, 1000))
        radii = np.unique(np.r_[0, rng.integers(0, side, 10)])
        S = cs.prefix_sums()
        expected = [_top_t_mean(_ball_counts(cs, S, int(r)), cs.mult, t) for r in radii]
        np.testing.assert_array_equal(radius_profile(cs, radii, t), expected)
