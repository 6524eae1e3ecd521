"""How often does ``auto``'s size read rule out a size law, and how often wrongly?  (issue 25, stop 54)

``auto``'s read (:func:`dpcore.advisor.separation_read.read_separation`) spends
:data:`~dpcore.advisor.separation_read.SIZE_SHARE` of its budget on a second, finer histogram (about
:data:`~dpcore.advisor.separation_read.SIZES_CELLS` k cells) and rules a size law out only when all its
hypotheses lie more than :data:`~dpcore.advisor.separation_read.SIZES_MARGIN` typical spreads further
from the two size statistics than the nearest hypothesis (:func:`~dpcore.advisor.separation_read.kept_laws`).
Over test mixtures of every hypothesis (n 10^3-10^5, d 2-20, k 5-64; seeds apart from the
references'), this prints how many laws are kept on average, how often the true law of far-apart
mixtures (c >= 8, where the sizes decide between DPM and the rest) is ruled out, and how often equal
sizes are ruled out where the sizes are not equal (what lets the plan leave DPM out).  Public
simulation only (13 s a budget on 2 cores).

    python -m benchmarks.advisor_sizes_read [--epsilon 0.0125 0.05] [--margin M]

Results: ``benchmarks/results/advisor_sizes_read.txt``.
"""
from __future__ import annotations

import argparse

from dpcore.advisor import separation_read as S
from dpcore.advisor.model import HYPOTHESES


def drop_rates(epsilon: float, ns=(1_000, 10_000, 100_000)) -> dict:
    """The read's size verdicts on test mixtures at ``epsilon`` per row (the size histogram's budget).

    Returns
    -------
    dict: ``tests``, ``laws_kept`` (mean of 3), ``far`` (draws with c >= 8), ``true_law_dropped``,
    ``equal_dropped`` (of the far-apart equal-sized draws), ``equal_ruled_out_where_not``.
    """
    wrong = drop_equal = not_equal = far = equal_dropped = equal = kept_total = tests = 0
    for n in ns:
        for d in (2, 5, 10, 20):
            for k in (5, 10, 30, 64):
                n_ref, eps_ref = S._scaled(n, epsilon)
                for h in HYPOTHESES:
                    for r in range(2):
                        laws = S.kept_laws(S._size_simulated(n_ref, d, k, eps_ref, h, r, 9000), n, d, k, epsilon)
                        kept_total += len(laws)
                        tests += 1
                        if h[0] < 8:
                            continue
                        far += 1
                        wrong += h[1] not in laws
                        if h[1] == "equal":
                            equal += 1
                            equal_dropped += "equal" not in laws
                        else:
                            not_equal += 1
                            drop_equal += "equal" not in laws
    return dict(tests=tests, laws_kept=kept_total / tests, far=far, true_law_dropped=wrong / far,
                equal_dropped=equal_dropped / equal, equal_ruled_out_where_not=drop_equal / not_equal)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[0.0125, 0.05], help="the size read's budget")
    ap.add_argument("--margin", type=float, default=None, help=f"the margin in spreads ({S.SIZES_MARGIN:g})")
    args = ap.parse_args(argv)
    if args.margin is not None:
        S.SIZES_MARGIN = args.margin
    print(f"# size read: {S.SIZES_CELLS} cells per cluster, margin {S.SIZES_MARGIN:g} spreads, "
          f"n 10^3-10^5, d 2-20, k 5-64")
    for eps in args.epsilon:
        r = drop_rates(eps)
        print(f"epsilon {eps:g}: laws kept {r['laws_kept']:.2f} of 3; far apart (c >= 8, {r['far']} draws): "
              f"true law ruled out {r['true_law_dropped']:.1%} (equal {r['equal_dropped']:.1%}), equal ruled "
              f"out where not equal {r['equal_ruled_out_where_not']:.1%}", flush=True)


if __name__ == "__main__":
    main()
