"""Empirical privacy audit at benchmark size: every mechanism and every registry estimator.

Runs the audit of ``tests/audit/dp_audit.py`` (Ding et al. 2018: two neighbouring
datasets, many independent runs, an output event chosen on one half of the runs and
tested with Clopper-Pearson bounds on the other) with the cases' full sample sizes
(``--scale`` multiplies them), including the estimators that are too slow for CI, and
prints one row per case: the claimed epsilon, the best event found, its frequencies on
D and D', the certified lower bound on the true epsilon, and the verdict.  Keys that are
not audited are listed with the reason.

Usage::

    python benchmarks/privacy_audit.py                 # everything (tens of minutes)
    python benchmarks/privacy_audit.py --only mechanisms --scale 0.2
    python benchmarks/privacy_audit.py --only dplloyd eugkm --csv audit.csv

Exit status 1 if any case shows a violation.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dpcore  # noqa: E402
from tests.audit.dp_audit import (  # noqa: E402
    coverage,
    estimator_cases,
    mechanism_cases,
    run_estimator_case,
    run_mechanism_case,
)


def _row(kind, report):
    w = report.worst
    return {
        "kind": kind,
        "case": report.name,
        "epsilon": report.epsilon,
        "delta": report.delta,
        "runs/side": report.n_runs[0],
        "event": str(w.event).split("  [")[0] if w.event else "-",
        "P(A)": w.p_a,
        "P(B)": w.p_b,
        "eps_lb": report.epsilon_lb,
        "verdict": "pass" if report.passed else "VIOLATION",
        "seconds": report.seconds,
    }


def _print_table(rows):
    cols = ["kind", "case", "epsilon", "delta", "runs/side", "eps_lb", "verdict", "seconds", "P(A)", "P(B)", "event"]
    fmt = {"epsilon": "{:g}", "delta": "{:g}", "eps_lb": "{:.3f}", "seconds": "{:.1f}", "P(A)": "{:.4f}",
           "P(B)": "{:.4f}"}
    cells = [[fmt.get(c, "{}").format(r[c]) for c in cols] for r in rows]
    width = [max(len(c), *(len(x[i]) for x in cells)) if cells else len(c) for i, c in enumerate(cols)]
    width[cols.index("case")] = min(width[cols.index("case")], 60)
    width[cols.index("event")] = min(width[cols.index("event")], 70)
    print("  ".join(c.ljust(w) for c, w in zip(cols, width)))
    for x in cells:
        print("  ".join(v[:w].ljust(w) for v, w in zip(x, width)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None,
                    help="'mechanisms' and/or registry keys (default: everything)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every case's number of runs")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--csv", type=Path, default=None, help="also write the table as CSV")
    ap.add_argument("--verbose", action="store_true", help="print each full report")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    want = set(args.only) if args.only else None
    rows, notes = [], []
    t0 = time.perf_counter()

    if want is None or "mechanisms" in want:
        for case in mechanism_cases(epsilon=args.epsilon):
            rep = run_mechanism_case(case, n_runs=max(int(case.n_runs * args.scale), 200), seed=args.seed,
                                     alpha=args.alpha)
            rows.append(_row("mechanism", rep))
            print(rep if args.verbose else f"  {rep.name}: eps_lb={rep.epsilon_lb:.3f} "
                  f"{'pass' if rep.passed else 'VIOLATION'} ({rep.seconds:.1f}s)", flush=True)

    cov = coverage()
    for key in dpcore.ALGORITHMS:
        if want is not None and key not in want:
            continue
        if not cov[key].startswith(("audited", "benchmark")):
            notes.append(f"{key}: {cov[key]}")
            continue
        for case in estimator_cases(key, epsilon=args.epsilon):
            try:
                rep = run_estimator_case(case, n_runs=max(int(case.n_runs * args.scale), 100), seed=args.seed,
                                         alpha=args.alpha)
            except Exception as exc:  # keep going: one broken family must not hide the others
                notes.append(f"{key}: '{case.name}' raised {type(exc).__name__}: {exc}")
                continue
            rows.append(_row("estimator", rep))
            print(rep if args.verbose else f"  {rep.name}: eps_lb={rep.epsilon_lb:.3f} "
                  f"{'pass' if rep.passed else 'VIOLATION'} ({rep.seconds:.1f}s)", flush=True)

    print()
    _print_table(rows)
    if notes:
        print("\nnot audited:")
        for n in notes:
            print("  " + n)
    print(f"\n{len(rows)} cases in {time.perf_counter() - t0:.0f} s; alpha={args.alpha:g} per case; "
          f"eps_lb = certified lower bound on the true epsilon (a violation when it exceeds the claim).")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["case"])
            w.writeheader()
            w.writerows(rows)
        print(f"wrote {args.csv}")
    return 1 if any(r["verdict"] != "pass" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
