"""Scale: EUGkM and DPLloyd on 10^8 Parquet rows through DuckDB and Spark local[2]; numba vs scikit-learn.

Prints, per engine (each in its own process, so the peak RSS is that engine's):
EUGkM and DPLloyd (``n_iter="auto"``) fit times, wall and CPU, each on a new source
(so each includes its row-count pass); the peak RSS (for Spark also the JVM's, a
child process); then single passes on a source whose row count is known (as inside
a fit): the row count, the grid histogram of EUGkM's grid, one Lloyd step (5
centres), each beside ``SELECT count(*)`` (a metadata read on Parquet) and a full
scan (``SELECT sum(lon), sum(lat)``) of the same files: the "distance to the scan
limit".  Then, in memory: DPLloyd on 10^7 points, 5 iterations, beside
scikit-learn ``KMeans(algorithm="lloyd", max_iter=5, n_init=1)`` on the same array.

CPU seconds are those of the benchmark process and its children (Spark's JVM), and
the load average is printed at the start and around each engine: the machine may be
shared, and wall time alone then misleads.

Both estimators run at their defaults: at 10^8 rows EUGkM's Eq. 4 grid is the capped
2048^2 cells, and DPLloyd starts from a noisy grid (20 % of its budget) when that is in
regime.

Goals (issue #26, 2-core machine, 10^8 rows): EUGkM <= 1.5 s and DPLloyd (auto) <= 3 s on
DuckDB, each <= 3x the plain scan, peak RSS <= 1 GB; Spark within 2x of DuckDB; in memory
DPLloyd <= 0.25x scikit-learn and EUGkM <= 0.5x ``np.histogram2d``.  At 10^9 rows: EUGkM <= 30 s,
DPLloyd <= 45 s on DuckDB.  DPLloyd reads the data once (its fine-cell statistics, issue 26).

Usage::

    python -m benchmarks.make_taxi_parquet --rows 100000000
    python -m benchmarks.sources_scale --rows 100000000 [--engines duckdb spark] [--memory-rows 10000000]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from benchmarks._common import TAXI_BOUNDS, resample, taxi_points
from benchmarks.make_taxi_parquet import dataset_path

#: Issue 26's goals at 10^8 rows (2 cores): fits within 3x of the engine's plain two-column scan.
GOALS = {"eugkm_s": 1.5, "rss_gb": 1.0, "dplloyd_s": 3.0, "scan_ratio": 3.0, "spark_ratio": 2.0, "memory_ratio": 0.25,
         "histogram_ratio": 0.5}
#: Issue 26's goals at 10^9 rows on DuckDB.
GOALS_1E9 = {"eugkm_s": 30.0, "dplloyd_s": 45.0}
COLUMNS = ["pickup_longitude", "pickup_latitude"]


def _family() -> list[int]:
    """This process and its live descendants (Spark's JVM), from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    family, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        family.append(pid)
        todo.extend(c for c, p in parent.items() if p == pid)
    return family


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its live children: on a shared machine, wall time
    alone misleads, and Spark's work is done in its JVM."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in _family():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def _peak_mb(pid: int) -> float:
    """Peak resident memory (VmHWM) of a process, MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _load() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def run_engine(engine: str, rows: int) -> dict:
    """One engine in this process: fit times (wall, CPU), single passes, peak RSS, load average."""
    import dpcore
    from dpcore import sources

    folder = dataset_path(rows)
    glob = str(folder / "**" / "*.parquet")
    out: dict = {"engine": engine, "rows": rows, "load_start": _load()}

    def timed(key, f):
        t0, c0 = time.perf_counter(), _cpu()
        res = f()
        out[f"{key}_s"], out[f"{key}_cpu"] = time.perf_counter() - t0, _cpu() - c0
        return res

    if engine == "duckdb":
        import duckdb
        con = duckdb.connect()
        timed("count_star", lambda: con.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall())
        timed("scan", lambda: con.sql(f"SELECT sum(pickup_longitude), sum(pickup_latitude) "
                                      f"FROM read_parquet('{glob}')").fetchall())
        con.close()

        def new_source():
            return sources.from_files(folder, columns=COLUMNS)
    else:
        spark = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                         "spark.driver.memory": "2g"})
        spark.sparkContext.setLogLevel("ERROR")
        df = spark.read.parquet(str(folder))
        timed("count_star", df.count)
        timed("scan", lambda: df.selectExpr("sum(pickup_longitude)", "sum(pickup_latitude)").collect())

        def new_source():
            return sources.from_spark(df, columns=COLUMNS)
    passes: list = []
    src = new_source()
    src.on_pass = passes.append
    e = timed("eugkm", lambda: dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=TAXI_BOUNDS, random_state=0).fit(src))
    out["eugkm_cells"] = int(e.cells_per_dim_)
    out["eugkm_passes"] = len(passes)
    passes.clear()
    src = new_source()
    src.on_pass = passes.append
    d = timed("dplloyd", lambda: dpcore.ALGORITHMS["dplloyd"](5, epsilon=1.0, bounds=TAXI_BOUNDS,
                                                             random_state=0).fit(src))
    out["dplloyd_iter"] = int(d.n_iter_)
    out["dplloyd_passes"] = len(passes)
    src = new_source()
    timed("count_pass", lambda: src.n_outside(TAXI_BOUNDS))
    m = out["eugkm_cells"]
    timed("grid_pass", lambda: src.grid_counts(TAXI_BOUNDS, (m, m)))
    timed("lloyd_pass", lambda: src.cluster_sums(d.bounds_.normalize(d.cluster_centers_), TAXI_BOUNDS))
    from dpcore.sources.cells import cell_statistics
    stats = timed("cells_pass", lambda: cell_statistics(src, TAXI_BOUNDS))
    out["occupied_cells"] = int(stats.index.size)
    family = _family()
    out["rss_mb"] = _peak_mb(family[0])
    if engine == "spark":
        out["jvm_rss_mb"] = max((_peak_mb(p) for p in family[1:]), default=float("nan"))
        spark.stop()
    out["load_end"] = _load()
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
    best_eu, best_h = np.inf, np.inf
    lo, hi = TAXI_BOUNDS
    for rep in range(3):
        t0 = time.perf_counter()
        e = dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0, bounds=TAXI_BOUNDS, random_state=rep).fit(X)
        best_eu = min(best_eu, time.perf_counter() - t0)
        m = e.cells_per_dim_
        t0 = time.perf_counter()
        np.histogram2d(X[:, 0], X[:, 1], bins=m, range=[[lo[0], hi[0]], [lo[1], hi[1]]])
        best_h = min(best_h, time.perf_counter() - t0)
    return {"rows": rows, "dplloyd_s": best_dp, "sklearn_s": best_sk, "ratio": best_dp / best_sk,
            "eugkm_s": best_eu, "histogram_s": best_h, "histogram_ratio": best_eu / best_h}


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
    print(f"Sources at {args.rows:,} Parquet rows; load average (1/5/15 min) at start {_load()} on "
          f"{os.cpu_count()} cores (the machine may be shared: compare CPU seconds too)")
    res = {}
    for engine in args.engines:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.sources_scale", "--rows", str(args.rows),
                               "--one", engine], capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode or not lines:
            print(f"{engine}: failed\n{proc.stderr[-2000:]}")
            continue
        res[engine] = json.loads(lines[-1])
    print(f"\n{'engine':8} {'EUGkM s':>8} {'cpu s':>6} {'DPLloyd s':>9} {'cpu s':>6} {'iters':>5} {'passes':>11} "
          f"{'peak RSS MB':>15}  load avg before -> after")
    for eng, r in res.items():
        rss = f"{r['rss_mb']:.0f}" + (f"+{r['jvm_rss_mb']:.0f} JVM" if "jvm_rss_mb" in r else "")
        print(f"{eng:8} {r['eugkm_s']:8.2f} {r['eugkm_cpu']:6.1f} {r['dplloyd_s']:9.2f} {r['dplloyd_cpu']:6.1f} "
              f"{r['dplloyd_iter']:5d} {r['eugkm_passes']:>4} + {r['dplloyd_passes']:>2}  {rss:>15}  "
              f"{r['load_start']} -> {r['load_end']}")
    print(f"\nOne pass, wall s (cpu s); EUGkM's grid is m x m; the Lloyd step has 5 centres; the cell statistics\n"
          f"are DPLloyd's one pass (1024^2 fine grid); 'scan' is the engine's own SELECT sum(lon), sum(lat)\n"
          f"{'engine':8} {'count(*)':>12} {'scan':>12} {'row count':>12} {'grid (m)':>18} {'Lloyd step':>12} "
          f"{'cell stats':>12}  grid/scan  Lloyd/scan  cells/scan")
    for eng, r in res.items():
        def cell(key, r=r):
            return f"{r[key + '_s']:.2f} ({r[key + '_cpu']:.1f})"
        print(f"{eng:8} {cell('count_star'):>12} {cell('scan'):>12} {cell('count_pass'):>12} "
              f"{cell('grid_pass') + ' (' + str(r['eugkm_cells']) + ')':>18} {cell('lloyd_pass'):>12} "
              f"{cell('cells_pass'):>12}  {r['grid_pass_s'] / r['scan_s']:9.1f}  "
              f"{r['lloyd_pass_s'] / r['scan_s']:10.1f}  {r['cells_pass_s'] / r['scan_s']:10.1f}")
    print(f"\nFits beside the scan limit (same run): {'engine':8} EUGkM/scan  DPLloyd/scan  (goal <= "
          f"{GOALS['scan_ratio']}x)")
    for eng, r in res.items():
        print(f"{'':38}{eng:8} {r['eugkm_s'] / r['scan_s']:10.1f}  {r['dplloyd_s'] / r['scan_s']:12.1f}")
    if "duckdb" in res:
        r = res["duckdb"]

        def verdict(value, goal):
            return "met" if value <= goal else "NOT met"
        if args.rows >= 10 ** 9:
            print(f"\ngoals at 10^9 on DuckDB: EUGkM {r['eugkm_s']:.1f} s (goal <= {GOALS_1E9['eugkm_s']}: "
                  f"{verdict(r['eugkm_s'], GOALS_1E9['eugkm_s'])}), DPLloyd {r['dplloyd_s']:.1f} s (goal <= "
                  f"{GOALS_1E9['dplloyd_s']}: {verdict(r['dplloyd_s'], GOALS_1E9['dplloyd_s'])})")
        else:
            print(f"\ngoals on DuckDB: EUGkM {r['eugkm_s']:.2f} s (goal <= {GOALS['eugkm_s']}: "
                  f"{verdict(r['eugkm_s'], GOALS['eugkm_s'])}), peak RSS {r['rss_mb'] / 1024:.2f} GB (goal <= "
                  f"{GOALS['rss_gb']}: {verdict(r['rss_mb'] / 1024, GOALS['rss_gb'])}), DPLloyd {r['dplloyd_s']:.2f} s "
                  f"(goal <= {GOALS['dplloyd_s']}: {verdict(r['dplloyd_s'], GOALS['dplloyd_s'])})")
        if "spark" in res:
            s = res["spark"]
            worst = max(s["eugkm_s"] / r["eugkm_s"], s["dplloyd_s"] / r["dplloyd_s"])
            print(f"Spark / DuckDB: EUGkM {s['eugkm_s'] / r['eugkm_s']:.2f}x, DPLloyd "
                  f"{s['dplloyd_s'] / r['dplloyd_s']:.2f}x (goal <= {GOALS['spark_ratio']}x: "
                  f"{verdict(worst, GOALS['spark_ratio'])})")
    if args.memory_rows:
        m = run_memory(args.memory_rows)
        print(f"\nIn memory, {m['rows']:,} points, 5 iterations, best of 3: DPLloyd {m['dplloyd_s']:.2f} s, "
              f"scikit-learn KMeans(lloyd, max_iter=5, n_init=1) {m['sklearn_s']:.2f} s: ratio {m['ratio']:.2f} "
              f"(goal <= {GOALS['memory_ratio']})")
        print(f"In memory: EUGkM {m['eugkm_s']:.2f} s, np.histogram2d of its grid {m['histogram_s']:.2f} s: ratio "
              f"{m['histogram_ratio']:.2f} (goal <= {GOALS['histogram_ratio']})")


if __name__ == "__main__":
    main()
