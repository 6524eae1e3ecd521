"""The budget ledger as tables: runs of like steps grouped, and the one table every view of a ledger shows (the
pages' ledger, the gallery's, the sanitized database's panel).  Split from :mod:`ui.charts` (figures); no Streamlit."""
from __future__ import annotations

import math
import re

import pandas as pd

from dpcore.formatting import fmt_delta, fmt_epsilon

#: A ledger step numbered within a run of like steps: "round 7: SMALL-BALL", "iteration 3: cluster sums".
_NUMBERED_STEP = re.compile(r"^(?P<head>\D*?)(?P<n>\d+)(?P<tail>\D.*|)$")
#: Runs of at least this many like steps are shown as one row (the coreset's 30 rounds took 30 rows, issue 66 notes).
GROUP_STEPS = 3


def ledger_rows(records, *, grouped: bool = False) -> pd.DataFrame:
    """The ledger's entries as numbers, one row each or, with ``grouped``, runs of like steps as one row.

    Parameters
    ----------
    records : iterable of dict (``name``, ``mechanism``, ``sensitivity``, ``epsilon``, ``delta``): a
        :class:`~dpcore.privacy.accountant.BudgetLedger`'s ``to_records()`` or a release's ``ledger``.
    grouped : bool
        At least :data:`GROUP_STEPS` consecutive entries, or blocks of up to four entries, numbered in order with the
        same words around the number, mechanism, sensitivity, ε and δ (PRIVATE-K-MEAN's rounds; DPLloyd's
        iterations, each a block of cluster counts and cluster sums) become one row per entry of the block, named
        "round 1–30: SMALL-BALL (30 steps of ε = 0.0653)", whose ε and δ are the run's sums: the rows still add up
        to the ledger's total.  Public: the entries are fixed by the algorithm and its public inputs.

    Returns
    -------
    DataFrame with columns ``step``, ``mechanism``, ``sensitivity``, ``epsilon``, ``delta`` (floats), ``steps``
    (entries in the row).
    """
    df = pd.DataFrame(list(records), columns=["name", "mechanism", "sensitivity", "epsilon", "delta"])
    rows = [dict(step=r.name, mechanism=r.mechanism, sensitivity=r.sensitivity, epsilon=float(r.epsilon),
                 delta=float(r.delta), steps=1) for r in df.itertuples(index=False)]
    if not grouped:
        return pd.DataFrame(rows, columns=["step", "mechanism", "sensitivity", "epsilon", "delta", "steps"])

    def key(row):
        """(what must be equal within a run, the step's number), or None for a step without a number."""
        m = _NUMBERED_STEP.match(str(row["step"]))
        if m is None:
            return None
        # ε and δ to 9 significant digits: a budget split's last share differs from the others in its last bits.
        return (m["head"], m["tail"], str(row["mechanism"]), repr(row["sensitivity"]), f"{row['epsilon']:.9g}",
                f"{row['delta']:.9g}"), int(m["n"])

    keys = [key(r) for r in rows]

    def blocks(i: int, period: int) -> int:
        """How many blocks of ``period`` like steps repeat from row ``i``, numbered n, n + 1, ... block by block
        (DPLloyd's iterations are a block of two: cluster counts, then cluster sums)."""
        first = keys[i:i + period]
        if len(first) < period or any(k is None or k[1] != first[0][1] for k in first):
            return 0
        b = 1
        while all(i + b * period + q < len(rows) and keys[i + b * period + q] == (first[q][0], first[q][1] + b)
                  for q in range(period)):
            b += 1
        return b

    out, i = [], 0
    while i < len(rows):
        best = max(((blocks(i, p), p) for p in range(1, 5)), key=lambda bp: (bp[0] * bp[1], -bp[1]))
        b, period = best
        if b < GROUP_STEPS:
            out.append(rows[i])
            i += 1
            continue
        for q in range(period):
            run = rows[i + q:i + b * period:period]
            (head, tail, *_), n = keys[i + q]
            each = fmt_epsilon(run[0]["epsilon"])
            out.append(dict(run[0], step=f"{head}{n}–{n + b - 1}{tail} ({b} steps of ε = {each})",
                            epsilon=math.fsum(r["epsilon"] for r in run), delta=math.fsum(r["delta"] for r in run),
                            steps=b))
        i += b * period
    return pd.DataFrame(out, columns=["step", "mechanism", "sensitivity", "epsilon", "delta", "steps"])


def ledger_table(records, *, grouped: bool = False, total: float | None = None) -> pd.DataFrame:
    """The budget ledger as a table of words: step, ε, share of the grant (with ``total``), δ (when a step has
    one), mechanism, sensitivity.  The one table every view of a ledger shows (the pages' ledger, the gallery's,
    the sanitized database's panel), so one step reads the same everywhere.

    Parameters
    ----------
    records : iterable of dict, a ledger's ``to_records()`` or a release's ``ledger`` (:func:`ledger_rows`)
    grouped : bool, runs of like steps as one row (:func:`ledger_rows`)
    total : float or None, the ε granted: adds the ``share`` column (each row's part of it; empty for 0)

    ε and δ come from the one formatter (:func:`dpcore.formatting.fmt_epsilon`, :func:`~dpcore.formatting.fmt_delta`)
    with a minus sign (U+2212) for a hyphen: a table cell may wrap at a hyphen ("1e-" over "6").  ε beside the
    step's name: in a half-width column the mechanisms pushed it off-screen (issue 65).  Public: the entries are
    fixed by the algorithm and its public inputs.
    """
    df = ledger_rows(records, grouped=grouped)
    out = pd.DataFrame({"step": df["step"], "ε": df["epsilon"].map(lambda e: _minus(fmt_epsilon(e)))})
    if total is not None:
        out["share"] = (df["epsilon"] / total).map(lambda s: f"{s:.0%}") if total else ""
    if (df["delta"] > 0).any():
        out["δ"] = df["delta"].map(lambda d: _minus(fmt_delta(d)))
    out["mechanism"] = df["mechanism"]
    out["sensitivity"] = df["sensitivity"].map(lambda s: "" if s is None or pd.isna(s) else f"{s:.4g}")
    return out


def _minus(text: str) -> str:
    return text.replace("-", "\u2212")


def ledger_frame(ledger, *, grouped: bool = False) -> pd.DataFrame:
    """A :class:`~dpcore.privacy.accountant.BudgetLedger` as :func:`ledger_table`, with each row's share of the ε
    it was granted."""
    return ledger_table(ledger.to_records(), grouped=grouped, total=ledger.epsilon or 0.0)
