"""AppTest for the Compare, Explain and Release pages (small embedded data: s1_like)."""
import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from dpcore import datasets
from dpcore.explain import NOT_PRIVATE

PAGES = Path(__file__).resolve().parents[1] / "pages"


def run(at):
    at.run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    return at


def page(name, **params):
    at = AppTest.from_file(str(PAGES / name), default_timeout=300)
    at.query_params["dataset"] = "s1_like"
    for k, v in params.items():
        at.query_params[k] = v
    return run(at)


def arr(v):
    """A plotly JSON array (plain list or numpy's base64 ``bdata``) as a numpy array."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def texts(at):
    return [c.value for c in at.caption] + [m.value for m in at.markdown] + [w.value for w in at.warning]


# -- Explain ------------------------------------------------------------------------------------
def test_explain_gives_numbers_for_the_chosen_epsilon():
    at = page("7_Explain.py", epsilon="2")
    m = {x.label: x.value for x in at.metric}
    assert m["Odds ratio"] == f"at most {math.exp(2):.3g}×"
    assert m["Attacker's advantage"] == f"at most {(math.exp(2) - 1) / (math.exp(2) + 1):.1%}"
    assert m["Belief after seeing the release"].startswith(f"at most {math.exp(2) / (1 + math.exp(2)):.1%}")
    assert any("pure ε-DP" in t for t in texts(at))
    assert len(at.dataframe) == 1                       # the named levels in numbers
    assert any(NOT_PRIVATE in t for t in texts(at))
    at.select_slider(key="delta").set_value(1e-6)
    run(at)
    assert any("δ = 1e-06" in t for t in texts(at))
    at.select_slider(key="epsilon").set_value(10.0)
    run(at)
    assert at.query_params["epsilon"] == "10.0"
    assert any("Minimal privacy" in i.value for i in at.info)


# -- Compare ------------------------------------------------------------------------------------
def test_compare_small_multiples_and_url_state():
    at = page("6_Compare.py", algorithm="dplloyd", k="15", seed="4")
    assert at.query_params["algorithm"] == "dplloyd" and at.query_params["k"] == "15"
    assert at.query_params["seed"] == "4"
    charts = at.get("plotly_chart")
    assert len(charts) >= 2                             # small multiples + the advisor
    fig = json.loads(charts[0].proto.spec)
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert len(titles) == 4 and all("vs non-private" in t for t in titles)  # 0.05, 0.2, 1, 5 with eps = 1 among them
    assert any("chosen" in t for t in titles)
    assert any(NOT_PRIVATE in t for t in texts(at))
    assert any("itself a use of the data" in w.value for w in at.warning)
    at.multiselect(key="multiples").set_value([0.1, 1.0])
    run(at)
    assert any("between 3 and 6" in i.value for i in at.info)


def test_compare_curve_with_band_and_advisor():
    at = page("6_Compare.py", algorithm="dplloyd", k="15", curve="1")
    at.multiselect(key="curve_eps").set_value([0.1, 2.0])
    run(at)
    assert at.toggle(key="curve").value
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    curve = next(f for f in figs if f["layout"]["xaxis"].get("type") == "log"
                 and any("median" in (t.get("name") or "") for t in f["data"]))
    med = next(t for t in curve["data"] if "median" in t["name"])
    band = next(t for t in curve["data"] if "10–90" in t["name"])
    assert arr(med["x"]).tolist() == [0.1, 2.0] and arr(band["x"]).size == 4
    y = arr(med["y"])
    lo, hi = arr(band["y"])[2:][::-1], arr(band["y"])[:2]           # band: q90 forward, q10 back
    assert np.all(lo <= y) and np.all(y <= hi) and np.all(hi > lo)
    assert y[1] < y[0] and y[0] > 1                    # more budget, closer to non-private
    assert any("over 20 seeded releases" in c.value for c in at.caption)
    assert any(m.label.startswith("Predicted best") for m in at.metric)
    assert at.query_params["curve"] == "1"
    # Stop: switches the curve off and says so (the button is gone once the curve is done, so press it
    # through its callback's effect on the next run, as a click during the computation would).
    at.session_state["curve"] = False
    at.session_state["curve_stopped"] = True
    run(at)
    assert not at.toggle(key="curve").value and any("Stopped" in i.value for i in at.info)


# -- Release ------------------------------------------------------------------------------------
@pytest.fixture
def captured(monkeypatch):
    """Bytes of every file handed to the browser (download buttons) during the test."""
    files = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        files[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return files


def test_release_downloads_parse_hold_the_ledger_and_no_input_row(captured):
    at = page("8_Release.py", algorithm="eugkm", k="15", epsilon="0.5", seed="2")
    assert not at.get("download_button")              # nothing to download before it is recorded
    assert any("itself a use of the data" in w.value for w in at.warning)
    at.button(key="publish").click()
    run(at)
    assert len(at.get("download_button")) == 3
    assert any(m.label == "ε published so far" and m.value == "0.5" for m in at.metric)
    js = next(v for k, v in captured.items() if k.endswith(".json"))
    rel = json.loads(js)
    assert rel["privacy"]["epsilon"] == 0.5 and rel["seed_policy"]["random_state"] == 2
    assert rel["ledger"] and math.fsum(e["epsilon"] for e in rel["ledger"]) == pytest.approx(0.5)
    assert rel["synopsis"]["kind"] == "grid" and len(rel["centroids"]) == 15
    X = datasets.load("s1_like").X
    released = np.array(rel["centroids"])
    assert not any(np.any(np.all(released == x, axis=1)) for x in X)
    csv_text = next(v for k, v in captured.items() if k.endswith(".csv"))
    html = next(v for k, v in captured.items() if k.endswith(".html"))
    csv_text = csv_text.decode() if isinstance(csv_text, bytes) else csv_text
    html = html.decode() if isinstance(html, bytes) else html
    for x in X[:: 25]:  # integer-valued data: any row written as "x,y" or in table cells would show here
        a, b = f"{x[0]:.6g}", f"{x[1]:.6g}"
        assert f"{a},{b}" not in csv_text.replace(".0,", ",")
        assert f"<td>{a}</td><td>{b}</td>" not in html
    assert "grid cell counts" in html and "grid cell counts" in csv_text


def test_account_refuses_a_release_over_the_total():
    at = page("8_Release.py", algorithm="dplloyd", k="15", epsilon="1.0", seed="0")
    at.checkbox(key="use_cap").check()
    run(at)
    at.number_input(key="cap_eps").set_value(1.5)
    run(at)
    at.button(key="publish").click()
    run(at)
    assert any("recorded in the account" in s.value for s in at.success)
    at.number_input(key="seed").set_value(1)           # another release at eps = 1: 1 + 1 > 1.5
    run(at)
    assert any(e.value.startswith("Refused: This release needs ε = 1") and "0.5" in e.value for e in at.error)
    assert at.button(key="publish").disabled
    assert at.query_params["seed"] == "1"
    at.select_slider(key="epsilon").set_value(0.5)     # fits under the total: allowed
    run(at)
    assert not at.error and not at.button(key="publish").disabled
    at.button(key="publish").click()
    run(at)
    assert any(m.label == "ε published so far" and m.value == "1.5" for m in at.metric)
