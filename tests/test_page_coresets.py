"""The private-coresets page renders the taxi coreset, the ledger and the size-per-level chart."""
from streamlit.testing.v1 import AppTest


def test_page_renders_taxi_coreset(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Privacy budget spent" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) >= 1
    assert any(m.label == "Coreset size" for m in at.metric)


def test_page_infeasible_level_gives_sentence(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180)
    at.query_params["epsilon"] = "0.01"
    at.query_params["k"] = "10"
    at.run()
    assert not at.exception, at.exception
    assert at.error and "smallest epsilon" in at.error[0].value
