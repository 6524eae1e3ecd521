"""Exact, non-private figures for the data owner: NICV on the raw data, exact density, the raw-facts panel.

Everything here is labelled not private; :func:`raw_facts` is the one place exact facts about the
raw data (rows, dropped and clipped rows) are shown.
"""
from __future__ import annotations

import io

import numpy as np
import streamlit as st

from dpcore import datasets

from .data_picker import _on_source, engine_name, is_large, pass_progress
from .figures import NOT_PRIVATE
from .identity import sees_raw
from .page import friendly_errors


@st.cache_data(show_spinner=False, max_entries=64)
def _nicv_cached(_X, data_key: str, centers: np.ndarray, bounds_key, _bounds=None) -> float:
    from dpcore.metrics import nicv
    return float(nicv(_X, centers, _bounds))


def data_nicv(ds, fingerprint: str, centers, bounds) -> float:
    """NICV of ``centers`` on the dataset (``dpcore.metrics.nicv``), cached on data fingerprint, centres and
    bounds: the non-private baseline's figure is computed once, not on every ε change.  Not private."""
    bounds_key = tuple(tuple(map(float, b)) for b in bounds)
    centers = np.asarray(centers, dtype=float)
    if is_large(ds):
        from dpcore.metrics import nicv
        from dpcore.sources.cells import CellSource, use_cells

        def compute():
            # From the fine-cell statistics the reference and DPLloyd already read (cached on the
            # source, issue 26): no pass of its own.  Cell-level assignment, within 10^-4 of per-row.
            src = ds.data_source
            if use_cells("auto", src.n_features, src):
                src = CellSource(src, bounds)
            return float(nicv(src, centers, bounds))
        return _on_source(ds, "NICV", (fingerprint, "nicv", centers.tobytes(), centers.shape, bounds_key), compute)
    return _nicv_cached(ds.X, f"{ds.name}:{fingerprint}", centers, bounds_key, _bounds=bounds)


def exact_density(ds, fingerprint: str, bounds, shape) -> np.ndarray:
    """Exact counts of a large source's rows on a grid over ``bounds`` (the aggregate a grid release
    uses, without noise): the non-private overlay where raw points are too many to draw.  Not private."""
    bounds_key = tuple(tuple(map(float, b)) for b in bounds)
    shape = tuple(int(m) for m in shape)
    return _on_source(ds, "Exact density (not private)", (fingerprint, "density", bounds_key, shape),
                      lambda: ds.data_source.grid_counts(bounds, shape))


def not_private_caption(where=None) -> None:
    (where or st).caption(f"Figures marked as non-private are {NOT_PRIVATE}.")


def csv_bytes(df) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


# -- raw facts: the one place non-private facts about the data are shown ----------------------------
RAW_FACTS = "Raw data facts: for the data owner only, not private"
#: The panel's widget key: its open state is tracked, so that its figures are built only once it is opened.
RAW_FACTS_KEY = "raw_facts_open"


def raw_facts(ds, *, fit=None, lines=(), where=None):
    """The one panel that shows exact, non-private facts about the data.

    The exact number of rows, rows dropped on reading, rows outside the public
    bounds (clipped) and any check made on the raw data appear here and
    nowhere else: never in a release, an export, an error message or a
    caption next to private results.  ``lines`` are further markdown lines
    from the page.  Returns the expander, so a page can add a figure to it, or None when the
    acting person may not see raw facts (:func:`ui.identity.sees_raw`): nothing is computed then.
    """
    where = where or st
    if not sees_raw(ds):
        return None            # an analyst on private data: no exact fact reaches her screen
    box = where.expander(RAW_FACTS, expanded=False, key=RAW_FACTS_KEY, on_change="rerun")
    d = ds.X.shape[1]
    if is_large(ds):
        src = ds.data_source
        with friendly_errors("The raw data facts"), pass_progress(ds, "Raw data facts"):
            n, dropped = src.count(), src.n_dropped()
            outside = src.n_outside((fit.bounds_.lower, fit.bounds_.upper)) if fit is not None else None
        rows = datasets.info(ds.name).get("rows")
        facts = [f"Rows with finite coordinates: **{n:,}** · columns: {d} ({', '.join(map(str, ds.columns))}) · "
                 f"read where they lie by {engine_name(src.engine)}"
                 + (f" · rows in the files' metadata: {rows:,}" if rows is not None else "")]
        if dropped:
            facts.append(f"Rows skipped by every aggregate (a missing, NaN or infinite coordinate): {dropped:,}")
    else:
        n = ds.X.shape[0]
        facts = [f"Rows: **{n:,}** · columns: {d} ({', '.join(map(str, ds.columns))})"]
        if getattr(ds, "n_dropped", 0):
            facts.append(f"Rows left out on reading (missing or infinite values, or outside the public box): "
                         f"{ds.n_dropped:,}")
        outside = None
        if fit is not None:
            lo, hi = fit.bounds_.lower, fit.bounds_.upper
            outside = int(np.count_nonzero(np.any((ds.X < lo) | (ds.X > hi), axis=1)))
    if outside is not None:
        facts.append(f"Rows outside the public bounds, clipped onto them: {outside:,}")
    units = getattr(ds, "units", None)
    if units is not None and len(units):
        from dpcore.utils.contributions import contribution_histogram, unit_codes
        per, how_many = contribution_histogram(unit_codes(units)[0])
        rows = np.repeat(per, how_many)
        facts.append(f"Rows per person ({ds.unit_column}): {rows.size:,} persons · median {np.median(rows):g} · "
                     f"90th percentile {np.percentile(rows, 90):g} · 99th {np.percentile(rows, 99):g} · "
                     f"most {rows.max():,} (not private: choosing L from these figures makes L depend on "
                     "every person, which no guarantee covers; use “Choose L privately” beside the L box)")
    box.markdown("\n".join(f"- {f}" for f in [*facts, *lines]))
    if units is not None and len(units) and box.open:
        import plotly.graph_objects as go
        fig = go.Figure(go.Bar(x=per, y=how_many, marker_color="#777"))
        fig.update_layout(height=220, margin=dict(l=10, r=10, t=30, b=10), xaxis_type="log", yaxis_type="log",
                          title="How many rows each person contributed (not private)",
                          xaxis_title="rows per person", yaxis_title="persons")
        box.plotly_chart(fig, width="stretch")
    box.caption("Exact counts and checks computed on the raw data. No noise protects them: keep them out of "
                "anything published.")
    return box
