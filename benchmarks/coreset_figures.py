"""Shape of Feldman et al. (2017) Table 2 and Figures 5-6 for PRIVATE-K-MEAN, on the real NYC taxi sample.

* Table 2: the smallest epsilon with which the algorithm runs at all (n > t_min), for
  k in {1, 5, 10} and n in {10^5, the taxi sample (~181k), 5*10^5, 10^6, 10^7}
  (:func:`dpcore.algorithms.coreset.plan.min_feasible_epsilon`; data-independent, so any n can be tabulated).
* Figure 5: relative k-means cost error (§5.4: cost(P, C)/cost(P, C*) - 1 with C* from
  non-private k-means) and coreset size against epsilon, for k in {1, 5, 10}.
* Figure 6: error against k at a few epsilons.

The data are the ~181k real pickups (not the paper's 11.8M Jan-2015 trips), so the n axis is
shorter than the paper's; absolute epsilons are larger than the paper's because our t_min uses
explicit constants that make each round's guarantee hold (the paper's implementation set the
slack to 8).  Both per-round budgets are shown: "paper" (Alg. 1 line 1) and "schedule", and both
constants: "proved" and "paper_experiments" (the paper's Delta = 8: no proof).

Usage: python benchmarks/coreset_figures.py [--seeds 3] [--quick] [--csv out.csv]
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from benchmarks._common import TAXI_BOUNDS, taxi_points  # noqa: E402
from dpcore.algorithms.coreset.plan import min_feasible_epsilon, plan_coreset
from dpcore.algorithms.coreset.private_kmeans import PrivateKMeans
from dpcore.metrics import inertia, relative_error  # noqa: E402

PAPER_TABLE2 = {1: (0.02, 0.01, 0.007), 5: (0.8, 0.3, 0.15), 10: (3.5, 1.0, 0.6)}   # n = 1e5, 5e5, 1e6


def table2(n_taxi: int, delta_of_n=lambda n: 1.0 / n ** 1.5):
    """Smallest feasible epsilon beside Feldman et al.'s Table 2, for both constants and both budgets."""
    sizes = [10 ** 5, 5 * 10 ** 5, 10 ** 6]
    print("\nTable 2: smallest feasible epsilon (at least one round; n_share = 0), d = 2, delta = 1/n^1.5, beta = 0.1")
    print(f"{'constants':<18} {'budget':<9} {'k':>3} " + " ".join(f"{n:>9,}" for n in sizes) + "   paper's Table 2")
    for constants in ("proved", "paper_experiments"):
        for budget in ("paper", "schedule"):
            for k in (1, 5, 10):
                row = [min_feasible_epsilon(n, k, 2, delta_of_n(n), budget=budget, constants=constants)
                       for n in sizes]
                print(f"{constants:<18} {budget:<9} {k:>3} " + " ".join(f"{e:>9.3g}" for e in row)
                      + "   " + " / ".join(f"{v:g}" for v in PAPER_TABLE2[k]))
    print("(paper_experiments = Delta 8 of the paper's footnote 3: NO PROOF. 'schedule' divides the budget by the "
          "rounds that run, so one round at the full budget is 'feasible': see the coverage line below.)")
    for budget in ("paper", "schedule"):
        for eps in (1.0, 2.0):
            p = plan_coreset(10 ** 5, 5, 2, eps * 0.98, delta_of_n(10 ** 5), budget=budget)
            print(f"k=5, n=1e5, eps={eps:g}, proved, budget={budget}: {p.n_rounds} rounds cover "
                  f"{sum(p.weights) / 1e5:.0%} of the points (t_min = {p.t_min:,})")
    print(f"k=5, n=1e5: smallest proved epsilon with the paper's budget rule (n_share 0.02 for a noisy size): "
          f"{min_feasible_epsilon(10 ** 5, 5, 2, delta_of_n(10 ** 5), n_share=0.02):.3g} (goal <= 2; was 7.1)")


def figure5(X, seeds: int, eps_grid, ks, budget: str, rows: list):
    n = X.shape[0]
    print(f"\nFigure 5 (shape): taxi sample n={n:,}, budget={budget}, mean over {seeds} seeds")
    print(f"{'k':>3} {'epsilon':>8} {'error':>8} {'err sd':>7} {'coreset':>8} {'eps spent':>9} {'s/fit':>6}")
    for k in ks:
        base = dpcore.ALGORITHMS["kmeans"](k, bounds=TAXI_BOUNDS, random_state=0).fit(X)
        cost_opt = inertia(X, base.cluster_centers_)
        for eps in eps_grid:
            errs, sizes, spent = [], [], []
            t = time.perf_counter()
            for seed in range(seeds):
                try:
                    est = PrivateKMeans(k, epsilon=eps, delta=1.0 / n ** 1.5, bounds=TAXI_BOUNDS, budget=budget,
                                        random_state=seed).fit(X)
                except dpcore.InfeasibleBudgetError:
                    break
                errs.append(relative_error(inertia(X, est.cluster_centers_), cost_opt))
                sizes.append(est.coreset_size_)
                spent.append(est.budget_.total()[0])
            if not errs:
                print(f"{k:>3} {eps:>8g}   infeasible")
                continue
            dt = (time.perf_counter() - t) / len(errs)
            print(f"{k:>3} {eps:>8g} {np.mean(errs):>8.3f} {np.std(errs):>7.3f} {np.mean(sizes):>8.1f} "
                  f"{np.mean(spent):>9.3g} {dt:>6.1f}", flush=True)
            rows.append(dict(figure="5", budget=budget, k=k, epsilon=eps, error=np.mean(errs),
                             error_sd=np.std(errs), coreset_size=np.mean(sizes), seeds=len(errs)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer epsilons, k = 5 only")
    ap.add_argument("--csv", type=Path, default=None)
    args = ap.parse_args(argv)
    X = taxi_points()
    table2(X.shape[0])
    rows: list = []
    if args.quick:
        figure5(X, args.seeds, [8, 32, 128], [5], "paper", rows)
        figure5(X, args.seeds, [0.5, 2, 8, 32], [5], "schedule", rows)
    else:
        figure5(X, args.seeds, [1, 2, 4, 8, 16, 32, 64, 128, 256], [1, 5, 10], "paper", rows)
        figure5(X, args.seeds, [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32], [1, 5, 10], "schedule", rows)
        print("\nFigure 6 (shape): error against k (budget=schedule)")
        figure5(X, args.seeds, [1, 4, 16], [2, 3, 4, 6, 8], "schedule", rows)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
