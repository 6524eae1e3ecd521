"""One working set per person, and nothing recorded without a click (issue 56).

A browse of every page in one session (AppTest of ``app.py``, switching pages as the sidebar does) on
a fresh store records no draw and spends no ε, on public data too: a public data set gets a preview
labelled as not in the account, and "Draw" records it.  The settings chosen on one page (data set,
algorithm, k, ε) are the settings on every other, and no page changes them by itself.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.formatting import fmt_delta
from dpcore.store import ReleaseStore
from ui.models.shared import totals

APP = Path(__file__).resolve().parents[1] / "app.py"
PAGES = ["pages/3_Private_coresets.py", "pages/4_WaveCluster.py", "pages/5_High_dimensional.py",
         "pages/6_Compare.py", "pages/7_Explain.py", "pages/8_Release.py", "pages/1_Explorer.py"]


def _app(**params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_a_browse_of_every_page_on_public_data_records_nothing():
    at = _app(dataset="nyc_taxi_sample")
    assert not at.exception
    assert any("Preview, not in the account" in i.value for i in at.info)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert ReleaseStore().releases() == [], f"{page} recorded a draw on opening"
    assert ReleaseStore().spent("nyc_taxi_sample") == (0.0, 0.0)


def test_draw_records_the_preview_settings_once():
    at = _app(dataset="nyc_taxi_sample", k="5", epsilon="1.0")
    (button,) = [b for b in at.button if str(b.key).startswith("draw_")]
    assert button.label == "Draw: spends ε = 1"
    at = button.click().run()
    assert not at.exception
    assert not any("Preview, not in the account" in i.value for i in at.info)
    (rec,) = ReleaseStore().releases("nyc_taxi_sample")
    assert rec.epsilon == pytest.approx(1.0)
    assert any(f"release #{rec.id}" in c.value for c in at.caption)


def _csv() -> bytes:
    import numpy as np
    rng = np.random.default_rng(3)
    n = 300
    lon, lat = rng.uniform(-74.0, -73.95, n), rng.uniform(40.7, 40.8, n)
    rows = "\n".join(f"{i % 40},{a:.5f},{b:.5f}" for i, (a, b) in enumerate(zip(lon, lat)))
    return ("user_id,longitude,latitude\n" + rows + "\n").encode()


def test_an_upload_and_its_settings_survive_explorer_compare_explorer():
    from app_walk import upload_in_apptest
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["dataset"] = "s1_like"
    at.run()
    upload_in_apptest(at, _csv(), "trips.csv", columns=["longitude", "latitude"], bounds="-74.0, -73.95\n40.7, 40.8")
    at.selectbox(key="dataset_unit").set_value("user_id").run()
    at.number_input(key="max_contributions").set_value(3).run()
    at.number_input(key="k").set_value(7).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "trips.csv" not in str(dict(at.query_params))
    for page in ("pages/6_Compare.py", "pages/1_Explorer.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.selectbox(key="dataset").value == "Upload a file…", page
        assert at.multiselect(key="dataset_cols").value == ["longitude", "latitude"], page
        assert at.text_area(key="dataset_bounds").value == "-74.0, -73.95\n40.7, 40.8", page
        assert at.selectbox(key="dataset_unit").value == "user_id", page
        assert at.number_input(key="max_contributions").value == 3, page
        assert at.number_input(key="k").value == 7, page
        assert "trips.csv" not in str(dict(at.query_params)), page
    assert ReleaseStore().releases() == []


def test_a_map_only_page_keeps_other_data_and_high_dimensional_keeps_the_algorithm():
    at = _app(dataset="s1_like")
    at.number_input(key="k").set_value(7).run()
    for page in ("pages/3_Private_coresets.py", "pages/5_High_dimensional.py", "pages/6_Compare.py",
                 "pages/1_Explorer.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        shared = at.session_state["_dp_shared"]
        assert (shared["dataset"], shared["algorithm"], shared["k"]) == ("s1_like", "eugkm", "7"), page
    assert at.selectbox(key="algorithm").value == "eugkm"
    assert ReleaseStore().releases() == []


def test_publishing_asks_first_naming_what_becomes_public_by_whom_and_the_total():
    at = _app(dataset="nyc_taxi_sample", k="5", epsilon="1.0")
    at = at.button(key="draw_Explorer").click().run()
    (rec,) = ReleaseStore().releases("nyc_taxi_sample")
    at = at.button(key="new_draw_publish").click().run()
    assert not at.exception
    assert ReleaseStore().published() == []                 # one click only asks
    ask = next(w.value for w in at.warning if "Publish release #" in w.value)
    assert f"Publish release #{rec.id}?" in ask and "private centres" in ask and "cannot be unpublished" in ask
    assert "(local mode)" in ask and "· publish" not in ask   # by whom: a person, not "… · publish" (issue 65)
    assert totals(ReleaseStore(), "nyc_taxi_sample").words() in ask       # the account in its one form
    at = at.button(key="new_draw_publish_cancel").click().run()
    assert ReleaseStore().published() == [] and not any("Publish release #" in w.value for w in at.warning)
    at = at.button(key="new_draw_publish").click().run()
    at = at.button(key="new_draw_publish_confirm").click().run()
    assert [p.id for p in ReleaseStore().published()] == [rec.id]
    assert any(c.value.startswith("Published by ") for c in at.caption)


def test_upload_defaults_cluster_longitude_latitude_suggest_the_person_and_call_k_a_guess():
    import hashlib
    data = _csv()
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.session_state["_dp_upload"] = ("trips.csv", hashlib.sha256(data).hexdigest())
    at.session_state["_dp_upload_bytes"] = data
    at.query_params["dataset"] = "s1_like"
    at.run()
    at.selectbox(key="dataset").set_value("Upload a file…").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="dataset_cols").value == ["longitude", "latitude"]     # not "user_id, longitude"
    assert at.selectbox(key="dataset_unit").value.startswith("none")                  # suggested, not set
    assert any("“user_id” looks like an identifier" in c.value for c in at.sidebar.caption)
    assert any("a guess" in c.value for c in at.sidebar.caption)
    assert not any("the usual number of clusters for this data set" in c.value for c in at.sidebar.caption)


def _page(page: str, **params) -> AppTest:
    at = AppTest.from_file(str(APP.parent / "pages" / page), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_wavecluster_shows_the_three_spirals_at_its_default_and_says_what_it_needs_on_mnist():
    from sklearn.metrics import adjusted_rand_score

    import dpcore
    from dpcore import datasets
    at = _page("4_WaveCluster.py", dataset="spirals")
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Clusters, non-private"] == "3"
    # Three clusters that ARE the three arms (a blob and two specks also make 3): the page's grid settings,
    # non-private, against the generator's arm labels.
    grid = {s.key: s.value for s in at.sidebar.slider}
    ds = datasets.load("spirals")
    base = dpcore.ALGORITHMS["wavecluster"](num_grid=grid["num_grid"], density_threshold=grid["density"] / 100,
                                             bounds=ds.bounds).fit(ds.X)
    assert adjusted_rand_score(ds.labels, base.labels_) > 0.9
    # Coming from the taxi map (100 cells / 50 %), the spirals get their own defaults, not the taxi's.
    at = _page("4_WaveCluster.py", dataset="nyc_taxi_sample")
    assert at.sidebar.slider(key="num_grid").value == 100
    at.sidebar.selectbox(key="dataset").set_value("spirals").run()
    assert at.sidebar.slider(key="num_grid").value == grid["num_grid"]
    assert at.sidebar.slider(key="density").value == grid["density"]
    at = _page("4_WaveCluster.py", dataset="mnist_sample")
    assert not at.exception and not at.error
    assert any("needs at most 3 columns" in i.value for i in at.info)
    assert not any("pixel" in m.value and m.value.count(",") > 50 for m in at.markdown)   # no 784 column names
    assert ReleaseStore().releases() == []


def test_explain_as_i_go_is_offered_on_every_page_that_draws_on_public_data():
    # The publishing page draws too: the sentence comes after its Draw, and nothing of it goes into the release.
    at = _page("8_Release.py", dataset="nyc_taxi_sample")
    at.toggle(key="teach").set_value(True).run()
    assert not any(i.icon == "🎓" for i in at.info)   # nothing drawn yet (a fresh store)
    at.button(key="draw_Release page").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(i.icon == "🎓" and "private centres sit on average" in i.value for i in at.info)
    for page in ("1_Explorer.py", "3_Private_coresets.py", "4_WaveCluster.py", "6_Compare.py"):
        at = _page(page, dataset="nyc_taxi_sample", teach="1")
        assert not at.exception, (page, [e.value for e in at.exception])
        at.toggle(key="teach").set_value(True).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        # Compare's panels on public data are previews, shown at once (issue 65): nothing to press
        assert any(i.icon == "🎓" for i in at.info), page
    at = _page("5_High_dimensional.py", dataset="digits")
    at.toggle(key="teach").set_value(True).run()
    assert any(i.icon == "🎓" for i in at.info)


def test_one_unit_name_for_a_data_set_on_every_page(shared_data, monkeypatch):
    """Issue 56: the Explorer said "one user" and Compare "one check-in" for the same Gowalla total."""
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = _app(dataset="gowalla_nyc_checkins", k="5", epsilon="1.0")
    at = at.button(key="draw_Explorer").click().run()
    assert not at.exception, [e.value for e in at.exception]
    for page in ("pages/6_Compare.py", "pages/1_Explorer.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        total = next(m.value for m in at.markdown if "ε spent so far on this data" in m.value)
        assert "about one user at most" in total and "check-in" not in total, (page, total)


def test_the_expected_error_on_private_data_comes_only_from_a_recorded_draw(shared_data, monkeypatch):
    """Issue 56: a look-alike figure (104–176 m) was shown as the expected error of 1–26 km draws.

    Before a draw no page shows a number (Compare says what to do); after one the Explorer's figure is
    simulated from that release's synopsis at its unit (L = 5 rows per person), with its own uncertainty.
    """
    import re
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = _app(dataset="gowalla_nyc_checkins", k="5", epsilon="1.0")
    assert not [c.value for c in at.caption if "Expected error" in c.value]
    at.switch_page("pages/6_Compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [i.value for i in at.info if "No answer yet" in i.value]
    assert said and "at no extra cost" in said[0] and not re.search(r"\d", said[0])
    assert not [b for b in at.button if b.key == "acc_go"]
    at.switch_page("pages/1_Explorer.py").run()
    at = at.button(key="draw_Explorer").click().run()
    assert not at.exception, [e.value for e in at.exception]
    text = next(c.value for c in at.caption if c.value.startswith("Expected error at ε = 1"))
    assert "Simulated from release #" in text and "at most 5 rows per person" in text, text
    assert "costs no ε" in text and re.search(r"uncertain by about ×\d", text), text
    assert "look-alike of" not in text


def test_delta_chosen_on_one_page_is_the_delta_of_every_page_and_of_its_draw():
    """Issue 56: δ is in the working set with the data set, algorithm, k and ε."""
    at = _app(dataset="nyc_taxi_sample")
    at.switch_page("pages/3_Private_coresets.py").run()
    assert at.sidebar.select_slider(key="delta").value == 1e-8          # the page's default until someone chooses
    at.sidebar.select_slider(key="delta").set_value(1e-6).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["delta"] == "1e-06"
    at.switch_page("pages/7_Explain.py").run()
    assert at.select_slider(key="delta").value == 1e-6
    at.switch_page("pages/3_Private_coresets.py").run()
    assert at.sidebar.select_slider(key="delta").value == 1e-6
    button = next(b for b in at.button if str(b.key).startswith("draw_") and "δ" in b.label)   # the coreset's
    assert button.label.endswith(f"δ = {fmt_delta(1e-6)}")
    button.click().run()
    (rec,) = ReleaseStore().releases("nyc_taxi_sample")
    assert 1e-8 < rec.delta <= 1e-6      # drawn under the chosen δ (it may spend less), beyond the old fixed 1e-8
