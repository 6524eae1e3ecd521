"""The sanitized database on the coreset page (issue 57): choose a level, see it, draw it, publish it.

Feldman et al. (2017, §6, Figure 8) end with the administrator choosing a privacy level on the map and
publishing "the private sanitized database" for further analyses.  The page shows PRIVATE-K-MEAN's
coreset beside :func:`dpcore.sanitize`'s point synopsis at the same ε.  The synopsis is drawn only
when asked for (its own "Draw" button, recorded before it is shown, published by the page's usual
"Publish"); on public embedded data a seeded preview, never recorded, shows the level before any spend.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.algorithms.sanitize import Sanitizer
from dpcore.release.view import point_synopsis
from dpcore.synopsis import PointSynopsis

from .releases import draw_on_click, is_public

#: The registry-like key a synopsis release is recorded under (``dpcore.algorithms.registry.releasable``).
ALGORITHM = "sanitize"
#: k at which the page states the cost error on public data (the issue's benchmark k).
ERROR_KS = (3, 5, 10, 20)


def synopsis_release(ds, fingerprint: str, epsilon: float, *, who: str):
    """The kept draw of the sanitized database at ``epsilon``, or its cost and a "Draw" button.

    Never drawn on opening, public data included (``preview=False``: this page shows its own preview):
    a draw spends ε and is recorded in the dataset's account before it is shown (:func:`ui.releases.draw_on_click`).

    Returns
    -------
    ReleasedFit (its ``synopsis_`` a :class:`~dpcore.synopsis.PointSynopsis`), or None: not drawn yet
    (the button is shown) or refused (the refusal is shown).
    """
    fits = draw_on_click(ds, fingerprint, ALGORITHM, float(epsilon), who=who, preview=False)
    return None if fits is None else fits[0]


@st.cache_data(show_spinner="Previewing the sanitized database (seeded, not recorded)…", max_entries=16)
def _preview(_X: np.ndarray, data_key: str, epsilon: float, bounds: tuple) -> PointSynopsis:
    est = Sanitizer(epsilon=epsilon, bounds=(np.asarray(bounds[0]), np.asarray(bounds[1])), random_state=0)
    return est.fit(_X).synopsis_


def preview(ds, fingerprint: str, epsilon: float) -> PointSynopsis | None:
    """A seeded simulation of the synopsis on public embedded data (not a release, never recorded).

    Only for data that is public already (:func:`ui.releases.is_public`) with public bounds; None
    otherwise.  Its seed is fixed so that a rerun shows the same preview: it is labelled a preview,
    spends nothing and is never offered for download or publication.
    """
    if not is_public(ds) or ds.bounds is None:
        return None
    bounds = tuple(tuple(np.ravel(np.broadcast_to(np.asarray(b, dtype=float), (ds.X.shape[1],))).tolist())
                   for b in ds.bounds)
    return _preview(ds.X, f"{ds.name}:{fingerprint}", float(epsilon), bounds)


def kmeans_cost(X: np.ndarray, centres: np.ndarray) -> float:
    """The k-means cost of ``centres`` on the rows ``X``: sum of squared distances to the nearest centre.

    Raw data, no noise: a figure for the data owner's eyes only (or public data).
    """
    d2 = np.full(X.shape[0], np.inf)
    for c in np.asarray(centres, dtype=float):
        np.minimum(d2, ((X - c) ** 2).sum(axis=1), out=d2)
    return float(d2.sum())


@st.cache_data(show_spinner="Measuring the synopsis' cost error on the raw data…", max_entries=32)
def _errors(_X: np.ndarray, _syn: PointSynopsis, key: str, ks: tuple) -> pd.DataFrame:
    rows = []
    for k in ks:
        centres = _syn.kmeans(k, random_state=0)       # post-processing of the synopsis
        true = kmeans_cost(_X, centres)
        est = _syn.cost(centres)
        rows.append({"k": k, "cost on the synopsis": est, "cost on the data": true,
                     "relative error": abs(est - true) / true if true > 0 else float("nan")})
    return pd.DataFrame(rows)


def cost_errors(X: np.ndarray, syn: PointSynopsis, key: str, ks=ERROR_KS) -> pd.DataFrame:
    """The relative error of the synopsis' k-means cost against the data's, for the centres k-means finds on it.

    Parameters
    ----------
    X : ndarray (n, d), the raw rows (not private: only where :func:`ui.identity.sees_raw` holds)
    syn : PointSynopsis
    key : str, identifies ``syn`` for the cache (a release id, or the preview's settings)
    ks : iterable of int

    Returns
    -------
    DataFrame with k, the cost on the synopsis (:meth:`PointSynopsis.cost`), on the data, and
    ``|synopsis - data| / data``.
    """
    return _errors(np.asarray(X, dtype=float), syn, key, tuple(int(k) for k in ks))


def section(ds, fingerprint: str, epsilon: float, n_clusters: int, *, bounds, sees_raw: bool,
            height: int = 600, who: str = "Private coresets (sanitized database)") -> None:
    """The sanitized database at ``epsilon`` under the coreset: map, size, ledger, errors, Draw and Publish.

    The centres drawn on it are k-means on the synopsis (post-processing: any k at no cost).  Error
    figures computed on the raw data appear only where the page may show raw figures (``sees_raw``).
    """
    from .account import show_ledger
    from .maps import map_deck, noisy_cluster_sizes
    from .releases import draw_controls

    st.subheader(f"The sanitized database at ε = {epsilon:g}")
    st.caption("dpcore.sanitize (PrivTree, Zhang, Xiao & Xie 2016): a noisy adaptive decomposition of the public "
               "box, published as weighted points that anyone can analyse afterwards (k-means for any k, counts "
               "in any rectangle) at no further cost. This is the \"private sanitized database\" of Feldman et al. "
               "(2017, §6); it is drawn only when you press Draw.")
    fit = synopsis_release(ds, fingerprint, epsilon, who=who)
    syn = getattr(fit, "synopsis_", None) if fit is not None else preview(ds, fingerprint, epsilon)
    if syn is None:
        return
    is_preview = fit is None
    if is_preview:
        st.info("PREVIEW, not a release: a seeded simulation on this public data, recorded nowhere and spending "
                "nothing, to choose the level. Press Draw above for the release you can publish.")
    centres = syn.kmeans(n_clusters, random_state=0)     # post-processing: any k, no spend
    view, side = st.columns([2, 1], gap="medium")
    if ds.geo and syn.points.shape[1] == 2:
        view.pydeck_chart(map_deck(bounds=bounds, private_centers=centres, coreset_points=syn.points,
                                   coreset_weights=syn.weights, private_sizes=noisy_cluster_sizes(centres, syn),
                                   height=height), height=height)
        view.caption(("Preview: " if is_preview else "") + "green discs: the synopsis' points, one per cell "
                     "(area ∝ weight, its noisy count made non-negative) · ● k-means on the synopsis, "
                     f"k = {n_clusters} (post-processing: no spend) · grey outline: the public bounds.")
    side.metric("Synopsis size m", f"{syn.size} points", help="One point per leaf cell of the decomposition: a "
                "function of public inputs and released noisy values only.")
    if not is_preview:
        show_ledger(fit, where=side)
        draw_controls(fit, where=side, key="new_draw_synopsis")
    if sees_raw:
        key = f"release {fit.release_id}" if not is_preview else f"preview {ds.name} {fingerprint} {epsilon:g}"
        errs = cost_errors(ds.X, syn, key)
        side.markdown("**Cost error on the data** (not private: raw data)",
                      help="For the centres k-means finds on the synopsis: |cost on the synopsis − cost on the "
                           "data| / cost on the data.")
        # Two columns: the side column is narrow, and the relative error is the figure that chooses a level.
        side.dataframe(errs[["k", "relative error"]].style.format({"relative error": "{:.1%}"}), hide_index=True)


# -- "Analyse a publication" vs "draw from the data" (issue 57) ------------------------------------------------
#: The two inputs a centre-releasing page offers when the store holds a published sanitized database of its data.
INPUTS = {"draw": "Draw from the data (spends ε)", "publication": "Analyse a publication (no spend)"}


def published_synopses(name: str) -> list:
    """The publications of data set ``name`` that are sanitized databases (synopsis kind ``"points"``), oldest first.

    Read from the release store: every one was drawn, charged and published by its author, so
    anything computed from it alone is post-processing (Dwork & Roth 2014, Prop. 2.1).

    Returns
    -------
    list of :class:`dpcore.store.records.StoredRelease`
    """
    from .store import release_store
    return [s for s in release_store().published(name) if (s.release.get("synopsis") or {}).get("kind") == "points"]


def input_choice(ds, *, key: str = "input"):
    """The sidebar's choice of input: draw from the data, or analyse a published sanitized database of it.

    Offered only when the data have public bounds and the store holds at least one published point
    synopsis of this data set (:func:`published_synopses`); otherwise nothing is shown and the page
    draws from the data as before.

    Returns
    -------
    StoredRelease or None: the publication chosen, or None to draw from the data.
    """
    from .releases import publishable
    if not publishable(ds):
        return None
    pubs = published_synopses(ds.name)
    if not pubs:
        return None
    choice = st.sidebar.radio("Input", list(INPUTS), format_func=INPUTS.get, key=key,
                              help="A published sanitized database of this data can be analysed at no cost: "
                                   "k-means for any k on its points and weights reads nothing else, so no ε is "
                                   "spent and nothing is recorded.")
    if choice != "publication":
        return None
    labels = {s.id: f"#{s.id} · ε = {s.epsilon:.4g} · {len(s.release['synopsis']['weights'])} points · "
                    f"published {s.published_at:%Y-%m-%d}" for s in pubs}
    rid = st.sidebar.selectbox("Publication", list(reversed(list(labels))), format_func=labels.get,
                               key=f"{key}_release", help="The published sanitized databases of this data, newest "
                                                          "first (the public gallery lists the same).")
    return next(s for s in pubs if s.id == rid)


def analyse_publication(ds, fingerprint: str, publication, n_clusters: int, *, height: int = 600) -> None:
    """k-means with ``n_clusters`` on a published point synopsis, drawn where the page draws a release.

    Post-processing of the publication only (:meth:`PointSynopsis.kmeans`, seeded initialisation so
    every visitor sees the same centres): no ε, no draw, nothing recorded.  The publication's own
    ledger is shown as what was spent once, when it was drawn.  The owner (or anyone, on public data)
    also sees the centres' NICV on the raw data, labelled not private.
    """
    from .gallery_view import centres_table, ledger_table, release_view
    from .identity import OWNER_ONLY, sees_raw
    from .not_private import data_nicv

    rel = publication.release
    centres = point_synopsis(rel).kmeans(int(n_clusters), random_state=0)
    st.info(f"**Analysing publication #{publication.id}** (a sanitized database drawn at ε = "
            f"{publication.epsilon:.4g}): k-means with k = {n_clusters} on its published points and weights is "
            "post-processing. No ε is spent and nothing is recorded, whatever k you choose.")
    view, side = st.columns([2, 1], gap="medium")
    kind, fig = release_view(rel, centres=centres)
    if kind == "map":
        view.pydeck_chart(fig, height=height)
    else:
        view.plotly_chart(fig, width="stretch")
    view.caption("green discs: the published points (area ∝ weight) · ● k-means on them, "
                 f"k = {n_clusters}, computed here at no cost · grey outline: the public bounds.")
    side.metric("Publication size m", f"{len(rel['synopsis']['weights'])} points")
    side.markdown(f"**k-means on the publication, k = {n_clusters}** (post-processing: no spend)")
    side.dataframe(centres_table(rel, centres), hide_index=True, width="stretch")
    if sees_raw(ds):
        bounds = (np.asarray(rel["bounds"]["lower"], dtype=float), np.asarray(rel["bounds"]["upper"], dtype=float))
        side.metric("NICV of these centres on the data", f"{data_nicv(ds, fingerprint, centres, bounds):.4g}",
                    help="Computed on the raw data: not private, for the data owner's eyes only.")
    else:
        side.caption(OWNER_ONLY)
    side.markdown(f"**Spent once, when release #{publication.id} was drawn** (analysing it spends nothing)")
    side.dataframe(ledger_table(rel), hide_index=True, width="stretch")
