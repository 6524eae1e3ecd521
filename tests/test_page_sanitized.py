"""The coreset page's sanitized database (issue 57): drawn only on a click, recorded once, shown as points."""
import numpy as np
from streamlit.testing.v1 import AppTest

from dpcore.datasets import TAXI_SAMPLE_NAME
from dpcore.store import ReleaseStore

SYN_DRAW = "draw_Private coresets (sanitized database)"


def _keys(store):
    return [r.release["algorithm"]["key"] for r in store.releases()]


def test_opening_draws_no_synopsis_and_a_click_records_one(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180).run()
    assert not at.exception, at.exception
    store = ReleaseStore()
    # Nothing is recorded on opening (issue 56), public data included: the coreset is a preview, the synopsis too.
    assert _keys(store) == []
    spent = store.spent(TAXI_SAMPLE_NAME)[0]
    # ...but a labelled preview (seeded, recorded nowhere) shows the level before any spend.
    assert any("PREVIEW, not a release" in i.value for i in at.info)
    at.run()                                   # a rerun records nothing either
    assert _keys(store) == [] and store.spent(TAXI_SAMPLE_NAME)[0] == spent

    at.button(key=SYN_DRAW).click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert _keys(store) == ["sanitize"]
    rec = store.releases()[-1]
    assert rec.epsilon == at.select_slider(key="epsilon").value
    assert store.spent(TAXI_SAMPLE_NAME)[0] == spent + rec.epsilon
    syn = rec.release["synopsis"]
    assert syn["kind"] == "points" and min(syn["weights"]) >= 0
    size = next(m.value for m in at.metric if m.label == "Synopsis size m")
    assert size == f"{len(syn['points'])} points"
    assert not any("PREVIEW" in i.value for i in at.info)
    # The owner's figures on this public data: the cost error at a few k, from the recorded synopsis.
    errs = next(df.value for df in at.dataframe if "relative error" in getattr(df.value, "columns", []))
    assert list(errs["k"]) == [3, 5, 10, 20]
    assert np.all(np.isfinite(errs["relative error"])) and errs["relative error"].max() < 1.0
    # Reruns show the kept draw: nothing more recorded; Publish is offered for it.
    at.run()
    assert _keys(store) == ["sanitize"]
    assert at.button(key="new_draw_synopsis_publish") is not None
    at.button(key="new_draw_synopsis_publish").click().run()
    assert store.publication(rec.id) is None            # publishing asks first (issue 56)
    at.button(key="new_draw_synopsis_publish_confirm").click().run()
    assert store.publication(rec.id) is not None
    assert len(store.releases()) == 1
