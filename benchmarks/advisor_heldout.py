"""Issue 25's warning and refusal goals on held-out data: does every estimator warn where it is no better than the trivial answer?

On :mod:`benchmarks.advisor_auto`'s data (DPM's ``synth_10d`` and ten held-out Gaussian mixtures the
calibration never used), at epsilon 0.5, 1 and 2 (delta = 1e-6), every centre-releasing registry
algorithm is fitted as a user would fit it (no public size: the fit releases a noisy count and
judges its regime on it) and the verdict its fit gave is recorded: ``ok``, ``warn``
(``RegimeWarning``), ``refuse`` for utility (bypassed here, to measure what it would have given) or
``refuse`` for feasibility or run time (not bypassed: no answer).  Its k-means cost is divided by
non-private k-means' (scikit-learn, 3 restarts); the median over ``--seeds`` is compared with the
trivial answer's (one centre at a DP mean: zCDP-Lloyd with k = 1).  The goals:

* no silent garbage: every (key, data, epsilon) whose median ratio exceeds the trivial answer's warns
  or refuses;
* no refusal where the refused algorithm's median ratio would have been under the trivial answer.

A fit slower than 30 s counts as no answer, as in ``advisor_auto``.  ``--verdicts`` refits nothing:
it recomputes every verdict from public inputs under the current calibrated model
(:func:`dpcore.algorithms.registry.assess`, at the true size where a fit would judge on a noisy
count) against the medians stored in :data:`RESULTS`: the goals after a change to the model, in
seconds instead of 40 minutes.

    python -m benchmarks.advisor_heldout [--seeds 3] [--quick]
    python -m benchmarks.advisor_heldout --only equal      # the data sets whose name says so
    python -m benchmarks.advisor_heldout --verdicts
    python -m benchmarks.advisor_heldout --oracle        # what knowing the separation would buy (:func:`oracle`)
    python -m benchmarks.advisor_heldout --picks         # the advisor's first pick, auto's measured where it is auto
"""
from __future__ import annotations

import argparse
import math
import signal
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore.advisor.model import calibrated_keys  # noqa: E402
from dpcore.algorithms import regime as regime_module  # noqa: E402
from dpcore.metrics import inertia  # noqa: E402

from .advisor_auto import TIME_LIMIT, _alarm, cases, shapes, truth  # noqa: E402

#: Where ``python -m benchmarks.advisor_heldout > RESULTS`` keeps the measured medians.
RESULTS = Path(__file__).with_name("results") / "advisor_heldout.txt"


def fit(key: str, X: np.ndarray, k: int, eps: float, seed: int):
    """(fitted estimator or None, verdict): a utility refusal is recorded and bypassed, any other raises."""
    verdicts: list[str] = []
    enforce = regime_module.enforce

    def record(reg, *, stacklevel=3):
        if reg.status == "refuse" and not reg.utility_only:
            verdicts.append("refuse (run time/feasibility)")
            return enforce(reg, stacklevel=stacklevel)
        verdicts.append("refuse (utility)" if reg.status == "refuse" else reg.status)
        return reg
    cls = dpcore.ALGORITHMS[key]
    kw = dict(epsilon=eps, bounds=(-1.0, 1.0), random_state=seed)
    if cls.needs_delta:
        kw["delta"] = 1e-6
    regime_module.enforce = record
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(k, **kw).fit(X)
    except Exception as exc:          # noqa: BLE001 - a refusal, a timeout or a failure is no answer
        est = None
        if not (verdicts and verdicts[-1].startswith("refuse (run")):
            verdicts.append(f"no answer: {type(exc).__name__}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        regime_module.enforce = enforce
    return est, (verdicts[-1] if verdicts else "ok")


def median_ratio(key: str, X: np.ndarray, k: int, eps: float, scale: float, seeds: int):
    """(median cost ratio over seeds, the first fit's verdict); no answer counts as inf."""
    out = [fit(key, X, k, eps, s) for s in range(seeds)]
    costs = [inertia(X, e.cluster_centers_) * scale if e is not None else np.inf for e, _ in out]
    return float(np.median(costs)), out[0][1]


def stored_medians(path: Path = RESULTS):
    """The medians a run of this script stored: one ``(name, epsilon, trivial, {key: median})`` per line.

    A median is inf where most seeds gave no answer (refused for run time or feasibility, timeout).
    """
    import re
    shape = shapes()
    for line in path.read_text().splitlines():
        name = max((s for s in shape if line.startswith(s)), key=len, default=None)    # "... c=2 equal" over "... c=2"
        if name is None:
            continue
        eps, triv, rest = line[len(name):].split(None, 2)
        yield name, float(eps), float(triv), {key: float(r) for key, r in re.findall(r"(\w+) (\S+?)\*? \(", rest)}


def recheck(path: Path = RESULTS) -> tuple[int, list, list]:
    """The verdicts the current model gives the stored held-out medians, from public inputs only.

    Returns ``(cells judged, silent, wrong)``: ``silent`` the (data, eps, key, median, trivial) whose
    median exceeds the trivial answer's with an ``ok`` verdict, ``wrong`` those refused for utility
    whose median is under it.  Cells without a finite median (refused for run time or feasibility,
    no answer) are not judged.  The verdict is :func:`~dpcore.algorithms.registry.assess`'s status,
    read from :func:`~dpcore.advisor.verdict.calibrated_verdict` (assess adds only the pick's words, a
    plan per cell).
    """
    from dpcore.advisor.verdict import calibrated_verdict
    from dpcore.algorithms.regime import public_inputs

    def assess(key, *, n, d, k, epsilon, delta):
        n, d, k, epsilon = public_inputs(n, d, k, epsilon)
        rule = dpcore.ALGORITHMS[key].regime(n=n, d=d, k=k, epsilon=epsilon, delta=delta)
        return calibrated_verdict(rule, n=n, d=d, k=k, epsilon=epsilon, delta=delta)
    shape = shapes()
    cells, silent, wrong = 0, [], []
    for name, eps, triv, medians in stored_medians(path):
        n, d, k = shape[name]
        for key, ratio in medians.items():
            if not np.isfinite(ratio):
                continue
            cls = dpcore.ALGORITHMS[key]
            v = assess(key, n=n, d=d, k=k, epsilon=eps, delta=1e-6 if cls.needs_delta else 0.0)
            cells += 1
            cell = (name, eps, key, ratio, triv)
            if v.status == "ok" and ratio > triv:
                silent.append(cell)
            elif v.status == "refuse" and v.utility_only and ratio < triv:
                wrong.append(cell)
    return cells, silent, wrong


def oracle(path: Path = RESULTS) -> list[tuple]:
    """What knowing the clusters' separation and sizes would buy the advisor, on the stored medians.

    Separation and sizes are not public: the advisor's single pick hedges over
    :data:`~dpcore.advisor.model.HYPOTHESES`, and ``auto`` splits the budget to find out.  A
    private estimate of them would at best tell the true hypothesis (the nearest calibrated
    separation in log scale, the smaller of two equally near, and the true size law:
    :func:`benchmarks.advisor_auto.truth`).  Here
    the model's first key under that hypothesis (``predict(..., separation=, sizes=)`` over the keys
    allowed to run) is set beside the advisor's single pick from public inputs
    (``first_pick(..., auto=False)``), each measured by its stored median over the best median
    (trivial answer included).  Medians of keys that gave no answer are inf.

    Returns
    -------
    list of ``(name, epsilon, hypothesis, oracle_key, oracle_factor, pick, pick_factor)``.
    """

    from dpcore.advisor.model import DELTA, SEPARATIONS, TRIVIAL, predict
    from dpcore.advisor.plan import candidate_filter, first_pick, runnable
    shape, out = shapes(), []
    for name, eps, triv, medians in stored_medians(path):
        n, d, k = shape[name]
        c, sizes = truth(name)
        h = (min(SEPARATIONS, key=lambda s: abs(math.log(s / c))), sizes)
        best = min(triv, *medians.values())
        allowed = [key for key in medians if runnable(key, n, d, k, eps, DELTA)]
        ranked = [p.key for p in predict(n, d, k, eps, keys=allowed, separation=h[0], sizes=h[1]) if p.available]
        pick, _ = first_pick(n, d, k, eps, auto=False, allowed=candidate_filter(n, d, k, DELTA))
        pick_median = triv if pick == TRIVIAL else medians.get(pick, math.inf)
        out.append((name, eps, h, ranked[0], medians[ranked[0]] / best, pick, pick_median / best))
    return out


def oracle_report(rows: list) -> None:
    print(f"{'data':<44} {'eps':>4}  {'true hypothesis':<13} {'its first key':<16} {'x best':>7}  "
          f"{'public pick':<16} {'x best':>7}")
    for name, eps, (c, sizes), key, f, pick, g in rows:
        print(f"{name:<44} {eps:>4g}  c={c:<4g}{sizes:<8} {key:<16} {f:>7.3g}  {pick:<16} {g:>7.3g}")
    for label, col in (("first key under the true hypothesis", 4), ("public single pick", 6)):
        f = np.array([r[col] for r in rows])
        print(f"{label}: within 1.25x of the best in {(f <= 1.25).sum()} of {len(f)} cells, within 2x in "
              f"{(f <= 2).sum()}")


def first_picks(path: Path = RESULTS, auto_path: Path | None = None) -> list[tuple]:
    """The advisor's first pick (:func:`dpcore.advisor.plan.advisor_plan`) on each stored cell, measured
    by its stored median over the best (``auto``'s median from ``advisor_auto.txt``'s first table).

    Returns
    -------
    list of ``(name, epsilon, pick, factor)``.
    """
    from benchmarks.advisor_auto import shapes, stored_auto
    from dpcore.advisor.model import DELTA, TRIVIAL
    from dpcore.advisor.plan import advisor_plan
    autos = stored_auto(auto_path or Path(__file__).with_name("results") / "advisor_auto.txt")
    shape, out = shapes(), []
    for name, eps, triv, medians in stored_medians(path):
        n, d, k = shape[name]
        pick, _ = advisor_plan(n, d, k, eps, DELTA)
        best = min([v for v in medians.values() if math.isfinite(v)] + [triv])
        r = autos[name, eps] if pick == "auto" else triv if pick == TRIVIAL else medians.get(pick, math.inf)
        out.append((name, eps, pick, r / best))
    return out


def picks_report(rows: list) -> None:
    for name, eps, pick, f in rows:
        print(f"{name:<44} {eps:>4g}  {pick:<16} {f:>7.3g}")
    f = np.array([r[3] for r in rows])
    print(f"first pick within 1.25x of the best in {(f <= 1.25).sum()} of {len(f)} cells, within 2x in "
          f"{(f <= 2).sum()}, worst {f.max():.3g}")


def report(silent: list, wrong: list) -> None:
    print(f"silent garbage (median above the trivial answer's, no warning): {len(silent)}")
    for s in silent:
        print(f"  {s[0]} eps {s[1]:g}: {s[2]} {s[3]:.3g} vs trivial {s[4]:.3g}")
    print(f"refused for utility where the median would have been under the trivial answer: {len(wrong)}")
    for s in wrong:
        print(f"  {s[0]} eps {s[1]:g}: {s[2]} {s[3]:.3g} vs trivial {s[4]:.3g}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="run only the data sets whose name contains this text")
    ap.add_argument("--verdicts", action="store_true",
                    help="recompute the verdicts under the current model against the stored medians (no fits)")
    ap.add_argument("--oracle", action="store_true",
                    help="the model's first key had it known the separation and sizes, beside its public single pick "
                         "(stored medians, no fits)")
    ap.add_argument("--picks", action="store_true",
                    help="the advisor's first pick on the stored medians (auto's from advisor_auto.txt; no fits)")
    args = ap.parse_args(argv)
    if args.picks:
        return picks_report(first_picks())
    if args.oracle:
        return oracle_report(oracle())
    if args.verdicts:
        cells, silent, wrong = recheck()
        print(f"{cells} (key, data, eps) cells with a finite median in {RESULTS.name}, judged by the current model")
        return report(silent, wrong)
    from sklearn.cluster import KMeans
    silent, wrong, refused_run, cells = [], [], 0, 0
    print(f"{'data':<40} {'eps':>4} {'trivial':>8}  key: median ratio (verdict), worse than trivial marked *")
    for name, X, k, (lo, hi) in cases(args.quick):
        if args.only not in name:
            continue
        ref = KMeans(k, n_init=3, random_state=0).fit(X).inertia_
        Xn = np.clip((X - lo) / (hi - lo) * 2 - 1, -1.0, 1.0)
        scale = ((hi - lo) / 2) ** 2 / ref
        for eps in (0.5, 1.0, 2.0):
            triv, _ = median_ratio("zcdp_lloyd", Xn, 1, eps, scale, args.seeds)
            parts = []
            for key in calibrated_keys():
                r, verdict = median_ratio(key, Xn, k, eps, scale, args.seeds)
                cells += 1
                worse = r > triv
                if verdict.startswith(("refuse (run", "no answer")) or not np.isfinite(r):
                    refused_run += 1                     # most seeds gave no answer: nothing to judge
                elif verdict == "ok" and worse:
                    silent.append((name, eps, key, r, triv))
                elif verdict == "refuse (utility)" and not worse:
                    wrong.append((name, eps, key, r, triv))
                parts.append(f"{key} {r:.3g}{'*' if worse else ''} ({verdict})")
            print(f"{name:<40} {eps:>4g} {triv:>8.3g}  " + "; ".join(parts), flush=True)
    print(f"\n{cells} (key, data, eps) cells; refused for run time or feasibility, or no answer in 30 s "
          f"for most seeds: {refused_run}")
    report(silent, wrong)


if __name__ == "__main__":
    main()
