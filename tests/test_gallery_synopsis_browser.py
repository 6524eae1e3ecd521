"""In a real browser: the gallery's k slider on a published sanitized database recomputes the centres, spends nothing.

A real private synopsis (random_state=None) of the NYC taxi sample is recorded and published; Chromium moves
the k slider with the keyboard, as a person would, and the centres shown follow while the store's account
(draws, ε, releases) stays as it was.  Skipped only when /usr/bin/chromium is missing.
"""
from __future__ import annotations

import os

import pytest
from browser_util import BAD, BROWSER_MARKS, streamlit_server

from dpcore.algorithms import Sanitizer
from dpcore.release import build_release
from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def synopsis_gallery(tmp_path_factory, taxi_X, taxi_bounds):
    base = tmp_path_factory.mktemp("gallery_synopsis")
    url = f"sqlite:///{base / 'store.db'}"
    est = Sanitizer(epsilon=1.0, bounds=taxi_bounds).fit(taxi_X)
    rel = build_release(est, algorithm="sanitize", dataset="nyc taxi",
                        columns=["pickup_longitude", "pickup_latitude"])
    with ReleaseStore(url) as store:
        store.publish(store.record("nyc taxi", rel, who="city data office"), who="city data office")
    log_path = base / "server.log"
    with streamlit_server("gallery.py", env=dict(os.environ, DPCORE_STORE=url), log_path=log_path) as base_url:
        yield base_url, url, log_path


def _account(url):
    with ReleaseStore(url) as store:
        return len(store.history("nyc taxi")), store.spent("nyc taxi"), len(store.releases())


def test_moving_the_k_slider_changes_the_centres_and_records_nothing(synopsis_gallery):
    from browser_util import chromium
    url, store_url, log_path = synopsis_gallery
    before = _account(store_url)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(120_000)
        page.goto(url, timeout=120_000)
        page.get_by_text("k-means on the published points, k = 8").first.wait_for()
        slider = page.get_by_role("slider").first
        slider.focus()
        for _ in range(5):
            page.keyboard.press("ArrowLeft")
        page.get_by_text("k-means on the published points, k = 3").first.wait_for()
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", polling=250)
        bad = page.locator(BAD)
        assert bad.count() == 0, bad.first.inner_text()[:500] + "\n" + log_path.read_text()[-2000:]
        assert page.get_by_text("Download points and weights (Parquet)").count() == 1
    assert _account(store_url) == before
    assert "Traceback" not in log_path.read_text()
