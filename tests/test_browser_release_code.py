"""In a real browser: after a draw on the Release page, download the release as a script and as a notebook.

Both files are made when their button is clicked (a callable on Streamlit's download thread).  The script
names the data and its bounds at the top and draws the same settings again through the store; the notebook
holds the release and nothing else.  Downloading either records nothing.
"""
from __future__ import annotations

import ast
import os
import re

import nbformat
from browser_util import BAD, BROWSER_MARKS, chromium, settled, streamlit_server

from dpcore.store import ReleaseStore

RENDER_S = 180

pytestmark = BROWSER_MARKS


def test_release_page_downloads_the_script_and_the_notebook(tmp_path):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    env = dict(os.environ, DPCORE_STORE=store_url)
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=tmp_path / "server.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
        page.set_default_timeout(RENDER_S * 1000)
        page.goto(f"{url}/Release?dataset=s1_like&algorithm=dplloyd&k=15&epsilon=0.5")
        page.get_by_text("Budget account for this data").wait_for()
        settled(page, RENDER_S)
        page.get_by_role("button", name=re.compile(r"^Draw: spends")).first.click()
        page.get_by_text(re.compile(r"release #\d+ in the release store")).first.wait_for()
        settled(page, RENDER_S)
        assert page.locator(BAD).count() == 0
        (rec,) = ReleaseStore(store_url).releases()
        files = {}
        for label, suffix in (("Download a script to draw it again (.py)", ".py"),
                              ("Download a notebook to analyse it (.ipynb)", ".ipynb")):
            settled(page, RENDER_S)          # a download button's click reruns the page: wait for it to settle
            with page.expect_download() as info:
                page.get_by_role("button", name=label).click()
            download = info.value
            assert download.suggested_filename.endswith(f"_release{rec.id}{suffix}")
            path = tmp_path / download.suggested_filename
            download.save_as(path)
            files[suffix] = path.read_text()
        page.screenshot(path=str(tmp_path / "release_code_downloads.png"), full_page=True)
    script = files[".py"]
    ast.parse(script)                                                     # valid Python
    assert f"Release #{rec.id}: DPLloyd, k = 15, ε = 0.5 on s1_like" in script
    assert 'DATA = "s1_like"' in script and 'NAME = "s1_like"' in script and "LOWER = [" in script
    assert '"--algorithm", "dplloyd"' in script and '"--epsilon", "0.5"' in script
    nb = nbformat.reads(files[".ipynb"], as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["dpcore"]["release_id"] == rec.id
    assert any(str(rec.release["centroids"][0][0]) in c.source for c in nb.cells)   # the release, embedded
    assert len(ReleaseStore(store_url).releases()) == 1                  # downloading recorded nothing
