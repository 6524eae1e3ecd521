"""How many marks a figure may send to the browser, and the weighted points thinned to fit (issue 66).

A browser draws every marker, disc or hover shape a figure sends, whether or not its pixels can tell them
apart: the levels view of a sanitized database sent ~21,000 markers per panel, four panels, and blocked
Chromium's main thread ~13 s.  The rule for every figure builder (:mod:`ui.maps`, :mod:`ui.charts`,
:mod:`ui.gallery_view`, :mod:`ui.sanitized`): a figure sends at most :data:`MAX_MARKS` marks.  Weighted
points beyond its share are drawn as the heaviest points (weight as area) and the rest summed onto a grid
of cells, drawn as one image (:func:`thin_points`).  Only released or public values are drawn, so this is
post-processing; the downloads (release JSON/CSV, the points' CSV/Parquet) keep every point.  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The most marks (markers, discs, polygons, hover shapes: one per row a figure sends) one figure carries; an
#: image counts one.  A 1400 x 700 map has ~200 pixels per mark at this count, a quarter of a 4-panel row ~150:
#: more would overlap into the shade the binned image shows anyway.  Drawn in SVG, 5,000 plotly markers take
#: ~0.5 s of the browser's main thread; the 84,000 of the levels view took ~13 s.
MAX_MARKS = 5000
#: The most marks one map carries (:func:`ui.maps.map_deck`), fewer than a plotly figure's: deck.gl draws every disc
#: and hover shape in the browser's WebGL, which without a GPU (software rendering, as in headless Chromium) costs
#: ~0.3 ms a mark: a sanitized database's 5,000 discs took ~1.3 s more of the gallery's map than 10 did, 1,200 discs
#: ~0.3 s (issue 66, benchmarks/results/browser_pages.txt).  The heaviest points are discs, the others the shade of
#: their cells, as for every figure (:func:`thin_points`).
MAX_MAP_MARKS = 2000
#: The most hover shapes a map sends for a grid of noisy counts (each a block of cells with its summed count in
#: the tooltip).  A hover shape is a transparent polygon that the browser still tessellates and draws: on the
#: Explorer's map, 4,489 of them took ~2.3 s of headless Chromium's software WebGL and 1,000 ~1.2 s (issue 66,
#: benchmarks/results/browser_pages.txt).  At this count a 700-pixel map has ~35 blocks a side, each >= 20 pixels:
#: about what a pointer can aim at; the colours still show every cell.
MAX_HOVER_CELLS = 1200
#: Cells per side of the grid the points beyond a figure's share are summed onto (for a map: one image).
REST_BINS = 128
#: The tag of a figure's part that shows the points not drawn as marks (a pydeck layer's id ends ``-rest``, a
#: plotly trace's ``meta`` is it): :func:`is_thinned` looks for it.
REST = "rest"
#: What a caption says of a figure whose points were thinned (its words, once for every page).
THINNED_WORDS = ("more points than the figure can show: the heaviest as discs, the others' summed weight as the "
                 "shade of their cell; the downloads hold every point")


@dataclass(frozen=True)
class ThinnedPoints:
    """Weighted points as a figure draws them: the heaviest as marks, the others summed per grid cell.

    Attributes
    ----------
    points : ndarray (m, d), the points drawn as marks (the heaviest ``m``; all of them when ``n_rest`` is 0)
    weights : ndarray (m,), their weights
    n_rest : int, how many points are not drawn as marks
    rest_edges : [ex (nx + 1,), ey (ny + 1,)] or None, the grid of the other points (the public box, first two
        columns); None when every point is a mark
    rest : ndarray (nx, ny) or None, the summed weight of the other points in each cell
    """

    points: np.ndarray
    weights: np.ndarray
    n_rest: int
    rest_edges: list | None
    rest: np.ndarray | None

    @property
    def complete(self) -> bool:
        """True when every point is drawn as a mark (nothing binned)."""
        return self.n_rest == 0


def thin_points(points, weights=None, *, bounds, cap: int = MAX_MARKS, bins: int = REST_BINS) -> ThinnedPoints:
    """The ``cap`` heaviest of ``points`` as marks, the others' weights summed on a ``bins`` x ``bins`` grid.

    Parameters
    ----------
    points : array-like (n, d), d >= 2; only the first two columns are binned
    weights : array-like (n,) or None; None: every point weighs 1 and the first ``cap`` in the order given are
        marks (shuffle first for a fair sample)
    bounds : (lower, upper), the public box: the grid spans its first two columns; points outside are binned
        into the border cells
    cap : int >= 0, the most points drawn as marks
    bins : int >= 1, cells per side of the grid

    Returns
    -------
    ThinnedPoints.  Ties in weight keep the order given (a stable sort), so the same input draws the same
    figure.  The marks' weights plus the grid's sum to the total weight.
    """
    pts = np.asarray(points, dtype=float)
    pts = pts.reshape(len(pts), -1)
    w = np.ones(len(pts)) if weights is None else np.asarray(weights, dtype=float).ravel()
    if len(w) != len(pts):
        raise ValueError(f"{len(pts)} points but {len(w)} weights")
    cap = max(int(cap), 0)
    if len(pts) <= cap:
        return ThinnedPoints(pts, w, 0, None, None)
    order = np.argsort(-w, kind="stable")
    top, rest = order[:cap], order[cap:]
    lo, hi = (np.broadcast_to(np.asarray(b, dtype=float).ravel(), (pts.shape[1],))[:2] for b in bounds)
    edges = [np.linspace(lo[j], hi[j], int(bins) + 1) for j in range(2)]
    inside = np.clip(pts[rest, :2], lo, hi)
    summed, _, _ = np.histogram2d(inside[:, 0], inside[:, 1], bins=edges, weights=w[rest])
    return ThinnedPoints(pts[np.sort(top)], w[np.sort(top)], len(rest), edges, summed)


def shares(demands, budget: int) -> list[int]:
    """Split ``budget`` marks among layers that want ``demands`` marks: none gets more than it wants, and what a
    small layer leaves goes to the larger ones (equal shares otherwise)."""
    demands = [max(int(d), 0) for d in demands]
    out = [0] * len(demands)
    left, todo = max(int(budget), 0), sorted(range(len(demands)), key=lambda i: demands[i])
    for n, i in enumerate(todo):
        out[i] = min(demands[i], left // (len(todo) - n))
        left -= out[i]
    return out


def is_thinned(figure) -> bool:
    """True when a figure draws some points as the shade of their cells (:func:`thin_points`): its caption says
    so (:data:`THINNED_WORDS`)."""
    if hasattr(figure, "layers"):
        return any(str(getattr(layer, "id", "")).endswith(f"-{REST}") for layer in figure.layers)
    return any(getattr(trace, "meta", None) == REST for trace in figure.data)


def count_marks(figure) -> int:
    """The marks a figure sends: one per row of each pydeck layer's data (an image layer: one), one per point of
    each plotly trace (a heatmap or image: one).

    Parameters
    ----------
    figure : pydeck.Deck or plotly Figure

    Returns
    -------
    int
    """
    if hasattr(figure, "layers"):          # pydeck
        n = 0
        for layer in figure.layers:
            data = getattr(layer, "data", None)
            n += 1 if layer.type == "BitmapLayer" or data is None else len(data)
        return n
    n = 0
    for trace in figure.data:
        if trace.type in ("heatmap", "image", "contour"):
            n += 1
        else:
            x = getattr(trace, "x", None)
            n += 0 if x is None else len(x)
    return n


__all__ = ["MAX_MARKS", "REST_BINS", "THINNED_WORDS", "ThinnedPoints", "thin_points", "shares", "is_thinned",
           "count_marks", "REST"]
