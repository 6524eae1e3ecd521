"""No figure sends more marks than its pixels can show (issue 66): ``ui.marks`` and every map and scatter builder,
while the downloads hold every released point."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.algorithms import Sanitizer
from dpcore.release import build_release, to_csv, to_json
from ui import charts, maps
from ui.gallery_view import release_view, synopsis_frame
from ui.marks import MAX_MAP_MARKS, MAX_MARKS, count_marks, is_thinned, shares, thin_points
from ui.sanitized import levels_figure

COLUMNS = ["longitude", "latitude"]


@pytest.fixture(scope="module")
def sanitized(taxi_X, taxi_bounds):
    """A real private sanitized database of the taxi pickups at ε = 2: ~20,000 weighted points."""
    est = Sanitizer(epsilon=2.0, bounds=taxi_bounds).fit(taxi_X)
    rel = build_release(est, algorithm="sanitize", dataset="nyc taxi", columns=COLUMNS)
    assert len(rel["synopsis"]["weights"]) > 2 * MAX_MARKS      # the case the rule is for
    return est.synopsis_, rel


def test_thin_points_keeps_the_heaviest_and_the_rest_adds_up():
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 10, size=(1000, 2))
    w = rng.exponential(size=1000)
    t = thin_points(pts, w, bounds=(0, 10), cap=100, bins=16)
    assert len(t.weights) == 100 and t.n_rest == 900 and not t.complete
    assert t.weights.min() >= np.sort(w)[-100]                     # the 100 heaviest
    assert t.weights.sum() + t.rest.sum() == pytest.approx(w.sum())  # nothing lost
    # Each binned point is in the cell that holds it.
    rest = np.argsort(-w, kind="stable")[100:]
    cells = np.minimum((pts[rest] / 10 * 16).astype(int), 15)
    expect = np.zeros((16, 16))
    np.add.at(expect, (cells[:, 0], cells[:, 1]), w[rest])
    np.testing.assert_allclose(t.rest, expect)
    assert t.rest_edges[0][[0, -1]].tolist() == [0, 10]


def test_thin_points_under_the_cap_draws_everything_and_ties_keep_the_order_given():
    pts = np.arange(20.0).reshape(10, 2)
    assert thin_points(pts, bounds=(0, 20), cap=10).complete
    t = thin_points(pts, bounds=(0, 20), cap=3)           # equal weights: the first three, in order
    np.testing.assert_array_equal(t.points, pts[:3])
    outside = thin_points(np.array([[-5.0, 30.0], [1.0, 1.0]]), [1.0, 2.0], bounds=(0, 20), cap=1, bins=4)
    assert outside.rest[0, 3] == 1.0                      # a point outside the box: its border cell
    with pytest.raises(ValueError, match="weights"):
        thin_points(pts, np.ones(3), bounds=(0, 20))


def test_shares_never_exceed_demand_nor_budget():
    assert shares([10, 5000, 5000], 1000) == [10, 495, 495]
    assert shares([0, 30], 100) == [0, 30]
    assert sum(shares([700, 800, 900], 1000)) == 1000
    assert shares([5, 5], -3) == [0, 0]


def test_maps_of_a_sanitized_database_and_of_raw_points_stay_under_the_cap(sanitized, taxi_X, taxi_bounds):
    syn, _ = sanitized
    edges = [np.linspace(taxi_bounds[0][j], taxi_bounds[1][j], 201) for j in range(2)]
    counts = np.random.default_rng(1).normal(5, 3, (200, 200))          # 40,000 cells of a fine grid
    deck = maps.map_deck(bounds=taxi_bounds, private_centers=syn.points[:5], baseline_centers=syn.points[5:10],
                         synopsis_edges=edges, synopsis_counts=counts, raw_points=taxi_X[:30_000],
                         coreset_points=syn.points, coreset_weights=syn.weights)
    assert count_marks(deck) <= MAX_MAP_MARKS and is_thinned(deck)       # a map's own, smaller budget
    layers = {layer.id: layer for layer in deck.layers}
    assert {"raw-rest", "coreset-rest", "synopsis", "synopsis-hover"} <= set(layers)
    # Budget shared, none wasted: the three large layers together use what the centres, box and images leave.
    assert len(layers["synopsis-hover"].data) + len(layers["raw"].data) + len(layers["coreset"].data) > 0.9 * MAX_MAP_MARKS


def test_scatter_figures_stay_under_the_cap(sanitized, taxi_X, taxi_bounds):
    syn, rel = sanitized
    fig = charts.scatter_figure(columns=COLUMNS, bounds=taxi_bounds, raw_points=taxi_X[:30_000],
                                private_centers=syn.points[:5])
    assert count_marks(fig) <= MAX_MARKS and is_thinned(fig)
    # The gallery's view of the release, as a plot (columns that are not longitude/latitude) and as a map.
    plot_rel = json.loads(json.dumps(rel))
    plot_rel["dataset"]["columns"] = ["x", "y"]
    kind, fig = release_view(plot_rel)
    assert kind == "plot" and count_marks(fig) <= MAX_MARKS and is_thinned(fig)
    kind, deck = release_view(rel)
    assert kind == "map" and count_marks(deck) <= MAX_MAP_MARKS and is_thinned(deck)


def test_the_levels_view_stays_under_the_cap_and_the_download_holds_every_point(sanitized, taxi_bounds):
    syn, rel = sanitized
    centres = syn.points[:5]
    row = [{"title": f"ε = {e}", "points": syn.points, "weights": syn.weights, "centers": centres}
           for e in (0.1, 0.5, 1, 2)]
    fig = levels_figure([("coreset", row[:2] + [{"title": "ε = 1", "note": "refused"}] + row[3:]),
                         ("sanitized database", row)], bounds=taxi_bounds, columns=COLUMNS, geo=True)
    assert count_marks(fig) <= MAX_MARKS and is_thinned(fig)
    # Every panel shows its heaviest points: the heaviest of the whole set is in each of the 7 point panels.
    heaviest = syn.points[np.argmax(syn.weights)]
    discs = [t for t in fig.data if t.type == "scattergl" and t.name.startswith("private points")]
    assert len(discs) == 7 and all(np.any((t.x == heaviest[0]) & (t.y == heaviest[1])) for t in discs)
    # What is drawn thinned is downloaded whole: the points' table, the release's JSON and CSV.
    n = len(syn.weights)
    frame = synopsis_frame(rel)
    assert len(frame) == n and frame["weight"].sum() == pytest.approx(syn.weights.sum())
    assert len(json.loads(to_json(rel))["synopsis"]["weights"]) == n
    assert len(to_csv(rel).splitlines()) > n


def test_panels_tick_labels_on_the_outer_panels_only_clear_of_the_edges(taxi_bounds):
    """Issue 65 point 10: at 1280 px the panels' edge labels ran together ("−73.974.1")."""
    pts = np.array([[-74.0, 40.8]])
    row = [{"title": f"ε = {e}", "points": pts, "weights": np.ones(1), "centers": pts} for e in (0.1, 0.5, 1, 2)]
    fig = levels_figure([("a", row), ("b", row)], bounds=taxi_bounds, columns=COLUMNS)
    layout = fig.layout
    xs = [layout[k] for k in layout if k.startswith("xaxis")]
    ys = [layout[k] for k in layout if k.startswith("yaxis")]
    assert sum(a.showticklabels is not False for a in xs) == 4          # the bottom row's
    assert sum(a.showticklabels is not False for a in ys) == 2          # the first column's
    lo, hi = taxi_bounds
    for a in xs:     # inside the panel, a quarter of its width from each edge
        assert min(a.tickvals) - lo[0] >= 0.2 * (hi[0] - lo[0]) and hi[0] - max(a.tickvals) >= 0.2 * (hi[0] - lo[0])
    assert list(xs[0].ticktext) == ["−74.05", "−73.95"]


def test_count_marks_reads_both_kinds_of_figure():
    import plotly.graph_objects as go
    import pydeck as pdk
    fig = go.Figure([go.Scatter(x=[1, 2, 3], y=[1, 2, 3]), go.Heatmap(z=np.ones((50, 50)))])
    assert count_marks(fig) == 4
    deck = pdk.Deck(layers=[pdk.Layer("ScatterplotLayer", [{"a": 1}] * 7), pdk.Layer("BitmapLayer", None)])
    assert count_marks(deck) == 8
