"""dpcore.sources: the same exact aggregate on every engine, estimators on sources, bad input.

Engines are real: numba on arrays, embedded DuckDB on Parquet files, Spark local[2]
(one session for the whole run), PostgreSQL when the throwaway-server fixture exists.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpcore
from dpcore import sources
from dpcore.sources import SourceError

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def spark():
    """One Spark local[2] session for the whole run (startup ~15 s)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java: .ci/run installs openjdk-17-jre-headless")
    session = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                      "spark.sql.shuffle.partitions": "2"})
    session.sparkContext.setLogLevel("ERROR")
    yield session


def _write_parquet(X, folder, nan_rows=0):
    df = pd.DataFrame(X, columns=["lon", "lat"])
    if nan_rows:
        df.loc[:nan_rows - 1, "lat"] = np.nan
    df["label"] = "text"
    path = Path(folder) / "part-0.parquet"
    df.to_parquet(path, row_group_size=max(1, len(df) // 3))
    return path


def _duckdb(X, folder):
    return sources.from_files(_write_parquet(X, folder), columns=["lon", "lat"])


def _spark(spark, X, folder):
    return sources.from_spark(spark.read.parquet(str(_write_parquet(X, folder))), columns=["lon", "lat"])


# ---------------------------------------------------------------------------
# random data with the hard cases: points on interior cell edges, on the bounds, outside them
# ---------------------------------------------------------------------------
@st.composite
def cases(draw):
    lo = np.array([draw(st.sampled_from([-74.1, 0.0, -1e-3, 12.5])), draw(st.sampled_from([40.7, -3.0, 0.1]))])
    width = np.array([draw(st.sampled_from([0.2, 0.30000000000000004, 1 / 3, 7.0])) for _ in range(2)])
    hi = lo + width
    shape = (draw(st.integers(1, 9)), draw(st.integers(1, 9)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 300))
    X = lo + rng.uniform(-0.3, 1.3, size=(n, 2)) * width         # some outside the box
    w = (hi - lo)
    for j in range(2):
        edges = lo[j] + np.arange(shape[j] + 1) / shape[j] * w[j]  # interior edges and both bounds
        on = rng.random(n) < 0.3
        X[on, j] = rng.choice(edges, size=int(on.sum()))
    k = draw(st.integers(1, 6))
    C = rng.uniform(-1, 1, size=(k, 2))
    if k > 1 and draw(st.booleans()):
        C[-1] = C[0]                                               # exact ties: the lowest index wins
    return X, (lo, hi), shape, C


def _check_equal(ref, other, bounds, shape, C):
    np.testing.assert_array_equal(ref.grid_counts(bounds, shape), other.grid_counts(bounds, shape))
    c1, s1 = ref.cluster_sums(C, bounds)
    c2, s2 = other.cluster_sums(C, bounds)
    np.testing.assert_array_equal(c1, c2)
    assert s1.bits == s2.bits and s1.shape == s2.shape
    assert [int(v) for v in s1.q.ravel()] == [int(v) for v in s2.q.ravel()]   # exact integers, not just close
    assert ref.count() == other.count()
    assert ref.n_outside(bounds) == other.n_outside(bounds)
    # The fine-cell statistics of the one-pass Lloyd (issue 26): the same integers on every engine.
    from dpcore.sources.cells import cell_statistics
    fine = (shape[0] * 4, shape[1] * 2)
    a, b = cell_statistics(ref, bounds, fine), cell_statistics(other, bounds, fine)
    for name in ("index", "counts", "sums"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.sq_offsets, b.sq_offsets, rtol=1e-9, atol=1e-12)
    assert (a.n, a.n_inside) == (b.n, b.n_inside) == (ref.count(), ref.count() - ref.n_outside(bounds))
    # One pass for a histogram, the row count and the rows outside the box (issue 66): the same integers on
    # every engine, and a coarser grid whose sides divide it by powers of two summed from it exactly.
    from dpcore.sources.cells import GridSource
    one = GridSource(other, bounds, fine)
    np.testing.assert_array_equal(one.counts, ref.grid_counts(bounds, fine))
    np.testing.assert_array_equal(one.grid_counts(bounds, shape), ref.grid_counts(bounds, shape))
    assert (one.count(), one.n_outside(bounds), one.n_dropped()) == (ref.count(), ref.n_outside(bounds),
                                                                     other.n_dropped())


def _numpy_reference(X, bounds, shape):
    """Independent plain-numpy grid: clip, floor((x - lower) / width * m), clamp."""
    lo, hi = bounds
    Xc = np.clip(X, lo, hi)
    idx = np.clip(np.floor((Xc - lo) / (hi - lo) * np.array(shape)), 0, np.array(shape) - 1).astype(int)
    return np.bincount(np.ravel_multi_index(tuple(idx.T), shape), minlength=int(np.prod(shape))).reshape(shape)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_numpy_and_duckdb_give_identical_aggregates(case):
    X, bounds, shape, C = case
    ref = sources.ArraySource(X)
    np.testing.assert_array_equal(ref.grid_counts(bounds, shape), _numpy_reference(X, bounds, shape))
    # Upper bound goes to the last cell, lower bound to the first.
    assert sources.ArraySource(bounds[1][None, :]).grid_counts(bounds, shape)[-1, -1] == 1
    assert sources.ArraySource(bounds[0][None, :]).grid_counts(bounds, shape)[0, 0] == 1
    with tempfile.TemporaryDirectory() as tmp:
        duck = _duckdb(X, tmp)
        # DuckDB streams Arrow batches into the numba kernels (issue 26); small batches so that the
        # partials of several are added up.  The engine's own SQL aggregate must give the same integers.
        assert duck.scan == "arrow"
        duck.BATCH_ROWS = 37
        _check_equal(ref, duck, bounds, shape, C)
        sql = sources.from_files(Path(tmp) / "part-0.parquet", columns=["lon", "lat"])
        sql.scan = "sql"
        _check_equal(ref, sql, bounds, shape, C)
        assert duck.inertia(C, bounds) == pytest.approx(sql.inertia(C, bounds), rel=1e-12)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_spark_gives_identical_aggregates(spark, case):
    X, bounds, shape, C = case
    with tempfile.TemporaryDirectory() as tmp:
        sql = _spark(spark, X, tmp)
        assert sql.scan == "sql"          # Spark SQL's aggregate: measured faster on local[2] (issue 26)
        _check_equal(sources.ArraySource(X), sql, bounds, shape, C)
        # The kernels inside the executors (mapInArrow), one partial per partition: the same integers.
        inside = sources.from_spark(spark.read.parquet(str(Path(tmp) / "part-0.parquet")), columns=["lon", "lat"])
        inside.scan = "partitions"
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)     # no silent fall-back to SQL
            _check_equal(sources.ArraySource(X), inside, bounds, shape, C)
        assert inside.scan == "partitions"


def test_cluster_sums_match_the_in_memory_lloyd_step(taxi_X, taxi_bounds):
    """The source's counts and exact fixed-point sums equal the in-memory Lloyd step's, integer for integer."""
    from dpcore.utils.domain import check_bounds
    from dpcore.utils.nearest import cluster_sums
    dom = check_bounds(taxi_bounds, d=2)
    C = np.random.default_rng(1).uniform(-0.5, 0.5, size=(5, 2))
    Xc, _ = dom.clip(taxi_X)
    c_old, s_old = cluster_sums(Xc, C, domain=dom, exact=True)
    c_new, s_new = sources.ArraySource(taxi_X).cluster_sums(C, dom)
    np.testing.assert_array_equal(c_old, c_new)
    np.testing.assert_array_equal(s_old.q, s_new.q)


def test_postgres_table_gives_identical_aggregates(pg_server):
    """A PostgreSQL table (the store's throwaway server) returns the numpy kernels' exact values."""
    import ibis
    url = pg_server.new_database("src")          # a SQLAlchemy URL: from_table accepts it as is
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.2, 1.2, size=(500, 2))
    X[:50] = np.round(X[:50] * 5) / 5           # on cell edges and on the bounds
    con = ibis.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    con.create_table("trips", pd.DataFrame(X, columns=["lon", "lat"]), overwrite=True)
    src = sources.from_table(url, "trips", columns=["lon", "lat"])
    assert src.engine == "postgres"
    C = rng.uniform(-1, 1, (4, 2))
    C[3] = C[1]                                  # exact ties
    _check_equal(sources.ArraySource(X), src, (np.zeros(2), np.ones(2)), (5, 4), C)
    est = dpcore.ALGORITHMS["eugkm"](3, epsilon=1.0, bounds=(0, 1), n_init=3, random_state=0)
    np.testing.assert_array_equal(est.fit(src).cluster_centers_, est.fit(X).cluster_centers_)


# ---------------------------------------------------------------------------
# estimators on sources
# ---------------------------------------------------------------------------
def _on_sources():
    """Every registry key tagged ``accepts_source``, with the parameters its class declares for this test
    (``audit.sources``); a class whose release on a source is an approximation by design is an explicit skip."""
    out = []
    for key, cls in sorted(dpcore.ALGORITHMS.items()):
        if not cls.accepts_source:
            continue
        skip = () if cls.audit.sources is not None else pytest.mark.skip(
            reason="releases an approximation on a source by design (its own test)")
        out.append(pytest.param(key, id=key, marks=skip))
    return out


def _source_params(key):
    return dict(dpcore.ALGORITHMS[key].audit.sources or {})


@pytest.fixture(scope="module")
def taxi_parquet(taxi_X, tmp_path_factory):
    folder = tmp_path_factory.mktemp("taxi")
    for i, part in enumerate(np.array_split(taxi_X[:60_000], 3)):   # a folder of monthly-like files
        sub = folder / f"month={i + 1:02d}"
        sub.mkdir()
        pd.DataFrame(part, columns=["lon", "lat"]).to_parquet(sub / "part-0.parquet")
    return folder


@pytest.mark.parametrize("key", _on_sources())
def test_private_estimators_release_the_same_on_duckdb_as_on_the_array(key, taxi_X, taxi_bounds, taxi_parquet):
    """Same seed, same exact aggregates -> the very same release (centres, synopsis, ledger)."""
    X = taxi_X[:60_000]
    params = {"epsilon": 1.0, "bounds": taxi_bounds, "random_state": 7, **_source_params(key)}
    cls = dpcore.ALGORITHMS[key]
    a = cls(**params).fit(X)
    src = sources.from_files(taxi_parquet, columns=["lon", "lat"])
    passes = []
    src.on_pass = passes.append
    b = cls(**params).fit(src)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert [(e.name, e.epsilon) for e in a.budget_] == [(e.name, e.epsilon) for e in b.budget_]
    assert a.n_clipped_ == b.n_clipped_ and b.n_dropped_ == 0
    assert passes, "the progress callback saw no pass"
    if not cls.private and cls.family == "grid clusters":   # labels in-memory rows only; a source is never pulled in
        assert a.labels_.shape == (X.shape[0],) and getattr(b, "labels_", None) is None


def test_estimators_on_spark(spark, taxi_X, taxi_bounds, taxi_parquet):
    df = spark.read.parquet(str(taxi_parquet))
    src = sources.from_spark(df, columns=["lon", "lat"])
    X = taxi_X[:60_000]
    for key, extra in (("eugkm", {}), ("dplloyd", {"n_iter": 2})):   # few passes: Spark jobs cost ~1 s each
        params = {"epsilon": 1.0, "bounds": taxi_bounds, "random_state": 3, **_source_params(key), **extra}
        a = dpcore.ALGORITHMS[key](**params).fit(X)
        b = dpcore.ALGORITHMS[key](**params).fit(src)
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_nonprivate_baseline_on_a_source_is_close_to_scikit_learn(taxi_X, taxi_bounds, taxi_parquet):
    from dpcore.metrics import nicv
    X = taxi_X[:60_000]
    exact = dpcore.ALGORITHMS["kmeans"](5, bounds=taxi_bounds, n_init=3, random_state=0).fit(X)
    src = sources.from_files(taxi_parquet, columns=["lon", "lat"])
    grid = dpcore.ALGORITHMS["kmeans"](5, bounds=taxi_bounds, n_init=3, random_state=0).fit(src)
    assert grid.labels_ is None
    n_exact, n_grid = nicv(X, exact.cluster_centers_, taxi_bounds), nicv(src, grid.cluster_centers_, taxi_bounds)
    assert n_grid == pytest.approx(nicv(X, grid.cluster_centers_, taxi_bounds), rel=1e-9)
    assert n_grid <= 1.05 * n_exact


def test_dplloyd_on_a_source_beats_a_random_guess(taxi_parquet, taxi_X, taxi_bounds):
    from dpcore.metrics import nicv
    src = sources.from_files(taxi_parquet, columns=["lon", "lat"])
    est = dpcore.ALGORITHMS["dplloyd"](5, epsilon=1.0, bounds=taxi_bounds, random_state=0).fit(src)
    assert est.budget_.total()[0] == pytest.approx(1.0)
    assert nicv(src, est.cluster_centers_, taxi_bounds) < nicv(taxi_X[:60_000], est.init_centers_, taxi_bounds)


@pytest.mark.parametrize("key", sorted(k for k, cls in dpcore.ALGORITHMS.items() if not cls.accepts_source))
def test_estimators_that_need_memory_refuse_a_source_clearly(key, taxi_parquet, taxi_bounds):
    src = sources.from_files(taxi_parquet, columns=["lon", "lat"])
    cls = dpcore.ALGORITHMS[key]
    kwargs = {"bounds": taxi_bounds}
    if getattr(cls, "needs_delta", False):
        kwargs["delta"] = 1e-6
    with pytest.raises(TypeError, match="cannot run on a DataSource") as err:
        cls(**kwargs).fit(src)
    msg = str(err.value)
    assert all(k in msg for k, c in dpcore.ALGORITHMS.items() if c.accepts_source), msg
    assert "sample" in msg and "subsampling" in msg


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def test_missing_file_and_empty_glob(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file or folder"):
        sources.from_files(tmp_path / "nope.parquet")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        sources.from_files(str(tmp_path / "*.parquet"))
    with pytest.raises(FileNotFoundError, match="holds no Parquet or CSV"):
        sources.from_files(tmp_path)


def test_string_column_and_missing_column(tmp_path):
    path = _write_parquet(np.zeros((3, 2)), tmp_path)
    with pytest.raises(TypeError, match="not numeric"):
        sources.from_files(path, columns=["lon", "label"])
    with pytest.raises(KeyError, match="not found"):
        sources.from_files(path, columns=["lon", "height"])
    assert sources.from_files(path).columns == ("lon", "lat")   # default: numeric columns only


def test_nan_coordinates_are_dropped_and_counted(tmp_path):
    X = np.random.default_rng(0).uniform(0, 1, size=(100, 2))
    src = sources.from_files(_write_parquet(X, tmp_path, nan_rows=7), columns=["lon", "lat"])
    assert src.count() == 93 and src.n_dropped() == 7
    est = dpcore.ALGORITHMS["eugkm"](2, epsilon=1.0, bounds=(0, 1), random_state=0).fit(src)
    assert est.n_dropped_ == 7
    np.testing.assert_array_equal(src.grid_counts((0, 1), (4, 4)),
                                  sources.ArraySource(X[7:]).grid_counts((0, 1), (4, 4)))


def _write_dirty_parquet(folder):
    """Rows with NaN, +-inf and NULL coordinates (Parquet NaN, not NULL), and their finite rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(5)
    X = rng.uniform(-0.2, 1.2, size=(300, 2))
    X[10, 0], X[20, 1], X[30, 0], X[40, 1] = np.nan, np.inf, -np.inf, np.nan
    null = np.zeros(300, dtype=bool)
    null[50] = True
    path = Path(folder) / "dirty.parquet"
    pq.write_table(pa.table({"lon": pa.array(X[:, 0], mask=null), "lat": pa.array(X[:, 1])}), path,
                   row_group_size=100)
    keep = np.isfinite(X).all(axis=1) & ~null
    return path, X[keep]


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_nan_infinite_and_null_values_are_dropped_on_every_pass(engine, tmp_path, request):
    """The row count finds the non-finite rows (a second pass counts the finite ones); every aggregate skips them."""
    path, finite = _write_dirty_parquet(tmp_path)
    if engine == "duckdb":
        src = sources.from_files(path, columns=["lon", "lat"])
    else:
        src = sources.from_spark(request.getfixturevalue("spark").read.parquet(str(path)), columns=["lon", "lat"])
    bounds, C = (np.zeros(2), np.ones(2)), np.array([[-0.5, 0.0], [0.5, 0.5]])
    ref = sources.ArraySource(finite)
    assert src.n_outside(bounds) == ref.n_outside(bounds) > 0
    assert src.count() == finite.shape[0] and src.n_dropped() == 5
    _check_equal(ref, src, bounds, (4, 3), C)


def test_csv_file_source(tmp_path):
    X = np.random.default_rng(1).uniform(0, 1, size=(50, 2))
    pd.DataFrame(X, columns=["a", "b"]).to_csv(tmp_path / "x.csv", index=False)
    src = sources.from_files(tmp_path / "x.csv")
    np.testing.assert_array_equal(src.grid_counts((0, 1), 3), sources.ArraySource(X).grid_counts((0, 1), 3))


def test_spark_without_java_is_a_clear_error(tmp_path):
    code = textwrap.dedent("""
        from dpcore import sources
        try:
            sources.spark_session()
        except sources.SourceError as e:
            print("CLEAR:", e)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["JAVA_HOME"] = str(tmp_path / "no-java")
    env["PATH"] = str(Path(sys.executable).parent)     # python, but no java
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "CLEAR:" in out.stdout and "Java 17" in out.stdout, out.stdout + out.stderr


def test_unreachable_database_is_a_clear_error():
    with pytest.raises(SourceError, match="cannot open table 'trips' at 127.0.0.1:9/nowhere") as err:
        sources.from_table("postgresql://someone:secret@127.0.0.1:9/nowhere", "trips")
    assert "secret" not in str(err.value)


def test_bad_shapes_and_centres():
    src = sources.ArraySource(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="grid shape"):
        src.grid_counts((0, 1), (3,))
    with pytest.raises(ValueError, match="centers"):
        src.cluster_sums(np.zeros((2, 3)), (0, 1))


def test_the_passes_do_not_depend_on_missing_values(tmp_path, taxi_X, taxi_bounds):
    """One NaN row more changes no pass (what the app's progress bars show), only the skipped count."""
    import pandas as pd

    from dpcore import ALGORITHMS, sources

    labels = {}
    for name, rows in {"clean": taxi_X[:5000], "nan": np.vstack([taxi_X[:5000], [[np.nan, 40.8]]])}.items():
        path = tmp_path / f"{name}.parquet"
        pd.DataFrame(rows, columns=["lon", "lat"]).to_parquet(path)
        src = sources.from_files(path, columns=["lon", "lat"])
        seen = []
        src.on_pass = seen.append
        est = ALGORITHMS["eugkm"](3, epsilon=1.0, bounds=taxi_bounds, random_state=0).fit(src)
        labels[name] = (seen, est.n_dropped_)
    assert labels["clean"][0] == labels["nan"][0]
    assert (labels["clean"][1], labels["nan"][1]) == (0, 1)


@pytest.mark.parametrize("engine", ["duckdb", "duckdb-sql", "spark", "postgres"])
def test_sanitize_reads_a_source_once_on_every_engine(engine, request, tmp_path, taxi_X, taxi_bounds):
    """``dpcore.sanitize`` (PrivTree) on a source: its histogram, the row count and the rows outside the box come
    from one aggregate, so the data are read once (issue 66), and the synopsis is the array's for a seed."""
    X = taxi_X[:3000].copy()
    X[:40] += 0.5                                       # some rows outside the public box, clipped onto it
    if engine == "postgres":
        import ibis
        url = request.getfixturevalue("pg_server").new_database("sanitize")
        con = ibis.connect(url.replace("postgresql+psycopg://", "postgresql://"))
        con.create_table("pickups", pd.DataFrame(X, columns=["lon", "lat"]), overwrite=True)
        src = sources.from_table(url, "pickups", columns=["lon", "lat"])
    elif engine == "spark":
        src = _spark(request.getfixturevalue("spark"), X, tmp_path)
    else:
        src = _duckdb(X, tmp_path)
        src.scan = "arrow" if engine == "duckdb" else "sql"
    passes = []
    src.on_pass = passes.append
    on_source = dpcore.algorithms.Sanitizer(epsilon=1.0, bounds=taxi_bounds, random_state=4).fit(src)
    in_memory = dpcore.algorithms.Sanitizer(epsilon=1.0, bounds=taxi_bounds, random_state=4).fit(X)
    assert passes == ["grid counts"]
    assert on_source.method_ == "privtree"
    np.testing.assert_array_equal(on_source.synopsis_.points, in_memory.synopsis_.points)
    np.testing.assert_array_equal(on_source.synopsis_.weights, in_memory.synopsis_.weights)
    assert (on_source.n_clipped_, on_source.n_dropped_) == (in_memory.n_clipped_, 0) and on_source.n_clipped_ >= 40


def test_the_bucketed_kernels_count_as_the_direct_ones():
    """Large grids are filled through buckets of cells (issue 66): the same integers as row by row."""
    from dpcore.sources import _kernels as K
    from dpcore.sources._pipeline import Pipeline
    rng = np.random.default_rng(8)
    X = rng.normal(0.5, 0.25, size=(300_000, 2))
    X[::500] = np.round(X[::500] * 1024) / 1024                 # on interior edges and on the bounds
    lo, hi = np.zeros(2), np.ones(2)
    shape = (1024, 512)                                         # 2^19 cells: bucketed
    direct = _numpy_reference(X, (lo, hi), shape).ravel()
    acc = K.GridAccumulator(lo, hi, shape, workers=2)
    assert acc.bucket_rows > 0
    Pipeline(acc.add, workers=2).run(X[s:s + 70_001] for s in range(0, X.shape[0], 70_001))
    np.testing.assert_array_equal(acc.result(), direct)
    np.testing.assert_array_equal(K.grid_counts(X, lo, hi, shape), direct)     # in memory, numba's threads
    dirty = X.copy()
    dirty[::999, 1] = np.nan
    prof = K.GridAccumulator(lo, hi, shape, workers=1, profile=True)
    prof.add(dirty, 0)
    finite = np.isfinite(dirty).all(axis=1)
    np.testing.assert_array_equal(prof.result(), _numpy_reference(dirty[finite], (lo, hi), shape).ravel())
    assert prof.profile() == (int(finite.sum()), int((finite & ((dirty >= lo) & (dirty <= hi)).all(axis=1)).sum()))
    cells = K.CellAccumulator(lo, hi, (1024, 1024), workers=2)
    assert cells.shift < 62                                     # bucketed
    Pipeline(cells.add, workers=2).run(X[s:s + 70_001] for s in range(0, X.shape[0], 70_001))
    got, ref = cells.result(), K.row_cells(X, lo, hi, (1024, 1024))
    for a, b in zip(got[:3] + got[4:], ref[:3] + ref[4:]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(got[3], ref[3], rtol=1e-12)     # float offsets, summed in another order


def test_the_batch_pipeline_adds_every_batch_once_and_raises_a_kernel_error():
    """The streamed scan (issue 26): each batch to exactly one worker's partial, an error re-raised here."""
    from dpcore.sources import _kernels as K
    from dpcore.sources._pipeline import Pipeline
    rng = np.random.default_rng(3)
    batches = [rng.uniform(-1, 2, size=(int(m), 2)) for m in rng.integers(1, 500, size=23)]
    lo, hi = np.zeros(2), np.ones(2)
    acc = K.GridAccumulator(lo, hi, (7, 5), workers=2)      # one partial per worker, whatever numba's threads
    seen = Pipeline(acc.add, workers=2).run(iter(batches))
    X = np.vstack(batches)
    assert seen == X.shape[0]
    np.testing.assert_array_equal(acc.result(), K.grid_counts(X, lo, hi, (7, 5)))

    def broken(X, w):
        raise ValueError("kernel failed")
    with pytest.raises(ValueError, match="kernel failed"):
        Pipeline(broken, workers=2).run(iter(batches))
