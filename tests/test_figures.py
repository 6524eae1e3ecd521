"""ui.figures map builders: the grid image is the release (orientation, colours), hover is cheap and
honest, the view is the public box, sizes come from the release only."""
from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from dpcore.synopsis import CoresetSynopsis, GridSynopsis
from ui import figures as F
from ui import maps
from ui.marks import count_marks, is_thinned

BOX = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))


def _layers(deck) -> dict:
    return {layer["id"]: layer for layer in json.loads(deck.to_json())["layers"]}


def _image(layer) -> np.ndarray:
    url = layer["image"]
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA"))


def test_grid_image_is_north_up_one_pixel_per_cell_with_signed_colours():
    nx, ny = 6, 4
    edges = [np.linspace(-74.1, -73.9, nx + 1), np.linspace(40.7, 40.9, ny + 1)]
    counts = np.zeros((nx, ny))
    counts[0, ny - 1] = 500.0     # north-west corner: strongly positive
    counts[nx - 1, 0] = -500.0    # south-east corner: strongly negative
    layers = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, synopsis_counts=counts))
    bitmap = layers["synopsis"]
    assert bitmap["@@type"] == "BitmapLayer"
    assert bitmap["bounds"] == pytest.approx([-74.1, 40.7, -73.9, 40.9])
    img = _image(bitmap)
    assert img.shape == (ny, nx, 4)                   # rows = latitude, one pixel per cell
    nw, se, mid = img[0, 0], img[ny - 1, nx - 1], img[1, 2]
    assert nw[0] > 150 and nw[2] < 100 and nw[3] > 150     # red, opaque: top-left pixel is the north-west cell
    assert se[2] > 150 and se[0] < 100 and se[3] > 150     # blue, opaque: negative counts stay visible
    assert mid[3] < nw[3] and abs(int(mid[0]) - int(mid[2])) < 10   # 0: near white, nearly transparent
    assert bitmap["textureParameters"] == {"magFilter": "nearest", "minFilter": "nearest"}


def test_hover_cells_exact_when_few_blocks_when_many_and_counts_add_up(monkeypatch):
    rng = np.random.default_rng(1)
    edges = [np.linspace(-74.1, -73.9, 11), np.linspace(40.7, 40.9, 8)]
    counts = rng.normal(0, 20, (10, 7))
    hover = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, synopsis_counts=counts))["synopsis-hover"]
    assert hover["pickable"] is True and hover["getFillColor"][3] == 0      # invisible, but hoverable
    assert len(hover["data"]) == 70 and all(d["tip"].startswith("noisy count: ") for d in hover["data"])
    # The figure's budget of marks, read where the map is built: the box (4 sides) and the grid's image take 5, so 20 are
    # left for the hover cells.
    monkeypatch.setattr(maps, "MAX_MAP_MARKS", 25)
    hover = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, synopsis_counts=counts))["synopsis-hover"]
    assert len(hover["data"]) == 20 and "2 × 2 cells" in hover["data"][0]["tip"]   # 5 x 4 blocks
    # the blocks cover the whole grid: their polygons tile the box and their counts sum to the total
    area = sum((p[1][0] - p[0][0]) * (p[2][1] - p[1][1]) for p in (d["polygon"] for d in hover["data"]))
    assert area == pytest.approx(0.2 * 0.2, rel=1e-4)
    (_, _), summed = F.block_sums(edges, counts, 2)
    assert sorted(float(d["tip"].split(": ")[1].replace("−", "-").replace(",", "")) for d in hover["data"]) == \
        pytest.approx(sorted(np.round(summed.ravel(), 1)))
    assert summed.sum() == pytest.approx(counts.sum())


def test_non_uniform_edges_are_resampled_not_stretched():
    edges = [np.array([0.0, 1.0, 2.0, 2.5]), np.array([0.0, 1.0])]   # last cell half as wide
    labels = np.array([[0], [1], [2]])
    rgba = F.cluster_rgba(labels).reshape(3, 1, 4)
    url, bounds = F.grid_image(edges, rgba)
    img = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA"))
    assert bounds == [0.0, 0.0, 2.5, 1.0] and img.shape == (1, 5, 4)   # 0.5-wide pixels
    colours = [tuple(px[:3]) for px in img[0]]
    assert colours[0] == colours[1] != colours[2] == colours[3] != colours[4]


def test_view_fits_the_public_box_not_the_data():
    view = F.map_view(BOX, height=700, width=4000)
    assert view.longitude == pytest.approx(-74.0) and view.latitude == pytest.approx(40.8)
    taller = F.map_view(BOX, height=1400, width=4000)
    assert taller.zoom == pytest.approx(view.zoom + 1, abs=1e-9)       # twice the height: one zoom level
    narrow = F.map_view(BOX, height=700, width=200)      # then the box's width decides
    assert narrow.zoom < view.zoom


def test_noisy_cluster_sizes_come_from_the_release_only():
    edges = [np.linspace(0, 4, 5), np.linspace(0, 2, 3)]
    counts = np.array([[5.0, -1.0], [3.0, 2.0], [-2.0, 0.5], [10.0, 4.0]])
    syn = GridSynopsis(edges=edges, counts=counts)
    centres = np.array([[1.0, 1.0], [3.5, 1.0]])
    sizes = F.noisy_cluster_sizes(centres, syn)
    assert sizes == pytest.approx([5 - 1 + 3 + 2, -2 + 0.5 + 10 + 4])
    core = CoresetSynopsis(points=np.array([[0.0, 0.0], [4.0, 2.0], [3.9, 1.9]]), weights=np.array([2.0, 3.0, 4.0]))
    assert F.noisy_cluster_sizes(centres, core) == pytest.approx([2.0, 7.0])
    assert F.noisy_cluster_sizes(centres, None) is None


def test_centre_tooltips_say_coordinates_size_and_what_is_not_private():
    deck = F.map_deck(bounds=BOX, private_centers=np.array([[-74.0, 40.75]]), private_sizes=np.array([1234.4]),
                      baseline_centers=np.array([[-73.95, 40.8]]), baseline_sizes=np.array([1200]))
    layers = _layers(deck)
    tip = layers["private"]["data"][0]["tip"]
    assert "lon -74.00000, lat 40.75000" in tip and "noisy size (from the release): 1,234" in tip
    base_tip = layers["baseline"]["data"][0]["tip"]
    assert "1,200 points" in base_tip and F.NOT_PRIVATE in base_tip
    no_size = _layers(F.map_deck(bounds=BOX, private_centers=np.array([[-74.0, 40.75]])))["private"]["data"][0]["tip"]
    assert "not released by this algorithm" in no_size
    sides = layers["public-box"]["data"]        # the public box: four sides, each ending where the next begins
    assert len(sides) == 4 and sides[0]["from"] == [-74.1, 40.7] and sides[-1]["to"] == sides[0]["from"]
    assert all(a["to"] == b["from"] for a, b in zip(sides, sides[1:]))


def test_count_legend_has_a_negative_half_only_for_noisy_counts():
    from ui.figures import count_legend_html
    noisy = count_legend_html(100.0)
    exact = count_legend_html(100.0, "exact count (not private) per cell", signed=False)
    assert "≤ −100" in noisy and "negative noise" in noisy
    assert "≤ −" not in exact and "negative" not in exact and "<span>0</span>" in exact


def test_many_weighted_points_heaviest_as_discs_the_rest_as_one_image(monkeypatch):
    """A sanitized database of ~20,000 points: the heaviest drawn as discs at their place and size, each with its
    exact weight on hover; the others' weights summed per cell in one image (issue 66: no more marks than the
    figure's budget)."""
    monkeypatch.setattr(maps, "MAX_MAP_MARKS", 55)      # the box (4 sides) and the rest's image take 5: 50 discs
    rng = np.random.default_rng(3)
    pts = BOX[0] + rng.random((400, 2)) * (BOX[1] - BOX[0])
    w = rng.permutation(np.arange(400.0))          # distinct weights: the heaviest 50 are 350..399
    deck = maps.map_deck(bounds=BOX, coreset_points=pts, coreset_weights=w)
    layers = _layers(deck)
    discs, rest = layers["coreset"], layers["coreset-rest"]
    assert discs["pickable"] and rest["@@type"] == "BitmapLayer" and "coreset-light" not in layers
    assert count_marks(deck) <= 55 and is_thinned(deck)
    weights = sorted(float(p["tip"].rsplit(": ", 1)[1].replace(",", "")) for p in discs["data"])
    assert weights == list(np.arange(350.0, 400.0))
    heavy = w >= 350
    assert sorted((p["lon"], p["lat"]) for p in discs["data"]) == sorted(map(tuple, np.round(pts[heavy], 5).tolist()))
    by_place = {(p["lon"], p["lat"]): p["r"] for p in discs["data"]}
    assert by_place[tuple(np.round(pts[w.argmax()], 5))] == max(by_place.values())   # area grows with weight
    # The image covers the public box, and shows something exactly where the other 350 points lie.
    assert rest["bounds"] == pytest.approx([-74.1, 40.7, -73.9, 40.9])
    img = _image(rest)
    side = img.shape[0]
    col = np.clip(((pts[~heavy, 0] - BOX[0][0]) / 0.2 * side).astype(int), 0, side - 1)
    row = side - 1 - np.clip(((pts[~heavy, 1] - BOX[0][1]) / 0.2 * side).astype(int), 0, side - 1)
    lit = img[:, :, 3] > 0
    assert lit[row, col][w[~heavy] > 0].all() and lit.sum() <= (~heavy).sum()
    # A coreset (fewer points than the budget) keeps one layer, every point with its tooltip.
    few = _layers(maps.map_deck(bounds=BOX, coreset_points=pts[:20], coreset_weights=w[:20]))
    assert "coreset-rest" not in few and len(few["coreset"]["data"]) == 20 and not is_thinned(
        maps.map_deck(bounds=BOX, coreset_points=pts[:20], coreset_weights=w[:20]))


@pytest.mark.parametrize("lo, hi", [(23.9, 1080.0), (0.004, 0.3), (5.0, 5.5), (1.0, 1e6)])
def test_a_log_axis_reads_in_full_labels_with_its_unit(lo, hi):
    """Issue 65, point 10: plotly's minor ticks read "2, 1000, 5, 2, 100, 5"; every tick now carries its number
    and unit, in order, inside the range, and a wide range keeps to decades."""
    from ui.charts import log_ticks
    t = log_ticks(lo, hi, "m")
    vals, text = t["tickvals"], t["ticktext"]
    assert len(vals) >= 2 and vals == sorted(vals) and len(set(text)) == len(text)
    assert all(lo / 1.001 <= v <= hi * 1.001 for v in vals)
    assert all(s.endswith(" m") and s[0].isdigit() for s in text)
    assert len(vals) <= 9


def test_the_accuracy_chart_names_its_target_and_ticks_both_axes():
    """The target is a labelled line in the legend with its unit; both axes have full tick labels."""
    from dpcore.evaluation.accuracy import AccuracyAnswer
    from ui.charts import accuracy_figure
    eps = np.array([0.5, 1.0, 2.0, 5.0])
    band = np.array([[400.0, 900.0, 2000.0], [200.0, 450.0, 1000.0], [90.0, 200.0, 500.0], [30.0, 70.0, 150.0]])
    ans = AccuracyAnswer(epsilon=2.0, target=300.0, unit="m", epsilons=eps, band=band,
                         within=np.array([0.0, 0.2, 0.95, 1.0]), confidence=0.9, n_releases=50, source="raw data")
    fig = accuracy_figure(ans)
    names = [tr.name or "" for tr in fig.data]
    assert any(n.startswith("your target: 300") and n.endswith(" m") for n in names)
    assert fig.layout.xaxis.ticktext and fig.layout.yaxis.ticktext
    assert all(s.endswith(" m") for s in fig.layout.yaxis.ticktext)


@pytest.mark.parametrize("lo, hi", [(-74.1, -73.9), (40.7, 40.9), (-10.0, 10.0), (0.0, 1.0), (-1e-4, 1e-4)])
def test_the_panels_ticks_read_apart(lo, hi):
    """Compare's small multiples: the two ticks inside a panel never read alike ("-74, -74" at the taxi box)."""
    from ui.charts import _tick_labels
    inner = [lo + 0.25 * (hi - lo), lo + 0.75 * (hi - lo)]
    text = _tick_labels(inner)
    assert len(set(text)) == 2 and all(abs(float(t) - v) <= 0.1 * (inner[1] - inner[0]) for t, v in zip(text, inner))


def test_a_fine_grid_of_counts_hovers_in_blocks_of_at_most_the_hover_cap_and_leaves_the_rest_to_points():
    """Issue 66: transparent hover polygons cost the browser's software WebGL ~0.3 ms each; a grid of noisy counts
    sends at most MAX_HOVER_CELLS blocks (their counts summed), and the points drawn beside it share the map's
    budget.  Cluster labels cannot be summed: they are not capped so."""
    from ui.marks import MAX_HOVER_CELLS, MAX_MAP_MARKS
    rng = np.random.default_rng(2)
    edges = [np.linspace(-74.1, -73.9, 134), np.linspace(40.7, 40.9, 134)]     # the Explorer's 133 x 133 grid
    counts = rng.normal(0, 5, (133, 133))
    hover = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, synopsis_counts=counts))["synopsis-hover"]["data"]
    assert 0.5 * MAX_HOVER_CELLS < len(hover) <= MAX_HOVER_CELLS and "4 × 4 cells" in hover[0]["tip"]
    # With raw points beside the grid, the map's budget is shared and the points get what the hover leaves.
    raw = rng.uniform([-74.1, 40.7], [-73.9, 40.9], (20_000, 2))
    layers = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, synopsis_counts=counts, raw_points=raw))
    hover, drawn = layers["synopsis-hover"]["data"], layers["raw"]["data"]
    assert len(hover) <= MAX_HOVER_CELLS and len(hover) + len(drawn) <= MAX_MAP_MARKS
    assert len(drawn) >= (MAX_MAP_MARKS - 20) // 2
    labels = rng.integers(-1, 3, (45, 45))             # ~1,500 labelled cells: more than the counts' cap
    hover = _layers(F.map_deck(bounds=BOX, synopsis_edges=[np.linspace(-74.1, -73.9, 46), np.linspace(40.7, 40.9, 46)],
                               cell_labels=labels))["synopsis-hover"]["data"]
    assert len(hover) == int((labels >= 0).sum()) > MAX_HOVER_CELLS


def test_many_labelled_cells_hover_by_runs_of_one_cluster_and_cover_every_cell():
    """Above the map's budget a WaveCluster grid's labels hovered nowhere (issue 66's cap); a row's run of one
    cluster's cells now hovers as one rectangle, and every labelled cell lies in exactly one run of its label."""
    from ui.maps import label_runs
    from ui.marks import MAX_MAP_MARKS
    n = 120
    gx, gy = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    labels = np.full((n, n), -1)
    for c, (cx, cy, r) in enumerate([(30, 30, 25), (80, 70, 30), (60, 105, 12)]):
        labels[(gx - cx) ** 2 + (gy - cy) ** 2 <= r * r] = c
    assert (labels >= 0).sum() > MAX_MAP_MARKS
    x0, x1, y, c = label_runs(labels)
    covered = np.full((n, n), -1)
    for a, b, row, k in zip(x0, x1, y, c):
        assert (covered[a:b, row] == -1).all()           # no cell in two runs
        covered[a:b, row] = k
    assert np.array_equal(covered, labels)               # every labelled cell, with its own cluster
    edges = [np.linspace(-74.1, -73.9, n + 1), np.linspace(40.7, 40.9, n + 1)]
    hover = _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, cell_labels=labels))["synopsis-hover"]["data"]
    assert len(hover) == x0.size <= MAX_MAP_MARKS and {h["tip"] for h in hover} == {"cluster 0", "cluster 1", "cluster 2"}
    first = hover[0]["polygon"]
    assert first[1][0] - first[0][0] == pytest.approx((x1[0] - x0[0]) * 0.2 / n, abs=1e-5)   # a run's width
    noise = np.random.default_rng(3).integers(-1, 3, (n, n))     # runs beyond the budget: no hover layer
    assert "synopsis-hover" not in _layers(F.map_deck(bounds=BOX, synopsis_edges=edges, cell_labels=noise))
