"""Person-level releases on Gowalla NYC check-ins: sampling against weighting each user's rows (issues 23, 68).

Run:  DPCORE_DATA=../shared/data python -m benchmarks.privacy_unit_gowalla [--releases 10] [--ls 1,5,10]
      [--epsilons 0.5,1,2] [--algorithms eugkm,dplloyd,sanitize | none] [--sets 400]
      [--out benchmarks/results/privacy_unit_gowalla]

138,957 check-ins of 7,115 users (median 5 per user, 99th percentile 240, most 1,794).  Each user's rows are
bounded to L, by a secret keyed sample of L rows (``contribution_bounding="sample"``) or by weighting every row
``min(1, L / m)`` (``"weight"``, Amin et al. 2019); both with sensitivity L.  For L in ``--ls`` and ε in
{0.5, 1, 2}, the median over ``--releases`` releases (fresh, unpredictable noise) of:

* **NICV ratio** at k = 5: the NICV on all the check-ins of EUGkM's, DPLloyd's and the sanitized synopsis'
  k-means centres, over non-private k-means on all the check-ins (1 is as good as non-private); the row-level
  release (which protects a user with m check-ins only at m·ε) beside them;
* **sanitized cost error**: ``dpcore.sanitize`` (PrivTree), the median relative error of the k-means cost of
  ``--sets`` random centre sets (default 400: with 100 the median moved by up to 2 points between draws of the
  sets at k = 20) at k in {3, 5, 10, 20}, against the people-weighted check-ins (every row of a user with m
  rows weighted min(1, L / m): what a bounded release estimates, sampling's expectation and weighting's exact
  data); centre sets are k check-ins drawn with those weights.

Then, at ε = 1 and L = 5, the sanitized cost error against the two references of ``benchmarks/sanitize.py``
(issue 57): another random sample of at most L check-ins a user (its figure of 4.4-7.5 %), and each release's own
data (sampling: fitted on a sample of at most L rows a user, so every row is kept, and compared with those rows;
weighting: the weighted check-ins).  Prints Markdown tables; with ``--out PREFIX`` also writes ``PREFIX.txt``
and ``PREFIX.csv`` (one row per cell).
"""
from __future__ import annotations

import argparse
import csv
import time
import warnings

import numpy as np

import dpcore
from dpcore import datasets
from dpcore.algorithms.sanitize import Sanitizer
from dpcore.datasets import GOWALLA_BOUNDS
from dpcore.utils.contributions import unit_codes

from .sanitize import bounded_rows, bounded_sample, sq_dist

EPSILONS = (0.5, 1.0, 2.0)
BOUNDINGS = ("sample", "weight")
KS = (3, 5, 10, 20)
K_NICV = 5
SETS = 400


class Reference:
    """Exact k-means costs of fixed centre sets on (weighted) rows: what a release's cost estimates are compared with."""

    def __init__(self, X, weights, sets):
        self.sets = sets
        w = np.asarray(weights, float)
        self.cost = {k: np.array([np.dot(w, sq_dist(X, C)) / w.sum() for C in s]) for k, s in sets.items()}

    def error(self, syn) -> dict:
        """Median relative cost error of the synopsis' weighted points (cells spread uniformly) by k."""
        spread = (((syn.upper - syn.lower) ** 2) / 12).sum(axis=1)
        total = max(float(syn.weights.sum()), 1e-9)
        return {k: float(np.median(np.abs(np.array([np.dot(syn.weights, sq_dist(syn.points, C) + spread) / total
                                                      for C in self.sets[k]]) / self.cost[k] - 1)))
                for k in KS}


def person_weights(ids, L: int) -> np.ndarray:
    """Every row of a user with m rows weighted min(1, L / m) (the data owner's reference, exact floats)."""
    codes, _ = unit_codes(ids)
    return np.minimum(1.0, L / np.bincount(codes)[codes])


def centre_sets(X, weights, rng, n_sets: int = SETS) -> dict:
    """``n_sets`` sets of k rows for each k, drawn with probability proportional to ``weights``."""
    p = np.asarray(weights, float) / np.sum(weights)
    return {k: [X[rng.choice(len(X), k, p=p)] for _ in range(n_sets)] for k in KS}


def nicv_ratios(X, ids, base, *, L, how, eps, releases, algorithms) -> dict:
    """Median NICV ratio (on all rows, over non-private k-means) of each algorithm's releases at k = 5."""
    out = {}
    unit = {} if L is None else dict(max_contributions=L, contribution_bounding=how)
    fit_kw = {} if L is None else dict(privacy_id=ids)
    for key in algorithms:
        r = []
        for _ in range(releases):
            if key == "sanitize":
                centres = Sanitizer(K_NICV, epsilon=eps, bounds=GOWALLA_BOUNDS, **unit).fit(X, **fit_kw).cluster_centers_
            else:
                centres = dpcore.ALGORITHMS[key](n_clusters=K_NICV, epsilon=eps, bounds=GOWALLA_BOUNDS,
                                                 **unit).fit(X, **fit_kw).cluster_centers_
            r.append(dpcore.nicv(X, centres, GOWALLA_BOUNDS) / base)
        out[key] = float(np.median(r))
    return out


def cost_errors(X, ids, ref: Reference, *, L, how, eps, releases) -> dict:
    """Median over releases of the synopsis' cost error by k (PrivTree, the default method)."""
    errs = [ref.error(Sanitizer(epsilon=eps, bounds=GOWALLA_BOUNDS, max_contributions=L, contribution_bounding=how)
                      .fit(X, privacy_id=ids).synopsis_) for _ in range(releases)]
    return {k: float(np.median([e[k] for e in errs])) for k in KS}


def nicv_table(X, ids, base, Ls, epsilons, algorithms, names, releases, say) -> list[dict]:
    """The NICV table (row level, then each L, ε and bounding); returns its CSV rows."""
    rows: list[dict] = []
    say(f"\n### NICV ratio to non-private k-means on all check-ins, k = {K_NICV}\n")
    head = ["bounding", "L", "ε"] + [names[k] for k in algorithms]
    say(fmt_row(head))
    say("|" + "---|" * len(head))
    for eps in epsilons:
        r = nicv_ratios(X, ids, base, L=None, how=None, eps=eps, releases=releases, algorithms=algorithms)
        say(fmt_row(["row level (a user at m·ε)", "–", f"{eps:g}"] + [f"{r[k]:.3f}" for k in algorithms]))
        rows += [dict(table="nicv", bounding="row", L="", epsilon=eps, what=k, value=r[k]) for k in algorithms]
    for L in Ls:
        for eps in epsilons:
            for how in BOUNDINGS:
                r = nicv_ratios(X, ids, base, L=L, how=how, eps=eps, releases=releases, algorithms=algorithms)
                say(fmt_row([how, L, f"{eps:g}"] + [f"{r[k]:.3f}" for k in algorithms]))
                rows += [dict(table="nicv", bounding=how, L=L, epsilon=eps, what=k, value=r[k]) for k in algorithms]
    say("\nGoal (issues 23, 68): NICV ratio <= 1.2 at L = 5, ε = 1.")
    return rows


def fmt_row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=10)
    ap.add_argument("--ls", default="1,5,10", help="the bounds L, comma-separated")
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--algorithms", default="eugkm,dplloyd,sanitize",
                    help="NICV rows: registry keys, and 'sanitize' for k-means on the sanitized synopsis; 'none': "
                         "the cost errors only")
    ap.add_argument("--sets", type=int, default=SETS, help="random centre sets a k for the cost error")
    ap.add_argument("--out", default="", help="also write PREFIX.txt and PREFIX.csv")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    Ls = [int(v) for v in args.ls.split(",")]
    epsilons = [float(v) for v in args.epsilons.split(",")]
    algorithms = [] if args.algorithms == "none" else args.algorithms.split(",")
    ds = datasets.load("gowalla_nyc_checkins")
    X, ids = ds.X, ds.units
    ref_fit = dpcore.ALGORITHMS["kmeans"](n_clusters=K_NICV, bounds=GOWALLA_BOUNDS, random_state=0).fit(X)
    base = dpcore.nicv(X, ref_fit.cluster_centers_, GOWALLA_BOUNDS)
    lines: list[str] = []
    rows: list[dict] = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    t0 = time.perf_counter()
    say(f"Gowalla NYC check-ins: {len(X):,} rows, {len(np.unique(ids)):,} users; non-private NICV (k = {K_NICV}) "
        f"{base:.5f}; median of {args.releases} releases per cell")
    names = {k: ("sanitized synopsis, k-means" if k == "sanitize" else dpcore.ALGORITHMS[k].display_name)
             for k in algorithms}
    if algorithms:
        rows += nicv_table(X, ids, base, Ls, epsilons, algorithms, names, args.releases, say)
    say(f"\n### Sanitized database (PrivTree): relative k-means cost error against the people-weighted check-ins, "
        f"{args.sets} centre sets a k\n")
    head = ["bounding", "L", "ε"] + [f"k = {k}" for k in KS]
    say(fmt_row(head))
    say("|" + "---|" * len(head))
    rng = np.random.default_rng(0)
    for L in Ls:
        w = person_weights(ids, L)
        ref = Reference(X, w, centre_sets(X, w, rng, args.sets))
        for eps in epsilons:
            for how in BOUNDINGS:
                e = cost_errors(X, ids, ref, L=L, how=how, eps=eps, releases=args.releases)
                say(fmt_row([how, L, f"{eps:g}"] + [f"{100 * e[k]:.2f} %" for k in KS]))
                rows += [dict(table="cost", bounding=how, L=L, epsilon=eps, what=f"k={k}", value=e[k]) for k in KS]
    say("\nGoal (issues 57, 68): cost error <= 3 % at L = 5, ε = 1, every k.")

    L, eps = 5, 1.0
    say(f"\n### The same at L = {L}, ε = {eps:g}, against benchmarks/sanitize.py's references (25 centre sets a k, "
        "drawn from the reference's rows)\n")
    say(fmt_row(["bounding", "reference"] + [f"k = {k}" for k in KS]))
    say("|---|---|" + "---|" * len(KS))
    sample = bounded_sample(X, ids, L)
    own_X, own_ids = bounded_rows(X, ids, L)
    w = person_weights(ids, L)
    rng = np.random.default_rng(0)
    refs = {"another sample of at most L rows a user": Reference(sample, np.ones(len(sample)),
                                                                 centre_sets(sample, np.ones(len(sample)), rng, 25))}
    own = {"sample": Reference(own_X, np.ones(len(own_X)), centre_sets(own_X, np.ones(len(own_X)), rng, 25)),
           "weight": Reference(X, w, centre_sets(X, w, rng, 25))}
    for how in BOUNDINGS:
        e = cost_errors(X, ids, refs["another sample of at most L rows a user"], L=L, how=how, eps=eps,
                        releases=args.releases)
        say(fmt_row([how, "another sample of at most L rows a user"] + [f"{100 * e[k]:.2f} %" for k in KS]))
        rows += [dict(table="cost_other_sample", bounding=how, L=L, epsilon=eps, what=f"k={k}", value=e[k]) for k in KS]
        # Its own data: sampling fitted on a bounded sample (every row kept), compared with exactly those rows.
        data, data_ids = (own_X, own_ids) if how == "sample" else (X, ids)
        e = cost_errors(data, data_ids, own[how], L=L, how=how, eps=eps, releases=args.releases)
        say(fmt_row([how, "its own data (the kept rows / the weighted rows)"] + [f"{100 * e[k]:.2f} %" for k in KS]))
        rows += [dict(table="cost_own", bounding=how, L=L, epsilon=eps, what=f"k={k}", value=e[k]) for k in KS]
    say(f"\n({time.perf_counter() - t0:.0f} s)")
    if args.out:
        with open(f"{args.out}.txt", "w") as fh:
            fh.write("\n".join(lines) + "\n")
        with open(f"{args.out}.csv", "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=["table", "bounding", "L", "epsilon", "what", "value"])
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
