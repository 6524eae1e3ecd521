"""The gallery on a published sanitized database (issue 57): any k from the points, downloads, no spend."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_gallery import TAXI_COLUMNS

from dpcore.algorithms import Sanitizer
from dpcore.release import build_release
from dpcore.release.view import point_synopsis
from dpcore.store import ReleaseStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synopsis_release(taxi_X, taxi_bounds):
    """A real private synopsis (random_state=None) of the taxi pickups at ε = 1."""
    est = Sanitizer(epsilon=1.0, bounds=taxi_bounds).fit(taxi_X)
    return build_release(est, algorithm="sanitize", dataset="nyc taxi", columns=TAXI_COLUMNS)


@pytest.fixture
def store_url(tmp_path, synopsis_release, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with ReleaseStore(url) as store:
        store.register_dataset("nyc taxi")
        store.publish(store.record("nyc taxi", synopsis_release, who="ana"), who="ana")
    monkeypatch.setenv("DPCORE_STORE", url)
    return url


def _centres(at) -> np.ndarray:
    df = next(d.value for d in at.dataframe if list(d.value.columns) == ["centre", *TAXI_COLUMNS])
    return df[TAXI_COLUMNS].to_numpy()


def _account(url):
    with ReleaseStore(url) as store:
        return len(store.history("nyc taxi")), store.spent("nyc taxi"), len(store.releases())


def test_the_k_slider_recomputes_centres_from_the_publication_and_records_nothing(store_url, synopsis_release):
    before = _account(store_url)
    at = AppTest.from_file(str(REPO / "gallery.py"), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    syn = point_synopsis(synopsis_release)
    costs = {}
    for k in (3, 9):
        at.slider(key="synopsis_k").set_value(k).run()
        assert not at.exception, [e.message for e in at.exception]
        c = _centres(at)
        assert c.shape == (k, 2)
        lo, hi = (np.asarray(b) for b in (synopsis_release["bounds"]["lower"], synopsis_release["bounds"]["upper"]))
        assert np.all((c >= lo) & (c <= hi))
        spec = json.loads(at.get("deck_gl_json_chart")[0].proto.json)
        private = next(layer for layer in spec["layers"] if layer["id"] == "private")
        assert len(private["data"]) == k                      # the map shows the recomputed centres
        costs[k] = syn.cost(c)
    assert costs[9] < costs[3]                                # more centres fit the published mass better
    assert _account(store_url) == before                      # post-processing: no draw, no ε, nothing recorded


def test_the_points_and_weights_download_as_csv_and_parquet(store_url, synopsis_release, captured):
    at = AppTest.from_file(str(REPO / "gallery.py"), default_timeout=120).run()
    assert not at.exception, [e.message for e in at.exception]
    labels = [b.label for b in at.get("download_button")]
    assert "Download points and weights (CSV)" in labels and "Download points and weights (Parquet)" in labels
    syn = synopsis_release["synopsis"]
    csv = next(v for f, v in captured.items() if f.endswith("_points.csv"))
    pq = next(v for f, v in captured.items() if f.endswith("_points.parquet"))
    for df in (pd.read_csv(io.BytesIO(csv)), pd.read_parquet(io.BytesIO(pq))):
        assert list(df.columns) == [*TAXI_COLUMNS, "weight"]
        np.testing.assert_allclose(df[TAXI_COLUMNS].to_numpy(), syn["points"])
        np.testing.assert_allclose(df["weight"].to_numpy(), syn["weights"])
        assert (df["weight"] >= 0).all()


def test_at_its_own_k_a_publication_shows_the_centres_it_published(synopsis_release):
    """Issue 66: at the release's k the gallery (and "Analyse a publication") show its published centres, which
    are k-means on the same points: nothing to compute, no scikit-learn to load on the first screen."""
    from ui import gallery_view as G
    k = len(synopsis_release["centroids"])
    np.testing.assert_array_equal(G.synopsis_centres(synopsis_release, k),
                                  np.asarray(synopsis_release["centroids"], dtype=float))
    assert G.centres_origin(synopsis_release, k) == "published with the release"
    syn = point_synopsis(synopsis_release)
    np.testing.assert_allclose(G.synopsis_centres(synopsis_release, k + 1), syn.kmeans(k + 1, random_state=0))
    assert G.centres_origin(synopsis_release, k + 1) == "computed here at no cost"
    # The published centres fit the published mass about as well as a k-means computed here.
    assert syn.cost(G.synopsis_centres(synopsis_release, k)) <= 1.05 * syn.cost(syn.kmeans(k, random_state=0))


def test_the_first_screen_of_a_publication_loads_no_estimator(store_url):
    """A fresh interpreter opens the gallery on the published sanitized database: its first screen (the release's
    own k) imports neither scikit-learn nor the estimators (issue 66)."""
    code = (f"from streamlit.testing.v1 import AppTest\n"
            f"at = AppTest.from_file({str(REPO / 'gallery.py')!r}, default_timeout=120).run()\n"
            "assert not at.exception, [e.message for e in at.exception]\n"
            "import sys\n"
            "print(sorted(m for m in ('sklearn', 'dpcore.algorithms', 'numba') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=dict(os.environ, DPCORE_STORE=store_url),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
