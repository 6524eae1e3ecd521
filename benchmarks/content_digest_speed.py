"""Time of the content digest (``dpcore.store.keys.content_digest``, issues 55 and 68) on real data.

The digest runs on every rerun of a page that holds an upload, and once per listed data set, so
it must stay well under the time a page takes.  Rows measured (best of ``--repeat`` runs):

* NYC taxi sample (``$DPCORE_DATA/nyc_taxi_2009-2015_bq_sample_pickups.csv.gz``, the ~181k pickups
  inside the public box): no person column, then with a person column that groups the trips into
  30,000 pseudo-persons of 1-12 trips (ids integers, then text), the person path at that size;
* Gowalla NYC check-ins (``$DPCORE_DATA/gowalla_nyc_checkins.csv.gz``, 138,957 rows, 7,115 users):
  as the catalogue loads them (integer ids), the ids as text ("u<id>"), and the 20,000-row subset
  the tests use.

    python -m benchmarks.content_digest_speed [--repeat 5]
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from benchmarks._common import best_of as _best
from benchmarks._common import data_dir, taxi_points


def cases() -> list[tuple[str, np.ndarray, np.ndarray | None]]:
    """(label, X, units) of every measured row."""
    os.environ.setdefault("DPCORE_DATA", str(data_dir()))
    from dpcore import datasets
    taxi = taxi_points()
    rng = np.random.default_rng(68)
    pseudo = rng.integers(0, 30_000, size=len(taxi))          # ~6 trips per pseudo-person on average
    g = datasets.load("gowalla_nyc_checkins")
    text = np.char.add("u", g.units.astype(str))
    sub = datasets.load("gowalla_nyc_checkins", max_rows=20_000)
    return [(f"taxi {len(taxi):,} rows, no person column", taxi, None),
            (f"taxi {len(taxi):,} rows, 30k pseudo-persons (int ids)", taxi, pseudo),
            (f"taxi {len(taxi):,} rows, 30k pseudo-persons (text ids)", taxi, np.char.add("p", pseudo.astype(str))),
            (f"gowalla {len(g.X):,} rows, {len(np.unique(g.units)):,} users (int ids)", g.X, g.units),
            (f"gowalla {len(g.X):,} rows (text ids)", g.X, text),
            (f"gowalla {len(sub.X):,} rows, {len(np.unique(sub.units)):,} users", sub.X, sub.units)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from dpcore.store.keys import content_digest
    print(f"load: {os.getloadavg()[0]:.2f} (1-min average)")
    print(f"{'data':<58} {'digest ms':>10}")
    for label, X, units in cases():
        ms = 1000 * _best(lambda: content_digest(X, units), args.repeat)   # noqa: B023 (called at once)
        print(f"{label:<58} {ms:>10.1f}")


if __name__ == "__main__":
    main()
