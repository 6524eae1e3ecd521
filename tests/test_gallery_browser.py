"""End to end in a real browser: `python3 -m ui.serve --gallery` (`streamlit run gallery.py`) on a store holding a published taxi release.

The release is a real private EUGkM fit (random_state=None) on the NYC taxi sample, recorded through
the store.  Chromium (Playwright) opens the gallery - first by the URL of a curator page, which must
not run here - and checks the release, its guarantee and a map canvas that is not blank, with no
exception or error alert.  Skipped only when /usr/bin/chromium is missing (`.ci/run` installs it).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser_util import BAD, BROWSER_MARKS, canvas_spread, chromium, streamlit_server

from dpcore import ALGORITHMS
from dpcore.release import build_release
from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def gallery_server(tmp_path_factory, taxi_X, taxi_bounds):
    """The gallery on a free loopback port, reading a store with one published taxi release."""
    base = tmp_path_factory.mktemp("gallery")
    url = f"sqlite:///{base / 'store.db'}"
    est = ALGORITHMS["eugkm"](epsilon=1.0, bounds=taxi_bounds, n_clusters=5).fit(taxi_X)
    rel = build_release(est, algorithm="eugkm", dataset="nyc taxi", columns=["pickup_longitude", "pickup_latitude"])
    with ReleaseStore(url) as store:
        store.set_cap("nyc taxi", 2.0, who="data owner")
        store.publish(store.record("nyc taxi", rel, who="city data office"), who="city data office")
    log_path = base / "server.log"
    with streamlit_server("gallery.py", env=dict(os.environ, DPCORE_STORE=url), log_path=log_path) as base_url:
        yield base_url, log_path, rel


def test_gallery_shows_the_published_taxi_release_on_a_map(gallery_server):
    url, log_path, rel = gallery_server
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(120_000)
        # A fresh server asked for a curator page: the gallery answers, nothing else runs.
        page.goto(f"{url}/Explorer", timeout=120_000)
        page.get_by_text("Release #1: EUGkM").wait_for()
        # Streamlit says so: the curator's page does not exist here (ui.serve --gallery turns off the pages/
        # folder beside gallery.py, whose Explorer once ran its imports on a fresh gallery server); then closed.
        page.get_by_text("Page not found").wait_for()
        page.keyboard.press("Escape")
        page.get_by_text("Page not found").wait_for(state="hidden")
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                               polling=250)
        bad = page.locator(BAD)
        assert bad.count() == 0, bad.first.inner_text()[:500] + "\n" + log_path.read_text()[-2000:]
        assert page.get_by_text("1-differential privacy").count() >= 1
        assert page.get_by_text("city data office").count() >= 1
        assert page.get_by_text("every hash-chain link intact").count() == 1
        std, frac, _ = canvas_spread(page, page.locator("#deckgl-overlay").first, draw_ms=2000)
        assert std > 2.0 and frac > 0.001, "the map canvas looks blank"
        with page.expect_download() as dl:
            page.get_by_text("Download JSON").click()
        assert dl.value.suggested_filename == "release_1_eugkm.json"
        assert json.loads(Path(dl.value.path()).read_text()) == rel  # the stored release, unchanged
    assert "ImportError" not in log_path.read_text() and "Traceback" not in log_path.read_text()
