"""The coreset page's sanitized database (issue 57): drawn only on a click, recorded once, shown as points."""
import json

import numpy as np
from streamlit.testing.v1 import AppTest

from dpcore.datasets import TAXI_SAMPLE_NAME
from dpcore.store import ReleaseStore

SYN_DRAW = "draw_Private coresets (sanitized database)"


def _levels_table(at):
    return next(df.value for df in at.dataframe if "synopsis points" in getattr(df.value, "columns", []))


def _open(shared_data, monkeypatch, query: dict, **state) -> AppTest:
    """The coreset page opened with URL parameters ``query`` and widget values ``state``, run once."""
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file("../pages/3_Private_coresets.py", default_timeout=180)
    at.query_params.update(query)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


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
    # ...but a labelled preview (recorded nowhere) shows the level before any spend, computed when its box is opened
    # (issue 56, speed: ~21,000 points on a second map).
    assert not any("PREVIEW, not a release" in i.value for i in at.info)
    at.session_state["sanitized_preview_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert any("PREVIEW, not a release" in i.value for i in at.info)
    assert int(next(m.value for m in at.metric if m.label == "Synopsis size m").split()[0]) > 1000
    assert _keys(store) == []
    # Every level side by side is computed on demand (issue 56, speed): not on opening, then when opened.
    assert not any("synopsis points" in getattr(df.value, "columns", []) for df in at.dataframe)
    at.session_state["levels_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert _keys(store) == []
    # Feldman et al.'s Figure 8: every level side by side, coreset above synopsis, with the error figures below.
    levels = _levels_table(at)
    assert list(levels["ε"]) == ["0.1", "0.5", "1", "2"]
    sizes = levels["synopsis points"].astype(int)
    assert sizes.is_monotonic_increasing and sizes.iloc[0] > 0     # more ε, finer synopsis
    assert levels["synopsis cost error, k = 5"].max() < 0.2          # the public taxi sample: raw figures allowed
    fig = next(c for c in at.get("plotly_chart") if "levels_fig" in c.proto.id)
    assert len(json.loads(fig.proto.spec)["layout"]["annotations"]) >= 8   # a title per panel (2 rows x 4 levels)
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
    # The owner's figures on this public data: the cost error at a few k, from the recorded synopsis (computed when
    # its box is opened: issue 56, speed).
    assert not any("relative error" in getattr(df.value, "columns", []) for df in at.dataframe)
    at.session_state["cost_errors_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert _keys(store) == ["sanitize"]
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


def test_the_synopsis_stays_when_private_k_mean_refuses_at_low_epsilon(shared_data, monkeypatch):
    """The paper's budget rule at ε = 0.1: PRIVATE-K-MEAN cannot run, the sanitized database still can."""
    at = _open(shared_data, monkeypatch, {"epsilon": "0.1"}, budget="paper", levels_open=True,
               sanitized_preview_open=True)
    assert any("PRIVATE-K-MEAN cannot run at ε = 0.1" in w.value for w in at.warning)
    assert at.button(key=SYN_DRAW) is not None                      # its own Draw, below the refusal's sentence
    assert any("PREVIEW, not a release" in i.value for i in at.info)
    levels = _levels_table(at)
    assert "refused" in set(levels["coreset points"])                # refused levels say so, nothing hidden
    assert (levels["synopsis points"].astype(int) > 0).all()
    assert _keys(ReleaseStore()) == []


def test_on_private_data_only_levels_already_drawn_are_shown(shared_data, monkeypatch):
    """Never a spend without a click: opening shows no level; a Draw shows that level and records that draw only."""
    at = _open(shared_data, monkeypatch, {"dataset": "gowalla_nyc_checkins", "epsilon": "1"}, levels_open=True,
               sanitized_preview_open=True)
    store = ReleaseStore()
    assert _keys(store) == []
    levels = _levels_table(at)
    assert set(levels["synopsis points"]) == {"—"} and set(levels["coreset points"]) == {"—"}
    assert not any("PREVIEW" in i.value for i in at.info)                  # private data: no preview
    at.button(key=SYN_DRAW).click().run()
    assert not at.exception, at.exception
    assert _keys(store) == ["sanitize"]
    rec = store.releases()[-1]
    levels = _levels_table(at).set_index("ε")
    assert levels.loc["1", "synopsis points"] == str(len(rec.release["synopsis"]["weights"]))   # the draw, as recorded
    assert (levels.drop(index="1")["synopsis points"] == "—").all()
    assert _keys(store) == ["sanitize"]
