"""A private sanitized database (issue 57): dpcore.sanitize's synopsis beside PRIVATE-K-MEAN's coreset and EUGkM's grid.

Run:  DPCORE_DATA=../shared/data python -m benchmarks.sanitize [--releases 3] [--data taxi,gowalla]

For each data set, epsilon in {0.1, 0.5, 1, 2} and release (fresh, unpredictable noise), it prints the median over
the releases of:
* the median relative error of the k-means cost of 25 random centre sets near the data (k rows drawn at random), for
  k in {3, 5, 10, 20};
* the NICV of k-means on the release over non-private k-means (scikit-learn, 10 starts), for the same k (the
  synopsis: weighted k-means on its points; EUGkM and PRIVATE-K-MEAN: their own released centres);
* the median relative error of 1,000 random range counts covering at least 1 % of the rows (PrivTree's measure,
  Zhang et al. 2016, §6); cells spread their mass uniformly, coreset points count where they lie;
* the release's size m, its time and peak memory.
The grid is EUGkM's signed noisy grid as released (negative cells kept); the coreset is fitted for each k.
Gowalla is released at person level (L = 5 check-ins a user; ``--bounding weight``, the default, weights every row
min(1, 5 / m), ``--bounding sample`` keeps a secret sample of 5); its cost and range figures compare shares (cost
per row, count over total) with a random sample of at most 5 check-ins a user or (``--reference all``) all
check-ins.  The paired comparison of the two boundings against the people-weighted check-ins is
``benchmarks/privacy_unit_gowalla.py``'s.  docs/guide/sanitize.rst holds the last run.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dpcore
from dpcore.algorithms.registry import bounding_for
from dpcore.algorithms.sanitize import Sanitizer

from ._common import TAXI_BOUNDS, PeakRSS, taxi_points

EPSILONS = (0.1, 0.5, 1.0, 2.0)
KS = (3, 5, 10, 20)
GOALS = {("taxi", 1.0): "cost error <= 1.5 % every k; NICV <= 1.05x", ("taxi", 0.1): "cost error <= 5 % every k",
         ("gowalla", 1.0): "cost error <= 3 %"}


def sq_dist(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    d2 = np.full(len(P), np.inf)
    for c in C:
        np.minimum(d2, ((P - c) ** 2).sum(axis=1), out=d2)
    return d2


class Truth:
    """The exact figures the releases are compared with (the data owner's side of the benchmark)."""

    def __init__(self, X, bounds, rng):
        self.X, self.lo, self.hi = X, np.asarray(bounds[0], float), np.asarray(bounds[1], float)
        self.sets = {k: [X[rng.integers(0, len(X), k)] for _ in range(25)] for k in KS}
        self.cost = {k: np.array([sq_dist(X, C).sum() / len(X) for C in s]) for k, s in self.sets.items()}
        from sklearn.cluster import KMeans
        self.nicv = {k: dpcore.nicv(X, KMeans(k, n_init=10, random_state=0).fit(X).cluster_centers_, bounds)
                     for k in KS}
        rects = []
        while len(rects) < 1000:
            a, b = rng.uniform(self.lo, self.hi, (2, 2000, X.shape[1]))
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            share = self.share(lo, hi)
            keep = share >= 0.01
            rects += list(zip(lo[keep], hi[keep], share[keep]))
        self.rects = rects[:1000]

    def share(self, lo, hi):
        # Sorting by the first coordinate would be faster; 2,000 rectangles over 10^5 rows take seconds.
        out = np.empty(len(lo))
        for i in range(len(lo)):
            out[i] = ((self.X >= lo[i]) & (self.X <= hi[i])).all(axis=1).mean()
        return out


def measure(truth: Truth, *, points, weights, lower=None, upper=None, centres: dict, shares: bool) -> dict:
    """The figures of one release: cost errors and NICV ratios by k, the range-count error.

    Row level (``shares`` False): the release's cost and counts against the data's.  Person level: per row and
    as shares of the total (the bounded data hold fewer rows than all check-ins)."""
    total = float(np.sum(weights)) if shares else float(len(truth.X))
    out = {}
    spread = (((upper - lower) ** 2) / 12).sum(axis=1) if lower is not None else 0.0
    for k in KS:
        est = np.array([float(np.dot(weights, sq_dist(points, C) + spread)) / max(total, 1e-9)
                        for C in truth.sets[k]])
        out[f"cost{k}"] = float(np.median(np.abs(est / truth.cost[k] - 1)))
        out[f"nicv{k}"] = dpcore.nicv(truth.X, centres[k], (truth.lo, truth.hi)) / truth.nicv[k]
    lo = np.array([r[0] for r in truth.rects])
    hi = np.array([r[1] for r in truth.rects])
    share = np.array([r[2] for r in truth.rects])
    if lower is not None:
        syn = dpcore.PointSynopsis(points, np.asarray(weights, float), lower, upper)
        est = syn.range_count(lo, hi) / max(total, 1e-9)
    else:
        est = np.array([weights[((points >= lo[i]) & (points <= hi[i])).all(axis=1)].sum()
                        for i in range(len(lo))]) / max(total, 1e-9)
    out["range"] = float(np.median(np.abs(est - share) / share))
    return out


def timed(fn):
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        out = fn()
        secs = time.perf_counter() - t0
    return out, secs, (mem.peak - mem.base) / 2 ** 20


def bounded_sample(X, ids, L, seed=0):
    """At most L rows of each unit, drawn at random: the kind of data a person-level release sees (its own
    sample is secret, so this is a statistically equivalent reference, not the same rows)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    _, codes = np.unique(np.asarray(ids)[order], return_inverse=True)
    rank = np.zeros(len(X), dtype=np.int64)
    srt = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(codes[srt])) + 1]
    rank[srt] = np.arange(len(X)) - np.repeat(starts, np.diff(np.r_[starts, len(X)]))
    return X[order][rank < L]


def run(name, X, bounds, *, releases, fit_kw, unit_kw, methods, reference=None):
    shares = bool(unit_kw) and reference is None   # a bounded reference holds as many rows as the release
    rng = np.random.default_rng(0)
    truth = Truth(X if reference is None else reference, bounds, rng)
    # PRIVATE-K-MEAN samples only (its GOOD-RADIUS is not a sum over rows): it bounds by sampling whatever is asked.
    coreset_kw = dict(unit_kw, contribution_bounding=bounding_for("coreset", unit_kw["contribution_bounding"])) \
        if unit_kw else {}
    rows = []
    for eps in EPSILONS:
        for method in methods:
            figs = []
            for _ in range(releases):
                if method in ("privtree", "adaptive", "uniform"):
                    est, secs, mem = timed(lambda eps=eps, method=method: Sanitizer(
                        epsilon=eps, bounds=bounds, method=method, **unit_kw).fit(X, **fit_kw))
                    s = est.synopsis_
                    cen = {k: s.kmeans(k) for k in KS}
                    f = measure(truth, points=s.points, weights=s.weights, lower=s.lower, upper=s.upper, centres=cen, shares=shares)
                    f.update(m=s.size, secs=secs, mem=mem)
                elif method == "eugkm":
                    f, cen = {}, {}
                    secs_all, mem_all, syn = 0.0, 0.0, None
                    for k in KS:
                        est, secs, mem = timed(lambda k=k, eps=eps: dpcore.ALGORITHMS["eugkm"](
                            k, epsilon=eps, bounds=bounds, **unit_kw).fit(X, **fit_kw))
                        cen[k] = est.cluster_centers_
                        syn = syn or est.synopsis_
                        secs_all, mem_all = secs_all + secs, max(mem_all, mem)
                    pts, w = syn.cell_centers(), syn.counts.ravel().astype(float)
                    edges = syn.edges
                    lower = dpcore.synopsis.grid_points([e[:-1] for e in edges])
                    upper = dpcore.synopsis.grid_points([e[1:] for e in edges])
                    f = measure(truth, points=pts, weights=w, lower=lower, upper=upper, centres=cen, shares=shares)
                    f.update(m=w.size, secs=secs_all / len(KS), mem=mem_all)
                else:   # PRIVATE-K-MEAN: a coreset per k; cost and ranges on the k = 5 coreset's points
                    cen, coresets, secs_all, mem_all = {}, {}, 0.0, 0.0
                    for k in KS:
                        try:
                            est, secs, mem = timed(lambda k=k, eps=eps: dpcore.ALGORITHMS["coreset"](
                                k, epsilon=eps, delta=1e-6, bounds=bounds, **coreset_kw).fit(X, **fit_kw))
                        except Exception as exc:     # noqa: BLE001 -- a refusal (regime) is a result here
                            cen[k] = None
                            coresets[k] = repr(type(exc).__name__)
                            continue
                        cen[k], coresets[k] = est.cluster_centers_, est.synopsis_
                        secs_all, mem_all = secs_all + secs, max(mem_all, mem)
                    c5 = coresets.get(5)
                    if not hasattr(c5, "points"):
                        figs.append({"refused": True})
                        continue
                    ok = {k: (c if c is not None else np.full((k, X.shape[1]), np.nan)) for k, c in cen.items()}
                    f = measure(truth, points=c5.points, weights=c5.weights, centres=ok, shares=shares)
                    f.update(m=len(c5.weights), secs=secs_all / len(KS), mem=mem_all)
                figs.append(f)
            rows.append((eps, method, figs))
    return rows


def table(name, rows):
    head = ("| ε | release | m | " + " | ".join(f"cost err k={k}" for k in KS) + " | "
            + " | ".join(f"NICV× k={k}" for k in KS) + " | range err | time s | peak MB |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for eps, method, figs in rows:
        figs = [f for f in figs if not f.get("refused")]
        if not figs:
            print(f"| {eps:g} | {method} | refused | " + " | ".join("—" for _ in range(2 * len(KS) + 3)) + " |")
            continue
        med = {key: float(np.nanmedian([f[key] for f in figs])) for key in figs[0]}
        print(f"| {eps:g} | {method} | {med['m']:,.0f} | "
              + " | ".join(f"{100 * med[f'cost{k}']:.2f} %" for k in KS) + " | "
              + " | ".join(f"{med[f'nicv{k}']:.3f}" for k in KS)
              + f" | {100 * med['range']:.2f} % | {med['secs']:.2f} | {med['mem']:.0f} |")
    for (data, eps), goal in GOALS.items():
        if data == name:
            print(f"\nGoal at ε = {eps:g}: {goal}.")


def bounded_rows(X, ids, L, seed=0):
    """:func:`bounded_sample` with the units of the rows kept: a release fitted on them with ``max_contributions=L``
    keeps every row, so its figures compare with exactly the rows it summarises (no second sample's variance)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    Xo, io = X[order], np.asarray(ids)[order]
    _, codes = np.unique(io, return_inverse=True)
    srt = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(codes[srt])) + 1]
    rank = np.zeros(len(X), dtype=np.int64)
    rank[srt] = np.arange(len(X)) - np.repeat(starts, np.diff(np.r_[starts, len(X)]))
    return Xo[rank < L], io[rank < L]


def diagnose_person_level(releases: int, epsilon: float = 1.0, L: int = 5) -> None:
    """Where Gowalla's person-level cost error comes from (issue 57's goal: <= 3 % at epsilon = 1, L = 5).

    The releases are fitted on a bounded sample (at most L check-ins a user, ``max_contributions=L``, so every
    row is kept) and compared with exactly those rows.  For each release the same leaves are also weighted by
    their EXACT counts (no noise: the resolution's share of the error), with and without the uniform spread
    that :meth:`~dpcore.synopsis.PointSynopsis.cost` adds for each cell.  Then PrivTree's budget split and
    threshold.  Median over the releases of the median relative cost error of 25 random centre sets, by k.
    """
    from dpcore import datasets
    ds = datasets.load("gowalla_nyc_checkins")
    R, ids = bounded_rows(ds.X, ds.units, L)
    bounds = datasets.GOWALLA_BOUNDS
    rng = np.random.default_rng(0)
    sets = {k: [R[rng.integers(0, len(R), k)] for _ in range(25)] for k in KS}
    truth = {k: np.array([sq_dist(R, C).sum() for C in s]) for k, s in sets.items()}

    def err(points, w, spread, signed=False):
        rel = [np.array([np.dot(w, sq_dist(points, C) + spread) for C in sets[k]]) / truth[k] - 1 for k in KS]
        return [float(np.median(r if signed else np.abs(r))) for r in rel]

    def exact(s):
        top = np.asarray(bounds[1], float)
        return np.array([((R >= lo) & ((R < hi) | (hi >= top))).all(axis=1).sum() for lo, hi in zip(s.lower, s.upper)])

    print(f"\n### Gowalla person level: {len(R):,} rows (at most {L} check-ins of each of {len(np.unique(ids)):,} "
          f"users), ε = {epsilon:g}, compared with exactly those rows; median of {releases} releases\n")
    print("| release | m | weight in empty leaves | " + " | ".join(f"cost err k={k}" for k in KS) + " |")
    print("|---|---|---|" + "---|" * len(KS))
    fmt = " | ".join(["{:.2f} %"] * len(KS))
    variants = {"PrivTree (default: tree_share 0.5, θ 0)": {}, "tree_share 0.4": {"tree_share": 0.4},
                "tree_share 0.6": {"tree_share": 0.6}, "θ = 50": {"theta": 50.0}}
    for name, kw in variants.items():
        rows: dict = {"noisy": [], "signed": [], "exact": [], "bare": []}
        ms, empty = [], []
        for _ in range(releases):
            s = Sanitizer(epsilon=epsilon, bounds=bounds, max_contributions=L, contribution_bounding="sample",
                          **kw).fit(R, privacy_id=ids).synopsis_
            spread = (((s.upper - s.lower) ** 2) / 12).sum(axis=1)
            rows["noisy"].append(err(s.points, s.weights, spread))
            ms.append(s.size)
            if not kw:
                ex = exact(s)
                rows["signed"].append(err(s.points, s.weights, spread, signed=True))
                rows["exact"].append(err(s.points, ex, spread))
                rows["bare"].append(err(s.points, ex, 0.0))
                empty.append(float(s.weights[ex == 0].sum()) / len(R))
        med = {key: np.median(np.array(v), axis=0) * 100 for key, v in rows.items() if v}
        share = f"{np.median(empty) * 100:.2f} %" if empty else "—"
        print(f"| {name} | {int(np.median(ms)):,} | {share} | " + fmt.format(*med["noisy"]) + " |")
        if not kw:
            print("| same, signed error (+: cost overestimated) | | | " + fmt.format(*med["signed"]) + " |")
            print("| same leaves, exact counts (no noise) | | | " + fmt.format(*med["exact"]) + " |")
            print("| same leaves, exact counts, no uniform spread | | | " + fmt.format(*med["bare"]) + " |")


def parquet_run(rows: int, reps: int = 2) -> None:
    """The Parquet folder of :mod:`benchmarks.make_taxi_parquet` read where it lies (DuckDB): passes and time.

    EUGkM (k = 5) and the synopsis (PrivTree, the default) at ε = 1, each on a fresh source that counts its
    passes over the rows; the goal (issue 57): one pass, within 3x EUGkM's time on the same folder.
    """
    from dpcore import sources

    from .make_taxi_parquet import dataset_path
    from .sources_scale import COLUMNS
    folder = dataset_path(rows)
    if not folder.is_dir():
        raise SystemExit(f"{folder} not found: python -m benchmarks.make_taxi_parquet --rows {rows} first")
    print(f"\n### {rows:,} Parquet rows ({folder}), DuckDB, ε = 1; wall-clock seconds of each of {reps} fits\n")
    print("| release | passes over the rows | seconds | peak MB | m or cells |")
    print("|---|---|---|---|---|")
    for _ in range(reps):
        for name in ("eugkm", "sanitize"):     # interleaved: the load of a shared machine hits both alike
            passes: list = []
            src = sources.from_files(folder, columns=COLUMNS)
            src.on_pass = passes.append
            if name == "eugkm":
                est, secs, mem = timed(lambda src=src: dpcore.ALGORITHMS["eugkm"](5, epsilon=1.0,
                                                                                  bounds=TAXI_BOUNDS).fit(src))
                size = f"{int(est.cells_per_dim_)}² cells"
            else:
                est, secs, mem = timed(lambda src=src: Sanitizer(epsilon=1.0, bounds=TAXI_BOUNDS).fit(src))
                size = f"m = {est.synopsis_.size:,}"
            print(f"| {name} | {len(passes)}: {', '.join(passes)} | {secs:.1f} | {mem:.0f} | {size} |", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=3)
    ap.add_argument("--data", default="taxi,gowalla")
    ap.add_argument("--methods", default="privtree,adaptive,uniform,eugkm,coreset")
    ap.add_argument("--bounding", default="weight", choices=["weight", "sample"],
                    help="person level: how each user's check-ins are bounded to 5")
    ap.add_argument("--reference", default="bounded", choices=["bounded", "all"],
                    help="person level: compare with a sample of at most L rows a unit (the synopsis' own error) "
                         "or with all rows (adds the shift that bounding makes)")
    ap.add_argument("--diagnose-person-level", action="store_true",
                    help="only the Gowalla person-level diagnosis (diagnose_person_level)")
    ap.add_argument("--parquet", type=int, default=0, metavar="ROWS",
                    help="only the large-source run on make_taxi_parquet's folder of ROWS rows (parquet_run)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.parquet:
        parquet_run(args.parquet, args.releases)
        return
    if args.diagnose_person_level:
        diagnose_person_level(args.releases)
        return
    methods = args.methods.split(",")
    for name in args.data.split(","):
        if name == "taxi":
            X, bounds, fit_kw, unit_kw = taxi_points(), TAXI_BOUNDS, {}, {}
            print(f"\n### NYC taxi sample: {len(X):,} pickups, row level; median of {args.releases} releases\n")
            ref = None
        else:
            from dpcore import datasets
            ds = datasets.load("gowalla_nyc_checkins")
            X, bounds = ds.X, datasets.GOWALLA_BOUNDS
            fit_kw = {"privacy_id": ds.units}
            unit_kw = {"max_contributions": 5, "contribution_bounding": args.bounding}
            ref = bounded_sample(X, ds.units, 5) if args.reference == "bounded" else None
            print(f"\n### Gowalla NYC check-ins: {len(X):,} rows of {len(np.unique(ds.units)):,} users, person level "
                  f"L = 5 ({args.bounding}); median of {args.releases} releases; compared with "
                  + ("a random sample of at most 5 check-ins a user" if ref is not None else "all check-ins") + "\n")
        table(name, run(name, X, bounds, releases=args.releases, fit_kw=fit_kw, unit_kw=unit_kw, methods=methods,
                        reference=ref))


if __name__ == "__main__":
    main()
