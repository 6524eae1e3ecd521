"""One truth on every page (issue 65), in a real browser: one server, the checks a new user would make.

* point 3: the coreset's Draw button states what the store then records (all of ε), and New draw says the same;
  point 4 on the way: after the sanitized database is drawn too, the sidebar's total and the page's agree;
* point 9 on the way: publishing the sanitized database promises its points, not "its private centres";
* point 2: "Analyse a publication" hides the algorithm and ε, and k goes into the URL and on to the Release page;
* point 1: switching WaveCluster to the spirals shows their grid defaults in the sliders, and a slider move
  keeps the other slider's value;
* point 7: Compare on the embedded public taxi data shows its panels at once as free previews;
* point 8: a New draw that cannot fit under the total says so before it is pressed, and after a refusal (the
  total lowered meanwhile) the last release stays on screen with its downloads.
"""
from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlparse

from browser_util import BAD, BROWSER_MARKS, chromium, settled, streamlit_server

from dpcore.formatting import fmt_epsilon
from dpcore.store import ReleaseStore

pytestmark = BROWSER_MARKS
RENDER_S = 300
TAXI = "nyc_taxi_sample"


def _query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _no_errors(page, log) -> None:
    bad = page.locator(BAD)
    assert bad.count() == 0, f"{bad.first.inner_text()[:500]}\n{log.read_text()[-2000:]}"


def _slider(page, label: str):
    return page.locator('[data-testid="stSlider"]').filter(has_text=label)


def _shown(page, label: str) -> str:
    """The value a slider shows a person (the number over its thumb)."""
    return _slider(page, label).locator('[data-testid="stSliderThumbValue"]').inner_text().strip()


def test_one_truth_on_every_page(tmp_path):
    store_url = f"sqlite:///{tmp_path / 'releases.db'}"
    env = dict(os.environ, DPCORE_STORE=store_url)
    log = tmp_path / "server.log"
    with chromium() as browser, streamlit_server("app.py", env=env, log_path=log) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.set_default_timeout(RENDER_S * 1000)
        sidebar = page.locator('[data-testid="stSidebar"]')

        # -- point 3 (and 4, 9): the coreset's button states what is recorded ----------------------------------
        page.goto(f"{url}/Private_coresets?dataset={TAXI}&k=5&epsilon=2.0&delta=1e-08")
        draw = page.get_by_role("button", name=f"Draw: spends ε = {fmt_epsilon(2.0)}, δ = 1e-8")
        draw.first.wait_for()
        settled(page, RENDER_S)
        draw.first.click()
        page.get_by_role("button", name=re.compile(r"^New draw \(fresh noise: spends ε = 2, δ = 1e-8 again\)")).wait_for()
        settled(page, RENDER_S)
        store = ReleaseStore(store_url)
        (coreset,) = store.releases(TAXI)
        assert coreset.epsilon == 2.0 or abs(coreset.epsilon - 2.0) < 1e-9     # all of it, as the button said
        page.get_by_role("button", name=f"Draw: spends ε = {fmt_epsilon(2.0)}").click()     # the sanitized database
        publish = page.get_by_role("button", name="Publish this release…")
        page.get_by_role("button", name=re.compile(r"^New draw \(fresh noise: spends ε = 2 again\)")).wait_for()
        settled(page, RENDER_S)
        assert publish.count() == 2                     # the coreset's, then the sanitized database's
        _no_errors(page, log)
        spent = fmt_epsilon(ReleaseStore(store_url).spent(TAXI)[0])
        assert spent == "4"
        assert sidebar.get_by_text(re.compile(rf"^ε spent so far: {spent} \(no total set\)")).count() == 1
        main = page.locator('[data-testid="stMain"]')
        assert f"ε spent so far on this data: {spent}" in main.inner_text().replace("*", "")     # the same total
        publish.last.click()
        confirm = page.locator('[data-testid="stAlert"]').filter(has_text=re.compile(r"Publish release #\d+\?"))
        confirm.wait_for()
        text = confirm.inner_text()
        assert "sanitized database" in text and "private centres" not in text and "· publish" not in text
        page.get_by_role("button", name="Publish it").click()
        page.get_by_text(re.compile(r"Published by .* it is in the public gallery")).first.wait_for()
        settled(page, RENDER_S)
        page.screenshot(path=str(tmp_path / "coresets.png"))

        # -- point 2: analysing a publication shows only what it reads, and k travels -----------------------
        page.goto(f"{url}/?dataset={TAXI}&k=5&epsilon=1.0")
        sidebar.get_by_text("Analyse a publication (no spend)").click()
        page.get_by_text(re.compile(r"Analysing publication #\d+")).wait_for()
        settled(page, RENDER_S)
        k_box = sidebar.get_by_label("Number of clusters k")
        k_box.fill("10")
        k_box.press("Enter")
        page.get_by_text(re.compile(r"k-means with k = 10 on its published points")).wait_for()
        settled(page, RENDER_S)
        _no_errors(page, log)
        assert _query(page).get("k") == "10"
        assert sidebar.get_by_text("Algorithm", exact=True).count() == 0              # nothing that does nothing
        assert sidebar.get_by_text(re.compile(r"^Privacy level \(ε\)$")).count() == 0
        page.get_by_role("link", name="Release").click()
        page.get_by_text("Budget account for this data").wait_for()
        settled(page, RENDER_S)
        assert sidebar.get_by_label("Number of clusters k").input_value() == "10"

        # -- point 1: the sliders show the grid the result is computed with ---------------------------------
        page.goto(f"{url}/WaveCluster?dataset={TAXI}&epsilon=1.0")
        page.get_by_text("How close is the private result?").wait_for()
        settled(page, RENDER_S)
        assert _shown(page, "Grid cells per side") == "100"
        sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Dataset").click()
        page.get_by_role("option", name=re.compile(r"^Three spirals")).click()
        page.get_by_text("Three spirals", exact=False).first.wait_for()
        settled(page, RENDER_S)
        assert (_shown(page, "Grid cells per side"), _shown(page, "Density threshold")) == ("56", "30")
        assert (_query(page).get("num_grid"), _query(page).get("density")) == ("56", "30")
        _slider(page, "Density threshold").locator('input[type="range"]').press("ArrowRight")      # one step
        settled(page, RENDER_S)
        assert (_shown(page, "Grid cells per side"), _shown(page, "Density threshold")) == ("56", "31")   # not 100
        assert (_query(page).get("num_grid"), _query(page).get("density")) == ("56", "31")
        _no_errors(page, log)

        # -- point 7: Compare on public data: every panel at once, a free preview --------------------------------
        before = ReleaseStore(store_url).spent(TAXI)
        page.goto(f"{url}/Compare?dataset={TAXI}&algorithm=eugkm&k=5&epsilon=1.0")
        page.get_by_text("Previews, not releases.").wait_for()
        page.locator(".st-key-multiples_fig").wait_for()
        settled(page, RENDER_S)
        _no_errors(page, log)
        titles = page.locator(".st-key-multiples_fig").inner_text()
        assert titles.count("preview") == 4, titles[:400]
        assert page.get_by_role("button", name=re.compile(r"^Draw \d+ panel")).count() == 0
        assert ReleaseStore(store_url).spent(TAXI) == before                          # looking cost nothing

        # -- point 8: a draw that cannot fit says so first; a refusal leaves the last release ---------------------
        page.goto(f"{url}/Release?dataset={TAXI}&algorithm=eugkm&k=5&epsilon=1.0")
        page.get_by_role("button", name=f"Draw: spends ε = {fmt_epsilon(1.0)}").click()
        page.get_by_role("button", name="Download JSON").wait_for()
        settled(page, RENDER_S)
        rid = ReleaseStore(store_url).releases(TAXI)[-1].id
        spent = ReleaseStore(store_url).spent(TAXI)[0]
        ReleaseStore(store_url).set_cap(TAXI, spent + 0.5, 1e-6, who="test")      # 0.5 left: a new draw cannot fit
        page.reload()
        page.get_by_role("button", name="Download JSON").wait_for()
        settled(page, RENDER_S)
        again = page.get_by_role("button", name=re.compile(r"^New draw \(fresh noise: spends ε = 1 again\)"))
        assert again.is_disabled()
        assert page.get_by_text(re.compile(r"^Cannot be drawn now: A new draw would spend ε = 1, but only ε = 0\.5"))\
            .count() == 1
        ReleaseStore(store_url).set_cap(TAXI, spent + 5, 1e-6, who="test")
        page.reload()
        page.get_by_role("button", name="Download JSON").wait_for()
        settled(page, RENDER_S)
        assert again.is_enabled()
        ReleaseStore(store_url).set_cap(TAXI, spent, 1e-6, who="test")            # meanwhile, nothing is left
        again.click()
        page.get_by_text(re.compile(r"^Refused, to protect privacy")).first.wait_for()
        settled(page, RENDER_S)
        assert page.get_by_role("button", name="Download JSON").count() == 1        # the last release stays
        assert page.get_by_text(re.compile(rf"release #{rid} in the release store")).count() >= 1
        assert len(ReleaseStore(store_url).releases(TAXI)) == 3
        page.screenshot(path=str(tmp_path / "release_refused.png"))
