"""In a real browser, an upload is the data set on every page until it is removed (issue 56).

Before: upload a CSV on the Explorer, set columns, bounds and the person column, press Draw, open
Compare: it showed the taxi data, and back on the Explorer the upload and its settings were gone.
"""
from __future__ import annotations

import os
import re

import numpy as np
from browser_util import BROWSER_MARKS, chromium, no_errors, settled, streamlit_server, upload_on_explorer

from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
STEP_S = 120


def _csv(path):
    rng = np.random.default_rng(5)
    n = 400
    lon, lat = rng.uniform(-74.0, -73.95, n), rng.uniform(40.7, 40.8, n)
    path.write_text("user_id,longitude,latitude\n"
                    + "\n".join(f"{i % 50},{a:.5f},{b:.5f}" for i, (a, b) in enumerate(zip(lon, lat))) + "\n")
    return path


def test_an_upload_survives_explorer_compare_explorer_and_never_enters_the_url(tmp_path):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    env = dict(os.environ, DPCORE_STORE=store_url)
    log = tmp_path / "server.log"
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=log) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        sidebar = upload_on_explorer(page, url, _csv(tmp_path / "trips_private.csv"), "-74.0, -73.95\n40.7, 40.8",
                                     step_s=STEP_S)
        page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
        page.get_by_text(re.compile(r"release #\d+ in the release store")).first.wait_for()
        settled(page, STEP_S)
        no_errors(page, log)
        for link, heading in (("Compare", "Compare privacy levels"), ("Explorer", "Private k-means explorer")):
            page.get_by_role("link", name=link).first.click()
            page.get_by_role("heading", name=heading).first.wait_for()
            settled(page, STEP_S)
            no_errors(page, log)
            sidebar.get_by_text(re.compile("Using your upload “trips_private.csv”")).first.wait_for()
            assert sidebar.locator("textarea").first.input_value() == "-74.0, -73.95\n40.7, 40.8", link
            assert "trips_private" not in page.url and "dataset=" not in page.url, page.url
        # Back on the Explorer the recorded draw of the upload is shown again: nothing more was drawn.
        page.get_by_text(re.compile(r"release #\d+ in the release store")).first.wait_for()
        page.screenshot(path=str(tmp_path / "explorer_upload_kept.png"), full_page=True)
    (rec,) = ReleaseStore(store_url).releases()
    assert rec.dataset == "upload:trips_private.csv"
