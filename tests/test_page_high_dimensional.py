"""The high-dimensional page renders digits with private and non-private centres."""
from streamlit.testing.v1 import AppTest

from dpcore.store import ReleaseStore


def test_page_renders_digits():
    at = AppTest.from_file("../pages/5_High_dimensional.py", default_timeout=120).run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) >= 3          # PCA view + private and non-private images
    assert any("Privacy budget spent" in m.value for m in at.markdown)
    rec = ReleaseStore().releases("digits")
    assert len(rec) == 1 and rec[0].release["algorithm"]["key"] == "balcan"
    assert "Release seed" not in [n.label for n in at.number_input]
