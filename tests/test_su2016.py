"""DPLloyd, EUGkM and Hybrid (Su et al. 2016) on the real NYC taxi pickups, and their mechanics."""
import numpy as np
import pytest

import dpcore
from dpcore.algorithms._blocks.grid import eug_cells_per_dim
from dpcore.algorithms._blocks.lloyd import auto_schedule
from dpcore.algorithms._blocks.sphere_packing import sphere_packing_centers
from dpcore.algorithms.centroid.hybrid import hybrid_min_epsilon
from dpcore.metrics import nicv

K = 5


@pytest.fixture(scope="module")
def baseline_nicv(taxi_X, taxi_bounds):
    km = dpcore.ALGORITHMS["kmeans"](K, bounds=taxi_bounds, n_init=10, random_state=0).fit(taxi_X)
    return nicv(taxi_X, km.cluster_centers_, taxi_bounds)


def mean_ratio(key, X, bounds, base, eps, seeds, **kw):
    vals = [nicv(X, dpcore.ALGORITHMS[key](K, epsilon=eps, bounds=bounds, random_state=s, **kw)
                 .fit(X).cluster_centers_, bounds) for s in seeds]
    return float(np.mean(vals)) / base


def test_taxi_sample_size(taxi_X):
    assert 175_000 < len(taxi_X) < 190_000


def test_eugkm_and_hybrid_within_2_percent_at_eps_1(taxi_X, taxi_bounds, baseline_nicv):
    assert mean_ratio("eugkm", taxi_X, taxi_bounds, baseline_nicv, 1.0, range(4)) <= 1.02
    assert mean_ratio("hybrid", taxi_X, taxi_bounds, baseline_nicv, 1.0, range(4)) <= 1.02


def test_dplloyd_default_within_14_percent_at_eps_1(taxi_X, taxi_bounds, baseline_nicv):
    # The 20-release mean has a standard error of about 0.02 (releases spread 1.05-1.27).
    assert mean_ratio("dplloyd", taxi_X, taxi_bounds, baseline_nicv, 1.0, range(20)) <= 1.15


def test_eugkm_within_12_percent_at_eps_005(taxi_X, taxi_bounds, baseline_nicv):
    assert mean_ratio("eugkm", taxi_X, taxi_bounds, baseline_nicv, 0.05, range(10)) <= 1.12


@pytest.mark.parametrize("key, seeds", [("dplloyd", range(12)), ("eugkm", range(6)), ("hybrid", range(6))])
def test_nicv_improves_with_epsilon(key, seeds, taxi_X, taxi_bounds, baseline_nicv):
    low = mean_ratio(key, taxi_X, taxi_bounds, baseline_nicv, 0.01, seeds)
    high = mean_ratio(key, taxi_X, taxi_bounds, baseline_nicv, 1.0, seeds)
    assert high < low


def test_paper_iterations_use_joint_sensitivity(blobs):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS["dplloyd"](3, epsilon=1.0, bounds=bounds, n_iter=5, random_state=0).fit(X)
    assert est.n_iter_ == 5 and len(est.budget_) == 5
    for entry in est.budget_:
        # d r + 1 with d = 2, r = 1, plus what rounding onto the noise lattice adds (at most 2^-10 of it)
        assert 3.0 < entry.sensitivity <= 3.0 * (1 + 2.0 ** -10)
        assert entry.epsilon == pytest.approx(0.2)
    assert est.budget_.total()[0] == pytest.approx(1.0)


def test_auto_schedule_split_sums_to_the_iteration_budget():
    for d in (1, 2, 5, 10, 50):
        t, c_share, s_share = auto_schedule(1e5, d, 5, 1.0)
        assert 2 <= t <= 7
        assert c_share + s_share == pytest.approx(1.0)
        # Lagrange optimum: per-dimension sum budget : count budget = 1 : cbrt(4 d rho^2)
        assert (c_share / (s_share / d)) == pytest.approx(np.cbrt(4 * d * 0.225 ** 2))


@pytest.mark.parametrize("d", [2, 5, 10])
def test_auto_dplloyd_spends_exactly_epsilon(d):
    rng = np.random.default_rng(d)
    X = rng.uniform(-1, 1, size=(3000, d))
    est = dpcore.ALGORITHMS["dplloyd"](4, epsilon=0.7, bounds=(-1, 1), random_state=1).fit(X)
    assert est.budget_.total()[0] == pytest.approx(0.7, rel=1e-12)
    names = [e.name for e in est.budget_]
    assert names[0] == "dataset size"
    assert sum("cluster counts" in nm for nm in names) == est.n_iter_ == sum("sums" in nm for nm in names)
    # init="auto" buys a noisy grid start only where EUGkM's regime holds (low d), decided on public inputs
    assert (names[1] == "initial centres: grid cell counts") == (est.init_ == "grid")


def test_sphere_packing_is_spread_and_inside():
    rng = np.random.default_rng(0)
    C = sphere_packing_centers(5, 2, rng)
    assert C.shape == (5, 2) and np.abs(C).max() <= 1
    dmin = min(np.linalg.norm(C[i] - C[j]) for i in range(5) for j in range(i))
    assert dmin > 0.5  # random uniform points would often be much closer


def test_eug_grid_size_follows_eq4():
    # M = (N eps / 10)^(2d/(2+d)): d = 2 gives M = N eps / 10.
    assert eug_cells_per_dim(181_000, 1.0, 2) == round(18_100 ** 0.5)
    assert eug_cells_per_dim(10, 0.01, 3) == 1
    assert eug_cells_per_dim(1e9, 10, 40) ** 40 <= 1 << 22


def test_eugkm_synopsis_is_signed_and_published(blobs):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS["eugkm"](3, epsilon=0.5, bounds=bounds, random_state=0).fit(X)
    syn = est.synopsis_
    assert syn.kind == "grid" and syn.counts.shape == (est.cells_per_dim_,) * 2
    assert (syn.counts < 0).any()  # kept signed: no clamping
    assert syn.counts.dtype.kind == "i"  # integer noise on integer counts (floating-point safe)
    assert syn.edges[0][0] == 0 and syn.edges[0][-1] == 10
    assert sum(e.epsilon for e in est.budget_) == pytest.approx(0.5)


def test_hybrid_branches_follow_inequality_15(blobs):
    X, bounds, _ = blobs
    n = len(X)
    thr = hybrid_min_epsilon(n, 2, 3)
    small = dpcore.ALGORITHMS["hybrid"](3, epsilon=thr / 3, bounds=bounds, n_samples=n, random_state=0).fit(X)
    big = dpcore.ALGORITHMS["hybrid"](3, epsilon=thr * 3, bounds=bounds, n_samples=n, random_state=0).fit(X)
    assert small.branch_ == "eugkm" and "all to EUGkM" in small.branch_reason_
    assert big.branch_ == "eugkm+dplloyd"
    assert any("DPLloyd refinement" in e.name for e in big.budget_)
    for est, eps in ((small, thr / 3), (big, thr * 3)):
        assert est.budget_.total()[0] == pytest.approx(eps)


def test_public_n_samples_costs_nothing(blobs):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS["eugkm"](3, epsilon=1.0, bounds=bounds, n_samples=6000, random_state=0).fit(X)
    assert [e.name for e in est.budget_] == ["grid cell counts"]


def test_centres_close_to_truth_on_blobs(blobs):
    X, bounds, truth = blobs
    for key in ("dplloyd", "eugkm", "hybrid"):
        C = dpcore.ALGORITHMS[key](3, epsilon=2.0, bounds=bounds, random_state=0).fit(X).cluster_centers_
        err = max(np.min(np.linalg.norm(C - t, axis=1)) for t in truth)
        assert err < 0.5, key


@pytest.mark.parametrize("d", [3, 40, 70])
def test_eugkm_and_hybrid_work_in_high_dimension(d):
    # numpy's ravel_multi_index/meshgrid stop at 32 dimensions; the grid must not.
    rng = np.random.default_rng(d)
    X = rng.uniform(0, 1, size=(500, d))
    for key in ("eugkm", "hybrid"):
        est = dpcore.ALGORITHMS[key](3, epsilon=1.0, bounds=(0, 1), random_state=0).fit(X)
        assert est.cluster_centers_.shape == (3, d)
        assert est.synopsis_.counts.size == est.cells_per_dim_ ** d
        assert est.synopsis_.cell_centers().shape == (est.cells_per_dim_ ** d, d)


def test_dplloyd_is_monotone_in_epsilon_and_starts_from_the_grid(taxi_X, taxi_bounds):
    """Issue 16: DPLloyd's utility must not drop as epsilon grows (20k taxi rows, median of 8 seeds)."""
    X = taxi_X[np.random.default_rng(0).choice(len(taxi_X), 20_000, replace=False)]
    km = dpcore.ALGORITHMS["kmeans"](K, bounds=taxi_bounds, n_init=10, random_state=0).fit(X)
    base = nicv(X, km.cluster_centers_, taxi_bounds)

    def median_ratio(eps):
        ests = [dpcore.ALGORITHMS["dplloyd"](K, epsilon=eps, bounds=taxi_bounds, random_state=s).fit(X)
                for s in range(8)]
        assert all(e.init_ == "grid" for e in ests)
        return float(np.median([nicv(X, e.cluster_centers_, taxi_bounds) for e in ests])) / base

    r = [median_ratio(e) for e in (0.1, 0.5, 2.0)]
    assert r[0] >= r[1] * 0.98 and r[1] >= r[2] * 0.98, r
    assert r[2] < 1.05, r          # near non-private at epsilon = 2 (the sphere-packing start stayed at 1.13)


@pytest.mark.parametrize("d, m, k", [(1, 50, 3), (2, 64, 5), (2, 33, 1), (3, 12, 4), (2, 40, 7)])
def test_grid_lloyd_pass_equals_the_point_pass(d, m, k):
    """EUGkM's large-grid refinement (per-row intervals from prefix sums) gives the same per-centre mass,
    sums and squared distances as the Lloyd pass over every cell, on signed noisy weights, duplicate
    centres included (ties to the lowest index)."""
    from dpcore.algorithms._blocks.grid_kmeans import _GridSynopsisPoints
    from dpcore.metrics import assign, cluster_sums
    from dpcore.synopsis import grid_points

    rng = np.random.default_rng(d * 100 + m)
    counts = rng.laplace(size=(m,) * d) + (rng.random((m,) * d) < 0.2) * rng.integers(0, 50, (m,) * d)
    mids = (np.arange(m) + 0.5) / m * 2 - 1
    pts, w = grid_points([mids] * d), counts.ravel()
    grid = _GridSynopsisPoints([mids] * d, counts)
    for trial in range(20):
        C = rng.uniform(-1, 1, (k, d))
        if trial == 0 and k > 1:
            C[1] = C[0]
        mass, sums, sq = grid.sums(C)
        mass2, sums2 = cluster_sums(pts, C, w)
        lab, d2 = assign(pts, C, return_distances=True)
        np.testing.assert_allclose(mass, mass2, atol=1e-8)
        np.testing.assert_allclose(sums, sums2, atol=1e-8)
        np.testing.assert_allclose(sq, np.bincount(lab, weights=w * d2, minlength=k), atol=1e-8)


def test_eugkm_runs_at_the_largest_grid(taxi_X, taxi_bounds, baseline_nicv):
    """About 10^8 points (public n_samples) give Eq. 4's grid capped at MAX_CELLS: in regime, and the
    centres are as good as on the real-size grid."""
    from dpcore.algorithms._blocks.grid import MAX_CELLS
    rng = np.random.default_rng(0)
    big = taxi_X[rng.integers(len(taxi_X), size=20_000_000)] + rng.uniform(-1e-4, 1e-4, size=(20_000_000, 2))
    est = dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=taxi_bounds, n_samples=1e8).fit(big)
    del big
    assert est.cells_per_dim_ ** 2 == MAX_CELLS and est.regime_.ok
    assert nicv(taxi_X, est.cluster_centers_, taxi_bounds) <= 1.05 * baseline_nicv


def test_grid_lloyd_ends_when_a_pass_no_longer_lowers_the_cost(monkeypatch):
    """On a noisy synopsis the centres can drift by more than the tolerance while the cost stays put (5-d,
    30 centres: 100 passes of 0.2 s each for under 1 %); the loop ends at the first pass that lowers the
    synopsis' cost by less than COST_RTOL of it, and the result is no worse than 100 passes' by 10 %."""
    from dpcore.algorithms._blocks import grid_kmeans as G
    rng = np.random.default_rng(3)
    m, d, k = 12, 4, 20
    mids = (np.arange(m) + 0.5) / m * 2 - 1
    counts = rng.laplace(scale=3.0, size=(m,) * d) + (rng.random((m,) * d) < 0.05) * rng.integers(0, 200, (m,) * d)
    grid = G._GridSynopsisPoints([mids] * d, counts)
    init = rng.uniform(-1, 1, (k, d))
    costs = []

    def traced(C):
        out = grid.sums(C)
        costs.append(float(out[2].sum()))
        return out
    early = G._lloyd(traced, init, max_iter=100, tol=0.0, r=1.0)
    assert 2 <= len(costs) < 100
    assert costs[-1] > costs[-2] * (1 - G.COST_RTOL)          # it stopped on a pass that did not help
    assert all(b < a * (1 - G.COST_RTOL) for a, b in zip(costs[:-2], costs[1:-1]))   # ... and not before
    monkeypatch.setattr(G, "COST_RTOL", -np.inf)          # the loop as it was: 100 passes
    full = G._lloyd(grid.sums, init, max_iter=100, tol=0.0, r=1.0)
    assert grid.nicv(early) <= 1.1 * grid.nicv(full)


def _kmeanspp_by_choice(points, weights, k, rng):
    """k-means++ seeding as one ``rng.choice`` per centre (the code before the compiled kernel)."""
    mass = np.clip(weights, 0.0, None)
    centers = [points[rng.choice(points.shape[0], p=mass / mass.sum())]]
    d2 = ((points - centers[0]) ** 2).sum(1)
    for _ in range(1, k):
        p = mass * d2
        idx = rng.choice(points.shape[0], p=p / p.sum())
        centers.append(points[idx])
        d2 = np.minimum(d2, ((points - points[idx]) ** 2).sum(1))
    return np.array(centers)


def test_compiled_kmeanspp_draws_the_centres_rng_choice_draws():
    """EUGkM's seeding in one compiled call takes one uniform per centre and searches the cumulative masses as
    ``rng.choice`` does: on signed weights, the same generator gives the same centres, and leaves the generator
    where ``rng.choice`` left it (the next start draws the same)."""
    from dpcore.algorithms._blocks.grid_kmeans import weighted_kmeanspp
    g = np.random.default_rng(1)
    for trial in range(60):
        m, d, k = int(g.integers(20, 3000)), int(g.integers(1, 5)), int(g.integers(1, 12))
        pts, w = g.uniform(-1, 1, (m, d)), g.normal(2, 3, m)
        a, b = np.random.default_rng(trial), np.random.default_rng(trial)
        np.testing.assert_array_equal(weighted_kmeanspp(pts, w, k, a), _kmeanspp_by_choice(pts, w, k, b))
        assert a.random() == b.random()


def test_point_lloyd_ends_by_the_grid_passes_cost_rule():
    """The Lloyd loop over a small synopsis' cells stops by the rule of the grid passes (a pass that lowers the
    weighted cost by less than COST_RTOL), where the grid loop stops; without the rule it runs to max_iter."""
    from dpcore.algorithms._blocks import grid_kmeans as G
    from dpcore.synopsis import grid_points
    rng = np.random.default_rng(3)
    m, d, k = 12, 4, 20
    mids = (np.arange(m) + 0.5) / m * 2 - 1
    counts = rng.laplace(scale=3.0, size=(m,) * d) + (rng.random((m,) * d) < 0.05) * rng.integers(0, 200, (m,) * d)
    grid, pts = G._GridSynopsisPoints([mids] * d, counts), grid_points([mids] * d)
    init = rng.uniform(-1, 1, (k, d))
    np.testing.assert_allclose(G.weighted_lloyd(pts, counts.ravel(), init, tol=0.0),
                               G._lloyd(grid.sums, init, max_iter=100, tol=0.0, r=1.0), atol=1e-9)
    for n in (1, 2, 3):     # the rule off, n passes: the loop ran all of them (no other stop at tol 0)
        once = G.weighted_lloyd(pts, counts.ravel(), init, tol=0.0, max_iter=n, cost_rtol=-np.inf)
        np.testing.assert_allclose(once, G._lloyd(lambda C: grid.sums(C), init, max_iter=n, tol=0.0, r=1.0),
                                   atol=1e-9)
