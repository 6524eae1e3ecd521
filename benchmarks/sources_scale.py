"""Scale: EUGkM and DPLloyd on 10^8 Parquet rows through DuckDB and Spark local[2]; numba vs scikit-learn.

Prints, per engine (each in its own process, so the peak RSS is that engine's):
EUGkM and DPLloyd (``n_iter="auto"``) fit time, the process's peak RSS (for Spark
also the JVM's, a child process), and the "distance to the scan limit": the time
of one grid-histogram pass divided by ``SELECT count(*)`` (a metadata read on
Parquet) and by a full scan (``SELECT sum(lon), sum(lat)``) of the same files.
Then, in memory: DPLloyd on 10^7 points, 5 iterations, beside scikit-learn
``KMeans(algorithm="lloyd", max_iter=5, n_init=1)`` on the same array.

Goals (issue #14, 2-core machine, 10^8 rows): EUGkM <= 5 s on DuckDB with peak RSS
<= 1 GB; DPLloyd (auto) <= 30 s on DuckDB; Spark within 3x of DuckDB; in memory
DPLloyd <= 0.4x scikit-learn.

Usage::

    python -m benchmarks.make_taxi_parquet --rows 100000000
    python -m benchmarks.sources_scale --rows 100000000 [--engines duckdb spark] [--memory-rows 10000000]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

from benchmarks._common import TAXI_BOUNDS, resample, taxi_points
from benchmarks.make_taxi_parquet import dataset_path

GOALS = {"eugkm_s": 5.0, "rss_gb": 1.0, "dplloyd_s": 30.0, "spark_ratio": 3.0, "memory_ratio": 0.4}
COLUMNS = ["pickup_longitude", "pickup_latitude"]


def _peak_mb(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def _cpu() -> float:
    """CPU seconds of this process (user + system): on a shared machine, wall time alone misleads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_engine(engine: str, rows: int) -> dict:
    """One engine in this process: fit times, passes, peak RSS."""
    import dpcore
    from dpcore import sources

    folder = dataset_path(rows)
    glob = str(folder / "**" / "*.parquet")
    out = {"engine": engine, "rows": rows}
    if engine == "duckdb":
        import duckdb
        src = sources.from_files(folder, columns=COLUMNS)
        con = duckdb.connect()
        t0 = time.perf_counter()
        con.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall()
        out["count_star_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        con.sql(f"SELECT sum(pickup_longitude), sum(pickup_latitude) FROM read_parquet('{glob}')").fetchall()
        out["scan_s"] = time.perf_counter() - t0
    else:
        spark = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                         "spark.driver.memory": "2g"})
        spark.sparkContext.setLogLevel("ERROR")
        df = spark.read.parquet(str(folder))
        t0 = time.perf_counter()
        df.count()
        out["count_star_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        df.selectExpr("sum(pickup_longitude)", "sum(pickup_latitude)").collect()
        out["scan_s"] = time.perf_counter() - t0
        src = sources.from_spark(df, columns=COLUMNS)
    t0 = time.perf_counter()
    src.grid_counts(TAXI_BOUNDS, (300, 300))
    out["grid_pass_s"] = time.perf_counter() - t0
    passes = []
    src.on_pass = passes.append
    t0, c0 = time.perf_counter(), _cpu()
    e = dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=TAXI_BOUNDS, random_state=0).fit(src)
    out["eugkm_s"], out["eugkm_cpu"] = time.perf_counter() - t0, _cpu() - c0
    out["eugkm_cells"] = int(e.cells_per_dim_) ** 2
    n_eugkm = len(passes)
    t0, c0 = time.perf_counter(), _cpu()
    d = dpcore.ALGORITHMS["dplloyd"](5, epsilon=1.0, bounds=TAXI_BOUNDS, random_state=0).fit(src)
    out["dplloyd_s"], out["dplloyd_cpu"] = time.perf_counter() - t0, _cpu() - c0
    out["dplloyd_iter"] = int(d.n_iter_)
    out["passes"] = f"EUGkM {n_eugkm + 1}, DPLloyd {len(passes) - n_eugkm + 1}"  # + the row-count pass
    out["rss_mb"] = _peak_mb()
    if engine == "spark":
        spark.stop()
        time.sleep(1)
        out["jvm_rss_mb"] = _peak_mb(resource.RUSAGE_CHILDREN)
    return out


def run_memory(rows: int) -> dict:
    """DPLloyd (5 iterations, numba kernels) beside scikit-learn's Lloyd, same array, same run."""
    from sklearn.cluster import KMeans

    import dpcore

    X = resample(taxi_points(), rows)
    dpcore.ALGORITHMS["dplloyd"](5, epsilon=1.0, bounds=TAXI_BOUNDS, n_iter=5, random_state=0).fit(X[:1000])  # JIT
    best_dp, best_sk = np.inf, np.inf
    for rep in range(3):
        t0 = time.perf_counter()
        dpcore.ALGORITHMS["dplloyd"](5, epsilon=1.0, bounds=TAXI_BOUNDS, n_iter=5, random_state=rep).fit(X)
        best_dp = min(best_dp, time.perf_counter() - t0)
        t0 = time.perf_counter()
        KMeans(5, algorithm="lloyd", max_iter=5, n_init=1, random_state=rep).fit(X)
        best_sk = min(best_sk, time.perf_counter() - t0)
    return {"rows": rows, "dplloyd_s": best_dp, "sklearn_s": best_sk, "ratio": best_dp / best_sk}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000, help="rows of the make_taxi_parquet dataset")
    ap.add_argument("--engines", nargs="*", default=["duckdb", "spark"])
    ap.add_argument("--memory-rows", type=int, default=10_000_000, help="0 skips the in-memory comparison")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_engine(args.one, args.rows)))
        return
    if not dataset_path(args.rows).is_dir():
        raise SystemExit(f"{dataset_path(args.rows)} not found: run python -m benchmarks.make_taxi_parquet "
                         f"--rows {args.rows} first")
    res = {}
    for engine in args.engines:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.sources_scale", "--rows", str(args.rows),
                               "--one", engine], capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode or not lines:
            print(f"{engine}: failed\n{proc.stderr[-2000:]}")
            continue
        res[engine] = json.loads(lines[-1])
    print(f"\nSources at {args.rows:,} Parquet rows (2-core machine, shared with other jobs)")
    print(f"{'engine':8} {'EUGkM s':>8} {'(cpu)':>6} {'DPLloyd s':>9} {'(cpu)':>6} {'iters':>5} {'peak RSS MB':>11} "
          f"{'grid pass s':>11} {'count(*) s':>10} {'scan s':>7} {'pass/count(*)':>13} {'pass/scan':>9}  passes")
    for eng, r in res.items():
        rss = f"{r['rss_mb']:.0f}" + (f"+{r['jvm_rss_mb']:.0f} JVM" if "jvm_rss_mb" in r else "")
        print(f"{eng:8} {r['eugkm_s']:8.2f} {r['eugkm_cpu']:6.1f} {r['dplloyd_s']:9.2f} {r['dplloyd_cpu']:6.1f} "
              f"{r['dplloyd_iter']:5d} {rss:>11} "
              f"{r['grid_pass_s']:11.2f} {r['count_star_s']:10.3f} {r['scan_s']:7.2f} "
              f"{r['grid_pass_s'] / r['count_star_s']:13.1f} {r['grid_pass_s'] / r['scan_s']:9.2f}  {r['passes']}")
    if "duckdb" in res:
        r = res["duckdb"]
        print(f"goals on DuckDB: EUGkM {r['eugkm_s']:.2f} s (goal <= {GOALS['eugkm_s']}), peak RSS "
              f"{r['rss_mb'] / 1024:.2f} GB (goal <= {GOALS['rss_gb']}), DPLloyd {r['dplloyd_s']:.2f} s "
              f"(goal <= {GOALS['dplloyd_s']})")
        if "spark" in res:
            s = res["spark"]
            print(f"Spark / DuckDB: EUGkM {s['eugkm_s'] / r['eugkm_s']:.2f}x, "
                  f"DPLloyd {s['dplloyd_s'] / r['dplloyd_s']:.2f}x (goal <= {GOALS['spark_ratio']}x)")
    if args.memory_rows:
        m = run_memory(args.memory_rows)
        print(f"\nIn memory, {m['rows']:,} points, 5 iterations, best of 3: DPLloyd {m['dplloyd_s']:.2f} s, "
              f"scikit-learn KMeans(lloyd, max_iter=5, n_init=1) {m['sklearn_s']:.2f} s: ratio {m['ratio']:.2f} "
              f"(goal <= {GOALS['memory_ratio']})")


if __name__ == "__main__":
    main()
