"""The advisor beside the algorithm picker (issue 25): the calibrated ranking for public inputs only."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

import dpcore
from dpcore import evaluation as E
from dpcore.advisor.model import TRIVIAL, WARN_SHARE, calibrated_keys, trivial_factor
from dpcore.advisor.verdict import near_trivial_sentence

from .data_picker import unit_params

#: The public size the advice assumes when the person gives none (the true size of private data is private).
DEFAULT_PUBLIC_N = 10_000

#: Rows of the ranking shown (the rest is in the docs' calibration table).
SHOWN = 6


def public_size(ds, where) -> tuple[int, str]:
    """The size the advice uses: a published data set's row count, else a number the person enters.

    The true size of private data is itself private, so it is never read for the advice: the person
    gives a public estimate (a published total, or their own guess), defaulting to
    :data:`DEFAULT_PUBLIC_N`.
    """
    if getattr(ds, "public", False) and ds.X.shape[0] > 0:
        return int(ds.X.shape[0]), "the published size of this public data set"
    n = where.number_input("Public size for the advice (rows)", 100, 10**10, DEFAULT_PUBLIC_N, step=10_000,
                           key="advice_n", help="A published total or your own estimate: the true size of "
                                                "private data is private, so the advice never reads it.")
    return int(n), "the public size you entered"


def short_name(key: str) -> str:
    """An algorithm's display name without its parenthesised gloss ("DPM (separation)" -> "DPM"): the
    sidebar is narrow."""
    return E.advice_name(key).split(" (")[0]


def ranking_frame(advice) -> pd.DataFrame:
    """The advisor's ranking as a table: algorithm, predicted cost ratio and its range, the trivial line."""
    rows = [{"algorithm": short_name(p.key), "key": p.key, "predicted × non-private": p.ratio,
             "range": f"{_ratio(p.low)}–{_ratio(p.high)}"} for p in advice.ranking[:SHOWN]]
    t = advice.trivial
    rows.append({"algorithm": "— DP mean (trivial) —", "key": TRIVIAL,
                 "predicted × non-private": t.ratio, "range": f"{_ratio(t.low)}–{_ratio(t.high)}"})
    return pd.DataFrame(rows).sort_values("predicted × non-private", kind="stable").reset_index(drop=True)


def _ratio(v: float) -> str:
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:,.0f}"


def ranking_markdown(advice, chosen: str) -> str:
    """The ranking as a small Markdown table (the chosen algorithm in bold), for the sidebar: each range
    kept on one line (the sidebar is narrow)."""
    lines = ["| algorithm | × non-private (range) |", "|---|---:|"]
    for r in ranking_frame(advice).itertuples(index=False):
        name = f"**{r.algorithm}**" if r.key == chosen else r.algorithm
        lines.append(f"| {name} | {_ratio(r[2])}<br><small style='white-space:nowrap'>{r.range}</small> |")
    return "\n".join(lines)


def pick_text(adv) -> str:
    """The advisor's first pick in words: an algorithm, the DP mean, or Auto with its candidates."""
    if adv.best == TRIVIAL:
        return "publish one centre at a DP mean"
    if adv.best == "auto":
        runs = " and ".join(f"{short_name(q)} at ε = {e:.3g}" for q, e in zip(adv.plan.keys, adv.plan.budgets()))
        read = ("a private read of how separated the clusters are, then (unless the read changes the plan) "
                if E.auto_separation_share() > 0 else "")
        chosen = ", one chosen privately" if len(adv.plan.keys) > 1 else ""
        return f"Auto: {read}{runs}{chosen} (the ledger shows every share)"
    return E.advice_name(adv.best)


def advisor_panel(ds, algorithm: str, k: int, eps: float, *, sidebar: bool = True) -> None:
    """An expander with the advisor's ranking for the chosen k and ε, and where the chosen algorithm stands.

    Public inputs only: a public size (:func:`public_size`), the number of columns, k, ε and the privacy
    unit's L.  Nothing is spent and nothing of the data is read.
    """
    where = st.sidebar if sidebar else st
    if dpcore.ALGORITHMS[algorithm].family != "centroids":
        return
    # Computed when opened (issue 56, speed): the ranking took ~0.9 s of every first render on a cold server,
    # for a box that opens closed.
    box = where.expander("Advisor: which algorithm here?", key="advisor_open", on_change="rerun")
    if not box.open:
        return
    with box:
        n, said = public_size(ds, st)
        L = unit_params(ds).get("max_contributions") or 1
        with st.spinner("Running… the advisor's ranking"):
            adv = E.advise(n, len(ds.columns), k, eps, delta=1e-6, max_contributions=L)
        st.markdown(ranking_markdown(adv, algorithm), unsafe_allow_html=True)   # our own table: names and figures
        st.caption(f"First pick for about {n:,} rows ({said}), d = {len(ds.columns)}, k = {k}, ε = {eps:g}"
                   + (f" per person (L = {L}: each sensitivity is L rows')" if L > 1 else "")
                   + f": **{pick_text(adv)}**. Cost ratio to non-private k-means (1 = as good), measured on "
                   "Gaussian mixtures and real sets like these; how separated your clusters are, and whether "
                   "their sizes are equal, is not public, hence the range. Where no single algorithm holds up "
                   "at every separation calibrated (overlapping, c = 1, to far apart, c = 16) with equal or "
                   "unequal sizes, the pick is Auto.")
        own = next((p for p in adv.ranking if p.key == algorithm), None)
        if algorithm != "auto" and own is not None and math.isfinite(own.ratio):
            factor, where = trivial_factor(algorithm, n, len(ds.columns), k, eps / L)    # as the advice on the fit
            if factor > WARN_SHARE:
                st.warning(f"{E.advice_name(algorithm)}: {near_trivial_sentence(factor, *where)}")
        elif algorithm != "auto" and algorithm not in calibrated_keys():
            st.caption(f"{E.advice_name(algorithm)} is not calibrated: the advisor has no measurements of it, so it "
                       "is not in the ranking.")


def explain_markdown() -> str:
    """What the advisor and Auto read and spend, in plain words (the Explain page's section, from its model)."""
    from .models.explain import advisor_markdown
    return advisor_markdown(E.auto_separation_share())
