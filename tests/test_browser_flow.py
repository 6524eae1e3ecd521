"""Issue 56's flow in a real browser (Chromium): a browse records nothing, and the gallery opens on the newest
publication.

* A new person opens every page of the app on the embedded public data and presses nothing: each page shows
  its result (a preview labelled as not in the account), and the store holds no draw and no ε afterwards.
  Before issue 56 a browse of five pages recorded 6 draws and ε 4.96.
* The gallery, on a store with an older publication, a newer one on another data set and a data set that was
  drawn from but never published, opens on the newest publication and lists only the published data sets
  (it opened on a data set with "Releases published 0" and listed an unpublished upload's name).

Publishing with a confirmation is walked in ``test_browser_walk.py``; an upload kept across pages in
``test_browser_upload_kept.py``.
"""
from __future__ import annotations

import os
import re

from browser_util import BROWSER_MARKS, REPO, chromium, no_errors, settled, streamlit_server

from dpcore import ALGORITHMS, datasets
from dpcore.release import build_release
from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
STEP_S = 180    # a page's first render on a shared, loaded machine
#: Every page, by the URL path app.py's router gives it ("3_Private_coresets.py" -> "Private_coresets").
PAGES = [p.stem.split("_", 1)[1] for p in sorted((REPO / "pages").glob("*.py"))]


def test_a_browse_of_every_page_records_nothing(tmp_path):
    url_store = f"sqlite:///{tmp_path / 'releases.db'}"
    env = {k: v for k, v in os.environ.items() if k != "DPCORE_DATA"}    # a fresh machine: the shipped data only
    log_path = tmp_path / "server.log"
    with streamlit_server("app.py", env=dict(env, DPCORE_STORE=url_store), log_path=log_path) as url, \
            chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(STEP_S * 1000)
        page.goto(f"{url}/?dataset={datasets.TAXI_SAMPLE_NAME}")
        page.get_by_role("heading", name="Private k-means explorer").first.wait_for()
        settled(page, STEP_S)
        no_errors(page, log_path)
        assert page.get_by_text("Preview, not in the account.").count() >= 1
        for name in PAGES[1:]:       # through the sidebar's links, as a person browses
            page.locator('[data-testid="stSidebarNav"] a', has_text=name.replace("_", " ")).first.click()
            settled(page, STEP_S)
            no_errors(page, log_path)
            assert page.url.split("?")[0].endswith(f"/{name}"), page.url
    with ReleaseStore(url_store) as store:
        assert store.releases() == [], "a page recorded a draw without a click"
        assert store.spent(datasets.TAXI_SAMPLE_NAME) == (0.0, 0.0)


def test_the_gallery_opens_on_the_newest_publication_and_lists_only_published_data(tmp_path, blobs):
    X, bounds, _ = blobs
    url_store = f"sqlite:///{tmp_path / 'store.db'}"

    def fit(name):
        est = ALGORITHMS["eugkm"](epsilon=1.0, bounds=bounds, n_clusters=3).fit(X)
        return build_release(est, algorithm="eugkm", dataset=name, columns=["x", "y"])

    with ReleaseStore(url_store) as store:
        store.publish(store.record("older blobs", fit("older blobs"), who="ana"), who="ana")
        store.record("trips.csv", fit("trips.csv"), who="ana")                       # drawn, never published
        newest = store.record("newer blobs", fit("newer blobs"), who="bo")
        store.publish(newest, who="bo")
    log_path = tmp_path / "server.log"
    with streamlit_server("gallery.py", env=dict(os.environ, DPCORE_STORE=url_store), log_path=log_path) as url, \
            chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(STEP_S * 1000)
        page.goto(url)
        page.get_by_text(f"Release #{newest}: EUGkM").first.wait_for()
        settled(page, STEP_S)
        no_errors(page, log_path)
        assert page.get_by_role("heading", name="newer blobs").count() == 1
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        options = page.get_by_role("option")
        options.first.wait_for()
        listed = [options.nth(i).inner_text().strip() for i in range(options.count())]
        assert listed == ["newer blobs", "older blobs"], listed     # the newest first; no unpublished data set
        assert not page.get_by_text(re.compile("trips\\.csv")).count()
