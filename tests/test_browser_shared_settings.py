"""In a real browser, settings follow the person from page to page (issue 31).

A page switch in the app drops the last page's URL and its widgets' state, so before this only the
page's own default came back (ε = 0.5 on the Explorer became ε = 1 on Release, 2 on coresets).
"""
from __future__ import annotations

import os
import re

from browser_util import BAD, BROWSER_MARKS, chromium, settled, streamlit_server

RENDER_S = 180

pytestmark = BROWSER_MARKS


def test_epsilon_chosen_on_the_explorer_is_the_epsilon_on_the_release_page(tmp_path):
    env = dict(os.environ, DPCORE_STORE=f"sqlite:///{tmp_path / 'releases.db'}")
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=tmp_path / "server.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(RENDER_S * 1000)
        page.goto(f"{url}/?dataset=s1_like&epsilon=0.5&k=7")
        page.get_by_text("Privacy budget of this draw").first.wait_for()
        settled(page, RENDER_S)
        page.get_by_role("link", name="Release").click()        # the sidebar's page link: no query string
        page.get_by_text("Budget account for this data").wait_for()
        settled(page, RENDER_S)
        assert page.locator(BAD).count() == 0
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert sidebar.get_by_text(re.compile(r"^ε = 0\.5$")).count() >= 1, sidebar.inner_text()
        assert "epsilon=0.5" in page.url and "k=7" in page.url and "dataset=s1_like" in page.url
        page.screenshot(path=str(tmp_path / "release_after_switch.png"), full_page=True)
