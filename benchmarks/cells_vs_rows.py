"""Cell-level vs per-row assignment in DPLloyd and the Hybrid: the utility cost of reading the data once (issue 26).

On the real NYC taxi pickups (all ~181k rows of ``$DPCORE_DATA/nyc_taxi_2009-2015_bq_sample_pickups.csv.gz``,
inside the public box of Feldman et al. 2017), k = 5, epsilon in {0.1, 0.25, 0.5, 1, 2}: each
(epsilon, seed) runs DPLloyd twice with the same seeded noise, once with ``assignment="cells"``
(one pass into exact statistics on the 1024^2 fine grid, every step assigns cells by their
middle) and once with ``"rows"`` (every step assigns every row).  Each release is measured by
its per-row NICV (Su et al. 2016, Eq. 1, normalised box) against non-private k-means.

The two runs share the seed, but a boundary row in another cluster changes a count by 1, and
noisy Lloyd amplifies that: single pairs differ by a few percent either way.  The table gives the
mean NICV ratio of each rule over the seeds and their paired difference with its standard error;
the claim to check is that the difference is within 0.1 % (or not distinguishable from 0).

Also: the non-private reference on a source (cell-level Lloyd from an exact 1024^2 grid start)
against scikit-learn's k-means on the array, and one Lloyd step from the same centres.

    python -m benchmarks.cells_vs_rows [--seeds 60] [--algorithms dplloyd hybrid]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from benchmarks._common import TAXI_BOUNDS, taxi_points  # noqa: E402
from dpcore import sources  # noqa: E402
from dpcore.metrics import nicv  # noqa: E402
from dpcore.sources.cells import CellSource, fine_shape  # noqa: E402

EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--algorithms", nargs="+", default=["dplloyd", "hybrid"])
    args = ap.parse_args(argv)
    X = taxi_points()
    b = TAXI_BOUNDS
    k = args.k
    print(f"# NYC taxi pickups, n = {X.shape[0]:,}, k = {k}, {args.seeds} seeds per epsilon, fine grid {fine_shape(2)}")
    base = nicv(X, dpcore.ALGORITHMS["kmeans"](k, bounds=b, random_state=0).fit(X).cluster_centers_, bounds=b)
    src = CellSource(sources.ArraySource(X), b)
    t0 = time.perf_counter()
    ref = dpcore.ALGORITHMS["kmeans"](k, bounds=b, random_state=0).fit(src)
    t_ref = time.perf_counter() - t0
    print(f"non-private: scikit-learn NICV {base:.6f}; cell-level Lloyd on the statistics "
          f"{nicv(X, ref.cluster_centers_, bounds=b):.6f} (ratio {nicv(X, ref.cluster_centers_, bounds=b) / base:.5f}, "
          f"{t_ref:.2f} s); NICV from the statistics {nicv(src, ref.cluster_centers_, bounds=b):.6f}")
    dom = src.stats.domain
    C = dom.normalize(ref.cluster_centers_) + np.random.default_rng(0).normal(0, 0.05, size=(k, 2))
    c1, s1 = src.stats.cluster_sums(C)
    c2, s2 = sources.ArraySource(X).cluster_sums(C, dom)
    shift = np.abs(s1.to_float() / c1[:, None] - s2.to_float() / c2[:, None]).max()
    print(f"one exact Lloyd step from the same centres: {int(np.abs(c1 - c2).sum())} of {X.shape[0]:,} rows in "
          f"another cluster, largest centre difference {shift:.2e} (normalised units, box half-width 1)")
    print()
    print("| algorithm | ε | NICV ratio, cells | NICV ratio, rows | cells − rows (paired) | ± s.e. | relative |")
    print("|---|---|---|---|---|---|---|")
    for key in args.algorithms:
        for eps in EPSILONS:
            r = {"cells": [], "rows": []}
            for seed in range(args.seeds):
                for a in r:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = dpcore.ALGORITHMS[key](k, epsilon=eps, bounds=b, assignment=a,
                                                     random_state=1000 + seed).fit(X)
                    r[a].append(nicv(X, est.cluster_centers_, bounds=b) / base)
            c, w = np.array(r["cells"]), np.array(r["rows"])
            diff = c - w
            se = diff.std(ddof=1) / np.sqrt(diff.size)
            print(f"| {key} | {eps:g} | {c.mean():.4f} | {w.mean():.4f} | {diff.mean():+.4f} | {se:.4f} | "
                  f"{diff.mean() / w.mean():+.2%} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
