"""dpcore.sanitize: a private point synopsis (issue 57): budget, non-negative weights, utility, seeds, errors,
the person level, and the same synopsis from a DuckDB file as from the array."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpcore
from dpcore.algorithms._blocks.consistency import norm_sub, tree_norm_sub
from dpcore.algorithms.sanitize import METHODS, Sanitizer, choose_method
from dpcore.exceptions import SeededNoiseWarning
from dpcore.synopsis import PointSynopsis

BOUNDS = (0.0, 1.0)
pytestmark = pytest.mark.filterwarnings("ignore::dpcore.exceptions.SeededNoiseWarning")


@pytest.fixture(scope="module")
def blobs2():
    rng = np.random.default_rng(3)
    return np.clip(np.vstack([rng.normal(0.25, 0.04, (6000, 2)), rng.normal(0.7, 0.08, (6000, 2))]), 0, 1)


def _cost(X, C):
    d2 = np.full(len(X), np.inf)
    for c in C:
        np.minimum(d2, ((X - c) ** 2).sum(1), out=d2)
    return float(d2.sum())


@pytest.mark.parametrize("method", METHODS)
def test_budget_sums_to_epsilon_and_weights_are_non_negative(blobs2, method):
    syn = dpcore.sanitize(blobs2, epsilon=0.7, bounds=BOUNDS, method=method, random_state=1)
    assert isinstance(syn, PointSynopsis) and syn.method == method
    eps, delta = syn.budget_.total()
    assert eps == pytest.approx(0.7, rel=1e-12) and delta == 0.0
    assert syn.points.shape == (syn.size, 2) and syn.weights.shape == (syn.size,)
    assert np.all(syn.weights >= 0)
    assert np.all(syn.lower >= 0) and np.all(syn.upper <= 1) and np.all(syn.lower < syn.upper)
    # The cells partition the box: their areas add up to the box's.
    assert np.prod(syn.upper - syn.lower, axis=1).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("method", METHODS)
def test_total_weight_is_near_n_at_large_epsilon(blobs2, method):
    syn = dpcore.sanitize(blobs2, epsilon=50.0, bounds=BOUNDS, method=method, random_state=2)
    assert syn.total == pytest.approx(len(blobs2), rel=0.01)
    inside = ((blobs2 >= 0.2) & (blobs2 <= 0.3)).all(axis=1).sum()
    assert syn.range_count([0.2, 0.2], [0.3, 0.3]) == pytest.approx(inside, rel=0.05)


def test_cost_of_centres_is_close_on_taxi_at_epsilon_1(taxi_X, taxi_bounds):
    """The issue's goal measure: median relative k-means cost error of random centre sets near the data."""
    syn = dpcore.sanitize(taxi_X, epsilon=1.0, bounds=taxi_bounds, random_state=5)
    assert syn.method == "privtree"
    rng = np.random.default_rng(0)
    for k in (3, 10):
        errs = [abs(syn.cost(C) / _cost(taxi_X, C) - 1)
                for C in (taxi_X[rng.integers(0, len(taxi_X), k)] for _ in range(9))]
        assert np.median(errs) < 0.015, (k, np.median(errs))
    # Clipping the noise instead would put mass in every empty cell: the tree's projection keeps the total.
    assert syn.total == pytest.approx(len(taxi_X), rel=0.01)


def test_kmeans_on_the_synopsis_is_near_non_private(blobs2):
    from sklearn.cluster import KMeans
    syn = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, random_state=4)
    ref = KMeans(2, n_init=10, random_state=0).fit(blobs2).cluster_centers_
    C = syn.kmeans(2, random_state=0)
    assert C.shape == (2, 2)
    assert _cost(blobs2, C) <= 1.05 * _cost(blobs2, ref)
    assert dpcore.nicv(blobs2, C, BOUNDS) <= 1.05 * dpcore.nicv(blobs2, ref, BOUNDS)


def test_density_and_range_counts_are_post_processing_of_the_weights(blobs2):
    syn = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, random_state=6)
    grid = syn.density(8)
    assert grid.counts.shape == (8, 8) and np.all(grid.counts >= 0)
    assert grid.counts.sum() == pytest.approx(syn.total)
    assert syn.range_count([0, 0], [1, 1]) == pytest.approx(syn.total)
    q = syn.range_count(np.array([[0, 0], [0, 0]]), np.array([[0.5, 0.5], [1, 1]]))
    assert q.shape == (2,) and q[0] <= q[1]
    # spreading the mass over sub-cells keeps the total and every range count
    fine = syn.spread(2)
    assert fine.size == 4 * syn.size and fine.total == pytest.approx(syn.total)
    assert fine.range_count([0.1, 0.2], [0.6, 0.9]) == pytest.approx(syn.range_count([0.1, 0.2], [0.6, 0.9]))
    assert syn.to_dict()["kind"] == "points"


def test_a_seed_reproduces_and_warns_a_release_does_not(blobs2):
    with pytest.warns(SeededNoiseWarning):
        a = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, random_state=11)
    b = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, random_state=11)
    assert np.array_equal(a.points, b.points) and np.array_equal(a.weights, b.weights)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        c = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS)
        d = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS)
    assert not (c.size == d.size and np.array_equal(c.weights, d.weights))


def test_auto_reads_public_inputs_only():
    assert choose_method(2, 1.0) in METHODS
    rng = np.random.default_rng(0)
    a = Sanitizer(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(rng.uniform(0, 1, (50, 2)))
    b = Sanitizer(epsilon=1.0, bounds=BOUNDS, random_state=0).fit(rng.uniform(0, 0.1, (5000, 2)))
    assert a.method_ == b.method_ == choose_method(2, 1.0)


@pytest.mark.parametrize("kw, match", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=-1.0), "epsilon"), (dict(epsilon=float("nan")), "epsilon"),
    (dict(method="quadtree"), "method"), (dict(bounds=None), "bounds"),
])
def test_bad_parameters_are_clear_errors(blobs2, kw, match):
    args = dict(epsilon=1.0, bounds=BOUNDS)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        dpcore.sanitize(blobs2[:100], **args)


def test_bad_data_are_clear_errors():
    with pytest.raises(ValueError, match="at most 3 columns"):
        dpcore.sanitize(np.zeros((10, 4)), epsilon=1.0, bounds=(0, 1))
    X = np.zeros((10, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="(?i)nan|finite"):
        dpcore.sanitize(X, epsilon=1.0, bounds=(0, 1))
    with pytest.raises((TypeError, ValueError)):
        dpcore.sanitize(np.array([["a", "b"]] * 5), epsilon=1.0, bounds=(0, 1))


def test_rows_outside_the_bounds_are_clipped_onto_the_box_not_an_error():
    """An exception depending on the rows would publish something about them: outside rows are clipped
    (the estimator's ``n_clipped_`` is a raw fact for the owner), as every estimator does."""
    X = np.vstack([np.full((200, 2), 0.5), [[5.0, -3.0]]])
    est = Sanitizer(epsilon=20.0, bounds=BOUNDS, random_state=0).fit(X)
    assert est.n_clipped_ == 1
    syn = est.synopsis_
    assert np.all(syn.points >= 0) and np.all(syn.points <= 1)


def test_one_to_three_dimensions():
    rng = np.random.default_rng(1)
    for d in (1, 3):
        syn = dpcore.sanitize(rng.uniform(0, 1, (3000, d)), epsilon=5.0, bounds=(0, 1), random_state=0)
        assert syn.points.shape[1] == d and syn.total == pytest.approx(3000, rel=0.05)
        assert syn.density(4).counts.shape == (4,) * d


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_person_level_scales_every_sensitivity_by_L(blobs2, bounding):
    ids = np.repeat(np.arange(len(blobs2) // 4), 4)      # 4 rows per person
    syn = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, privacy_id=ids, max_contributions=2,
                          random_state=3, contribution_bounding=bounding)
    assert syn.privacy_unit_ == {"unit": "privacy_id", "max_contributions": 2, "bounding": bounding}
    assert syn.budget_.total()[0] == pytest.approx(1.0)
    assert [e.sensitivity for e in syn.budget_] == [2.0, 2.0]
    # two rows a person kept, or four rows weighted 1/2 each
    assert syn.total == pytest.approx(len(blobs2) / 2, rel=0.05)
    with pytest.raises(ValueError, match="max_contributions"):
        dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, privacy_id=ids)


def test_the_estimator_releases_centres_through_build_release(blobs2):
    from dpcore.release import build_release
    est = Sanitizer(3, epsilon=1.0, bounds=BOUNDS, random_state=0).fit(blobs2)
    rel = build_release(est, algorithm="sanitize", dataset="blobs", simulation=True)
    assert len(rel["centroids"]) == 3 and rel["synopsis"]["kind"] == "points"
    assert est.predict(blobs2[:5]).shape == (5,)


def test_norm_sub_and_tree_consistency():
    v = np.array([5.0, -2.0, 1.0, 0.5])
    w = norm_sub(v)
    assert np.all(w >= 0) and w.sum() == pytest.approx(v.sum())
    assert np.array_equal(norm_sub(np.array([-1.0, -2.0])), [0.0, 0.0])
    # a tree: the root split in 4, its first child split in 4 again
    level = np.array([1, 1, 1, 2, 2, 2, 2])
    index = np.array([[0, 1], [1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [1, 1]])
    noisy = np.array([5.0, -1, 2, 3, -2, 1, 4])
    w = tree_norm_sub(level, index, noisy)
    assert np.all(w >= 0) and w.sum() == pytest.approx(noisy.sum())
    assert w[3:].sum() == pytest.approx(norm_sub(np.array([6.0, 5, -1, 2]), noisy.sum())[0])


def test_duckdb_file_gives_the_same_synopsis_as_the_array(blobs2, tmp_path):
    """Where the data live: one histogram pass in DuckDB, the same integers, so the same synopsis for one seed."""
    import pandas as pd

    from dpcore import sources
    path = tmp_path / "pts.parquet"
    pd.DataFrame(blobs2, columns=["x", "y"]).to_parquet(path)
    for method in METHODS:
        a = dpcore.sanitize(blobs2, epsilon=1.0, bounds=BOUNDS, method=method, random_state=8)
        b = dpcore.sanitize(sources.from_files(path, columns=["x", "y"]), epsilon=1.0, bounds=BOUNDS, method=method,
                            random_state=8)
        assert np.array_equal(a.points, b.points) and np.array_equal(a.weights, b.weights), method


@pytest.mark.parametrize("method, params, passes", [
    ("privtree", {}, 1), ("uniform", {"n_samples": 3000}, 1), ("adaptive", {"n_samples": 3000}, 1),
    ("adaptive", {}, 2), ("uniform", {}, 2)])
def test_a_duckdb_file_is_read_once_when_public_inputs_fix_the_histogram(blobs2, tmp_path, method, params, passes):
    """The row count and the rows outside the box come from the histogram's own pass (issue 66): one pass when
    public inputs fix the histogram (PrivTree always; the grids with a public size), else the noisy size's first."""
    import pandas as pd

    from dpcore import sources
    path = tmp_path / "pts.parquet"
    pd.DataFrame(blobs2, columns=["x", "y"]).to_parquet(path)
    src = sources.from_files(path, columns=["x", "y"])
    seen = []
    src.on_pass = seen.append
    est = dpcore.algorithms.Sanitizer(epsilon=1.0, bounds=BOUNDS, method=method, random_state=8, **params).fit(src)
    ref = dpcore.algorithms.Sanitizer(epsilon=1.0, bounds=BOUNDS, method=method, random_state=8, **params).fit(blobs2)
    assert len(seen) == passes, seen
    assert np.array_equal(est.synopsis_.weights, ref.synopsis_.weights)
    assert (est.n_clipped_, est.n_dropped_) == (ref.n_clipped_, 0)


def test_privtree_mechanism_records_one_entry_and_partitions():
    from dpcore.privacy.accountant import BudgetLedger
    from dpcore.privacy.mechanisms import NoiseSource
    fine = np.zeros((8, 8), dtype=np.int64)
    fine[:2, :2] = 500
    levels = [fine]
    while levels[-1].shape[0] > 1:
        c = levels[-1]
        levels.append(c.reshape(c.shape[0] // 2, 2, c.shape[0] // 2, 2).sum(axis=(1, 3)))
    flat = np.concatenate([c.ravel() for c in levels[::-1]])
    noise = NoiseSource(np.random.default_rng(0), BudgetLedger(1.0))
    leaf = noise.privtree(flat, d=2, epsilon=1.0, name="splits")
    assert leaf.shape == flat.shape and leaf.dtype == bool
    assert noise.ledger.total() == (1.0, 0.0) and len(noise.ledger) == 1
    sizes = np.concatenate([np.full(4 ** lv, 4.0 ** -lv) for lv in range(4)])
    assert sizes[leaf].sum() == pytest.approx(1.0)          # the leaves tile the box
    assert leaf[-64:].reshape(8, 8)[:2, :2].all()            # the dense corner is split to the last level
    with pytest.raises(ValueError, match="levels"):
        noise.privtree(flat[:-1], d=2, epsilon=0.1, name="x")


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_person_level_on_a_duckdb_file_bounds_units_where_the_data_live(tmp_path, bounding):
    import pandas as pd

    from dpcore import sources
    rng = np.random.default_rng(0)
    X, ids = rng.uniform(0, 1, (4000, 2)), np.repeat(np.arange(1000), 4)
    path = tmp_path / "units.parquet"
    pd.DataFrame({"x": X[:, 0], "y": X[:, 1], "user": ids}).to_parquet(path)
    syn = dpcore.sanitize(sources.from_files(path, columns=["x", "y"]), epsilon=1.0, bounds=BOUNDS,
                          privacy_id="user", max_contributions=2, random_state=0, contribution_bounding=bounding)
    assert syn.privacy_unit_ == {"unit": "user", "max_contributions": 2, "bounding": bounding}
    assert [e.sensitivity for e in syn.budget_] == [2.0, 2.0]
    assert syn.total == pytest.approx(2000, rel=0.1)
    # the same synopsis as in memory (the same key or weights, the same seed)
    mem = dpcore.sanitize(X, epsilon=1.0, bounds=BOUNDS, privacy_id=ids, max_contributions=2, random_state=0,
                          contribution_bounding=bounding)
    np.testing.assert_array_equal(mem.weights, syn.weights)
