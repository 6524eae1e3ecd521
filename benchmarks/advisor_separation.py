"""Can a small share of epsilon tell how separated the clusters are?  A feasibility measurement (issue 25).

The advisor's plans hedge over the clusters' separation because it is not public: ``auto`` on DPM's
own ``synth_10d`` at epsilon 1 gives DPM 3/4 of the candidates' budget and a quarter to zCDP-Lloyd
against overlapping clusters, and measures 1.33x DPM alone.  Knowing the separation, the model's
first key is within 1.25x of the best in 40 of 42 held-out cells against 35 for the public pick
(``advisor_heldout --oracle``).  This script measures whether one cheap private statistic recovers
the separation before anything is built on it.

The statistic (:mod:`dpcore.advisor.separation_read`, which ``auto`` now reads; post-processing of one Laplace histogram, epsilon_s-DP for adding or removing one
row): the rows' first ``min(d, 3)`` coordinates (the mixtures' coordinates are exchangeable; a real
set would need a public choice) binned on a grid of ``m`` cells a side over the public bounds, with
``m^d'`` about 4k; each cell's count gets Laplace(1 / epsilon_s) noise from
:class:`dpcore.privacy.mechanisms.NoiseSource`; the statistic is the share of the (clipped) noisy
mass in the k heaviest cells.  Far-apart clusters put their mass in about k cells, overlapping ones
spread it.

The classifier: for the public (n, d, k), draw reference mixtures of every separation and size law
(public simulations, seeds 8000 + j), take each one's statistic at the same epsilon_s, and name the
separation whose reference median is nearest (references of both size laws compete: the sizes are
not public either).  Test mixtures are other draws (seeds 9000 + j).

Usage::

    python -m benchmarks.advisor_separation            # 41 s on 2 cores
    python -m benchmarks.advisor_separation --quick    # n <= 10^4
    python -m benchmarks.advisor_separation --held     # advisor_auto's held-out cases, named
    python -m benchmarks.advisor_separation --picks    # what naming buys there (stored medians, no fits)
    python -m benchmarks.advisor_separation --real     # ... and on the real sets, leave-one-out
    python -m benchmarks.advisor_separation --cells 16 # the read's grid with 16 cells per cluster (4)
    python -m benchmarks.advisor_separation --sizes    # can the same histogram name the size law?

The first prints the confusion of true against named separation, pooled and by size, and the share
of test draws put on the right side of c = 4 (overlapping c <= 2 against far apart c >= 8: the side
that decides between zCDP-Lloyd and DPM).  ``--picks`` and ``--real`` set the minimax single key
over the hypotheses within two doublings of the named separation beside the minimax over all of
them and the advisor's single pick.  Results: ``benchmarks/results/advisor_separation.txt``.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from benchmarks.advisor_calibration import mixture
from dpcore.advisor.model import SEPARATIONS
from dpcore.advisor.separation_read import _logit, heavy_share, histogram_counts, plausible
from dpcore.advisor.separation_read import top_k_share as noisy_share
from dpcore.privacy.accountant import BudgetLedger
from dpcore.privacy.mechanisms import NoiseSource

GRID = {"n": (1_000, 10_000, 100_000), "d": (2, 5, 10, 20, 50), "k": (3, 10, 30, 64)}
REFERENCES = 3
TESTS = 2


def top_k_share(X: np.ndarray, k: int, epsilon: float, rng: np.random.Generator, bounds=(-1.0, 1.0)) -> float:
    """The share of a noisy histogram's mass in its k heaviest cells (epsilon-DP, add/remove one row).

    Parameters
    ----------
    X : ndarray (n, d), inside ``bounds``
    k : int, the number of clusters (public)
    epsilon : float > 0, the statistic's whole budget
    rng : the noise's generator (a benchmark's seeded one; a release needs an unpredictable one)

    Returns
    -------
    float in [0, 1]; nan when no noisy count is positive.
    """
    counts = histogram_counts(X, k, *bounds).astype(float)     # the real-valued lattice query its results used
    noisy = NoiseSource(rng, BudgetLedger(epsilon)).laplace(counts, sensitivity=1.0, epsilon=epsilon,
                                                           name="separation histogram")
    return noisy_share(noisy, k)


def measure(quick: bool, epsilon: float) -> pd.DataFrame:
    """One row per drawn mixture: n, d, k, separation, equal, role (reference/test), statistic."""
    rows = []
    j = 0
    for n in GRID["n"]:
        if quick and n > 10_000:
            continue
        for d in GRID["d"]:
            for k in GRID["k"]:
                for c in SEPARATIONS:
                    for equal in (False, True):
                        for role, count, offset in (("reference", REFERENCES, 8000), ("test", TESTS, 9000)):
                            for r in range(count):
                                seed = offset + j * 10 + r
                                X = mixture(n, d, k, c, seed, equal=equal)
                                rng = np.random.default_rng(seed + 1)
                                rows.append((n, d, k, c, equal, role, top_k_share(X, k, epsilon, rng)))
                        j += 1
    return pd.DataFrame(rows, columns=["n", "d", "k", "separation", "equal", "role", "statistic"])


def nearest(refs: dict, t: float) -> float:
    """The separation of the ``(separation, equal)`` whose reference median is nearest to ``t``
    (the size law is not public either: both laws' references compete); c = 1 when ``t`` is nan."""
    finite = {h: v for h, v in refs.items() if math.isfinite(v)}
    if not math.isfinite(t) or not finite:
        return SEPARATIONS[0]
    return float(min(finite, key=lambda h: abs(finite[h] - t))[0])


def classify(table: pd.DataFrame) -> pd.DataFrame:
    """Each test draw with the separation :func:`nearest` names from the references of its (n, d, k)."""
    ref = table[table.role == "reference"].groupby(["n", "d", "k", "separation", "equal"])["statistic"].median()
    test = table[table.role == "test"].copy()
    test["named"] = [nearest(ref.loc[(t.n, t.d, t.k)].to_dict(), t.statistic) for t in test.itertuples()]
    return test


def report(test: pd.DataFrame, epsilon: float) -> None:
    print(f"# statistic: top-k share of a Laplace histogram at epsilon_s = {epsilon:g} "
          f"({len(test)} test draws, {REFERENCES} references each)")
    print(pd.crosstab(test.separation, test.named, rownames=["true c"], colnames=["named c"]))
    for label, part in (("all", test), ("equal sizes", test[test.equal]), ("unequal", test[~test.equal])):
        exact = float((part.separation == part.named).mean())
        print(f"{label:12s} exact {exact:.0%}   overlapping vs far apart, right side {right_side(part).mean():.0%}")
    for n, part in test.groupby("n"):
        print(f"n = {n:>7,}   exact {float((part.separation == part.named).mean()):.0%}   "
              f"right side {right_side(part).mean():.0%}")
    big = test[test.n >= 10_000]
    print("right side by d (rows) and k (columns), n >= 10^4:")
    print(right_side(big).groupby([big.d, big.k]).mean().unstack().round(2))


def right_side(test: pd.DataFrame) -> pd.Series:
    """For the draws of true c <= 2 or >= 8: named on the same side of c = 4 (True/False)."""
    far, near = test.separation >= 8, test.separation <= 2
    return ((far & (test.named >= 8)) | (near & (test.named <= 2)))[far | near]


def held(epsilon: float, draws: int = 5) -> pd.DataFrame:
    """The held-out cases of ``benchmarks.advisor_auto`` (synth_10d and 13 mixtures): each one's
    statistic over ``draws`` noise draws, and the separation :func:`nearest` names from references
    at the case's (n, d, k) (of both size laws: the sizes are not public either)."""
    from benchmarks.advisor_auto import cases, truth
    rows = []
    for i, (name, X, k, bounds) in enumerate(cases(False)):
        n, d = X.shape
        refs = references(n, d, k, epsilon)
        for r in range(draws):
            t = top_k_share(X, k, epsilon, np.random.default_rng(9100 + 10 * i + r), bounds)
            rows.append((name, *truth(name), round(t, 3), nearest(refs, t)))
    return pd.DataFrame(rows, columns=["data", "true c", "true sizes", "statistic", "named c"])


def references(n: int, d: int, k: int, epsilon: float) -> dict:
    """``{(separation, equal): median statistic}`` of :data:`REFERENCES` mixtures drawn at these public
    inputs (seeds 8000 + 10 r), each at ``epsilon``: a public simulation, no data."""
    return {(c, equal): float(np.median([top_k_share(mixture(n, d, k, c, 8000 + 10 * r, equal=equal), k, epsilon,
                                                     np.random.default_rng(8001 + 10 * r))
                                         for r in range(REFERENCES)]))
            for c in SEPARATIONS for equal in (False, True)}


def picks(epsilon: float, steps: int, draws: int = 5) -> list[tuple]:
    """The minimax single key over the hypotheses the statistic leaves plausible, on the stored medians.

    For each held-out (data, eps) cell of ``benchmarks/results/advisor_heldout.txt`` and each of the
    statistic's ``draws``: :func:`dpcore.advisor.model.selection_plan` with one candidate
    (the trivial answer admitted) over :func:`plausible` hypotheses, measured by its stored median
    over the best; beside it the same minimax over every hypothesis (public inputs only).  The
    statistic's epsilon is not charged: the medians are at the whole epsilon.

    Returns
    -------
    list of ``(name, epsilon, [factor per draw], public factor)``.
    """
    import collections

    from benchmarks.advisor_auto import shapes
    from benchmarks.advisor_heldout import RESULTS, stored_medians
    named = collections.defaultdict(list)
    for row in held(epsilon, draws).itertuples(index=False):
        named[row[0]].append(row[4])
    shape, out = shapes(), []
    for name, eps, triv, medians in stored_medians(RESULTS):
        out.append((name, eps, *named_factors(shape[name], eps, medians, triv, named[name], steps)))
    return out


def named_factors(shape: tuple, eps: float, ratios: dict, triv: float, named: list, steps: int,
                  exclude: str | None = None) -> tuple[list, float]:
    """:func:`minimax_factor` over the hypotheses :func:`plausible` leaves for each separation of
    ``named`` (one per draw of the statistic), and over every hypothesis."""
    return ([minimax_factor(shape, eps, ratios, triv, plausible(c, steps), exclude) for c in named],
            minimax_factor(shape, eps, ratios, triv, None, exclude))


def factor(key: str, ratios: dict, triv: float) -> float:
    """A key's measured ratio over the best measured (the trivial answer included); no answer is inf."""
    from dpcore.advisor.model import TRIVIAL
    finite = [r for r in ratios.values() if math.isfinite(r)]
    r = triv if key == TRIVIAL else ratios.get(key, math.inf)
    return (r if math.isfinite(r) else math.inf) / min(triv, *finite)


def minimax_factor(shape: tuple, eps: float, ratios: dict, triv: float, hypotheses=None,
                   exclude: str | None = None) -> float:
    """:func:`factor` of the minimax single key over ``hypotheses`` (all by default) among the keys of
    ``ratios`` and the trivial answer, those that refuse to run at these public inputs left out."""
    from dpcore.advisor.model import DELTA, TRIVIAL
    from dpcore.advisor.plan import candidate_filter, selection_plan
    n, d, k = shape
    runs = candidate_filter(n, d, k, DELTA)
    key = selection_plan(n, d, k, eps, max_candidates=1, pool=tuple(ratios) + (TRIVIAL,), hypotheses=hypotheses,
                         exclude=exclude, allowed=lambda q, e, m: q == TRIVIAL or runs(q, e, m)).keys[0]
    return factor(key, ratios, triv)


def real_picks(share: float, steps: int = 2, draws: int = 5) -> pd.DataFrame:
    """The same minimax over plausible hypotheses on the calibration's real sets, leave-one-out.

    Each real set of ``benchmarks.advisor_calibration.real_sets`` (scaled into the unit box as
    calibrated) at each calibrated epsilon: the statistic at ``share * epsilon`` over ``draws`` noise
    draws, references drawn at the set's (n, d, k) at the same budget, the minimax single key
    over the plausible hypotheses with the set itself left out of the model
    (``exclude=``), measured by the table's ratio over the best (trivial answer included); beside it
    the minimax over every hypothesis and the advisor's single pick (both leave-one-out).

    Returns
    -------
    DataFrame: source, epsilon, named (the separations named), plausible (factor per draw), every, pick.
    """
    from benchmarks.advisor_calibration import real_sets
    from dpcore.advisor.model import DELTA, _group_ids, calibration
    from dpcore.advisor.plan import candidate_filter, first_pick
    cal = calibration()
    cal = cal.assign(group=_group_ids(cal))
    rows = []
    for name, X, k in real_sets():
        n, d = X.shape
        sub = cal[cal.source == name]
        group = sub.group.iloc[0]
        for eps in sorted(sub.epsilon.unique()):
            at = sub[sub.epsilon == eps]
            ratio = dict(zip(at.key, at.ratio.astype(float)))
            triv = float(at.trivial_ratio.iloc[0])
            refs = references(n, d, k, share * eps)
            named = [nearest(refs, top_k_share(X, k, share * eps, np.random.default_rng(9300 + r)))
                     for r in range(draws)]
            pick, _ = first_pick(n, d, k, eps, auto=False, exclude=group, allowed=candidate_filter(n, d, k, DELTA))
            rows.append((name, eps, named, *named_factors((n, d, k), eps, ratio, triv, named, steps, group),
                         factor(pick, ratio, triv)))
    return pd.DataFrame(rows, columns=["source", "epsilon", "named", "plausible", "every", "pick"])


def real_report(share: float) -> None:
    t = real_picks(share)
    f = np.concatenate(t.plausible.to_numpy())
    cells = len(t)
    print(f"# real sets, leave-one-out, statistic at {share:g} x epsilon (not charged), plausible = named c +- 2:")
    print(f"minimax over plausible: within 1.25x {(f <= 1.25).mean() * cells:.1f} of {cells}, within 2x "
          f"{(f <= 2).mean() * cells:.1f}, worst {f.max():.3g}; over every hypothesis: {(t.every <= 1.25).sum()}, "
          f"{(t.every <= 2).sum()}, worst {t.every.max():.3g}; the advisor's single pick: {(t.pick <= 1.25).sum()}, "
          f"{(t.pick <= 2).sum()}, worst {t.pick.max():.3g}")
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(t.assign(plausible=[" ".join(f"{x:.3g}" for x in v) for v in t.plausible],
                       named=[" ".join(f"{c:g}" for c in v) for v in t.named]).round(3).to_string(index=False))


def picks_report(epsilon: float) -> None:
    for steps in (1, 2):
        rows = picks(epsilon, steps)
        f = np.array([x for _, _, fs, _ in rows for x in fs])
        g = np.array([r[3] for r in rows])
        cells = len(rows)
        print(f"plausible = named c +- {steps} doubling(s): minimax single key within 1.25x of the best in "
              f"{(f <= 1.25).mean() * cells:.1f} of {cells} cells, within 2x in {(f <= 2).mean() * cells:.1f} "
              f"(mean over draws), worst {f.max():.3g}; over every hypothesis: {(g <= 1.25).sum()}, {(g <= 2).sum()}, "
              f"worst {g.max():.3g}")
        for name, eps, fs, g1 in rows:
            if max(fs) > 1.25 or g1 > 1.25:
                print(f"    {name:<46} eps {eps:<4g} plausible {' '.join(f'{x:.3g}' for x in fs)}   every {g1:.3g}")


def sizes_read(epsilon: float) -> pd.DataFrame:
    """Does one noisy histogram say the clusters' size law too?  For mixtures of every hypothesis
    (:data:`~dpcore.advisor.model.HYPOTHESES`) at n 10^4 and 10^5, d 2-20, k 10-64: the
    read's two statistics (logit top-k share, logit :func:`heavy_share`), references (seeds 8000 + j)
    against tests (9000 + j), each test named by the nearest reference median after scaling each
    statistic by its median spread.  One row per test draw: n, d, k, true (c, sizes), named (c, sizes)."""
    from dpcore.advisor.model import HYPOTHESES
    from dpcore.advisor.separation_read import mixture as law_mixture
    rows, j = [], 0
    for n in (10_000, 100_000):
        for d in (2, 5, 10, 20):
            for k in (10, 30, 64):
                drawn: dict = {}
                for h in HYPOTHESES:
                    for role, count, offset in (("reference", REFERENCES, 8000), ("test", TESTS, 9000)):
                        for r in range(count):
                            seed = offset + 10 * j + r
                            X = law_mixture(n, d, k, h[0], seed, sizes=h[1], columns=3)
                            counts = histogram_counts(X, k, -1.0, 1.0).astype(float)
                            noisy = counts + np.random.default_rng(seed + 1).laplace(0.0, 1.0 / epsilon, counts.size)
                            drawn.setdefault((h, role), []).append(
                                np.array([_logit(noisy_share(noisy, k)), _logit(heavy_share(noisy, k))]))
                    j += 1
                refs = {h: np.median(drawn[h, "reference"], axis=0) for h in HYPOTHESES}
                spread = np.median([np.abs(np.array(drawn[h, "reference"]) - refs[h]).mean(axis=0)
                                    for h in HYPOTHESES], axis=0) + 1e-3
                for h in HYPOTHESES:
                    for t in drawn[h, "test"]:
                        g = min(refs, key=lambda g: float((((refs[g] - t) / spread) ** 2).sum()))
                        rows.append((n, d, k, *h, *g))
    return pd.DataFrame(rows, columns=["n", "d", "k", "separation", "sizes", "named_c", "named_sizes"])


def sizes_report(test: pd.DataFrame, epsilon: float) -> None:
    print(f"# the size law from the same histogram at epsilon_s = {epsilon:g} ({len(test)} test draws, "
          f"{REFERENCES} references per hypothesis)")
    print(pd.crosstab(test.sizes, test.named_sizes, rownames=["true sizes"], colnames=["named sizes"]))
    for label, part in (("all", test), ("far apart (c >= 8)", test[test.separation >= 8])):
        law = float((part.sizes == part.named_sizes).mean())
        equal = float(((part.sizes == "equal") == (part.named_sizes == "equal")).mean())
        print(f"{label:20s} size law named right {law:.0%}   equal or not right {equal:.0%}   "
              f"separation named right {float((part.separation == part.named_c).mean()):.0%}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 10^4 only")
    ap.add_argument("--held", action="store_true", help="name the separation of advisor_auto's held-out cases")
    ap.add_argument("--picks", action="store_true", help="the minimax single key over the hypotheses the "
                    "statistic leaves plausible, on advisor_heldout's stored medians")
    ap.add_argument("--real", action="store_true", help="the same on the calibration's real sets, leave-one-out")
    ap.add_argument("--share", type=float, default=0.05, help="with --real: the statistic's share of epsilon")
    ap.add_argument("--epsilon", type=float, default=0.05, help="the statistic's budget (default 0.05)")
    ap.add_argument("--cells", type=int, default=None, help="the grid's cells per cluster (default 4)")
    ap.add_argument("--sizes", action="store_true", help="name the size law from the same histogram")
    args = ap.parse_args(argv)
    if args.cells is not None:
        from dpcore.advisor import separation_read as separation
        separation.CELLS_PER_CLUSTER = args.cells
    if args.sizes:
        return sizes_report(sizes_read(args.epsilon), args.epsilon)
    if args.picks:
        return picks_report(args.epsilon)
    if args.real:
        return real_report(args.share)
    if args.held:
        with pd.option_context("display.width", 200, "display.max_rows", 200):
            print(held(args.epsilon).to_string(index=False))
        return
    report(classify(measure(args.quick, args.epsilon)), args.epsilon)


if __name__ == "__main__":
    main()
