"""The private-coresets page renders the taxi coreset, the ledger and the size-per-level chart."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.datasets import TAXI_SAMPLE_NAME
from dpcore.store import ReleaseStore
from ui.not_private import RAW_FACTS_KEY

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

TAXI = TAXI_SAMPLE_NAME   # the page's default: the embedded taxi sample


def test_page_renders_taxi_coreset_recorded_before_its_download(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Privacy budget of this draw" in m.value for m in at.markdown)
    # The planning chart lives in the raw-facts panel: not built while the panel is closed (issue 66), drawn once
    # it is opened.
    assert not at.get("plotly_chart")
    size = next(m.value for m in at.metric if m.label == "Coreset size")
    # auto_draw also presses the sanitized database's own Draw (tests/test_page_sanitized.py): the coreset's
    # record is the one release of its algorithm.
    rec = [r for r in ReleaseStore().releases(TAXI) if r.release["algorithm"]["key"] == "coreset"]
    assert len(rec) == 1 and rec[0].who.endswith("(local mode) · Private coresets")
    points = np.asarray(rec[0].release["synopsis"]["points"])
    assert size == f"{len(points)} points"
    assert [b.label for b in at.get("download_button")] == ["Download the coreset (CSV)"]
    at.session_state[RAW_FACTS_KEY] = True
    at.run()
    assert not at.exception, at.exception
    (chart,) = at.get("plotly_chart")
    assert "Planned coreset size" in chart.proto.spec


def test_public_data_below_the_feasible_epsilon_says_so_and_spends_nothing(shared_data, monkeypatch):
    """The taxi sample is public, so is its size: the page knows before any draw that ε is too small."""
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180)
    at.query_params["epsilon"] = "0.01"
    at.query_params["k"] = "10"
    at.run()
    assert not at.exception, at.exception
    (warning,) = at.warning
    assert "cannot run at ε = 0.01" in warning.value and "nothing was drawn or spent" in warning.value
    assert at.select_slider(key="epsilon").value == 0.01           # never changed silently
    # No coreset was drawn. The sanitized database stays offered below the refusal (issue 57), and auto_draw
    # presses its Draw as a person would: that click, and only it, is recorded.
    assert [r.release["algorithm"]["key"] for r in ReleaseStore().releases()] == ["sanitize"]
    at.button(key="use_feasible_epsilon").click().run()            # the person takes the offered ε
    assert not at.exception and at.select_slider(key="epsilon").value > 0.01
    assert not at.warning or "cannot run" not in at.warning[0].value


def test_a_refusal_on_private_data_is_a_sentence_and_its_spend_is_recorded(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180)
    at.query_params["dataset"] = "gowalla_nyc_checkins"
    at.query_params["epsilon"] = "0.01"
    at.query_params["k"] = "10"
    at.run()     # private data: the page asks, auto_draw presses "Draw", the fit refuses after its noisy count
    assert not at.exception, at.exception
    assert at.error and "smallest epsilon" in at.error[0].value
    # The refusal was decided on a noisy count that the person saw: that spend is in the account (issue 24),
    # as a refusal record (no result, never publishable), not as nothing.
    (rec,) = ReleaseStore().releases()
    assert rec.release["format"] == "dpcore-refusal/1" and 0 < rec.epsilon < 0.01
    assert "smallest epsilon" in rec.release["refusal"]
    assert ReleaseStore().spent(rec.dataset)[0] == rec.epsilon
