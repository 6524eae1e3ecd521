"""One pass, then Lloyd in memory (issue 26): fine-cell statistics, cell-level assignment, the pass count.

The statistics are the same integers on every engine (``tests/test_sources.py::_check_equal`` checks
them for numpy, DuckDB's streamed and SQL scans, Spark's SQL and executor kernels, PostgreSQL).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import sources
from dpcore.metrics import nicv
from dpcore.sources.cells import AUTO_MAX_D, CellSource, cell_statistics, fine_shape, use_cells
from dpcore.utils.domain import check_bounds
from dpcore.utils.fixedpoint import SUM_SCALE, quantize


def _per_row_by_cell_middle(X, dom, shape, C):
    """Independent numpy: each row's cell, the centre nearest the cell's middle, exact sums by label."""
    Xc = np.clip(X, dom.lower, dom.upper)
    m = np.array(shape)
    idx = np.minimum(np.floor((Xc - dom.lower) / dom.width * m), m - 1).astype(int)
    mid = -1.0 + (2.0 * idx + 1.0) / m
    lab = ((mid[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)
    z = dom.normalize(Xc)
    q = quantize(z)
    k = C.shape[0]
    counts = np.bincount(lab, minlength=k)
    sums = np.array([[int(q[lab == c, j].sum()) for j in range(X.shape[1])] for c in range(k)], dtype=np.int64)
    inertia = float(((z - C[lab]) ** 2).sum())
    return counts, sums, inertia


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n=st.integers(1, 400), k=st.integers(1, 5), sides=st.sampled_from([(4, 4), (8, 2), (64, 64)]))
def test_cell_level_sums_are_the_per_row_sums_of_the_cell_rule(seed, n, k, sides):
    """Counts and fixed-point sums equal a per-row pass where each row takes the centre nearest its cell's middle."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.2, 1.2, size=(n, 2))
    X[: n // 4] = np.round(X[: n // 4] * sides[0]) / sides[0]       # rows on cell edges and on the bounds
    dom = check_bounds((0.0, 1.0), d=2)
    C = rng.uniform(-1, 1, size=(k, 2))
    stats = cell_statistics(sources.ArraySource(X), dom, sides)
    counts, sums = stats.cluster_sums(C)
    ref_counts, ref_sums, ref_inertia = _per_row_by_cell_middle(X, dom, sides, C)
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_array_equal(sums.q, ref_sums)
    # The offsets come from the fixed-point sums: within 2 |m - c| 2^-25 per row and coordinate.
    assert stats.inertia(C) == pytest.approx(ref_inertia, rel=1e-6, abs=1e-6)
    assert stats.n == n and stats.n_inside == int(((X >= 0) & (X <= 1)).all(1).sum())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31), k=st.integers(1, 6))
def test_one_row_moves_the_cell_level_query_by_at_most_its_sensitivity(seed, k):
    """Neighbours (one row added anywhere, inside or outside the box): the joint count-and-sum vector moves
    by at most d r + 1 in L1 (fixed-point units), the sensitivity DPLloyd's ledger states."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.1, 1.1, size=(300, 2))
    extra = rng.uniform(-0.5, 1.5, size=(1, 2))
    C = rng.uniform(-1, 1, size=(k, 2))
    dom = check_bounds((0.0, 1.0), d=2)
    a = cell_statistics(sources.ArraySource(X), dom, (32, 32)).cluster_sums(C)
    b = cell_statistics(sources.ArraySource(np.vstack([X, extra])), dom, (32, 32)).cluster_sums(C)
    moved = np.abs(b[0] - a[0]).sum() * SUM_SCALE + np.abs(b[1].q - a[1].q).sum()
    assert np.abs(b[0] - a[0]).sum() == 1
    assert moved <= (2 * 1 + 1) * SUM_SCALE


def test_the_dense_and_sorted_array_paths_agree(taxi_X, taxi_bounds):
    """Many rows per cell (dense per-worker arrays) and few (per-row cells sorted): the same statistics."""
    dom = check_bounds(taxi_bounds, d=2)
    X = taxi_X[:50_000]
    dense = cell_statistics(sources.ArraySource(X), dom, (64, 64))       # 8 n >= cells: dense
    sparse = cell_statistics(sources.ArraySource(X), dom, (1024, 1024))  # 8 n < cells: sorted
    coarse = sparse.grid_counts((64, 64))
    np.testing.assert_array_equal(coarse, dense.grid_counts((64, 64)))
    np.testing.assert_array_equal(coarse, sources.ArraySource(X).grid_counts(dom, (64, 64)))
    C = np.random.default_rng(0).uniform(-0.5, 0.5, size=(5, 2))
    np.testing.assert_array_equal(dense.cluster_sums(C)[0].sum(), sparse.cluster_sums(C)[0].sum())


def test_the_default_is_chosen_from_public_inputs_only():
    assert fine_shape(1) == (1 << 20,) and fine_shape(2) == (1024, 1024) and fine_shape(3) == (64,) * 3
    assert use_cells("auto", AUTO_MAX_D) and not use_cells("auto", AUTO_MAX_D + 1)
    assert use_cells("cells", 5) and not use_cells("rows", 2)
    with pytest.raises(ValueError, match="assignment"):
        use_cells("nearest", 2)
    with pytest.raises(ValueError, match="assignment"):
        dpcore.ALGORITHMS["dplloyd"](3, epsilon=1.0, bounds=(0, 1), assignment="nearest").fit(
            np.random.default_rng(0).uniform(size=(100, 2)))
    # A source that cannot keep statistics (weighted rows) gets per-row assignment, whatever was asked.
    from dpcore.sources.memory import WeightedArraySource
    w = WeightedArraySource(np.zeros((3, 2)), np.ones(3, dtype=np.int64), weight_bits=0)
    assert not use_cells("cells", 2, w)


@pytest.fixture(scope="module")
def taxi_files(taxi_X, tmp_path_factory):
    folder = tmp_path_factory.mktemp("taxi_cells")
    for i, part in enumerate(np.array_split(taxi_X[:60_000], 3)):
        pd.DataFrame(part, columns=["lon", "lat"]).to_parquet(folder / f"part-{i}.parquet")
    return folder


@pytest.mark.parametrize("key, params, passes", [
    ("dplloyd", {}, ["cell statistics"]), ("hybrid", {}, ["cell statistics"]),
    # EUGkM's first pass counts the rows into its largest grid (issue 66): the grid itself when the noisy size
    # reaches the cap (here a cap of 64 x 64 cells), else a second pass for the grid the size asks for.
    ("eugkm", {"max_cells": 4096}, ["grid counts"]), ("eugkm", {}, ["grid counts", "grid counts"])])
def test_a_fit_on_files_reads_them_once_its_noisy_size_included(key, params, passes, taxi_files, taxi_X, taxi_bounds):
    """DPLloyd (auto, with its noisy size and its grid start), the Hybrid and EUGkM at its grid cap read the data
    once; EUGkM below the cap twice.  The release is the one a fit on the array gives (same seed, same integers)."""
    src = sources.from_files(taxi_files, columns=["lon", "lat"])
    seen = []
    src.on_pass = seen.append
    make = dpcore.ALGORITHMS[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_files = make(5, epsilon=1.0, bounds=taxi_bounds, random_state=3, **params).fit(src)
        in_memory = make(5, epsilon=1.0, bounds=taxi_bounds, random_state=3, **params).fit(taxi_X[:60_000])
    assert seen == passes
    np.testing.assert_array_equal(on_files.cluster_centers_, in_memory.cluster_centers_)
    names = [e.name for e in on_files.budget_]
    assert any("size" in name for name in names)                 # the noisy count was drawn, from that pass
    assert on_files.budget_.total()[0] == pytest.approx(1.0)
    assert (on_files.n_clipped_, on_files.n_dropped_) == (in_memory.n_clipped_, 0)


def test_eugkm_with_a_public_size_reads_the_files_once(taxi_files, taxi_X, taxi_bounds):
    """A public ``n_samples`` fixes EUGkM's grid before any pass: counted with the rows in the one pass."""
    src = sources.from_files(taxi_files, columns=["lon", "lat"])
    seen = []
    src.on_pass = seen.append
    on_files = dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=taxi_bounds, n_samples=60_000, random_state=2).fit(src)
    in_memory = dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=taxi_bounds, n_samples=60_000,
                                           random_state=2).fit(taxi_X[:60_000])
    assert seen == ["grid counts"]
    np.testing.assert_array_equal(on_files.synopsis_.counts, in_memory.synopsis_.counts)
    # A second fit on the same source finds its row count cached: it reads the grid it needs and nothing else.
    seen.clear()
    dpcore.ALGORITHMS["eugkm"](5, epsilon=0.5, bounds=taxi_bounds, random_state=2).fit(src)
    assert seen == ["grid counts"]


def test_cells_and_rows_spend_the_same_budget_the_same_way(taxi_X, taxi_bounds):
    """The assignment rule changes which cluster a boundary row joins, never the ledger."""
    X = taxi_X[:20_000]
    fits = {a: dpcore.ALGORITHMS["dplloyd"](5, epsilon=0.5, bounds=taxi_bounds, assignment=a, random_state=1).fit(X)
            for a in ("cells", "rows")}
    ledgers = {a: [(e.name, e.epsilon, e.sensitivity) for e in f.budget_] for a, f in fits.items()}
    assert ledgers["cells"] == ledgers["rows"]


def test_cell_level_lloyd_stays_within_a_tenth_of_a_percent_of_per_row(taxi_X, taxi_bounds):
    """Utility on real taxi data (the seeded table is benchmarks/cells_vs_rows.py, in docs/guide/sources.rst).

    From the same centres one exact step moves under 0.1 % of the rows to another cluster and the new
    centres by under 10^-3 of the box; the non-private reference on the statistics is as good as
    scikit-learn's on the array (NICV within 0.1 %); NICV read from the statistics is the per-row NICV.
    """
    X = taxi_X
    src = CellSource(sources.ArraySource(X), taxi_bounds)
    ref = dpcore.ALGORITHMS["kmeans"](5, bounds=taxi_bounds, random_state=0).fit(src)
    sk = dpcore.ALGORITHMS["kmeans"](5, bounds=taxi_bounds, random_state=0).fit(X)
    assert nicv(X, ref.cluster_centers_) <= nicv(X, sk.cluster_centers_) * 1.001
    dom = src.stats.domain
    C = dom.normalize(ref.cluster_centers_) + np.random.default_rng(0).normal(0, 0.05, size=(5, 2))
    c1, s1 = src.cluster_sums(C, dom)
    c2, s2 = sources.ArraySource(X).cluster_sums(C, dom)
    assert np.abs(c1 - c2).sum() / 2 <= 1e-3 * X.shape[0]
    assert np.abs(s1.to_float() / c1[:, None] - s2.to_float() / c2[:, None]).max() < 1e-3
    assert nicv(src, ref.cluster_centers_, bounds=taxi_bounds) == pytest.approx(
        nicv(sources.ArraySource(X), ref.cluster_centers_, bounds=taxi_bounds), rel=1e-4)


def test_parquet_nan_rows_are_dropped_by_duckdb_on_every_pass(tmp_path):
    """DuckDB folded ``x <= max`` to TRUE from pyarrow's NaN-free min/max statistics, keeping NaN rows in the
    aggregates while the row count dropped them (duckdb/duckdb#25521)."""
    X = np.array([[np.nan, 0.9], [0.5, 0.5], [0.2, 0.2], [0.7, np.nan]])
    path = tmp_path / "nan.parquet"
    pd.DataFrame(X, columns=["x", "y"]).to_parquet(path)
    for scan in ("arrow", "sql"):
        src = sources.from_files(path, columns=["x", "y"])
        src.scan = scan
        assert src.count() == 2 and src.n_dropped() == 2
        assert int(src.grid_counts((0, 1), (4, 4)).sum()) == 2
        assert int(src.cluster_sums(np.zeros((1, 2)), (0, 1))[0].sum()) == 2
        assert np.isfinite(src.inertia(np.zeros((1, 2)), (0, 1)))
        assert cell_statistics(src, (0, 1), (8, 8)).n == 2
