"""Write a large Parquet dataset of taxi-like pickups, partitioned like the TLC's monthly files.

The real pickups of ``$DPCORE_DATA`` (the 2009-2015 sample, about 181k rows inside the
Feldman et al. box) are resampled with replacement and moved by a sub-cell jitter
(uniform within +-``--jitter`` degrees, 1e-4 ~ 10 m by default, below any grid cell
the algorithms use), so the dataset has the real spatial structure but no repeated
row.  Files go to ``$DPCORE_BENCH_DIR/taxi_<rows>/month=YYYY-MM/part-0.parquet``
(default ``/tmp``): never inside the repository.

Usage::

    python -m benchmarks.make_taxi_parquet --rows 100000000     # ~1.6 GB, a few minutes
    python -m benchmarks.make_taxi_parquet --rows 10000000      # the app demo folder
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks._common import TAXI_BOUNDS, taxi_points

#: Rows per Parquet row group (about 16 MB of coordinates): DuckDB and Spark scan row groups in parallel.
ROW_GROUP = 1 << 20


def bench_dir() -> Path:
    return Path(os.environ.get("DPCORE_BENCH_DIR", "/tmp"))


def dataset_path(rows: int) -> Path:
    return bench_dir() / f"taxi_{rows}"


def write(rows: int, *, months: int = 12, jitter: float = 1e-4, seed: int = 0, out: Path | None = None) -> Path:
    """Write ``rows`` pickups in ``months`` monthly partitions; returns the folder."""
    out = out or dataset_path(rows)
    base = taxi_points()
    rng = np.random.default_rng(seed)
    per_month = np.full(months, rows // months)
    per_month[: rows % months] += 1
    for i, m_rows in enumerate(per_month):
        folder = out / f"month=2015-{i + 1:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "part-0.parquet"
        with pq.ParquetWriter(path, pa.schema([("pickup_longitude", pa.float64()),
                                               ("pickup_latitude", pa.float64())])) as w:
            for s in range(0, int(m_rows), ROW_GROUP):
                m = min(ROW_GROUP, int(m_rows) - s)
                X = base[rng.integers(0, len(base), size=m)] + rng.uniform(-jitter, jitter, size=(m, 2))
                w.write_table(pa.table({"pickup_longitude": X[:, 0], "pickup_latitude": X[:, 1]}),
                              row_group_size=ROW_GROUP)
    return out


def write_config(folder: Path | None = None) -> Path:
    """Write ``dpcore_sources.toml`` in the bench folder, listing every ``taxi_<rows>`` dataset there.

    The app lists them as large sources (``DPCORE_SOURCES=<that file> streamlit run app.py``):
    opened where they lie by DuckDB, with the public box of Feldman et al.'s taxi experiments.
    """
    folder = folder or bench_dir()
    lo, hi = TAXI_BOUNDS
    entries = []
    made = [d for d in folder.glob("taxi_*") if d.is_dir() and d.name[5:].isdigit()]
    for d in sorted(made, key=lambda d: int(d.name[5:])):
        rows = int(d.name[5:])
        entries.append(f'[[source]]\nname = "{d.name}"\ntitle = "Taxi-like, 10^{len(str(rows)) - 1} rows"\n'
                       f'summary = "Taxi-like pickups for benchmarks, {rows:,} rows in Parquet"\n'
                       f'path = "{d}"\ncolumns = ["pickup_longitude", "pickup_latitude"]\n'
                       f"lower = [{lo[0]}, {lo[1]}]\nupper = [{hi[0]}, {hi[1]}]\ngeo = true\nn_clusters_hint = 5\n")
    path = folder / "dpcore_sources.toml"
    path.write_text("# Written by python -m benchmarks.make_taxi_parquet: large taxi-like sources for the app.\n\n"
                    + "\n".join(entries))
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--months", type=int, default=12)
    ap.add_argument("--jitter", type=float, default=1e-4, help="half-width of the uniform jitter, degrees")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = write(args.rows, months=args.months, jitter=args.jitter)
    size = sum(f.stat().st_size for f in out.rglob("*.parquet"))
    print(f"wrote {args.rows:,} rows to {out} ({size / 2**30:.2f} GiB) in {time.perf_counter() - t0:.0f} s")
    cfg = write_config(out.parent)
    print(f"open it in the app: DPCORE_SOURCES={cfg} streamlit run app.py  (Explorer, dataset {out.name})")


if __name__ == "__main__":
    main()
