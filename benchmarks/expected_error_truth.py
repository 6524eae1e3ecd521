"""Does the expected error simulated on a sample predict a release on all rows? (stop 75)

The Explorer's band, Compare's "ε from the accuracy you need" and the privacy-utility curve simulate releases on a
uniform sample of at most 20,000 rows, each at ``ε·N/n`` (:func:`dpcore.evaluation.accuracy.simulated_epsilon`:
Su et al. 2016, §6, the error of DPLloyd and EUGkM depends on N and ε through Nε), and measure centre errors from
k-means of all rows (the reference the map draws).  For each algorithm and ε this prints the 10th, 50th and 90th
percentile of the centre error (metres) of releases on all N rows (the truth), on the sample at ``ε·N/n`` (what the
app shows) and on the sample at ε (what it showed before stop 75), on the embedded taxi sample (N = 181,446),
k = 5.  A row whose "scaled" median is far from "all rows" names an algorithm the rule does not fit.

Run: ``python3 -m benchmarks.expected_error_truth [algorithm ...] [--epsilons 0.1,1] [--releases 40]``
Results: benchmarks/results/expected_error_truth.txt.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dpcore
from dpcore import datasets
from dpcore.evaluation.accuracy import reference_centres, sample_rows, simulate_errors

DEFAULT = ("eugkm", "dplloyd", "hybrid", "zcdp_lloyd", "kmeans_guarantee", "subcluster", "dpm")


def quantiles(errors) -> str:
    """The 10th / 50th / 90th percentiles, metres."""
    q = np.nanquantile(errors, [0.1, 0.5, 0.9]) if np.isfinite(errors).any() else [np.nan] * 3
    return "/".join(f"{v:,.0f}" for v in q)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithms", nargs="*", default=list(DEFAULT))
    parser.add_argument("--epsilons", default="0.1,1")
    parser.add_argument("--releases", type=int, default=40)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args(argv)
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
    X = np.asarray(ds.X, dtype=float)
    bounds = tuple(np.asarray(b, dtype=float) for b in ds.bounds)
    reference = reference_centres(X, args.k, bounds)             # k-means of all rows: what the map draws
    Xs, _ = sample_rows(X)
    print(f"taxi sample: N = {len(X):,}, sample n = {len(Xs):,}, k = {args.k}, {args.releases} releases per cell; "
          "centre error (m) from k-means of all rows, 10th/50th/90th percentiles")
    print(f"{'algorithm':<18} {'ε':>5}   {'all rows (truth)':>22}   {'sample at ε·N/n (now)':>22}   "
          f"{'sample at ε (before)':>22}   s")
    kw = dict(bounds=bounds, n_clusters=args.k, reference=reference, geo=True, n_releases=args.releases)
    for algorithm in args.algorithms:
        params = {"delta": 1e-8} if dpcore.ALGORITHMS[algorithm].needs_delta else {}
        for eps in (float(e) for e in args.epsilons.split(",")):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                full = simulate_errors(algorithm, eps, X=X, params=params, **kw)
                now = simulate_errors(algorithm, eps, X=Xs, n_rows=len(X), params=params, **kw)
                before = simulate_errors(algorithm, eps, X=Xs, params=params, **kw)
            print(f"{algorithm:<18} {eps:5g}   {quantiles(full):>22}   {quantiles(now):>22}   {quantiles(before):>22}"
                  f"   {time.perf_counter() - t0:.0f}", flush=True)


if __name__ == "__main__":
    main()
