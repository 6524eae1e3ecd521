"""The private-coresets page renders the taxi coreset, the ledger and the size-per-level chart."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.datasets import TAXI_SAMPLE_NAME
from dpcore.store import ReleaseStore

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

TAXI = TAXI_SAMPLE_NAME   # the page's default: the embedded taxi sample


def test_page_renders_taxi_coreset_recorded_before_its_download(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Privacy budget spent" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) >= 1            # the planning chart, inside the raw-facts panel
    size = next(m.value for m in at.metric if m.label == "Coreset size")
    rec = ReleaseStore().releases(TAXI)
    assert len(rec) == 1 and rec[0].who.endswith("(local mode) · Private coresets")
    points = np.asarray(rec[0].release["synopsis"]["points"])
    assert size == f"{len(points)} points"
    assert [b.label for b in at.get("download_button")] == ["Download the coreset (CSV)"]


def test_page_infeasible_level_gives_sentence(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180)
    at.query_params["epsilon"] = "0.01"
    at.query_params["k"] = "10"
    at.run()
    assert not at.exception, at.exception
    assert at.error and "smallest epsilon" in at.error[0].value
    # The refusal was decided on a noisy count that the person saw: that spend is in the account (issue 24),
    # as a refusal record (no result, never publishable), not as nothing.
    (rec,) = ReleaseStore().releases()
    assert rec.release["format"] == "dpcore-refusal/1" and 0 < rec.epsilon < 0.01
    assert rec.release["refusal"] in at.error[0].value or "smallest epsilon" in rec.release["refusal"]
    assert ReleaseStore().spent(rec.dataset)[0] == rec.epsilon
