"""The dataset's account in the release store: what was drawn, what it cost, downloads, the ledger."""
from __future__ import annotations

import json
import re

import pandas as pd
import streamlit as st

from dpcore.explain import DEPLOYMENTS, running_total, unit_words
from dpcore.formatting import fmt_delta, fmt_epsilon
from dpcore.glossary import help_for
from dpcore.release import protected_unit
from dpcore.store.keys import former_digests

from .figures import ledger_frame, reference_strip_figure
from .identity import may, who
from .models.shared import page_words, person_words, totals
from .not_private import csv_bytes
from .releases import person_level_everywhere, publishable, recorded_person_unit, release_store


def publish_buttons(fit, ds, *, stem: str, where=None) -> None:
    """Downloads of a recorded release: its private centres (CSV) and synopsis (JSON).

    A download is a publication: only a release the store has accepted
    (``fit.release_id`` set) is offered, and the files hold exactly what was
    recorded.  Data without public bounds gets a sentence and no download.
    """
    where = where or st
    if getattr(fit, "preview", False):
        where.info("Nothing to publish yet: this is a preview, not a recorded draw. Press “Draw” to record one; a "
                   "recorded draw can then be published.")
        return
    if getattr(fit, "release_id", None) is None:
        where.info("Nothing to publish: without public bounds this result is not private. Enter bounds known in "
                   "advance in the sidebar.")
        return
    rel = fit.release
    cols = rel["dataset"]["columns"]
    where.download_button("Private centres (CSV)", csv_bytes(pd.DataFrame(rel["centroids"], columns=cols)),
                          file_name=f"{stem}_centres.csv", mime="text/csv", key=f"dl_centres_{fit.release_id}")
    if rel["synopsis"] is not None:
        where.download_button("Private synopsis (JSON)", json.dumps(rel["synopsis"]),
                              file_name=f"{stem}_synopsis.json", mime="application/json",
                              key=f"dl_synopsis_{fit.release_id}")
    where.caption(f"Release #{fit.release_id}, already recorded in this dataset's account: downloading it costs "
                  "nothing more (it is the same output). The Release page has the full release (JSON, CSV, HTML).")


def account_caption(ds, *, fit=None, where=None, strip: bool = False) -> str | None:
    """Risk as a running total (issue 31): this draw's ε, the data's total so far and what is left, as odds.

    ``strip=True`` adds the reference strip: these values on a log-ε axis beside real deployments and
    their units (:data:`dpcore.explain.DEPLOYMENTS`), instead of unsourced level names.

    Returns the sentence (Markdown), for the HTML report; None for data without public bounds.
    """
    where = where or st
    if not publishable(ds):
        return None
    if getattr(fit, "preview", False):     # a preview is not in the account: the sentence is the total alone
        fit = None
    store = release_store()
    e, dl = store.spent(ds.name)
    cap = store.cap(ds.name)
    release_eps = float(fit.budget_.total()[0]) if fit is not None else None
    row = unit_words(None, getattr(ds, "kind", "points")).one
    # The total holds for a person only if every draw of this data protected whole persons.
    person_total = person_level_everywhere(ds)
    unit = (protected_unit(fit.release) if getattr(fit, "release", None) is not None else
            (recorded_person_unit(ds) if person_total else None) or row)
    total_unit = unit if person_total else row
    sentence = running_total(release_eps, e, cap[0] if cap else None, unit=unit, total_unit=total_unit,
                             group_caveat=not person_total)
    where.markdown(sentence)
    where.caption((f"δ spent so far: {fmt_delta(dl)}. " if dl else "") + "Every draw in this app (every page, "
                  "published or not) is recorded in the release store before it is shown; the Release page has the "
                  "history.")
    if strip:
        marks = {f"this release (per {unit})": release_eps, f"this data's total so far (per {total_unit})": e,
                 "the total set for this data": cap[0] if cap else None}
        reference_strip(marks, where=where)
    return sentence


def reference_strip(marks: dict, *, where=None) -> None:
    """The reference strip (:func:`ui.charts.reference_strip_figure`) with its caption and sources."""
    where = where or st
    # No toolbar: at 1280 px it sat over the legend (stop 62), and a strip of marks needs no zoom.
    where.plotly_chart(reference_strip_figure(marks, DEPLOYMENTS), width="stretch", key="reference_strip",
                       config={"displayModeBar": False})
    where.caption("Grey diamonds: published deployments of differential privacy with their documented ε and privacy "
                  "unit (from Desfontaines' list of real-world uses; the docs' “The ε scale” cites each source). "
                  "Units differ: ε per user-day or per action is not ε per person over a whole data set.")


#: Display names of :meth:`dpcore.store.ReleaseStore.history`'s columns.
HISTORY_COLUMNS = {"id": "release", "time": "time (UTC)", "who": "drawn by", "page": "page", "algorithm": "algorithm",
                   "epsilon": "ε", "delta": "δ", "total_epsilon": "ε total", "total_delta": "δ total",
                   "cap_epsilon": "ε total set", "cap_delta": "δ total set", "simulation": "simulation"}


def account_panel(ds, *, fingerprint: str | None = None, where=None) -> None:
    """The dataset's account from the release store: what was published, the total set, and the history.

    Setting a total below what is already spent is refused by the store with
    a sentence; a total can be raised or lowered down to what is spent, never
    below (what is published cannot be taken back).  ``fingerprint`` is the data picker's: a total set
    before the first draw registers the data with it, so the account is keyed by the data's content
    from the start and the same people uploaded again reach it (issue 68).
    """
    where = where or st
    store = release_store()
    name = ds.name
    where.subheader("Budget account for this data")
    # In plain words, not the term "sequential composition" (issue 65, point 9); the glossary has the term.
    where.warning("Every release of the same data adds up: two releases at ε = 1 protect each person only as much "
                  "as one at ε = 2. Every private result shown in this app (Explorer, Compare, Release, ...) is "
                  "recorded here before it is shown.", icon="⚠️")
    acc = totals(store, name, title=getattr(ds, "title", None))
    cap = None if acc.cap_epsilon is None else (acc.cap_epsilon, acc.cap_delta)
    c1, c2 = where.columns(2)
    # A short label: in the Release page's narrow column "(every draw)" was cut to "(every d…" (issue 56).
    c1.metric("ε spent so far", fmt_epsilon(acc.spent_epsilon), help="Every draw counts, published or not.")
    if acc.spent_delta:
        c1.caption(f"δ spent so far: {fmt_delta(acc.spent_delta)}")
    if cap:
        c2.metric("ε left", fmt_epsilon(acc.left_epsilon))
        c2.caption(f"of a total of ε = {fmt_epsilon(acc.cap_epsilon)}")   # a caption: a delta arrow reads "went up"
    else:
        c2.metric("Total ε", "none set")
    if may("cap"):
        _cap_form(store, ds, fingerprint, cap, where)
    else:
        where.caption("Only the data owner can set or change this total (the store refuses anyone else).")
    hist = store.history(name)
    if hist:
        frame = pd.DataFrame(hist)
        if "simulation" in frame and not frame["simulation"].any():
            frame = frame.drop(columns="simulation")
        if "delta" in frame and not frame["delta"].any():   # pure ε-DP releases only: no δ columns
            frame = frame.drop(columns=[c for c in ("delta", "total_delta", "cap_delta") if c in frame])
        if "time" in frame:
            frame["time"] = pd.to_datetime(frame["time"], utc=True).dt.strftime("%Y-%m-%d %H:%M:%S")
        frame = history_table(frame)
        where.markdown(f"**History** ({len(frame)} release(s) recorded on *{ds.title}*)")
        # The budget first: in the Release page's narrow column the ε columns were off to the right (issue 56).
        first = [HISTORY_COLUMNS[c] for c in ("id", "epsilon", "total_epsilon", "cap_epsilon", "delta", "total_delta",
                                              "cap_delta", "algorithm", "who", "page")]
        order = [c for c in first if c in frame] + [c for c in frame if c not in first]
        where.dataframe(frame, hide_index=True, width="stretch", key="history", column_order=order,
                        column_config={c: st.column_config.Column(width="small") for c in first[:7] if c in frame})
    else:
        where.caption("No release of this data has been recorded yet.")
    caps = store.cap_history(name)
    if caps:
        frame = pd.DataFrame(caps)
        frame["time"] = pd.to_datetime(frame["time"], utc=True).dt.strftime("%Y-%m-%d %H:%M:%S")
        frame["epsilon"] = frame["epsilon"].map(lambda v: "no total" if v is None or pd.isna(v) else fmt_epsilon(v))
        frame["delta"] = frame["delta"].map(lambda v: "" if v is None or pd.isna(v) else fmt_delta(v))
        frame["who"] = frame["who"].map(person_words)
        where.markdown(f"**Changes of the total** ({len(frame)}; who set each one)")
        where.dataframe(frame.rename(columns={"time": "time (UTC)", "who": "set by", "epsilon": "total ε",
                                              "delta": "total δ"}), hide_index=True, width="stretch", key="cap_changes")


def history_table(frame: pd.DataFrame) -> pd.DataFrame:
    """:meth:`~dpcore.store.ReleaseStore.history` rows as people read them: ε and δ in the one rounding, no
    ``None`` (an unset total reads "none"), the person and the page apart (issue 65: "root@vm (local mode) ·
    Explorer"), the columns named by :data:`HISTORY_COLUMNS`."""
    out = frame.copy()
    for c in ("epsilon", "total_epsilon", "cap_epsilon"):
        if c in out:
            out[c] = out[c].map(lambda v: "none" if v is None or pd.isna(v) else fmt_epsilon(v))
    for c in ("delta", "total_delta", "cap_delta"):
        if c in out:
            out[c] = out[c].map(lambda v: "none" if v is None or pd.isna(v) else fmt_delta(v))
    if "who" in out:
        out["page"] = out["who"].map(page_words)
        out["who"] = out["who"].map(person_words)
    return out.rename(columns=HISTORY_COLUMNS)


def _cap_form(store, ds, fingerprint: str | None, cap, where) -> None:
    """The owner's form for the dataset's total; the store refuses a total below what is spent, and non-owners."""
    name = ds.name
    with where.form("cap_form", border=True):
        st.markdown("**Total budget for this data** (kept in the store; releases beyond it are refused)")
        a, b = st.columns(2)
        # Starts at the current total, or empty: never at the amount spent (submitting that would freeze the account).
        total = a.number_input("Total ε", min_value=0.001, max_value=1000.0,
                               value=float(cap[0]) if cap else None, step=0.1, format="%.3f", key="cap_eps",
                               placeholder="none")   # a longer word was cut in the narrow column
        total_delta = b.number_input("Total δ", min_value=0.0, max_value=0.1, value=float(cap[1]) if cap else 1e-6,
                                     format="%.1e", key="cap_delta")
        set_it = st.form_submit_button("Set the total")
    if set_it and total is None:
        where.error("Enter a total ε first: the most this data's releases may spend together.")
    elif set_it:
        try:
            if fingerprint is not None:
                # Registered as a draw registers it (dpcore.store.draw): a total set before any draw would
                # otherwise make an account without a content key, which no other file of these people finds.
                store.register_dataset(name, fingerprint=fingerprint.split(":")[0], bounds=ds.bounds,
                                       description=getattr(ds, "title", ""), former=former_digests(ds.X, ds.units))
            store.set_cap(name, float(total), float(total_delta), who=who("Release page"))
        except (ValueError, PermissionError) as exc:   # below what is spent; or not the owner (the store checks)
            where.error(f"That total cannot be set: {exc}")
        else:
            st.rerun()


#: The columns of the ledger table beside a draw: what each step spent (with δ in place of the share
#: where a step spends δ).
LEDGER_COLUMNS = ["step", "ε", "share"]
LEDGER_COLUMNS_DELTA = ["step", "ε", "δ"]
#: Tighter than Streamlit's default table (a coreset's 30 rounds are 30 rows); numbers never wrap, names do.
_LEDGER_CSS = [{"selector": "td, th", "props": [("font-size", "0.8125rem"), ("padding", "0.25rem 0.375rem"),
                                                ("line-height", "1.3")]},
               {"selector": "td:not(:first-child), th:not(:first-child)", "props": [("white-space", "nowrap")]}]


def show_ledger(est, *, where=None) -> None:
    """The budget ledger: which step spent what, and the total against the grant."""
    where = where or st
    ledger = est.budget_
    eps, dl = ledger.total()
    spent = ("**Privacy budget of this draw, if recorded** (a preview is not in the account): it would spend"
             if getattr(est, "preview", False) else "**Privacy budget of this draw:** spent")
    where.markdown(f"{spent} ε = {fmt_epsilon(eps)} of {fmt_epsilon(ledger.epsilon)} granted to it"
                   + (f", δ = {fmt_delta(dl)} of {fmt_delta(ledger.delta)}" if ledger.delta else ""),
                   help=help_for("budget ledger", "sequential composition"))
    frame = ledger_frame(ledger, grouped=True)    # PRIVATE-K-MEAN's 30 rounds in one row, not 30
    # In a page's narrow right-hand column (~260 px at 1280×720) six columns needed a sideways scroll
    # (issue 56): the table keeps what each step spent, and the mechanisms and sensitivities, often the same for
    # every step, follow as a sentence that wraps; ε to 3 significant digits.
    # With a δ column the share gives way to it (the sentence above states ε of the grant).
    # A static table, not st.dataframe: a grid cell is one line, so zCDP-Lloyd's "step 1 (the mean): cluster
    # counts" was clipped at the column's edge; here a long step name wraps and the numbers keep their width.
    shown = frame[LEDGER_COLUMNS_DELTA if "δ" in frame else LEDGER_COLUMNS]
    where.table(shown.style.set_table_styles(_LEDGER_CSS), hide_index=True, border="horizontal")
    sentence = noise_sentence(ledger_frame(ledger))
    where.caption(sentence, help=noise_help(sentence))


def noise_help(sentence: str) -> str:
    """The glossary's words for the terms a noise sentence uses (a tooltip: "discrete laplace, sensitivity 1" stood
    unexplained, issue 65)."""
    terms = [t for t, word in (("discrete Laplace", "laplace"), ("zCDP", "gaussian")) if word in sentence.lower()]
    return help_for(*terms, "sensitivity")


def noise_sentence(frame: pd.DataFrame) -> str:
    """The ledger's mechanisms and sensitivities in one sentence, steps grouped by (mechanism, sensitivity).

    ``frame`` is :func:`ledger_frame`'s table.  A mechanism's parameter in brackets (a step's ρ, already in
    its ε) is left out so that the steps of an iterative algorithm group; more than three steps in a group
    are counted, not named.  Example: "Noise: discrete laplace, sensitivity 1 (dataset size, grid cell
    counts)."  Public: the entries are fixed by the algorithm and its public inputs.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for step, mech, sens in zip(frame["step"], frame["mechanism"], frame["sensitivity"]):
        name = re.sub(r"\s*\([^)]*\d[^)]*\)", "", str(mech)) or "none"
        sens = f"{float(sens):.3g}" if str(sens) else ""
        groups.setdefault((name, sens), []).append(str(step))
    parts = [name + (f", sensitivity {sens}" if sens else "")
             + (f" ({', '.join(steps)})" if len(steps) <= 3 else f" ({len(steps)} steps)")
             for (name, sens), steps in groups.items()]
    return "Noise: " + "; ".join(parts) + "."
