"""In a real browser, on an uploaded CSV: no accuracy number before a draw, one from the draw after (issue 56).

Before: a 3,000-row upload's Explorer said 104–176 m (a public look-alike) where the draw was 1–26 km
off, and Compare's chart had a y-axis of "1, 10^52 … NaN×10^Infinity".
"""
from __future__ import annotations

import os
import re

import numpy as np
from browser_util import BROWSER_MARKS, chromium, no_errors, settled, streamlit_server, upload_on_explorer

pytestmark = BROWSER_MARKS
STEP_S = 180


def _csv(path):
    rng = np.random.default_rng(1)
    centres = np.array([[-73.98, 40.75], [-73.95, 40.65], [-73.85, 40.85], [-74.1, 40.6], [-73.78, 40.7]])
    X = centres[rng.integers(0, 5, 3000)] + rng.normal(0, 0.01, (3000, 2))
    path.write_text("user_id,longitude,latitude\n"
                    + "\n".join(f"{rng.integers(0, 500)},{a:.5f},{b:.5f}" for a, b in X) + "\n")
    return path


def test_an_upload_shows_no_preview_before_a_draw_and_one_from_the_draw_after(tmp_path):
    env = dict(os.environ, DPCORE_STORE=f"sqlite:///{tmp_path / 'releases.db'}")
    log = tmp_path / "server.log"
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=log) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        sidebar = upload_on_explorer(page, url, _csv(tmp_path / "checkins_private.csv"), "-74.3, -73.65\n40.45, 40.95",
                                     step_s=STEP_S, query="&k=5&epsilon=1.0")
        sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Person column").first.locator(
            "input").first.click()
        page.keyboard.type("user_id")
        page.keyboard.press("Enter")
        settled(page, STEP_S)
        no_errors(page, log)
        assert "Expected error" not in page.inner_text("body")
        page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
        said = page.get_by_text(re.compile(r"^Expected error at ε = 1")).first
        said.wait_for()
        settled(page, STEP_S)
        text = said.inner_text()
        assert "Simulated from release #" in text and "at most 5 rows per person" in text, text
        assert re.search(r"uncertain by about ×\d", text) and "costs no ε" in text, text
        said.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "explorer_preview.png"))
        page.get_by_role("link", name="Compare").first.click()
        page.get_by_role("heading", name="Compare privacy levels").first.wait_for()
        settled(page, STEP_S)
        page.get_by_role("button", name="Find the smallest ε").first.click()
        page.get_by_text(re.compile(r"(smallest ε tried|No ε up to)")).first.wait_for()
        settled(page, STEP_S)
        no_errors(page, log)
        chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="centre error").first
        chart.scroll_into_view_if_needed()
        ticks = " ".join(chart.locator("svg text").all_text_contents())     # axis titles and tick labels
        assert "centre error" in ticks and "NaN" not in ticks and "Infinity" not in ticks, ticks
        page.screenshot(path=str(tmp_path / "compare_accuracy.png"))


def test_a_centres_only_draw_on_an_upload_is_previewed_after_a_look_alike_drawn_on_a_click(tmp_path):
    """DPLloyd releases centres only: the Explorer offers the look-alike for previews (its cost named), and only
    after that click shows a figure, naming both releases; Compare's answer comes from the same look-alike."""
    from dpcore.store import ReleaseStore
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    env = dict(os.environ, DPCORE_STORE=store_url)
    log = tmp_path / "server.log"
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=log) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        upload_on_explorer(page, url, _csv(tmp_path / "checkins_private.csv"), "-74.3, -73.65\n40.45, 40.95",
                           step_s=STEP_S, query="&k=5&epsilon=1.0&algorithm=dplloyd")
        page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
        offer = page.get_by_role("button", name="Draw a look-alike for previews: spends ε = 0.1")
        offer.wait_for()
        settled(page, STEP_S)
        no_errors(page, log)
        body = page.inner_text("body")
        assert "Expected error" not in body and "No accuracy preview yet" in body
        page.get_by_text(re.compile(r"^No accuracy preview yet")).first.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "explorer_offer.png"))
        offer.click()
        said = page.get_by_text(re.compile(r"^Expected error at ε = 1")).first
        said.wait_for()
        settled(page, STEP_S)
        text = said.inner_text()
        assert "setting (DPLloyd)" in text and "sanitized database at ε = 0.1" in text and "costs no ε" in text, text
        said.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "explorer_lookalike.png"))
        rels = ReleaseStore(store_url).releases()
        assert sorted(r.release["algorithm"]["key"] for r in rels) == ["dplloyd", "sanitize"]
        page.get_by_role("link", name="Compare").first.click()
        page.get_by_role("heading", name="Compare privacy levels").first.wait_for()
        settled(page, STEP_S)
        no_errors(page, log)
        page.get_by_role("button", name="Find the smallest ε").first.click()
        answer = page.get_by_text(re.compile(r"(smallest ε tried|No ε up to)")).first
        answer.wait_for()
        settled(page, STEP_S)
        no_errors(page, log)
        assert "sanitized database" in answer.inner_text(), answer.inner_text()
        answer.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "compare_lookalike.png"))
        # Nothing charged without a click: the two draws, nothing for previews or the answer.
        assert len(ReleaseStore(store_url).releases()) == 2
