"""Make ``sample_data/nyc_taxi_sample.parquet``: real NYC yellow-taxi pickups, the app's default data.

Source
    ``nyc_taxi_2009-2015_bq_sample_pickups.csv.gz`` of the team's real-data folder
    (``$DPCORE_DATA``, e.g. ``../shared/data``): 191,897 random trips of the BigQuery public
    table ``nyc-tlc.yellow.trips`` (NYC Taxi & Limousine Commission trip records, NYC open
    data, 2009-2015), as sampled by Google's ML course notebooks (see that folder's README,
    section 1, for the repositories and commits).  Only the pickup longitude and latitude
    are kept.

Filter (public, record by record; nothing is computed from the data)
    1. rows with a missing coordinate are dropped;
    2. **GPS outliers** are dropped: pickups outside the NYC region lon [-74.3, -73.7] x
       lat [40.5, 41.0] (the region the source README uses; (0, 0) and points far
       out at sea or upstate fall here);
    3. pickups inside the NYC region but outside the **public box** of Feldman et al. (2017,
       section 5.1), lon [-74.1, -73.9] x lat [40.7, 40.9], are dropped too (mostly JFK and
       LaGuardia airports and outer Brooklyn / Queens): that box is the dataset's public
       bounds in ``dpcore.datasets`` (``TAXI_BOUNDS``), so every kept point lies inside them
       and no point is clipped.
    Each count is printed and stored in the file's metadata (``dpcore.dropped.*``).

Format
    Parquet, zstd level 19, two int32 columns ``longitude`` and ``latitude`` in
    **microdegrees** (1e-6 degree, WGS84; field metadata ``per_degree = 1000000``).  The source
    has six decimals, so this is lossless: ``value / 1e6`` gives back the source's numbers
    exactly (the same float64 as parsing the CSV text).  Rows are sorted by (longitude, latitude): the source order carries no meaning
    (a concatenation of random samples) and sorted columns compress about three times better
    (longitude delta-encoded, latitude byte-stream-split).  About 0.35 MB.

Usage::

    python sample_data/make_taxi_sample.py                       # source from $DPCORE_DATA or ../shared/data
    python sample_data/make_taxi_sample.py --source FILE --out DIR
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

SOURCE_NAME = "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz"
OUT_NAME = "nyc_taxi_sample.parquet"
#: Feldman et al. (2017), section 5.1: the public box (lower, upper) in (longitude, latitude), degrees.
PUBLIC_BOX = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))
#: The NYC region of the source README (section 1): outside it a pickup is a GPS outlier.
NYC_REGION = (np.array([-74.3, 40.5]), np.array([-73.7, 41.0]))
PER_DEGREE = 1_000_000   # microdegrees


def _default_source() -> Path:
    env = os.environ.get("DPCORE_DATA")
    folder = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    return folder / SOURCE_NAME


def _inside(X: np.ndarray, box) -> np.ndarray:
    lo, hi = box
    return ((X >= lo) & (X <= hi)).all(axis=1)


def filter_pickups(X: np.ndarray) -> tuple[np.ndarray, dict]:
    """Apply the documented filter to (n, 2) lon/lat rows; return (kept rows, counts by reason)."""
    finite = np.isfinite(X).all(axis=1)
    with np.errstate(invalid="ignore"):
        region = finite & _inside(X, NYC_REGION)
        box = region & _inside(X, PUBLIC_BOX)
    counts = {"rows_in_source": int(len(X)), "missing_coordinate": int((~finite).sum()),
              "gps_outlier_outside_nyc_region": int((finite & ~region).sum()),
              "outside_public_box": int((region & ~box).sum()), "kept": int(box.sum())}
    assert counts["kept"] + counts["missing_coordinate"] + counts["gps_outlier_outside_nyc_region"] \
        + counts["outside_public_box"] == counts["rows_in_source"]
    return X[box], counts


def main(source: Path, out: Path) -> tuple[Path, dict]:
    """Read ``source``, filter, write ``out/nyc_taxi_sample.parquet``; return its path and the counts."""
    df = pd.read_csv(source, usecols=["pickup_longitude", "pickup_latitude"])
    X = df[["pickup_longitude", "pickup_latitude"]].to_numpy(dtype=np.float64)
    kept, counts = filter_pickups(X)
    fixed = np.rint(kept * PER_DEGREE).astype(np.int32)
    if not np.array_equal(fixed / PER_DEGREE, kept):
        raise ValueError("the source has more than six decimals: microdegrees would not be lossless")
    fixed = fixed[np.lexsort((fixed[:, 1], fixed[:, 0]))]
    unit = {b"unit": b"microdegree (1e-6 degree, WGS84)", b"per_degree": str(PER_DEGREE).encode()}
    schema = pa.schema([pa.field("longitude", pa.int32(), nullable=False, metadata=unit),
                        pa.field("latitude", pa.int32(), nullable=False, metadata=unit)],
                       metadata={b"dpcore.source": f"{SOURCE_NAME}: NYC TLC yellow-taxi trip records "
                                 "(NYC open data) sampled from BigQuery nyc-tlc.yellow.trips".encode(),
                                 b"dpcore.public_box": b"lon -74.1..-73.9, lat 40.7..40.9 (Feldman et al. 2017)",
                                 **{f"dpcore.dropped.{k}".encode(): str(v).encode() for k, v in counts.items()}})
    table = pa.Table.from_arrays([pa.array(fixed[:, 0]), pa.array(fixed[:, 1])], schema=schema)
    out.mkdir(parents=True, exist_ok=True)
    path = out / OUT_NAME
    pq.write_table(table, path, compression="zstd", compression_level=19, use_dictionary=False,
                   column_encoding={"longitude": "DELTA_BINARY_PACKED", "latitude": "BYTE_STREAM_SPLIT"},
                   write_statistics=False)
    return path, counts


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=None, help=f"the {SOURCE_NAME} file")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args()
    path, counts = main(args.source or _default_source(), args.out)
    for key, value in counts.items():
        print(f"{key.replace('_', ' ')}: {value:,}")
    print(path, path.stat().st_size, "bytes")
