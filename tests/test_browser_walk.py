"""The whole walk of issue 31, in a real browser: browsing draws, it never publishes.

One person opens the app, moves the Explorer's ε slider one step and k, then opens every other page and
moves each slider there (never ε again), asks Compare for its panels and its privacy-utility curve; a
second session asks for the same curve (served from the cache: before, this was
``CacheReplayClosureError``).  Then:

* no exception or error alert on any page, and the ε chosen on the Explorer is the ε every page shows;
* the store holds draws but **0 publications**, and the gallery shows none;
* one "Publish this release…", confirmed, on the Release page gives exactly 1 publication and 1 gallery entry,
  while the ledger still lists every draw (publishing spends nothing and removes nothing).
"""
from __future__ import annotations

import os
import re
import sys

from browser_util import BROWSER_MARKS, chromium, no_errors, settled, streamlit_server
from streamlit.testing.v1 import AppTest

from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
STEP_S = 240
EPS_LABEL = "privacy level (ε)"     # "Privacy level (ε)", or Compare's "Chosen privacy level (ε)"
#: (sidebar link, the page's heading) in the order walked after the Explorer
WALK = [("Private coresets", "Private coresets"), ("WaveCluster", "WaveCluster: clusters of any shape"),
        ("High dimensional", "High-dimensional clustering"), ("Explain", "What does ε mean for the people in the data?"),
        ("Release", "Publish a release"), ("Compare", "Compare privacy levels")]
GALLERY_ENTRY = re.compile(r"Release #\d+: ")
TAXI = "nyc_taxi_sample"
RECORDED = re.compile(r"^Release #\d+ as recorded in the store")


def _step(page, log_path) -> None:
    settled(page, STEP_S)
    no_errors(page, log_path)


def _move_sliders(page, log_path, *, skip: str = EPS_LABEL) -> int:
    """Press → on every slider of the page (main area and sidebar) but ``skip``; how many were moved."""
    moved = 0
    for i in range(page.locator('[data-testid="stSlider"]').count()):
        slider = page.locator('[data-testid="stSlider"]').nth(i)
        if skip in slider.inner_text().lower():
            continue
        thumb = slider.locator('input[type="range"]').first
        if not thumb.count():
            continue
        thumb.focus()
        page.keyboard.press("ArrowRight")
        _step(page, log_path)
        moved += 1
    return moved


def _sidebar_epsilon(page) -> str:
    slider = page.locator('[data-testid="stSlider"]').filter(has_text=EPS_LABEL)   # Explain's is in the main area
    return slider.locator('input[type="range"]').first.get_attribute("aria-valuetext") or ""


def _curve(page, log_path) -> None:
    page.get_by_text("Compute the curve", exact=True).click()
    page.locator(".st-key-curve_fig").wait_for(timeout=STEP_S * 1000)
    _step(page, log_path)


def _gallery_entries(store_url: str, monkeypatch) -> int:
    monkeypatch.setenv("DPCORE_STORE", store_url)
    try:
        at = AppTest.from_file(str(os.path.join(os.path.dirname(__file__), "..", "gallery.py")),
                               default_timeout=120).run()
    finally:
        # gallery.py installs its no-data-loaders import guard in this process for good: the rest of the
        # test run (this worker's later tests) must still import the loaders.
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "NoDataLoaders"]
    assert not at.exception, [e.value for e in at.exception]
    return sum(bool(GALLERY_ENTRY.search(str(e.value))) for e in [*at.subheader, *at.markdown, *at.header])


def test_a_walk_with_every_slider_moved_publishes_nothing_until_publish_is_pressed(tmp_path, monkeypatch):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    env = {k: v for k, v in os.environ.items() if k != "DPCORE_DATA"}   # the embedded data, as on a fresh machine
    env["DPCORE_STORE"] = store_url
    log_path = tmp_path / "server.log"
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=log_path) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(STEP_S * 1000)
        page.goto(url)
        page.get_by_text("Privacy budget of this draw").first.wait_for()
        _step(page, log_path)
        eps = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text=EPS_LABEL)
        eps.locator('input[type="range"]').first.focus()
        page.keyboard.press("ArrowLeft")                       # ε 1 -> 0.5, once, on the Explorer only
        page.wait_for_url(re.compile(r"epsilon=0\.5"))
        _step(page, log_path)
        chosen = _sidebar_epsilon(page)
        assert chosen == "ε = 0.5", chosen
        moved = {"Explorer": _move_sliders(page, log_path)}
        for link, heading in WALK:
            page.get_by_role("link", name=link).first.click()
            page.get_by_role("heading", name=heading).first.wait_for()
            _step(page, log_path)
            if link == "Release":   # a click draws and records (issue 56): the publication below publishes it
                page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
                _step(page, log_path)
                page.get_by_text(RECORDED).first.wait_for()
            assert _sidebar_epsilon(page) == chosen, f"ε changed on the way to {link}"
            if link == "Compare":
                draw = page.get_by_role("button", name=re.compile(r"^Draw \d+ panel"))
                if draw.count():
                    draw.first.click()
                    _step(page, log_path)
                _curve(page, log_path)
            moved[link] = _move_sliders(page, log_path)
            assert _sidebar_epsilon(page) == chosen, f"ε changed on {link}"
        compare_url = page.url

        # A second session asks for the same curve: served from the server's cache, no replay error.
        other = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
        other.set_default_timeout(STEP_S * 1000)
        other.goto(compare_url)
        other.get_by_role("heading", name="Compare privacy levels").first.wait_for()
        _step(other, log_path)
        if not other.locator(".st-key-curve_fig").count():
            _curve(other, log_path)
        other.close()

        assert moved["WaveCluster"] >= 2 and moved["High dimensional"] >= 1 and moved["Explain"] >= 2, moved
        store = ReleaseStore(store_url)
        draws = store.releases()
        assert draws, "the walk drew nothing"
        assert store.published() == [], "browsing published"
        assert _gallery_entries(store_url, monkeypatch) == 0

        # One deliberate publication, from the Release page.
        page.get_by_role("link", name="Release").first.click()
        page.get_by_role("heading", name="Publish a release").first.wait_for()
        _step(page, log_path)
        # The headline is the running total of the data (issue 31), the store's own figure.
        total = page.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"ε spent so far: "))
        shown = re.search(r"ε spent so far: ([\d.e+-]+) \(", total.first.inner_text()).group(1)
        assert shown == f"{ReleaseStore(store_url).spent(TAXI)[0]:.3g}", total.first.inner_text()
        page.get_by_role("button", name="Publish this release…").first.click()
        _step(page, log_path)     # a confirmation first (issue 56): what becomes public, by whom, the total
        page.get_by_text(re.compile(r"Publish release #\d+\?")).first.wait_for()
        assert store.published() == [], "publishing did not ask first"
        page.get_by_role("button", name="Publish it").first.click()
        page.get_by_text(re.compile(r"^Published by ")).first.wait_for()
        _step(page, log_path)
        page.screenshot(path=str(tmp_path / "release_published.png"), full_page=True)

    store = ReleaseStore(store_url)
    assert len(store.published()) == 1
    late = [(r.id, r.who, r.algorithm, r.epsilon) for r in store.releases() if r.id not in {d.id for d in draws}]
    assert [r.id for r in store.releases()] == [r.id for r in draws], late   # every draw still listed, none new
    assert store.verify()
    assert _gallery_entries(store_url, monkeypatch) == 1
