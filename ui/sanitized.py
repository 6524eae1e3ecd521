"""The sanitized database on the coreset page (issue 57): choose a level, see it, draw it, publish it.

Feldman et al. (2017, §6, Figure 8) end with the administrator choosing a privacy level on the map and
publishing "the private sanitized database" for further analyses.  The page shows PRIVATE-K-MEAN's
coreset beside :func:`dpcore.sanitize`'s point synopsis at the same ε.  The synopsis is drawn only
when asked for (its own "Draw" button, recorded before it is shown, published by the page's usual
"Publish"); on public embedded data the app's one preview mechanism (:func:`ui.releases.public_preview`:
fresh noise, never recorded) shows the level before any spend.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.synopsis import PointSynopsis

from .controls import (  # noqa: F401  (re-exported: the pages' S.input_choice)
    INPUTS,
    default_n_clusters,
    input_choice,
    published_synopses,
)
from .draws import draw_on_click
from .models.shared import fmt_epsilon
from .releases import is_public, public_preview

#: The registry-like key a synopsis release is recorded under (``dpcore.algorithms.registry.releasable``).
ALGORITHM = "sanitize"
#: Who a draw of the sanitized database on the coreset page is recorded as (the page).
WHO = "Private coresets (sanitized database)"
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


def preview(ds, fingerprint: str, epsilon: float):
    """The preview of the sanitized database on public embedded data (not a release, never recorded), or None.

    Only for data that is public already (:func:`ui.releases.is_public`) with public bounds; None
    otherwise.  The app's one preview mechanism (:func:`ui.releases.public_preview`): a fit with
    fresh noise, one per setting for the server so a rerun shows the same preview, labelled a
    preview, spending nothing and never offered for download or publication.  Fitted at the data set's usual k
    (:func:`ui.controls.default_n_clusters`): the centres its release carries are then the ones the page shows at
    that k (:func:`synopsis_centres`), computed once; any other k is post-processing of the same points.

    Returns
    -------
    The fitted estimator (its ``synopsis_`` a :class:`~dpcore.synopsis.PointSynopsis`), or None.
    """
    if not is_public(ds) or ds.bounds is None:
        return None
    return public_preview(ds, fingerprint, ALGORITHM, {"epsilon": float(epsilon),
                                                       "n_clusters": default_n_clusters(ds)})


def synopsis_centres(fit, n_clusters: int) -> np.ndarray:
    """k-means with ``n_clusters`` on a sanitized database: the one rule of every view of it (issue 66).

    At the release's own k, the centres it carries (published with it, computed when it was drawn); at any other
    k, a k-means on its points seeded so that every viewer sees the same centres for the same k (cached on the
    points' content).  The gallery's rule (:func:`ui.gallery_view.synopsis_centres`, on a publication), so one
    release at one k shows one set of centres on every page.  Post-processing either way: no spend.

    Parameters
    ----------
    fit : a fitted sanitizer (:class:`dpcore.algorithms.sanitize.Sanitizer`, a preview or a draw) or the
        :class:`~dpcore.release.view.ReleasedFit` of its release
    n_clusters : int >= 1

    Returns
    -------
    ndarray (n_clusters, d), data units.
    """
    k = int(n_clusters)
    own = getattr(fit, "n_clusters", None)
    if (len(fit.cluster_centers_) if own is None else int(own)) == k:
        return fit.cluster_centers_
    syn = fit.synopsis_
    return _level_kmeans(syn, _digest(syn), k)


def kmeans_cost(X: np.ndarray, centres: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The k-means cost of ``centres`` on the rows ``X``: sum of (weighted) squared distances to the nearest centre.

    On raw data, no noise: a figure for the data owner's eyes only (or public data).  With ``weights``
    (m,), the cost on a released weighted point set (a coreset, a synopsis): post-processing.
    """
    X = np.asarray(X, dtype=float)
    d2 = np.full(X.shape[0], np.inf)
    for c in np.asarray(centres, dtype=float):
        np.minimum(d2, ((X - c) ** 2).sum(axis=1), out=d2)
    if not X.shape[0]:
        return 0.0
    return float(d2.sum() if weights is None else np.asarray(weights, dtype=float) @ d2)


@st.cache_data(show_spinner="Running… the synopsis' cost error on the raw data", max_entries=32)
def _errors(_X: np.ndarray, _syn: PointSynopsis, key: str, ks: tuple, _centres: tuple) -> pd.DataFrame:
    rows = []
    for k, centres in zip(ks, _centres):
        true = kmeans_cost(_X, centres)
        est = _syn.cost(centres)
        rows.append({"k": k, "cost on the synopsis": est, "cost on the data": true,
                     "relative error": abs(est - true) / true if true > 0 else float("nan")})
    return pd.DataFrame(rows)


def cost_errors(X: np.ndarray, fit, key: str, ks=ERROR_KS) -> pd.DataFrame:
    """The relative error of the synopsis' k-means cost against the data's, for the centres shown at each k.

    Parameters
    ----------
    X : ndarray (n, d), the raw rows (not private: only where :func:`ui.identity.sees_raw` holds)
    fit : a fitted sanitizer or its release (``synopsis_`` a PointSynopsis); the centres are
        :func:`synopsis_centres`' (post-processing)
    key : str, identifies ``fit`` for the cache (a release id, or the preview's settings)
    ks : iterable of int

    Returns
    -------
    DataFrame with k, the cost on the synopsis (:meth:`PointSynopsis.cost`), on the data, and
    ``|synopsis - data| / data``.
    """
    ks = tuple(int(k) for k in ks)
    return _errors(np.asarray(X, dtype=float), fit.synopsis_, key, ks, tuple(synopsis_centres(fit, k) for k in ks))


def section(ds, fingerprint: str, epsilon: float, n_clusters: int, *, bounds, sees_raw: bool,
            height: int = 600, who: str = WHO) -> None:
    """The sanitized database at ``epsilon`` under the coreset: map, size, ledger, errors, Draw and Publish.

    The centres drawn on it are k-means on the synopsis (post-processing: any k at no cost).  Error
    figures computed on the raw data appear only where the page may show raw figures (``sees_raw``).  On public
    data, before a draw, a preview is offered in a box that computes it when opened.
    """
    st.subheader(f"The sanitized database at ε = {fmt_epsilon(epsilon)}")
    st.caption("dpcore.sanitize (PrivTree, Zhang, Xiao & Xie 2016): a noisy adaptive decomposition of the public "
               "box, published as weighted points that anyone can analyse afterwards (k-means for any k, counts "
               "in any rectangle) at no further cost. This is the \"private sanitized database\" of Feldman et al. "
               "(2017, §6); it is drawn only when you press Draw.")
    fit = synopsis_release(ds, fingerprint, epsilon, who=who)
    if fit is not None:
        _synopsis_view(ds, fit, n_clusters, bounds=bounds, sees_raw=sees_raw, height=height)
        return
    if not is_public(ds) or ds.bounds is None:
        return
    # The preview on demand (issue 56, speed): a sanitized database of the taxi sample is ~21,000 points, whose map
    # took ~2 s of a cold first render (its fit and the browser drawing the discs in software WebGL) under the
    # coreset's map, which is what the page exists to show.
    box = st.expander(f"Preview the sanitized database at ε = {epsilon:g}: fresh noise on this public data, recorded "
                      "nowhere, spending nothing", key="sanitized_preview_open", on_change="rerun")
    if box.open:
        with box:
            _synopsis_view(ds, preview(ds, fingerprint, epsilon), n_clusters, bounds=bounds, sees_raw=sees_raw,
                           height=height)


def _synopsis_view(ds, fit, n_clusters: int, *, bounds, sees_raw: bool, height: int) -> None:
    """A sanitized database's points on a map (k-means on them, :func:`synopsis_centres`), its size and, for a
    recorded draw, its ledger, Draw and Publish; a preview (``fit.preview``) is labelled one.  Its cost errors on the
    raw data when ``sees_raw``."""
    from .account import show_ledger
    from .draws import draw_controls
    from .maps import map_deck, noisy_cluster_sizes
    from .marks import THINNED_WORDS, is_thinned

    is_preview, syn = bool(getattr(fit, "preview", False)), fit.synopsis_
    if is_preview:
        st.info("PREVIEW, not a release: a draw with fresh noise on this public data, recorded nowhere and spending "
                "nothing, to choose the level. Press Draw above for the release you can publish.")
    # Post-processing: any k, no spend.  Cached on the synopsis' content (seeded, so the same centres a rerun would
    # compute): ~1 s of every run of the page before (issue 56, speed).
    centres = synopsis_centres(fit, n_clusters)
    view, side = st.columns([2, 1], gap="medium")
    if ds.geo and syn.points.shape[1] == 2:
        deck = map_deck(bounds=bounds, private_centers=centres, coreset_points=syn.points, coreset_weights=syn.weights,
                        private_sizes=noisy_cluster_sizes(centres, syn), height=height)
        view.pydeck_chart(deck, height=height)
        view.caption(("Preview: " if is_preview else "") + "green discs: the synopsis' points, one per cell "
                     "(area ∝ weight, its noisy count made non-negative"
                     + (f"; {THINNED_WORDS}" if is_thinned(deck) else "") + ") · ● k-means on the synopsis, "
                     f"k = {n_clusters} (post-processing: no spend) · grey outline: the public bounds.")
    side.metric("Synopsis size m", f"{syn.size} points", help="One point per leaf cell of the decomposition: a "
                "function of public inputs and released noisy values only.")
    if not is_preview:
        show_ledger(fit, where=side)
        draw_controls(fit, ds, where=side, key="new_draw_synopsis")
    if sees_raw:
        # Computed when opened (issue 56, speed): four k-means on the synopsis and their costs on every raw row
        # took ~1.5-4 s of the page's first render on a cold server.
        box = side.expander("Cost error on the data (not private: raw data)", key="cost_errors_open",
                            on_change="rerun")
        if box.open:
            key = f"release {fit.release_id}" if not is_preview else f"preview {_digest(syn)}"
            errs = cost_errors(ds.X, fit, key)
            box.caption("For the centres k-means finds on the synopsis: |cost on the synopsis − cost on the data| / "
                        "cost on the data.")
            # Two columns: the side column is narrow, and the relative error is the figure that chooses a level.
            box.dataframe(errs[["k", "relative error"]].style.format({"relative error": "{:.1%}"}), hide_index=True)


# -- "Analyse a publication" (issue 57): the sidebar's choice lives in ui.controls (INPUTS, input_choice, re-exported)
def analyse_publication(ds, fingerprint: str, publication, n_clusters: int, *, height: int = 600) -> None:
    """k-means with ``n_clusters`` on a published point synopsis, drawn where the page draws a release.

    Post-processing of the publication only (:func:`ui.gallery_view.synopsis_centres`, as the gallery: the
    published centres at the release's own k, else a seeded k-means, so every visitor sees the same centres): no
    ε, no draw, nothing recorded.  The publication's own
    ledger is shown as what was spent once, when it was drawn.  The owner (or anyone, on public data)
    also sees the centres' NICV on the raw data, labelled not private.
    """
    from .gallery_view import centres_origin, centres_table, ledger_table, release_view, synopsis_centres
    from .identity import OWNER_ONLY, sees_raw
    from .marks import THINNED_WORDS, is_thinned
    from .not_private import data_nicv

    rel = publication.release
    centres = synopsis_centres(rel, n_clusters)      # the gallery's: the same centres for the same k
    st.info(f"**Analysing publication #{publication.id}** (a sanitized database drawn at ε = "
            f"{fmt_epsilon(publication.epsilon)}): k-means with k = {n_clusters} on its published points and weights "
            "is post-processing. No ε is spent and nothing is recorded, whatever k you choose.")
    view, side = st.columns([2, 1], gap="medium")
    kind, fig = release_view(rel, centres=centres)
    if kind == "map":
        view.pydeck_chart(fig, height=height)
    else:
        view.plotly_chart(fig, width="stretch")
    view.caption("green discs: the published points (area ∝ weight" + (f"; {THINNED_WORDS}" if is_thinned(fig) else "")
                 + f") · ● k-means on them, k = {n_clusters}, {centres_origin(rel, n_clusters)} · grey outline: "
                 "the public bounds.")
    side.metric("Publication size m", f"{len(rel['synopsis']['weights'])} points")
    side.markdown(f"**k-means on the publication, k = {n_clusters}** (post-processing: no spend)")
    side.dataframe(centres_table(rel, centres), hide_index=True, width="stretch")
    if sees_raw(ds):
        bounds = (np.asarray(rel["bounds"]["lower"], dtype=float), np.asarray(rel["bounds"]["upper"], dtype=float))
        side.metric("NICV of these centres on the data (not private)",
                    f"{data_nicv(ds, fingerprint, centres, bounds):.4g}",
                    help="Computed on the raw data: not private, for the data owner's eyes only.")
    else:
        side.caption(OWNER_ONLY)
    side.markdown(f"**Spent once, when release #{publication.id} was drawn** (analysing it spends nothing)")
    side.dataframe(ledger_table(rel), hide_index=True, width="stretch")


# -- Feldman et al.'s Figure 8: the points at several privacy levels, side by side (issue 57) --------------------
#: The privacy levels the coreset page shows side by side (the issue's benchmark levels).
LEVELS = (0.1, 0.5, 1.0, 2.0)


def _inner_ticks(lo: float, hi: float) -> tuple[list, list]:
    """Two ticks at a quarter and three quarters of ``[lo, hi]`` with as many decimals as tell them apart: labels
    at a panel's edges ran into the next panel's at 1280 px ("−73.974.1", issue 65)."""
    import math
    span = float(hi - lo) or 1.0
    decimals = max(0, math.ceil(-math.log10(span / 2) - 1e-9) + 1)
    vals = [lo + span / 4, lo + 3 * span / 4]
    return vals, [f"{v:.{decimals}f}".replace("-", "−") for v in vals]


def levels_figure(rows, *, bounds, columns, geo: bool = False, height: int = 640):
    """Weighted point sets at several privacy levels: one row per release kind, one column per ε.

    Parameters
    ----------
    rows : list of (str, list of dict)
        A row title and its panels, one per level, each with ``title`` (str) and either ``points``
        (m, 2), ``weights`` (m,) and ``centers`` (k, 2), or ``note`` (str: why there is nothing to show).
    bounds : (lower, upper), the public box (first two columns); every panel shows exactly this box.
    columns : the two column names.
    geo : bool, longitude/latitude: the y axis is scaled by 1 / cos(latitude).

    Returns
    -------
    plotly Figure.  Disc area ∝ weight on one scale per row, so sizes compare across levels.  At most
    :data:`ui.marks.MAX_MARKS` marks in all (issue 66): the panels share what the centres leave, and a panel with
    more points than its share draws the heaviest as discs and the others' summed weight as the shade of their
    cell (one scale per row).  Tick labels on the outer panels only, two per axis, clear of the panels' edges.
    """
    import math

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from .charts import rest_heatmap
    from .marks import MAX_MARKS, shares, thin_points

    lo, hi = (np.asarray(b, dtype=float)[:2] for b in bounds)
    n_cols = max(len(panels) for _, panels in rows)
    titles = [p["title"] for _, panels in rows for p in panels]
    fig = make_subplots(rows=len(rows), cols=n_cols, subplot_titles=titles, horizontal_spacing=0.03,
                        vertical_spacing=0.1)
    panels = [p for _, row in rows for p in row if "points" in p]
    fixed = sum(len(np.asarray(p["centers"]).reshape(-1, 2)) + 1 for p in panels)     # centres, one image each
    caps = iter(shares([len(p["weights"]) for p in panels], MAX_MARKS - fixed))
    xticks, yticks = _inner_ticks(lo[0], hi[0]), _inner_ticks(lo[1], hi[1])
    for r, (_, row) in enumerate(rows, start=1):
        top = max((float(np.max(p["weights"])) for p in row if "weights" in p and len(p["weights"])), default=1.0)
        thinned = [thin_points(p["points"], p["weights"], bounds=(lo, hi), cap=next(caps), bins=64)
                   if "points" in p else None for p in row]
        shade = max((float(t.rest.max()) for t in thinned if t is not None and not t.complete), default=None)
        for c, (p, thin) in enumerate(zip(row, thinned), start=1):
            if thin is not None:
                rest = rest_heatmap(thin, (49, 163, 84), name="weight of the other points in this cell", zmax=shade)
                if rest is not None:
                    fig.add_trace(rest, row=r, col=c)
                w = thin.weights
                # WebGL, one canvas for every panel: thousands of SVG discs took Chromium ~0.5-1.4 s more to
                # draw (the levels view in a second browser, median of four: 4.7 s against 5.2-6.1 s).  The
                # centres too: plotly's WebGL canvas lies over its SVG, and they must be drawn over the points.
                fig.add_trace(go.Scattergl(x=thin.points[:, 0], y=thin.points[:, 1], mode="markers",
                                         name="private points (area ∝ weight)", legendgroup="points",
                                         showlegend=(r == 1 and c == 1),
                                         marker=dict(size=2 + 18 * np.sqrt(np.clip(w, 0, None) / (top or 1.0)),
                                                     color="rgba(49,163,84,0.55)", line=dict(width=0)),
                                         customdata=np.round(w, 1),
                                         hovertemplate="weight %{customdata}<extra></extra>"),
                              row=r, col=c)
                cen = np.asarray(p["centers"], dtype=float).reshape(-1, thin.points.shape[1])
                fig.add_trace(go.Scattergl(x=cen[:, 0], y=cen[:, 1], mode="markers", name="k-means on them",
                                         legendgroup="centres", showlegend=(r == 1 and c == 1),
                                         marker=dict(size=9, color="rgb(230,85,13)",
                                                     line=dict(width=1.2, color="black"))),
                              row=r, col=c)
            else:
                fig.add_annotation(text=p.get("note", ""), x=(lo[0] + hi[0]) / 2, y=(lo[1] + hi[1]) / 2,
                                   showarrow=False, font=dict(size=11, color="grey"), row=r, col=c)
            fig.update_xaxes(range=[lo[0], hi[0]], showgrid=False, constrain="domain", tickvals=xticks[0],
                             ticktext=xticks[1], showticklabels=(r == len(rows)), row=r, col=c)
            yaxis = dict(range=[lo[1], hi[1]], showgrid=False, constrain="domain", tickvals=yticks[0],
                         ticktext=yticks[1], showticklabels=(c == 1), row=r, col=c)
            if geo:
                i = (r - 1) * n_cols + c
                yaxis.update(scaleanchor=f"x{'' if i == 1 else i}",
                             scaleratio=1 / math.cos(math.radians((lo[1] + hi[1]) / 2)))
            fig.update_yaxes(**yaxis)
    fig.update_xaxes(title_text=columns[0], row=len(rows))
    for r, (name, _) in enumerate(rows, start=1):     # the row's name where a reader looks for it: the left axis
        fig.update_yaxes(title_text=f"<b>{name}</b><br>{columns[1]}", row=r, col=1)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=60, b=10), plot_bgcolor="white",
                      legend=dict(orientation="h", y=-0.12, yanchor="top"), font=dict(size=11))
    return fig


def _level_fits(ds, fingerprint: str, algorithm: str, params: dict, *, who: str) -> list:
    """One fit per level of :data:`LEVELS`, never a spend: previews on public data, else the draws already kept.

    On public data (:func:`ui.releases.is_public`) each level is a preview (never recorded,
    :func:`ui.releases.public_preview` for both), or for the coreset a sentence where it
    cannot run; elsewhere only the draws already recorded for these settings are shown, and a level
    not drawn yet is None (nothing is fitted).  A synopsis level is its fit (its ``synopsis_`` a PointSynopsis) or None.
    """
    from .releases import private_releases
    public = is_public(ds)
    if algorithm == ALGORITHM:
        if public:
            return [preview(ds, fingerprint, e) for e in LEVELS]
        return private_releases(ds, fingerprint, ALGORITHM, LEVELS, who=who, draw_missing=False) or [None] * len(LEVELS)
    if public:
        # The size of public data is public: PRIVATE-K-MEAN's smallest ε is known before any fit, so a level
        # below it is a sentence in its panel, not a refusal that stops the page (Feldman et al. Alg. 1 line 2).
        from dpcore.algorithms.coreset.plan import min_feasible_epsilon
        from dpcore.algorithms.registry import releasable
        need = min_feasible_epsilon(ds.X.shape[0], params["n_clusters"], ds.X.shape[1], params["delta"],
                                    n_share=releasable(algorithm)().n_share, budget=params["budget"],
                                    constants=params["constants"])
        return [f"refused below ε ≈ {need:.3g}" if e < need else
                public_preview(ds, fingerprint, algorithm, dict(params, epsilon=e)) for e in LEVELS]
    return private_releases(ds, fingerprint, algorithm, LEVELS, who=who, draw_missing=False, **params) or \
        [None] * len(LEVELS)


def _digest(*parts) -> str:
    """A content key for the caches below: the released points, weights and centres themselves."""
    import hashlib
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        for a in ((p.points, p.weights) if hasattr(p, "weights") else (getattr(p, "cluster_centers_", p),)):
            h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return h.hexdigest()


@st.cache_data(show_spinner="Running… k-means on the released points", max_entries=64)
def _level_kmeans(_syn: PointSynopsis, key: str, n_clusters: int) -> np.ndarray:
    from .gallery_view import seeded_centres
    return seeded_centres(_syn, n_clusters)


@st.cache_data(show_spinner="Running… the cost error on the raw data", max_entries=64)
def _level_error(_X: np.ndarray, _points, _weights, _centres, key: str) -> float:
    """|cost on the released weighted points − cost on the data| / cost on the data (raw data: not private)."""
    true = kmeans_cost(_X, _centres)
    return abs(kmeans_cost(_points, _centres, _weights) - true) / true if true else float("nan")


def levels_section(ds, fingerprint: str, n_clusters: int, coreset_params: dict, *, bounds, sees_raw: bool,
                   who: str = "Private coresets") -> None:
    """Feldman et al. (2017, §6, Figure 8): the coreset beside the sanitized database at each of :data:`LEVELS`.

    Spends nothing: previews on public data (labelled), elsewhere only levels already drawn.  Below
    the points, the error figures: sizes always (released values), the relative k-means cost error
    at ``n_clusters`` only where raw figures may be shown (``sees_raw``).
    """
    from .identity import OWNER_ONLY
    from .marks import THINNED_WORDS, is_thinned

    public = is_public(ds)
    st.subheader("Choose a privacy level: the points at each ε")
    st.caption(("PREVIEWS on this public data, recorded nowhere and spending nothing: "
                if public else "Only levels already drawn are shown (nothing is drawn here): ")
               + "PRIVATE-K-MEAN's coreset (top) beside the sanitized database (bottom), each with k-means on its "
               f"points, k = {n_clusters}, as in Feldman et al. (2017, §6, Figure 8). Draw and Publish below.")
    coresets = _level_fits(ds, fingerprint, "coreset", dict(coreset_params, n_clusters=n_clusters), who=who)
    synopses = _level_fits(ds, fingerprint, ALGORITHM, {}, who=who + " (sanitized database)")
    missing = "preview not available" if public else "not drawn at this level"
    top, bottom, table = [], [], []
    for e, cf, sf in zip(LEVELS, coresets, synopses):
        row: dict = {"ε": f"{e:g}"}
        title = f"ε = {e:g}"
        if isinstance(cf, str) or getattr(cf, "synopsis_", None) is None:
            top.append({"title": title, "note": cf if isinstance(cf, str) else missing})
            row["coreset points"] = "refused" if isinstance(cf, str) else "—"
        else:
            cs = cf.synopsis_
            top.append({"title": title, "points": cs.points[:, :2], "weights": cs.weights,
                        "centers": cf.cluster_centers_[:, :2]})
            row["coreset points"] = str(len(cs.weights))
            if sees_raw:
                row[f"coreset cost error, k = {n_clusters}"] = _level_error(ds.X, cs.points, cs.weights,
                                                                           cf.cluster_centers_, _digest(cs, cf))
        syn = getattr(sf, "synopsis_", None)
        if syn is None:
            bottom.append({"title": title, "note": missing})
            row["synopsis points"] = "—"
        else:
            centres = synopsis_centres(sf, n_clusters)     # post-processing: no spend
            bottom.append({"title": title, "points": syn.points[:, :2], "weights": syn.weights,
                           "centers": centres[:, :2]})
            row["synopsis points"] = str(syn.size)
            if sees_raw:
                row[f"synopsis cost error, k = {n_clusters}"] = _level_error(ds.X, syn.points, syn.weights, centres,
                                                                            _digest(syn, centres))
        table.append(row)
    fig = levels_figure([("PRIVATE-K-MEAN coreset", top), ("sanitized database", bottom)], bounds=bounds,
                        columns=ds.columns[:2], geo=bool(ds.geo))
    st.plotly_chart(fig, width="stretch", key="levels_fig")
    st.caption("Green discs: the released points, area ∝ weight on one scale per row"
               + (f" ({THINNED_WORDS})" if is_thinned(fig) else "") + " · ● k-means on them.")
    df = pd.DataFrame(table)
    errs = [c for c in df.columns if "cost error" in c]
    st.dataframe(df.style.format({c: "{:.1%}" for c in errs}, na_rep="—"), hide_index=True)
    st.caption(("Cost error: |cost on the released points − cost on the data| / cost on the data, for the centres "
                "k-means finds on the released points; computed on the raw data (not private). " if errs else
                OWNER_ONLY + " ") + "Sizes are released values.")
