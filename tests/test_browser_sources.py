"""In a real browser: the Explorer on a large configured source (Parquet read through DuckDB).

A folder of real NYC taxi pickups (30,000 rows in three monthly partition folders) is named by a
``dpcore_sources.toml``; the server runs with ``DPCORE_SOURCES`` pointing at it, its own temporary
``DPCORE_STORE`` and no ``DPCORE_DATA``.  Chromium (Playwright) opens ``/?dataset=<name>``: the
Dataset picker lists it as a large source, the page settles with no exception or error alert, the
released grid and centres are drawn on a map that is not blank, and the privacy ledger is shown.
Ticking "Show the exact density" replaces the noisy cells with the exact density, captioned as NOT
private, still on a map that is not blank and without spending anything.  A screenshot is kept in
the test's temporary folder.  Skipped only when /usr/bin/chromium is missing (`.ci/run` installs it).
"""
from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd
import pytest
from browser_util import BROWSER_MARKS, canvas_spread, chromium, no_errors, settled, streamlit_server

from dpcore.explain import NOT_PRIVATE
from dpcore.store import ReleaseStore

NAME = "big_taxi"
TITLE = "Big taxi lake"
COLUMNS = ["pickup_longitude", "pickup_latitude"]
RENDER_S = 300             # the release and the non-private reference, each a few passes over the source
MAIN = '[data-testid="stMain"]'

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def sources_server(tmp_path_factory, taxi_X):
    """`streamlit run app.py` with DPCORE_SOURCES naming a Parquet folder of 30,000 real taxi pickups."""
    base = tmp_path_factory.mktemp("sources")
    lake = base / "lake" / "big"
    for i, part in enumerate(np.array_split(taxi_X[:30_000], 3)):
        folder = lake / f"month=2015-0{i + 1}"
        folder.mkdir(parents=True)
        pd.DataFrame(part, columns=COLUMNS).to_parquet(folder / "part-0.parquet")
    cfg = base / "dpcore_sources.toml"
    cfg.write_text(f'[[source]]\nname = "{NAME}"\ntitle = "{TITLE}"\npath = "{lake}"\n'
                   'columns = ["pickup_longitude", "pickup_latitude"]\n'
                   "lower = [-74.1, 40.7]\nupper = [-73.9, 40.9]\ngeo = true\nn_clusters_hint = 5\n")
    store_url = f"sqlite:///{base / 'releases.db'}"
    # Only the configured source's own path: no DPCORE_DATA to resolve anything against.
    env = {k: v for k, v in os.environ.items() if k != "DPCORE_DATA"}
    env.update(DPCORE_SOURCES=str(cfg), DPCORE_STORE=store_url)
    log_path = base / "server.log"
    with streamlit_server("app.py", env=env, log_path=log_path) as url:
        yield url, log_path, store_url


def test_explorer_on_a_large_source_draws_the_release_and_the_exact_density(sources_server, tmp_path):
    url, log_path, store_url = sources_server
    with chromium() as browser:
        from playwright.sync_api import expect  # present: chromium() skips without Playwright
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.set_default_timeout(RENDER_S * 1000)
        page.goto(f"{url}/?dataset={NAME}", timeout=120_000)
        # A configured source is private data: the page states the cost and draws on the click (issue 24).
        draw = page.get_by_role("button", name=re.compile(r"^Draw: spends ε = "))
        draw.wait_for()
        assert not ReleaseStore(store_url).releases()
        draw.click()
        page.get_by_text("Privacy budget of this draw").wait_for()
        settled(page, RENDER_S)
        no_errors(page, log_path)
        picked = page.get_by_role("combobox", name="Dataset").input_value()
        assert picked == f"{TITLE} · large", f"the Dataset picker shows {picked!r}"
        assert f"dataset={NAME}" in page.url
        assert page.get_by_text(re.compile(r"^Privacy budget of this draw: spent ε = [\d.]+ of [\d.]+ granted")).count() == 1
        assert page.locator(f"{MAIN} [data-testid='stTable']").count() >= 1   # the ledger table

        canvas = page.locator(f"{MAIN} #deckgl-overlay").first
        std, frac, red = canvas_spread(page, canvas)
        assert std > 2.0 and frac > 0.01, f"the map looks blank: std {std:.2f}, {frac:.3%} non-background"
        assert red > 0.001, f"no positive noisy cells or private centres on the map ({red:.3%} red pixels)"
        assert page.get_by_text(re.compile("cells: the noisy grid synopsis the algorithm published")).count() == 1

        # The data owner's overlay: the exact density in place of the noisy cells, labelled NOT private.
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Algorithm settings").click()      # the checkbox lives in this expander
        box = sidebar.get_by_text(re.compile(r"^Show the exact density"))
        box.wait_for()
        ticked = sidebar.get_by_role("checkbox", name=re.compile(r"^Show the exact density"))
        for _ in range(3):     # a click that lands while the expander still opens is lost: try again
            box.click()
            try:
                expect(ticked).to_be_checked(timeout=15_000)
                break
            except AssertionError:
                continue
        expect(ticked).to_be_checked(timeout=1_000)
        caption = page.get_by_text(re.compile("cells: the EXACT density of the data"))
        caption.wait_for()
        settled(page, RENDER_S)
        no_errors(page, log_path)
        assert NOT_PRIVATE in caption.inner_text()
        assert page.get_by_text(re.compile("noisy grid synopsis the algorithm published")).count() == 0
        std, frac, _ = canvas_spread(page, page.locator(f"{MAIN} #deckgl-overlay").first)
        assert std > 2.0 and frac > 0.01, f"the density map looks blank: std {std:.2f}, {frac:.3%}"
        page.screenshot(path=str(tmp_path / "explorer_large_source_exact_density.png"), full_page=True)
    hist = ReleaseStore(store_url).history(NAME)
    assert len(hist) == 1, hist            # one release recorded; the overlay spent nothing
    log = log_path.read_text()
    assert "Traceback" not in log, log[-3000:]
