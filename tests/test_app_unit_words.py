"""One unit name per data set on every page (issue 56): the sidebar's ε caption and its large-ε warning name
the unit the page's own sentences name ("one trip" on the taxi data), not "one unit" or "one record (or
person, at person level)"."""
from __future__ import annotations

from pathlib import Path

import pytest
from app_walk import upload_in_apptest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app.py"


def _app(page: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    return at.switch_page(page).run() if page else at


def _odds_caption(at) -> str:
    (text,) = [c.value for c in at.sidebar.caption if c.value.startswith("An observer's odds about one ")]
    return text


@pytest.mark.parametrize("page, dataset, unit", [
    (None, "nyc_taxi_sample", "trip"),                              # the Explorer
    ("pages/3_Private_coresets.py", "nyc_taxi_sample", "trip"),
])
def test_the_sidebar_names_the_data_sets_unit_beside_epsilon(page, dataset, unit):
    at = _app(page, dataset=dataset, epsilon="10.0")
    assert not at.exception, [e.value for e in at.exception]
    assert _odds_caption(at).startswith(f"An observer's odds about one {unit} can change by at most 22,026×")
    (warning,) = [w.value for w in at.sidebar.warning if "is large" in w.value]
    assert f"one {unit} may change" in warning and f"central DP per {unit}," in warning, warning
    assert "record (or person" not in warning
    # the page's own account sentence names the same unit
    assert any(f"odds about one {unit} at most" in m.value for m in at.markdown), unit


def test_below_the_large_epsilon_there_is_no_warning_and_the_unit_is_still_named():
    at = _app(dataset="nyc_taxi_sample", epsilon="1.0")
    assert not at.exception
    assert "one trip can change by at most 2.72×" in _odds_caption(at)
    assert not [w for w in at.sidebar.warning if "is large" in w.value]


def test_an_upload_at_person_level_names_its_person_in_the_sidebar_as_on_the_page():
    import numpy as np
    rng = np.random.default_rng(3)
    rows = "\n".join(f"{i % 40},{a:.5f},{b:.5f}" for i, (a, b) in
                     enumerate(zip(rng.uniform(-74.0, -73.95, 300), rng.uniform(40.7, 40.8, 300))))
    data = ("user_id,longitude,latitude\n" + rows + "\n").encode()
    at = upload_in_apptest(_app(dataset="s1_like", epsilon="10.0"), data, "trips.csv",
                           columns=["longitude", "latitude"], bounds="-74.0, -73.95\n40.7, 40.8")
    # Row level until a person column is chosen: a "record" (issue 65: a check-ins upload was spoken of as trips).
    assert "one record can change" in _odds_caption(at)
    at.selectbox(key="dataset_unit").set_value("user_id").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "one user can change" in _odds_caption(at)
    (warning,) = [w.value for w in at.sidebar.warning if "is large" in w.value]
    assert "central DP per user," in warning, warning
