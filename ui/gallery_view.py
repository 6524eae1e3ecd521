"""What the public gallery draws from a stored release: figures and tables from released values only.

No Streamlit here and no access to data: every function takes the release dict that
:func:`dpcore.release.build_release` made (private output and public inputs) or rows of
:meth:`dpcore.store.ReleaseStore.history`.  Redrawing is post-processing of a differentially
private output, so it costs no privacy (Dwork & Roth 2014, Prop. 2.1).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.release.view import is_geo, point_synopsis

from .figures import (
    center_images_figure,
    count_legend_html,
    count_scale,
    label_grid_figure,
    map_deck,
    rest_heatmap,
    scatter_figure,
)
from .marks import MAX_MARKS, thin_points


def legend_html(release: dict) -> str | None:
    """The colour bar of a release's noisy grid counts (HTML), or None when it has no grid synopsis.

    From the released counts only (post-processing): the map's cells are coloured on this scale.
    """
    syn = release.get("synopsis") or {}
    if syn.get("kind") != "grid" or syn.get("counts") is None:
        return None
    return count_legend_html(count_scale(np.asarray(syn["counts"], dtype=float)), label="noisy count per cell",
                             signed=True)


#: The gallery map's height (px); the map's zoom fits the public box into it (a zoom fitted to another height
#: cropped the taxi box's south end, issue 56).
MAP_HEIGHT = 520


def release_view(release: dict, centres=None):
    """The picture of a release: ``("map", pydeck.Deck)`` on lon/lat data, else ``("plot", plotly Figure)``.

    Private centres always (``centres`` (k, d) instead of the released ones: e.g. k-means on a
    published point synopsis, :func:`synopsis_centres`); a 2-D grid synopsis as noisy cell counts, a
    coreset or a point synopsis as weighted discs, a WaveCluster grid as cluster-coloured cells.
    High-dimensional releases (issue 31): images (d a square, e.g. 28 x 28 or 8 x 8) as centre
    pictures, other data as the centres' own principal components with their explained variance
    (computed from the released centres only); otherwise the first two columns.
    """
    d = len(release["dataset"]["columns"])
    if d > 2:
        high = _high_dimensional_view(release)
        if high is not None:
            return "plot", high
    bounds = tuple(np.asarray(release["bounds"][k][:2], dtype=float) for k in ("lower", "upper"))
    released = release["centroids"] if centres is None else centres
    centres = np.asarray(released, dtype=float).reshape(-1, len(release["dataset"]["columns"]))[:, :2]
    centres = centres if len(centres) else None
    syn = release.get("synopsis") or {}
    kind = syn.get("kind")
    edges = [np.asarray(e, dtype=float) for e in syn.get("edges", [])]
    two_d = len(edges) == 2
    if is_geo(release):
        kw = {}
        if kind == "grid" and two_d:
            kw = dict(synopsis_edges=edges, synopsis_counts=np.asarray(syn["counts"], dtype=float))
        elif "labels" in syn and two_d:
            values = syn.get("values")
            kw = dict(synopsis_edges=edges, cell_labels=np.asarray(syn["labels"]),
                      synopsis_counts=None if values is None else np.asarray(values, dtype=float))
        elif kind in ("coreset", "points"):
            kw = dict(coreset_points=np.asarray(syn["points"], dtype=float)[:, :2],
                      coreset_weights=np.asarray(syn["weights"], dtype=float))
        return "map", map_deck(bounds=bounds, private_centers=centres, height=MAP_HEIGHT, **kw)
    cols = release["dataset"]["columns"]
    title = f"{release['algorithm']['name']}, ε = {release['privacy']['epsilon']:g}"
    if "labels" in syn and two_d:
        return "plot", label_grid_figure(edges=edges, labels=np.asarray(syn["labels"]), columns=cols[:2],
                                         title=title)
    kw = dict(synopsis_edges=edges, synopsis_counts=np.asarray(syn["counts"], dtype=float)) \
        if kind == "grid" and two_d else {}
    fig = scatter_figure(columns=cols[:2], bounds=bounds, private_centers=centres, title=title, **kw)
    if kind in ("coreset", "points"):
        pts, w = np.asarray(syn["points"], dtype=float), np.asarray(syn["weights"], dtype=float)
        # At most MAX_MARKS marks (issue 66): the heaviest points, the others' weight summed per cell.
        thin = thin_points(pts[:, :2], w, bounds=bounds, cap=MAX_MARKS - (0 if centres is None else len(centres)) - 1)
        rest = rest_heatmap(thin, (49, 163, 84), name=f"weight of the other {_WHAT[kind]} points in this cell")
        if rest is not None:
            fig.add_trace(rest)
        top = w.max() if len(w) and w.max() > 0 else 1.0
        fig.add_scatter(x=thin.points[:, 0], y=thin.points[:, 1], mode="markers",
                        name=f"private {_WHAT[kind]} (area ∝ weight)"
                             + ("" if thin.complete else f": the {len(thin.weights):,} heaviest; shaded cells: the "
                                                         f"other {thin.n_rest:,}, summed"),
                        marker=dict(size=4 + 16 * np.sqrt(np.clip(thin.weights, 0, None) / top),
                                    color="rgba(49,163,84,0.5)"))
    return "plot", fig


_WHAT = {"coreset": "coreset", "points": "point synopsis"}


def is_point_synopsis(release: dict) -> bool:
    """True for a release whose synopsis is a sanitized database of weighted points (kind ``"points"``)."""
    return (release.get("synopsis") or {}).get("kind") == "points"


def synopsis_centres(release: dict, n_clusters: int) -> np.ndarray:
    """k-means with ``n_clusters`` on a published point synopsis.

    At the release's own k, the centres it published (k-means on the same points and weights, computed when it
    was drawn: nothing to compute, so a first screen needs no scikit-learn, issue 66); at any other k,
    :meth:`dpcore.synopsis.PointSynopsis.kmeans` here, its initialisation seeded so that every viewer sees the
    same centres for the same k.  Post-processing of the published points and weights either way: any k, no
    spend, nothing recorded.  :func:`centres_origin` says which.

    Returns
    -------
    ndarray (n_clusters, d), data units.
    """
    k = int(n_clusters)
    published = np.asarray(release["centroids"], dtype=float).reshape(-1, len(release["dataset"]["columns"]))
    if k == len(published):
        return published
    return seeded_centres(point_synopsis(release), k)


def seeded_centres(synopsis, n_clusters: int) -> np.ndarray:
    """k-means with ``n_clusters`` on a point synopsis, its initialisation seeded (seed 0) so that every viewer of
    every page sees the same centres for the same points and k (:func:`synopsis_centres`,
    :func:`ui.sanitized.synopsis_centres`).  Post-processing of released points: a seed here reveals nothing.

    Returns
    -------
    ndarray (n_clusters, d), data units.
    """
    return synopsis.kmeans(int(n_clusters), random_state=0)


def centres_origin(release: dict, n_clusters: int) -> str:
    """Where :func:`synopsis_centres` took its centres from, in words for a caption."""
    return ("published with the release" if int(n_clusters) == len(release["centroids"])
            else "computed here at no cost")


def synopsis_frame(release: dict) -> pd.DataFrame:
    """The published points (data units, the release's column names) and their weights, one row a point."""
    syn = point_synopsis(release)
    df = pd.DataFrame(syn.points, columns=list(release["dataset"]["columns"]))
    df["weight"] = syn.weights
    return df


def parquet_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as a Parquet file (pyarrow), for a download."""
    import io
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def _high_dimensional_view(release: dict):
    """Centre pictures for square image data, else the centres' PCA; None when there is nothing to show."""
    d = len(release["dataset"]["columns"])
    centres = np.asarray(release["centroids"], dtype=float).reshape(-1, d)
    if not len(centres):
        return None
    title = f"{release['algorithm']['name']}, ε = {release['privacy']['epsilon']:g}"
    side = int(round(d ** 0.5))
    if side * side == d and side >= 4:
        lo = float(np.min(release["bounds"]["lower"]))
        hi = float(np.max(release["bounds"]["upper"]))
        fig = center_images_figure(np.clip(centres, lo, hi), side=side, zmin=lo, zmax=hi)
        fig.update_layout(title=dict(text=f"{title}: the {len(centres)} private centres as {side}×{side} images",
                                     font=dict(size=13)), margin=dict(t=50))
        return fig
    if len(centres) < 3:
        return None
    from sklearn.decomposition import PCA
    pca = PCA(n_components=2).fit(centres)          # of the released centres only: post-processing
    xy = pca.transform(centres)
    var = pca.explained_variance_ratio_
    fig = scatter_figure(columns=[f"PC1 ({var[0]:.0%} of the centres' variance)",
                                  f"PC2 ({var[1]:.0%})"],
                         bounds=(xy.min(axis=0) - 0.1 * np.ptp(xy, axis=0), xy.max(axis=0) + 0.1 * np.ptp(xy, axis=0)),
                         private_centers=xy, title=f"{title}: the private centres' first two principal components")
    return fig


def ledger_table(release: dict) -> pd.DataFrame:
    """The release's own budget ledger (:func:`ui.charts.ledger_table`, runs of like steps in one row): the table
    the pages show for a draw's ledger, without the share column (a release states its total beside it)."""
    from .ledger_tables import ledger_table as table
    return table(release["ledger"], grouped=True)


def centres_table(release: dict, centres=None) -> pd.DataFrame:
    """The private centres (or ``centres`` computed from the release), one row each, in data units."""
    cols = release["dataset"]["columns"]
    c = np.asarray(release["centroids"] if centres is None else centres, dtype=float).reshape(-1, len(cols))
    df = pd.DataFrame(c, columns=cols)
    df.insert(0, "centre", np.arange(1, len(c) + 1))
    return df
