"""Compare under a cap, in a real browser (issue 31): a total that fits 2 of 4 panels draws 2, shows 2 and
names the other 2 with their cost.  Before, the whole set was refused and panels already paid for were hidden.
"""
from __future__ import annotations

import os
import re

from browser_util import BAD, BROWSER_MARKS, chromium, settled, streamlit_server

from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
RENDER_S = 240
DATASET = "s1_like"
PANELS = (0.05, 0.5, 1.0, 5.0)     # the page's default panels at ε = 1 (the curve's grid and ε)


def test_compare_under_a_cap_draws_the_panels_that_fit_and_names_the_rest(tmp_path):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    ReleaseStore(store_url).set_cap(DATASET, 0.6, who="test")       # 0.05 + 0.5 fit; 1 and 5 do not
    env = dict(os.environ, DPCORE_STORE=store_url)
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=tmp_path / "server.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.set_default_timeout(RENDER_S * 1000)
        page.goto(f"{url}/Compare?dataset={DATASET}&epsilon=1&k=5&algorithm=eugkm")
        button = page.get_by_role("button", name=re.compile(r"^Draw 2 panel\(s\): spend ε = 0\.55"))
        button.wait_for()
        settled(page, RENDER_S)
        warning = page.get_by_text(re.compile(r"2 panel\(s\) cannot be drawn: ε = 1, ε = 5 \(ε = 6 together\)"))
        assert warning.count() == 1
        assert ReleaseStore(store_url).releases(DATASET) == []     # nothing drawn before the click
        button.click()
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.wait_for()
        settled(page, RENDER_S)
        assert page.locator(BAD).count() == 0, page.locator(BAD).first.inner_text()
        text = chart.inner_text()
        assert "ε = 0.05" in text and "ε = 0.5" in text, text[:500]
        assert "ε = 1" not in text and "ε = 5" not in text, text[:500]
        # the panels that do not fit are still named, with their cost; no button to draw them
        assert page.get_by_text(re.compile(r"cannot be drawn: ε = 1, ε = 5")).count() == 1
        assert page.get_by_role("button", name=re.compile(r"^Draw \d panel")).count() == 0
        page.screenshot(path=str(tmp_path / "compare_cap.png"), full_page=True)
    store = ReleaseStore(store_url)
    assert sorted(r.epsilon for r in store.releases(DATASET)) == [0.05, 0.5]
    assert store.published() == [] and store.verify()
