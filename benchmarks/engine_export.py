"""Where a dense aggregate's time goes on DuckDB (issue 66's engine goal: each fit within 4x the scan).

On the taxi-like Parquet of ``benchmarks.make_taxi_parquet`` it times, best of ``--repeat``:

* ``scan``: the engine's own ``SELECT sum(x), sum(y)`` (the reference of the goal);
* ``export``: the two coordinate columns streamed out as Arrow record batches, nothing done with them: the floor
  of any aggregate computed outside the engine (dpcore's streamed kernels, ``IbisSource.scan = "arrow"``);
* ``grid (dpcore)``: ``IbisSource.grid_counts`` on an m x m grid: the export plus dpcore's compiled kernel;
* ``cell in SQL``: the engine computes each row's cell number (the same clipped arithmetic, DOUBLE literals)
  and streams only that int32 column (a quarter of the bytes);
* ``GROUP BY cell``: the whole histogram in the engine (``IbisSource.scan = "sql"``).

Run::

    DPCORE_BENCH_DIR=/tmp/engine_bench python -m benchmarks.engine_export --rows 50000000

It prints each figure in seconds and as a multiple of the scan.  Results: ``benchmarks/results/engine_export.txt``.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from benchmarks._common import best_of
from benchmarks.make_taxi_parquet import dataset_path
from benchmarks.sources_scale import COLUMNS

BOX = ((-74.1, 40.7), (-73.9, 40.9))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000_000)
    ap.add_argument("--cells", type=int, default=2048, help="grid cells per side (EUGkM's at 5e7 rows: 2048)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import duckdb

    from dpcore import sources
    folder = dataset_path(args.rows)
    if not folder.exists():
        raise SystemExit(f"{folder} not found: run python -m benchmarks.make_taxi_parquet --rows {args.rows}")
    glob = f"read_parquet('{folder}/**/*.parquet', hive_partitioning=true)"
    con = duckdb.connect()
    x, y = COLUMNS
    m = args.cells
    (lx, ly), (hx, hy) = BOX

    def stream(sql: str) -> int:
        return sum(b.num_rows for b in con.sql(sql).fetch_record_batch(1 << 20))

    def axis(col: str, lo: float, hi: float) -> str:
        clipped = f"least(greatest({col}, {lo}::DOUBLE), {hi}::DOUBLE)"
        return f"least(floor(({clipped} - {lo}::DOUBLE) / {hi - lo!r}::DOUBLE * {m}::DOUBLE)::INTEGER, {m - 1})"

    cell = f"({axis(x, lx, hx)} * {m} + {axis(y, ly, hy)})"
    src = sources.from_files(folder, columns=COLUMNS)
    rows = {
        "scan": lambda: con.sql(f"SELECT sum({x}), sum({y}) FROM {glob}").fetchall(),
        "export": lambda: stream(f"SELECT {x}, {y} FROM {glob}"),
        "grid (dpcore)": lambda: src.grid_counts((np.array(BOX[0]), np.array(BOX[1])), (m, m)),
        "cell in SQL": lambda: stream(f"SELECT {cell}::INTEGER AS c FROM {glob}"),
        "GROUP BY cell": lambda: con.sql(f"SELECT c, count(*) FROM (SELECT {cell} AS c FROM {glob}) GROUP BY c").arrow(),
    }
    print(f"DuckDB {duckdb.__version__}, {args.rows:,} rows, {m} x {m} grid, best of {args.repeat}; "
          f"load {os.getloadavg()[0]:.2f} before")
    scan = None
    for name, f in rows.items():
        s = best_of(f, args.repeat)
        scan = scan or s
        print(f"{name:16s} {s:7.2f} s  {s / scan:5.1f}x the scan")
    print(f"load {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
