"""The public gallery (gallery.py) on a store seeded with real private releases, through Streamlit's AppTest.

It shows the datasets, the budget history and each release redrawn from released values, offers
the downloads, reports a tampered store, creates nothing when there is no store, and (checked in a
separate interpreter with an audit hook on every file open) never imports the dataset loaders
nor opens a data file.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from dpcore import ALGORITHMS
from dpcore.release import build_release
from dpcore.store import ReleaseStore

REPO = Path(__file__).resolve().parents[1]
TAXI_COLUMNS = ["pickup_longitude", "pickup_latitude"]


@pytest.fixture(scope="module")
def releases(taxi_X, taxi_bounds, blobs):
    """Real private fits (random_state=None): EUGkM on the taxi pickups, DPLloyd on blobs."""
    taxi = ALGORITHMS["eugkm"](epsilon=1.0, bounds=taxi_bounds, n_clusters=5).fit(taxi_X)
    X, bounds, _ = blobs
    blob = ALGORITHMS["dplloyd"](epsilon=0.5, bounds=bounds, n_clusters=3).fit(X)
    return (build_release(taxi, algorithm="eugkm", dataset="nyc taxi", columns=TAXI_COLUMNS, kind="trips"),
            build_release(blob, algorithm="dplloyd", dataset="blobs", columns=["x", "y"]))


@pytest.fixture
def store_url(tmp_path, releases, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    taxi, blob = releases
    with ReleaseStore(url) as store:
        store.register_dataset("nyc taxi", description="NYC taxi pickups, 2009-2015 sample")
        store.set_cap("nyc taxi", 3.0, who="data owner")
        store.publish(store.record("nyc taxi", taxi, who="ana"), who="ana")
        store.register_dataset("blobs")
        store.publish(store.record("blobs", blob, who="ben"), who="ben")
    monkeypatch.setenv("DPCORE_STORE", url)
    return url


def _run(**kw) -> AppTest:
    at = AppTest.from_file(str(REPO / "gallery.py"), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_gallery_shows_the_taxi_release_with_a_map(store_url, releases):
    at = _run()
    # Data sets by their titles, never by their store keys (issue 65, point 9); the choice is still the key.
    assert at.sidebar.selectbox[0].options == ["blobs", "NYC taxi pickups, 2009-2015 sample"]
    at.sidebar.selectbox[0].select("nyc taxi").run()
    assert at.sidebar.selectbox[0].value == "nyc taxi"
    assert "NYC taxi pickups, 2009-2015 sample" in [h.value for h in at.header]
    assert not at.exception
    assert [m.value for m in at.metric] == ["1", "1", "3"]  # releases, ε spent, cap
    hist = at.dataframe[0].value
    assert list(hist["drawn by"]) == ["ana"] and list(hist["algorithm"]) == ["eugkm"] and list(hist["total ε"]) == ["3"]
    assert list(hist.columns[:4]) == ["release", "ε", "ε so far", "total ε"]      # the budget first (issue 65)
    assert any("every hash-chain link intact" in c.value for c in at.caption)
    assert "Release #1: EUGkM" in [s.value for s in at.subheader]
    assert any("1-differential privacy" in m.value for m in at.markdown)
    assert len(at.get("deck_gl_json_chart")) == 1  # lon/lat release: a map
    spec = json.loads(at.get("deck_gl_json_chart")[0].proto.json)
    layer_ids = {layer["id"] for layer in spec["layers"]}
    assert {"synopsis", "private"} <= layer_ids and "raw" not in layer_ids
    centres = at.dataframe[1].value
    np.testing.assert_allclose(centres[TAXI_COLUMNS].to_numpy(), releases[0]["centroids"])
    assert [b.key for b in at.get("download_button")] == ["dl_json", "dl_csv", "dl_html", "dl_py", "dl_ipynb"]


def test_a_draw_that_was_not_published_is_counted_but_not_shown(store_url, releases):
    """Browsing records draws (each spends); the gallery shows only what someone chose to publish (issue 31)."""
    with ReleaseStore(store_url) as store:
        unpublished = store.record("nyc taxi", releases[0], who="ana")
    at = _run()
    at.sidebar.selectbox[0].select("nyc taxi").run()
    assert [m.value for m in at.metric][:2] == ["1", "2"]          # 1 publication; ε = 2 spent by 2 draws
    assert len(at.dataframe[0].value) == 2                          # the account lists both draws
    options = at.selectbox(key="release").options                   # only the published one can be opened
    assert len(options) == 1 and options[0].startswith("#1 ·") and not any(f"#{unpublished} " in o for o in options)
    with ReleaseStore(store_url) as store:                          # a store that was only browsed
        store.register_dataset("browsed")
        store.record("browsed", releases[1], who="ben")
    at = _run()
    # Only data sets with a publication are listed (issue 56): the browsed one is not, nor its draws.
    assert "browsed" not in at.sidebar.selectbox[0].options


def test_the_gallery_opens_on_the_newest_publication(store_url, releases):
    """Issue 56: it opened on a data set with no publication; now on the newest publication's data set."""
    with ReleaseStore(store_url) as store:
        store.register_dataset("mnist_sample")
        store.record("mnist_sample", releases[1], who="ben")        # drawn, never published
        newest = store.record("nyc taxi", releases[0], who="ana")
        store.publish(newest, who="ana")                            # after the blobs' publication
    at = _run()
    assert at.sidebar.selectbox[0].options == ["NYC taxi pickups, 2009-2015 sample", "blobs"]
    assert at.sidebar.selectbox[0].value == "nyc taxi"
    assert at.selectbox(key="release").value == newest
    assert f"Release #{newest}: EUGkM" in [s.value for s in at.subheader]


def test_a_publication_made_while_the_gallery_is_open_shows_on_the_next_visit(store_url, releases):
    """The publications are read once per state of the store's hash chains (issue 66: 0.1 s of JSON a
    publication, every visit): a new publication changes the heads, so the next run lists it."""
    at = _run()
    at.sidebar.selectbox[0].select("nyc taxi").run()
    assert len(at.selectbox(key="release").options) == 1
    with ReleaseStore(store_url) as store:
        newer = store.record("nyc taxi", releases[0], who="ana")
        store.publish(newer, who="ana")
    at.run()
    assert not at.exception
    assert len(at.selectbox(key="release").options) == 2 and [m.value for m in at.metric][0] == "2"


def test_gallery_draws_a_scatter_for_other_data(store_url):
    at = _run()
    at.sidebar.selectbox[0].select("blobs").run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1 and len(at.get("deck_gl_json_chart")) == 0
    assert [m.value for m in at.metric][2] == "no total set"          # never Python's None (issue 65)


def test_gallery_reports_a_tampered_store(store_url):
    eng = sa.create_engine(store_url)
    with eng.begin() as conn:
        conn.execute(sa.text("UPDATE releases SET who = 'someone else' WHERE id = 1"))
    eng.dispose()
    at = _run()
    at.sidebar.selectbox[0].select("nyc taxi").run()
    assert any("altered: row 1 of releases" in e.value for e in at.error)


def test_gallery_without_a_store_creates_nothing(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "store.db"
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{missing}")
    at = _run()
    assert any("there is no store file" in i.value for i in at.info)
    assert not missing.exists() and not missing.parent.exists()


def test_gallery_never_imports_the_loaders_nor_opens_a_data_file(store_url):
    """A fresh interpreter runs the gallery with an audit hook that sees every file it opens; its first screen of a
    grid and a centres release imports no estimator, scikit-learn, numba or SciPy's statistics (issue 66)."""
    data_dirs = [str(REPO / "sample_data"), os.environ.get("DPCORE_DATA") or str(REPO.parent / "shared" / "data")]
    code = textwrap.dedent(f"""
        import sys
        opened = []
        sys.addaudithook(lambda ev, args: opened.append(str(args[0])) if ev == "open" and args else None)
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(REPO / "gallery.py")!r}, default_timeout=120).run()
        at.sidebar.selectbox[0].select("nyc taxi").run()
        assert not at.exception, [e.message for e in at.exception]
        assert len(at.get("deck_gl_json_chart")) == 1
        loaders = sorted(m for m in sys.modules if m in ("dpcore.datasets", "dpcore.sources.config",
                                                          "dpcore.sources.ibis_source", "ui.widgets",
                                                          "ui.data_picker"))
        # Issue 66: a centres or grid release is drawn without the estimators and what they stand on.
        heavy = sorted(m for m in sys.modules if m in ("dpcore.algorithms", "sklearn", "numba", "scipy.stats"))
        try:
            import dpcore.datasets
            guard = "import allowed"
        except ImportError as exc:
            guard = str(exc)
        try:   # a UI module that reads data is refused through the data layer it imports
            import ui.widgets
            ui_guard = "import allowed"
        except ImportError as exc:
            ui_guard = str(exc)
        data = [p for p in opened if any(p.startswith(d) for d in {data_dirs!r})
                or p.endswith((".csv", ".csv.gz", ".parquet", ".npz", ".npy"))]
        print("LOADERS", loaders)
        print("HEAVY", heavy)
        print("DATA", data)
        print("GUARD", guard)
        print("UIGUARD", ui_guard)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, DPCORE_STORE=store_url),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.split(" ", 1)[0] in
                 ("LOADERS", "HEAVY", "DATA", "GUARD", "UIGUARD"))
    assert lines["LOADERS"] == "[]"
    assert lines["HEAVY"] == "[]"
    assert lines["DATA"] == "[]"
    assert "the public gallery only reads the release store" in lines["GUARD"]
    assert "the public gallery only reads the release store" in lines["UIGUARD"]


@pytest.mark.parametrize("key, params, trace", [
    ("dplloyd", {}, "private centres"),
    ("eugkm", {}, "noisy cell counts"),
    ("coreset", {"epsilon": 80.0, "delta": 1e-6}, "private coreset (area ∝ weight)"),  # t_min needs a large ε
    ("privbasic", {}, None),  # a WaveCluster grid: one heatmap of cluster ids
])
def test_each_kind_of_release_is_redrawn_from_its_values(blobs, key, params, trace):
    from ui import gallery_view as G
    X, bounds, _ = blobs
    kw = {"epsilon": 1.0, "bounds": bounds, **params}
    if "n_clusters" in ALGORITHMS[key]().get_params():
        kw["n_clusters"] = 3
    rel = build_release(ALGORITHMS[key](**kw).fit(X), algorithm=key, columns=["x", "y"])
    kind, fig = G.release_view(rel)
    assert kind == "plot"
    names = [t.name for t in fig.data]
    if trace is None:
        assert fig.data[0].type == "heatmap" and np.nanmax(fig.data[0].z) >= 0
    else:
        assert trace in names
    if rel["centroids"] and trace is not None:
        drawn = next(t for t in fig.data if t.name == "private centres")
        np.testing.assert_allclose(np.c_[drawn.x, drawn.y], rel["centroids"])
    # The same release on longitude/latitude columns is a map.
    geo = dict(rel, dataset={"name": "", "columns": ["longitude", "latitude"]})
    assert G.is_geo(geo) and G.release_view(geo)[0] == "map"


def test_high_dimensional_releases_are_centre_images_or_their_principal_components():
    """Issue 31: the gallery drew MNIST as pixel_0_0 against pixel_0_1.  Images are centre pictures now,
    other high-dimensional releases the centres' own principal components (released values only)."""
    from sklearn.datasets import load_digits

    from ui import gallery_view as G
    X = load_digits().data                        # 8 x 8 images, pixels in [0, 16]
    est = ALGORITHMS["zcdp_lloyd"](n_clusters=10, epsilon=2.0, bounds=(0.0, 16.0)).fit(X)
    rel = build_release(est, algorithm="zcdp_lloyd", columns=[f"pixel_{i // 8}_{i % 8}" for i in range(64)])
    kind, fig = G.release_view(rel)
    assert kind == "plot" and [t.type for t in fig.data] == ["heatmap"] * 10
    np.testing.assert_allclose(np.asarray(fig.data[0].z)[::-1].ravel(), np.clip(rel["centroids"][0], 0, 16))
    assert "8×8 images" in fig.layout.title.text
    # Not a square: the centres' first two principal components, with their share of the variance.
    rel3 = build_release(ALGORITHMS["dplloyd"](n_clusters=4, epsilon=2.0, bounds=(0.0, 16.0)).fit(X[:, :5]),
                         algorithm="dplloyd", columns=list("abcde"))
    kind, fig = G.release_view(rel3)
    assert kind == "plot" and fig.layout.xaxis.title.text.startswith("PC1 (")
    assert len(next(t for t in fig.data if t.name == "private centres").x) == 4


def test_the_gallery_map_has_its_colour_legend_and_the_report_its_running_total(store_url, captured):
    """Issue 56: the gallery map had no legend and its HTML report lacked the data's running total."""
    at = _run()
    at.sidebar.selectbox[0].select("nyc taxi").run()
    assert any("noisy count per cell" in h.proto.body for h in at.get("html"))
    html = next(v for k, v in captured.items() if k.endswith("_eugkm.html"))     # the taxi release's report
    html = html.decode() if isinstance(html, bytes) else html
    from dpcore.explain import cap_words
    assert "All releases of this data together" in html and f"so far on this data: <b>1</b> ({cap_words(1, 3)})" in html
    # one unit name (issue 56): the report's total speaks of trips, as its guarantee does, not of records
    assert "for every trip (one row)" in html and "odds about one trip at most" in html and "one record" not in html
