"""Person-level releases on Gowalla NYC check-ins: what bounding each user's rows costs in utility (issue 23).

Run:  DPCORE_DATA=../shared/data python -m benchmarks.privacy_unit_gowalla [--releases 10]

138,957 check-ins of 7,115 users (median 5 per user, 99th percentile 240, most 1,794).  For EUGkM and
DPLloyd, k = 5, ε in {0.5, 1, 2}: the median over ``--releases`` releases (fresh, unpredictable noise) of
the NICV ratio to non-private k-means on all the check-ins, at user level with sampling and with
weighting at several L, beside the row-level release (which protects a user with m check-ins only at m·ε).
Prints a Markdown table (docs/guide/privacy_unit.rst holds the last run).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dpcore
from dpcore import datasets
from dpcore.datasets import GOWALLA_BOUNDS

LS = (1, 2, 5, 10, 20, 50)
EPSILONS = (0.5, 1.0, 2.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--algorithms", default="eugkm,dplloyd")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    ds = datasets.load("gowalla_nyc_checkins")
    X, ids = ds.X, ds.units
    ref = dpcore.ALGORITHMS["kmeans"](n_clusters=5, bounds=GOWALLA_BOUNDS, random_state=0).fit(X)
    base = dpcore.nicv(X, ref.cluster_centers_, GOWALLA_BOUNDS)
    print(f"Gowalla NYC check-ins: {len(X):,} rows, {len(np.unique(ids)):,} users; non-private NICV {base:.5f}; "
          f"median of {args.releases} releases per cell\n")
    for key in args.algorithms.split(","):
        cls = dpcore.ALGORITHMS[key]
        print(f"### {cls.display_name}\n")
        print("| bounding | L | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |")
        print("|---|---|" + "---|" * len(EPSILONS))
        t0 = time.perf_counter()

        def cell(params, fit_kw, cls=cls):
            out = []
            for eps in EPSILONS:
                r = [dpcore.nicv(X, cls(n_clusters=5, epsilon=eps, bounds=GOWALLA_BOUNDS, **params)
                                 .fit(X, **fit_kw).cluster_centers_, GOWALLA_BOUNDS) / base
                     for _ in range(args.releases)]
                out.append(f"{np.median(r):.3f}")
            return " | ".join(out)
        print(f"| row level (a user protected at m·ε) | – | {cell({}, {})} |")
        for how in ("sample", "weight"):
            for L in LS:
                print(f"| {how} | {L} | "
                      f"{cell(dict(max_contributions=L, contribution_bounding=how), dict(privacy_id=ids))} |")
        print(f"\n({time.perf_counter() - t0:.0f} s)\n")


if __name__ == "__main__":
    main()
