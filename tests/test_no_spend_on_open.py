"""Nothing spent without a click on private data (issue 24), and one draw per setting across sessions.

A walk of every page on data that is not public (a real data file from ``$DPCORE_DATA``) leaves the
store's total where it was: each page states the cost and offers one "Draw" button.  Pressing it
draws once and records who drew.  Two sessions that draw the same settings record one draw.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore import datasets
from dpcore.store import ReleaseStore

PAGES = Path(__file__).resolve().parents[1] / "pages"
GOWALLA = "gowalla_nyc_checkins"
WALK = [("1_Explorer.py", GOWALLA), ("3_Private_coresets.py", GOWALLA), ("4_WaveCluster.py", GOWALLA),
        ("5_High_dimensional.py", "mnist_784"), ("6_Compare.py", GOWALLA), ("7_Explain.py", GOWALLA),
        ("8_Release.py", GOWALLA)]


def _open(page: str, dataset: str, **params) -> AppTest:
    at = AppTest.from_file(str(PAGES / page), default_timeout=300)
    at.query_params["dataset"] = dataset
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_the_shared_files_are_private_and_the_embedded_samples_public(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    assert not datasets.load(GOWALLA).public
    assert datasets.load(datasets.TAXI_SAMPLE_NAME).public and datasets.load("s1_like").public


def test_a_walk_of_every_page_on_private_data_spends_nothing(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    for page, dataset in WALK:
        at = _open(page, dataset)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert ReleaseStore().releases() == [], f"{page} drew on opening"
        draws = [b for b in at.button if str(b.label).startswith("Draw")]
        if page != "7_Explain.py":       # the Explain page draws nothing at all
            assert draws, f"{page} offers no Draw button"
            # The cost from the draw's budget plan (issue 65): "at most" where only the noisy size will tell.
            assert re.search(r"spends? (at most )?ε = ", draws[0].label), draws[0].label
    assert ReleaseStore().spent(GOWALLA) == (0.0, 0.0)


def test_draw_spends_once_and_a_second_session_sees_the_same_draw(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = _open("1_Explorer.py", GOWALLA, k="5", epsilon="1.0")
    (button,) = [b for b in at.button if str(b.key).startswith("draw_")]
    assert button.label == "Draw: spends ε = 1"
    at = button.click().run()
    assert not at.exception
    # In the run that draws, the offer is gone: "nothing has been drawn" would no longer be true.
    assert not any("Nothing has been drawn" in i.value for i in at.info)
    assert not [b for b in at.button if str(b.key).startswith("draw_")]
    (rec,) = ReleaseStore().releases(GOWALLA)
    assert rec.epsilon == pytest.approx(1.0) and rec.who.endswith("(local mode) · Explorer")
    assert any(f"release #{rec.id}" in c.value for c in at.caption)
    # Another session (a new AppTest: its own session state) opening the same settings finds that draw:
    # nothing more is spent and no button is needed.
    other = _open("1_Explorer.py", GOWALLA, k="5", epsilon="1.0")
    assert not [b for b in other.button if str(b.key).startswith("draw_")]
    assert any(f"release #{rec.id}" in c.value for c in other.caption)
    assert len(ReleaseStore().releases(GOWALLA)) == 1


def test_two_sessions_pressing_draw_on_one_setting_spend_once(shared_data, monkeypatch):
    """Issue 24 (CI of stop 70): both sessions opened before either drew; both press "Draw".

    The second press finds the first session's draw (the store's settings key) and shows it, free;
    only "New draw" records a draw beside an existing one.
    """
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    first = _open("1_Explorer.py", GOWALLA, k="4", epsilon="1.0")
    second = _open("1_Explorer.py", GOWALLA, k="4", epsilon="1.0")
    first = first.button(key="draw_Explorer").click().run()
    second = second.button(key="draw_Explorer").click().run()
    assert not first.exception and not second.exception
    (rec,) = ReleaseStore().releases(GOWALLA)
    assert ReleaseStore().spent(GOWALLA)[0] == pytest.approx(1.0)
    for at in (first, second):
        assert any(f"release #{rec.id}" in c.value for c in at.caption)
    # "New draw" in the second session records a second draw and spends again.
    (again,) = [b for b in second.button if str(b.label).startswith("New draw")]
    second = again.click().run()
    assert not second.exception
    assert len(ReleaseStore().releases(GOWALLA)) == 2
    assert ReleaseStore().spent(GOWALLA)[0] == pytest.approx(2.0)
