"""The high-dimensional page opens offline on real MNIST digits with zCDP-Lloyd and the trivial answer's line."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.store import ReleaseStore

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")


def _run(monkeypatch, **query):
    monkeypatch.delenv("DPCORE_DATA", raising=False)        # offline, bundled data only
    at = AppTest.from_file("../pages/5_High_dimensional.py", default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_page_defaults_to_zcdp_lloyd_on_the_mnist_sample(monkeypatch):
    at = _run(monkeypatch)
    assert not at.exception, at.exception
    assert at.selectbox(key="dataset").value == "mnist_sample"
    assert at.selectbox(key="algorithm").value == "zcdp_lloyd"
    assert len(at.get("plotly_chart")) >= 1          # inertia vs trivial answer
    # The centres as pictures (issue 56, speed: pictures, not plotly heatmaps): private, then non-private.
    images = at.get("image")
    assert len(images) == 2 and len(images[0].value) == len(images[1].value) == 10      # k = 10 digits
    assert any("Privacy budget of this draw" in m.value for m in at.markdown)
    rec = ReleaseStore().releases("mnist_sample")
    assert len(rec) == 1 and rec[0].release["algorithm"]["key"] == "zcdp_lloyd"
    assert "Release seed" not in [n.label for n in at.number_input]
    # at the default (15,000 digits, epsilon = 1) the private centres beat one centre at the mean
    assert not at.warning, [w.value for w in at.warning]
    # The PCA view is fitted and drawn when its box is opened (issue 56, speed), from the same kept draw.
    charts = len(at.get("plotly_chart"))
    at.session_state["pca_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == charts + 1
    names = [t["name"] for t in json.loads(at.get("plotly_chart")[-1].proto.spec)["data"]]
    assert any(n.startswith("private centres") for n in names) and any(n.startswith("data sample") for n in names)
    assert len(ReleaseStore().releases("mnist_sample")) == 1      # opening the box draws nothing


def test_page_warns_when_a_release_is_worse_than_the_mean(monkeypatch):
    """Balcan/Edler at epsilon = 0.1 loses to the trivial answer: the page says publish the DP mean."""
    at = _run(monkeypatch, algorithm="balcan", epsilon="0.1")
    assert not at.exception, at.exception
    assert any("publish a DP mean" in w.value for w in at.warning), [w.value for w in at.warning]
