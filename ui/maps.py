"""Pydeck maps for the app and the gallery: noisy grids, centres, the public box.  No Streamlit import here.

Colour conventions, the same on every page:
* private centres: orange-red filled discs, black outline;
* non-private centres: hollow dark-blue rings ("not private: for the data owner's eyes only");
* noisy counts: diverging blue (negative) - white (0) - red (positive), so negative cells stay visible;
* raw points: grey, only in a layer labelled as non-private.
"""
from __future__ import annotations

import base64
import io
import json
import math

import numpy as np
import pydeck as pdk

from .marks import MAX_HOVER_CELLS, MAX_MAP_MARKS, REST, shares, thin_points

PRIVATE_RGB = [230, 85, 13]
BASELINE_RGB = [8, 48, 107]
RAW_RGB = [120, 120, 120]
NOT_PRIVATE = "not private: for the data owner's eyes only"
# A street basemap that needs no access token: CARTO's free "Positron" (light_all) raster tiles.  Light, so
# the red/blue cells stay readable on it.  The style is given inline, not as CARTO's style.json URL: the
# map waited for that file before drawing anything, so the deck arrived seconds after the page (issue 56,
# ~3 s where DNS fails offline); now the layers draw at once and the tiles fill in when they arrive.  Without
# internet the tiles do not load and the map is drawn on white: the public box, the cells and the centres
# alone still show where the data are.
_BASEMAP_STYLE = {
    "version": 8,
    "sources": {"carto-light": {
        "type": "raster", "tileSize": 256, "maxzoom": 19,
        "tiles": [f"https://{s}.basemaps.cartocdn.com/light_all/{{z}}/{{x}}/{{y}}.png" for s in "abcd"],
        "attribution": "© OpenStreetMap contributors © CARTO"}},
    "layers": [{"id": "carto-light", "type": "raster", "source": "carto-light"}],
}
# Streamlit's map takes a style URL only: a data URL carries the style itself, read without any request.
BASEMAP = "data:application/json;base64," + base64.b64encode(json.dumps(_BASEMAP_STYLE).encode()).decode("ascii")
# The grid is drawn as one image (BitmapLayer): its size is what the browser gets, whatever the cell
# count.  Grids finer than this many cells per side are shown with blocks summed (post-processing).
MAX_IMAGE_SIDE = 1024
TOOLTIP = {"text": "{tip}"}
_DIVERGING_WHITE = np.array([247, 247, 247], dtype=float)
_DIVERGING_RED = np.array([178, 24, 43], dtype=float)
_DIVERGING_BLUE = np.array([33, 102, 172], dtype=float)


def count_scale(values) -> float:
    """The colour scale's saturation point: the 99th percentile of |values| (at least 1).

    Computed on released (noisy) values only, so it is post-processing of the release.
    """
    v = np.abs(np.asarray(values, dtype=float)).ravel()
    return max(float(np.quantile(v, 0.99)), 1.0) if v.size else 1.0


def diverging_rgba(values: np.ndarray, scale: float | None = None, alpha: int | None = None) -> np.ndarray:
    """Map signed values to blue-white-red RGBA rows (n, 4) uint8 on a symmetric log scale.

    ``t = sign(v) log(1 + |v|) / log(1 + scale)``, clipped to [-1, 1]: small negative counts
    (pure noise) stay visibly blue next to dense cells; ``|v| >= scale`` saturates.  With
    ``alpha=None`` the opacity grows with ``|t|`` (40..220), so cells near 0 let the basemap
    through while strong negative and positive cells stay visible on white (offline) too.
    """
    v = np.asarray(values, dtype=float).ravel()
    if scale is None:
        scale = count_scale(v)
    t = np.clip(np.sign(v) * np.log1p(np.abs(v)) / np.log1p(max(scale, 1e-12)), -1, 1)
    a = np.abs(t)[:, None]
    rgb = np.where(t[:, None] >= 0, _DIVERGING_WHITE + (_DIVERGING_RED - _DIVERGING_WHITE) * a,
                   _DIVERGING_WHITE + (_DIVERGING_BLUE - _DIVERGING_WHITE) * a)
    out = np.empty((v.size, 4), dtype=np.uint8)
    out[:, :3] = np.round(rgb).astype(np.uint8)
    out[:, 3] = alpha if alpha is not None else np.round(40 + 180 * a[:, 0]).astype(np.uint8)
    return out


def count_legend_html(scale: float, label: str = "noisy count per cell", *, signed: bool = True) -> str:
    """A small HTML colour bar for :func:`diverging_rgba` (blue negative, white 0, red positive).

    ``signed=False`` draws only the half from 0 up, for values that cannot be negative (the data
    owner's exact density); noisy counts can, so they get both halves.
    """
    stops = np.linspace(-1 if signed else 0, 1, 9)
    vals = np.sign(stops) * np.expm1(np.abs(stops) * np.log1p(scale))
    cols = diverging_rgba(vals, scale=scale, alpha=255)
    grad = ", ".join(f"rgb({r},{g},{b})" for r, g, b, _ in cols)
    top = f"{scale:,.0f}"
    low = f"≤ −{top}" if signed else "0"
    return ("<div style='font-size:0.8rem;color:#555;display:flex;align-items:center;gap:0.5rem'>"
            f"<span>{label}</span>"
            f"<span>{low}</span><span style='display:inline-block;width:180px;height:10px;"
            f"border:1px solid #bbb;background:linear-gradient(to right, {grad})'></span>"
            f"<span>≥ {top}</span><span>({'blue: negative noise; ' if signed else ''}"
            "log scale, 0 in white)</span></div>")


def _block_edges(e: np.ndarray, f: int) -> np.ndarray:
    n = len(e) - 1
    return np.asarray(e, dtype=float)[np.r_[np.arange(0, n, f), n]]


def block_sums(edges: list, counts: np.ndarray, f: int):
    """Sum a 2-D grid over blocks of ``f x f`` cells (the last blocks may be narrower).

    Post-processing of a released synopsis.  Returns (edges, counts).
    """
    if f <= 1:
        return [np.asarray(e, dtype=float) for e in edges], np.asarray(counts, dtype=float)
    c = np.asarray(counts, dtype=float)
    c = np.add.reduceat(np.add.reduceat(c, np.arange(0, c.shape[0], f), axis=0), np.arange(0, c.shape[1], f), axis=1)
    return [_block_edges(e, f) for e in edges], c


def _block_factor(shape, max_cells: int) -> int:
    f = 1
    while -(-shape[0] // f) * -(-shape[1] // f) > max_cells:
        f += 1
    return f


def _pixel_cells(e: np.ndarray, max_px: int) -> np.ndarray:
    """Cell index of each image pixel along one axis: one pixel per cell on a uniform grid, else a
    uniform resampling fine enough for the narrowest cell (capped at ``max_px``)."""
    steps = np.diff(e)
    if np.allclose(steps, steps[0], rtol=1e-6, atol=0):
        return np.arange(len(steps))
    n_px = int(min(max_px, np.ceil((e[-1] - e[0]) / steps.min() - 1e-9)))
    centres = e[0] + (np.arange(n_px) + 0.5) * (e[-1] - e[0]) / n_px
    return np.clip(np.searchsorted(e, centres, side="right") - 1, 0, len(steps) - 1)


def grid_image(edges: list, rgba: np.ndarray) -> tuple[str, list]:
    """A 2-D grid of RGBA cells (nx, ny, 4) as a PNG data URL, north up, and its [W, S, E, N] bounds."""
    from PIL import Image
    ex, ey = (np.asarray(e, dtype=float) for e in edges)
    px, py = _pixel_cells(ex, MAX_IMAGE_SIDE), _pixel_cells(ey, MAX_IMAGE_SIDE)
    img = np.ascontiguousarray(rgba[px][:, py].transpose(1, 0, 2)[::-1])    # rows: north to south
    buf = io.BytesIO()
    Image.fromarray(img, mode="RGBA").save(buf, format="PNG", compress_level=1)
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return url, [float(ex[0]), float(ey[0]), float(ex[-1]), float(ey[-1])]


def _fmt(v: float, decimals: int = 1) -> str:
    return f"{v:,.{decimals}f}".replace("-", "−")


def _cell_polygons(ex, ey, ix, iy) -> list:
    return _rectangles(ex[ix], ex[ix + 1], ey[iy], ey[iy + 1])


def _rectangles(x0, x1, y0, y1) -> list:
    """Axis-parallel rectangles as deck.gl polygons (corners rounded to 6 decimals: ~0.1 m, a shorter JSON)."""
    x0, x1, y0, y1 = (np.round(a, 6).tolist() for a in (x0, x1, y0, y1))
    return [[[a, c], [b, c], [b, d], [a, d]] for a, b, c, d in zip(x0, x1, y0, y1)]


def grid_layers(edges: list, counts: np.ndarray, *, labels: np.ndarray | None = None,
                scale: float | None = None, value_label: str = "noisy count", max_hover: int = MAX_MAP_MARKS) -> list:
    """Layers drawing a released 2-D grid: one image of all cells, and a light hover layer.

    Parameters
    ----------
    edges : [ex (nx + 1,), ey (ny + 1,)], cell edges in degrees (longitude, latitude).
    counts : ndarray (nx, ny) or None, the released noisy counts (or WaveCluster's noisy transformed
        values; None when only ``labels`` were released).
    labels : ndarray (nx, ny) of int, optional
        Cluster id per cell (-1: none): cells are coloured by cluster, unlabelled ones left out.
    scale : float, optional; the colour scale's saturation (default :func:`count_scale`).
    value_label : str, default "noisy count"
        What a cell's value is, in its tooltip (``"exact count (not private)"`` for the data
        owner's density overlay of a large source).
    max_hover : int, default :data:`ui.marks.MAX_MAP_MARKS`
        The most hover shapes sent (each is a mark: one JSON object, ~3-10 µs to build and send, and a
        polygon for the browser).

    Returns
    -------
    list of pydeck.Layer
        A ``BitmapLayer`` (id ``synopsis``: one PNG, one pixel per cell, crisp edges) and a
        transparent pickable ``PolygonLayer`` (id ``synopsis-hover``) whose tooltip gives each
        cell's noisy count, or, above ``max_hover`` cells, the summed count of blocks of
        f x f cells (the tooltip says so).  Cluster labels: each labelled cell's cluster (and value), or,
        above ``max_hover`` labelled cells, one rectangle per run of a cluster's cells along a row
        (:func:`label_runs`), or no hover layer when even the runs exceed it.  Everything drawn is computed
        from the release only.
    """
    ex, ey = (np.asarray(e, dtype=float) for e in edges)
    counts = None if counts is None else np.asarray(counts, dtype=float)
    if labels is None:
        f_img = _block_factor(counts.shape, MAX_IMAGE_SIDE ** 2)
        img_edges, img_counts = block_sums([ex, ey], counts, f_img)
        rgba = diverging_rgba(img_counts, scale=scale).reshape(*img_counts.shape, 4)
    else:
        img_edges, rgba = [ex, ey], cluster_rgba(labels).reshape(*np.shape(labels), 4)
    url, box = grid_image(img_edges, rgba)
    layers = [pdk.Layer("BitmapLayer", None, id="synopsis", image=pdk.types.String(url), bounds=box,
                        texture_parameters={"minFilter": "nearest", "magFilter": "nearest"})]
    if labels is None:
        f = _block_factor(counts.shape, max(max_hover, 1))
        (hx, hy), hc = block_sums([ex, ey], counts, f)
        ix, iy = (a.ravel() for a in np.meshgrid(np.arange(hc.shape[0]), np.arange(hc.shape[1]), indexing="ij"))
        what = value_label if f == 1 else f"{value_label} of these {f} × {f} cells"
        tips = [f"{what}: {_fmt(v)}" for v in hc[ix, iy].tolist()]
    else:
        lab = np.asarray(labels)
        ix, iy = np.nonzero(lab >= 0)
        if ix.size > max_hover:
            # Labels cannot be summed into blocks: above the budget a row's run of cells of one cluster hovers as
            # one rectangle (its cluster; the cells' own values only when each cell hovers alone).
            x0, x1, y, c = label_runs(lab)
            if x0.size > max_hover:
                return layers
            runs = _rectangles(ex[x0], ex[x1], ey[y], ey[y + 1])
            hover = [{"polygon": p, "tip": f"cluster {k}"} for p, k in zip(runs, c.tolist())]
            return layers + [_hover_layer(hover)]
        hx, hy = ex, ey
        tips = [f"cluster {c}" for c in lab[ix, iy].tolist()]
        if counts is not None:
            tips = [f"{t}\nnoisy transformed value: {_fmt(v)}" for t, v in zip(tips, counts[ix, iy].tolist())]
    hover = [{"polygon": p, "tip": t} for p, t in zip(_cell_polygons(hx, hy, ix, iy), tips)]
    return layers + [_hover_layer(hover)]


def _hover_layer(hover: list):
    """The transparent pickable polygons whose tooltips a grid's cells (or blocks, or runs) show."""
    return pdk.Layer("PolygonLayer", hover, id="synopsis-hover", get_polygon="polygon", get_fill_color=[0, 0, 0, 0],
                     stroked=False, filled=True, pickable=True, auto_highlight=True, highlight_color=[0, 0, 0, 60])


def label_runs(labels: np.ndarray) -> tuple:
    """The runs of consecutive cells of one cluster along x, row by row of a 2-D label grid.

    Parameters
    ----------
    labels : ndarray (nx, ny) of int, cluster id per cell (-1: none)

    Returns
    -------
    (x0, x1, y, label) : ndarrays (runs,) of int; run ``r`` covers cells ``x0[r] <= x < x1[r]`` of row ``y[r]``,
    all labelled ``label[r]`` >= 0.  Every labelled cell is in exactly one run.
    """
    L = np.asarray(labels).T                       # (ny, nx): a row of cells along x
    pad = np.full((L.shape[0], 1), -2)
    P = np.hstack([pad, L, pad])
    # np.nonzero lists row by row, left to right: the i-th start and the i-th end belong to one run.
    y, x0 = np.nonzero(P[:, 1:-1] != P[:, :-2])
    _, last = np.nonzero(P[:, 1:-1] != P[:, 2:])
    c = L[y, x0]
    keep = c >= 0
    return x0[keep], last[keep] + 1, y[keep], c[keep]

def noisy_cluster_sizes(centers: np.ndarray, synopsis) -> np.ndarray | None:
    """Size of each private cluster as the release itself says it: the sum of the released noisy
    counts (grid) or weights (coreset, point synopsis) nearest to each centre.  None for a release without a synopsis.

    Post-processing of the release only (no raw record is read), so showing it costs no privacy.
    """
    from dpcore.metrics import assign
    kind = getattr(synopsis, "kind", None)
    c = np.asarray(centers, dtype=float)
    if kind == "grid" and c.shape[1] == len(synopsis.edges):
        pts, w = synopsis.cell_centers(), np.asarray(synopsis.counts, dtype=float).ravel()
    elif kind in ("coreset", "points"):
        pts, w = np.asarray(synopsis.points, dtype=float), np.asarray(synopsis.weights, dtype=float)
    else:
        return None
    return np.bincount(assign(pts, c), weights=w, minlength=len(c))


def _centre_records(centers, title: str, size_lines: list) -> list:
    """Scatterplot records for centres: position and a tooltip (title, coordinates, size line)."""
    out = []
    for i, (lon, lat) in enumerate(np.asarray(centers, dtype=float)[:, :2].tolist()):
        lines = [f"{title} {i + 1}", f"lon {lon:.5f}, lat {lat:.5f}", size_lines[i]]
        out.append({"lon": lon, "lat": lat, "tip": "\n".join(line for line in lines if line)})
    return out


def published_view_kwargs(est) -> dict:
    """Keyword arguments of :func:`map_deck` that draw exactly what a fitted release publishes:
    its centres (with the noisy sizes its synopsis implies) and its 2-D grid or coreset synopsis."""
    syn = est.synopsis_
    kind = getattr(syn, "kind", None)
    out = {"private_centers": est.cluster_centers_,
           "private_sizes": noisy_cluster_sizes(est.cluster_centers_, syn)}
    if kind == "grid" and len(syn.edges) == 2:
        out.update(synopsis_edges=syn.edges, synopsis_counts=syn.counts)
    elif kind in ("coreset", "points"):
        out.update(coreset_points=syn.points, coreset_weights=syn.weights)
    return out


class _CompactDeck(pdk.Deck):
    """A pydeck Deck whose JSON is compact.

    pydeck 0.9 serialises with ``indent=2``, which makes Python fall back from its C JSON encoder to
    the pure-Python one: ~5x slower on the thousands of hover objects a map carries.  Same JSON
    content, no whitespace.
    """

    def to_json(self):
        from pydeck.bindings.json_tools import default_serialize
        return json.dumps(self, sort_keys=True, default=default_serialize, separators=(",", ":"))


def map_view(bounds, height: int, width: int = 760) -> pdk.ViewState:
    """A view that fits the public box (never the data) into a map of ``width`` x ``height`` pixels.

    Web Mercator: at zoom z the world is 512 * 2^z pixels wide; the box's Mercator height and width
    must fit in ~92 % of the map's (``width``: the narrowest the map is expected to be drawn).
    """
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    merc = lambda lat: math.log(math.tan(math.pi / 4 + math.radians(float(np.clip(lat, -85, 85))) / 2))  # noqa: E731
    dy = max(merc(hi[1]) - merc(lo[1]), 1e-9) / (2 * math.pi)
    dx = max(float(hi[0] - lo[0]), 1e-9) / 360.0
    zoom = min(math.log2(0.92 * height / (512 * dy)), math.log2(0.92 * width / (512 * dx)))
    return pdk.ViewState(longitude=float((lo[0] + hi[0]) / 2), latitude=float((lo[1] + hi[1]) / 2),
                         zoom=float(np.clip(zoom, 1, 18)))


def rest_layer(thinned, rgb, *, layer_id: str) -> pdk.Layer | None:
    """The points a map does not draw as marks (:func:`ui.marks.thin_points`), as one image: each cell shaded
    by the summed weight of its points (square-root scale, transparent where there is none), id
    ``<layer_id>-rest``.  None when every point is a mark."""
    if thinned.complete:
        return None
    s = np.sqrt(np.maximum(thinned.rest, 0.0))
    a = s / s.max() if s.max() > 0 else s
    rgba = np.zeros((*s.shape, 4), dtype=np.uint8)
    rgba[..., :3] = rgb
    rgba[..., 3] = np.where(a > 0, np.round(40 + 150 * a), 0).astype(np.uint8)
    url, box = grid_image(thinned.rest_edges, rgba)
    return pdk.Layer("BitmapLayer", None, id=f"{layer_id}-{REST}", image=pdk.types.String(url), bounds=box)


def map_deck(*, bounds, private_centers=None, baseline_centers=None, synopsis_edges=None,
             synopsis_counts=None, raw_points=None, coreset_points=None, coreset_weights=None,
             cell_labels=None, private_sizes=None, baseline_sizes=None, height: int = 640,
             width: int = 760, synopsis_label: str = "noisy count") -> pdk.Deck:
    """A pydeck map of one release on longitude/latitude data.

    Parameters
    ----------
    bounds : (lower, upper) arrays (2,), degrees: the public box, outlined; the view fits it.
    private_centers, baseline_centers : ndarray (k, 2) lon/lat, optional
    synopsis_edges, synopsis_counts : 2-D grid (edges list, counts (nx, ny)), optional; drawn by
        :func:`grid_layers` (noisy counts on a diverging scale, or cluster colours with ``cell_labels``).
    raw_points : ndarray (n, 2), optional; drawn grey as the non-private reference layer.
    coreset_points, coreset_weights : optional; discs with area proportional to weight, each with its weight on
        hover.
    cell_labels : ndarray (nx, ny) int, optional; colours cells by cluster id (-1: not drawn).
    private_sizes : ndarray (k,), optional; the noisy cluster sizes the release implies
        (:func:`noisy_cluster_sizes`), shown on hover; None says the algorithm releases none.
    baseline_sizes : ndarray (k,), optional; exact non-private cluster sizes (labelled not private).
    height, width : int, pixels: the map's height, and the narrowest width it is expected to get
        (the initial view fits the public box into both).
    synopsis_label : str, default "noisy count"; what the cells' values are, in their tooltips.

    Returns
    -------
    pydeck.Deck
        On CARTO's token-free light basemap; hover (tooltip ``{tip}``) shows a cell's noisy count and a
        centre's coordinates and size.  At most :data:`ui.marks.MAX_MAP_MARKS` marks (issue 66): the grid's hover
        cells (for counts, at most :data:`ui.marks.MAX_HOVER_CELLS` blocks), the raw points and the weighted points
        share what the centres and the box leave; raw or
        weighted points beyond their share are drawn as the heaviest (the raw points: the first in the order
        given) and one image of the others' summed weight (ids ``raw-rest``, ``coreset-rest``).
    """
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    box = [[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]], [lo[0], lo[1]]]
    # The box as four line segments: deck.gl's LineLayer draws them in pixels, as a PathLayer would, but its shaders
    # link in a fraction of the time (issue 66: a PathLayer cost Chromium's software WebGL ~2 s a page, a LineLayer
    # ~0.2 s; benchmarks/results/browser_pages.txt).
    sides = [{"from": [float(a), float(b)], "to": [float(c), float(d)]} for (a, b), (c, d) in zip(box, box[1:])]
    layers = [pdk.Layer("LineLayer", sides, id="public-box", get_source_position="from", get_target_position="to",
                        get_color=[60, 60, 60, 200], width_min_pixels=1.5, get_width=1)]
    grid = synopsis_counts is not None or cell_labels is not None
    raw = raw_points is not None and len(raw_points) > 0
    core = coreset_points is not None and len(coreset_points) > 0
    # The marks' budget: the box, the centres and one image per layer are fixed; the rest is shared.
    fixed = len(sides) + sum(len(c) for c in (private_centers, baseline_centers) if c is not None) + grid + raw + core
    # Counts are summed into blocks of at most MAX_HOVER_CELLS; cluster labels cannot be, so they ask for every cell.
    hover_n = 0 if not grid else (np.size(cell_labels) if cell_labels is not None
                                  else min(np.size(synopsis_counts), MAX_HOVER_CELLS))
    hover_cap, raw_cap, core_cap = shares([hover_n, len(raw_points) if raw else 0,
                                           len(coreset_points) if core else 0], MAX_MAP_MARKS - fixed)
    if grid:
        layers += grid_layers(synopsis_edges, synopsis_counts, labels=cell_labels, value_label=synopsis_label,
                              max_hover=hover_cap)
    if raw:
        thin = thin_points(np.asarray(raw_points, dtype=float)[:, :2], bounds=(lo, hi), cap=raw_cap)
        rest = rest_layer(thin, RAW_RGB, layer_id="raw")
        layers += [] if rest is None else [rest]
        pts = [{"lon": a, "lat": b} for a, b in np.round(thin.points, 6).tolist()]
        layers.append(pdk.Layer("ScatterplotLayer", pts, id="raw", get_position=["lon", "lat"],
                                get_fill_color=RAW_RGB + [90], get_radius=25, radius_min_pixels=1,
                                radius_max_pixels=3))
    if core:
        w_all = np.asarray(coreset_weights, dtype=float)
        thin = thin_points(np.asarray(coreset_points, dtype=float)[:, :2], w_all, bounds=(lo, hi), cap=core_cap)
        rest = rest_layer(thin, [49, 163, 84], layer_id="coreset")
        layers += [] if rest is None else [rest]
        w = thin.weights
        r = np.round(60 + 600 * np.sqrt(np.maximum(w, 0) / max(w_all.max(), 1e-12)))
        xy = np.round(thin.points, 5)     # 5 decimals: ~1 m
        cs = [{"lon": a, "lat": b, "r": rr, "tip": f"coreset point\nlon {a:.5f}, lat {b:.5f}\nweight: {_fmt(ww)}"}
              for (a, b), rr, ww in zip(xy.tolist(), r.tolist(), w.tolist())]
        layers.append(pdk.Layer("ScatterplotLayer", cs, id="coreset", pickable=True, get_position=["lon", "lat"],
                                get_radius="r", get_fill_color=[49, 163, 84, 150], stroked=True,
                                get_line_color=[0, 90, 50], line_width_min_pixels=1))
    if baseline_centers is not None:
        k = len(baseline_centers)
        sizes = ([f"{int(round(v)):,} points" for v in np.asarray(baseline_sizes).tolist()]
                 if baseline_sizes is not None else [""] * k)
        recs = _centre_records(baseline_centers, "non-private centre", [f"{z}\n({NOT_PRIVATE})" for z in sizes])
        layers.append(pdk.Layer("ScatterplotLayer", recs, id="baseline", get_position=["lon", "lat"], get_radius=350,
                                radius_min_pixels=9, filled=False, stroked=True, get_line_color=BASELINE_RGB,
                                line_width_min_pixels=3, pickable=True))
    if private_centers is not None:
        k = len(private_centers)
        sizes = ([f"noisy size (from the release): {_fmt(v, 0)}" for v in np.asarray(private_sizes).tolist()]
                 if private_sizes is not None else ["size: not released by this algorithm"] * k)
        recs = _centre_records(private_centers, "private centre", sizes)
        layers.append(pdk.Layer("ScatterplotLayer", recs, id="private", get_position=["lon", "lat"],
                                get_radius=250, radius_min_pixels=7, get_fill_color=PRIVATE_RGB, stroked=True,
                                get_line_color=[0, 0, 0], line_width_min_pixels=2, pickable=True))
    return _CompactDeck(layers=layers, initial_view_state=map_view((lo, hi), height, width), map_provider="carto",
                        map_style=BASEMAP, tooltip=TOOLTIP, height=height)


# -- grid clusters (WaveCluster family) --------------------------------------------------------
#: Qualitative palette for cluster ids (cycled); cells with label -1 are transparent.
CLUSTER_PALETTE = np.array([[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189],
                            [140, 86, 75], [227, 119, 194], [188, 189, 34], [23, 190, 207], [127, 127, 127]])


def cluster_rgba(labels, alpha: int = 190) -> np.ndarray:
    """RGBA rows (n, 4) uint8 for integer cluster ids (C order of the grid); -1 gets alpha 0."""
    lab = np.asarray(labels).ravel()
    out = np.zeros((lab.size, 4), dtype=np.uint8)
    ok = lab >= 0
    out[ok, :3] = CLUSTER_PALETTE[lab[ok] % len(CLUSTER_PALETTE)]
    out[ok, 3] = alpha
    return out


__all__ = ["PRIVATE_RGB", "BASELINE_RGB", "RAW_RGB", "NOT_PRIVATE", "BASEMAP", "MAX_IMAGE_SIDE", "MAX_MAP_MARKS",
           "TOOLTIP", "count_scale", "diverging_rgba", "count_legend_html", "block_sums", "grid_image",
           "grid_layers", "rest_layer", "noisy_cluster_sizes", "published_view_kwargs", "map_view", "map_deck",
           "CLUSTER_PALETTE", "cluster_rgba"]
