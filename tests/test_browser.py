"""End to end in a real browser: `streamlit run app.py` driven by Playwright in Debian's Chromium.

A fresh start as a new user gets it: the server runs with no ``DPCORE_DATA`` (nothing but the
repository), and the browser has no network beyond the app (``--disable-background-networking``;
on a machine without internet the basemap tiles cannot load, which is what the maps must survive).

* Every page opens at its defaults and must show a chart or a map in its main area, with no
  exception or error alert; maps must not be blank (pixel spread of the deck.gl canvas).
* The Explorer opens on the embedded NYC taxi sample with a private release on the map; hovering a
  cell shows its noisy count; the ε slider (keyboard) and the algorithm selectbox redraw the map.
Skipped only when /usr/bin/chromium is missing (`.ci/run` installs it).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
from browser_util import BAD, BROWSER_MARKS, REPO, canvas_spread, chromium, no_errors, settled, streamlit_server

from dpcore import datasets
from ui.models.shared import columns_words

TAXI = datasets.TAXI_SAMPLE_NAME
FIRST_RENDER_S = 180       # the first release on 181k points; slow when the machine is shared
STEP_S = 180               # each rerun after a widget change
MAIN = '[data-testid="stMain"]'
CHARTS = '[data-testid="stPlotlyChart"], [data-testid="stDeckGlJsonChart"]'
#: Every page, by the URL path app.py's router gives it ("3_Private_coresets.py" -> "Private_coresets").
PAGES = [p.stem.split("_", 1)[1] for p in sorted((REPO / "pages").glob("*.py"))]
DEFAULT_PAGE = PAGES[0]    # app.py makes the first page the default, served at "/"

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A headless Streamlit server on a free loopback port; always terminated."""
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    # A fresh machine: no DPCORE_DATA, so only what the repository ships is available.
    env = {k: v for k, v in os.environ.items() if k != "DPCORE_DATA"}
    store = tmp_path_factory.mktemp("store") / "releases.db"   # every release the app records goes here
    env.update(DPCORE_STORE=f"sqlite:///{store}")
    with streamlit_server("app.py", env=env, log_path=log_path) as url:
        yield url, log_path


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def _assert_maps_drawn(page, what: str) -> None:
    canvases = page.locator(f"{MAIN} #deckgl-overlay:visible")
    for i in range(canvases.count()):
        std, frac, _ = canvas_spread(page, canvases.nth(i))
        assert std > 2.0 and frac > 0.001, (f"map {i + 1} looks blank {what}: pixel std {std:.2f}, "
                                            f"{frac:.4%} non-background")


def _open(page, url: str, log_path) -> None:
    """Open a page and wait until its script is done and a chart, a map or an exception is shown.

    A page that asks before spending ε (the Release page's "Draw: spends ε = …" on a fresh store: Compare's
    panels on the public data are free previews since issue 65, so nothing is recorded before it; Compare's
    "Draw N panels" on private data) gets the one click a person gives it; no other page may need any input
    to show a result.
    """
    page.goto(url, timeout=60_000)
    shown = page.locator(f"{MAIN} :is({CHARTS}, {BAD}):visible")
    draw = page.get_by_role("button", name=re.compile(r"^Draw( \d+ panel|: spends)"))
    shown.or_(draw).first.wait_for(timeout=FIRST_RENDER_S * 1000)
    settled(page, FIRST_RENDER_S)
    if not shown.count() and draw.count():
        draw.first.click()
        shown.first.wait_for(timeout=FIRST_RENDER_S * 1000)
        settled(page, FIRST_RENDER_S)
    no_errors(page, log_path)


@pytest.mark.parametrize("name", PAGES)
def test_every_page_shows_a_result_at_its_defaults(server, browser, name):
    url, log_path = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    try:
        _open(page, f"{url}/{'' if name == DEFAULT_PAGE else name}", log_path)
        charts = page.locator(f"{MAIN} :is({CHARTS}):visible")
        assert charts.count() >= 1, f"page {name}: no chart or map in the main area"
        _assert_maps_drawn(page, f"on page {name}")
        plots = page.locator(f"{MAIN} [data-testid='stPlotlyChart'] .main-svg:visible")
        maps = page.locator(f"{MAIN} #deckgl-overlay")
        assert plots.count() + maps.count() >= 1, f"page {name}: chart elements present but nothing drawn"
    finally:
        page.close()


def _tooltip_over_map(page, canvas, needle: str) -> str | None:
    """Move the pointer over a few spots of the map; the first tooltip containing ``needle``."""
    box = canvas.bounding_box()
    for fy in np.linspace(0.3, 0.7, 5):
        for fx in np.linspace(0.3, 0.7, 5):
            page.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
            page.wait_for_timeout(250)
            tip = page.locator(".deck-tooltip")
            if tip.count() and tip.first.is_visible() and needle in tip.first.inner_text():
                return tip.first.inner_text()
    return None


def test_explorer_opens_on_the_taxi_map_and_redraws(server, browser):
    url, log_path = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    try:
        _open(page, url, log_path)   # the app's front page, no query string: every default
        title = datasets.info(TAXI)["title"]
        shown = page.get_by_role("combobox", name="Dataset").input_value()
        assert shown == title, f"the Explorer's default dataset is not the taxi sample: {shown!r}"
        assert f"dataset={TAXI}" in page.url
        assert page.get_by_text(f"{title} · {columns_words(['longitude', 'latitude'])}").count() == 1
        assert page.get_by_text("ε = 1 of 1").count() == 1                  # a private release, all of ε spent
        canvas = page.locator(f"{MAIN} #deckgl-overlay").first
        std, frac, red = canvas_spread(page, canvas)
        assert std > 2.0 and frac > 0.01, f"taxi map looks blank: std {std:.2f}, {frac:.3%} non-background"
        assert red > 0.005, f"no positive noisy cells or private centres on the taxi map ({red:.3%} red pixels)"
        tip = _tooltip_over_map(page, canvas, "noisy count")
        assert tip is not None and re.search(r"noisy count.*: −?[\d,]+\.\d", tip), f"no cell hover: {tip!r}"

        # The ε slider, by keyboard on its thumb: one step down the named levels (1 -> 0.5).
        thumb = page.locator('[data-testid="stSlider"] input[type="range"]').first
        thumb.focus()
        page.keyboard.press("ArrowLeft")
        page.get_by_text("ε = 0.5 of 0.5").wait_for(timeout=STEP_S * 1000)
        settled(page, STEP_S)
        no_errors(page, log_path)
        assert "epsilon=0.5" in page.url
        _assert_maps_drawn(page, "after moving the ε slider")

        # Switch the algorithm: open the selectbox and pick DPLloyd (no synopsis: centres only).
        algorithm = page.locator('[data-testid="stSelectbox"]').filter(has_text="Algorithm")
        algorithm.click()
        page.get_by_role("option", name=re.compile(r"^DPLloyd")).first.click()
        page.wait_for_url(re.compile("algorithm=dplloyd"), timeout=STEP_S * 1000)
        settled(page, STEP_S)
        no_errors(page, log_path)
        assert page.get_by_text("ε = 0.5 of 0.5").count() == 1
        _assert_maps_drawn(page, "after switching to DPLloyd")
    finally:
        page.close()
