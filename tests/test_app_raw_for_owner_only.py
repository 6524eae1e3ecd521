"""Figures computed on the raw data are the data owner's only (issues 24 and 31).

The app labels every such figure "not private: for the data owner's eyes only": the non-private
centres, the NICV comparisons, the WaveCluster measures, the inertia against the mean, a curve on the
data and the raw-facts panel.  With sign-in configured, an analyst drawing on private data must see
none of them (or the label would be false), while the owner of the same data sees them all.

Each page runs with AppTest under an ``[auth]`` secrets section, first as the owner (who registers the
data by drawing), then as an analyst on the same store and settings.  Every rendered element is
searched, as in tests/test_app_raw_facts.py.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from app_walk import number_pattern, rendered_texts
from streamlit.testing.v1 import AppTest

from dpcore import datasets
from ui.maps import NOT_PRIVATE
from ui.widgets import OWNER_ONLY, RAW_FACTS

pytestmark = pytest.mark.usefixtures("auto_draw")

PAGES = Path(__file__).resolve().parents[1] / "pages"
TAXI = "nyc_taxi_2009-2015_bq_sample_pickups"
OWNER, ANALYST = "owner@example.org", "ana@example.org"
SECRETS = {
    # Only the section's presence switches sign-in on for the app; AppTest supplies st.user itself.
    "auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
             "client_id": "dpcore-test", "client_secret": "secret",
             "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"},
    "dpcore": {"owners": [OWNER], "analysts": [ANALYST]},
}
CASES = [   # page, dataset, other URL parameters
    ("1_Explorer.py", TAXI, {"algorithm": "dplloyd"}),
    ("3_Private_coresets.py", TAXI, {}),
    ("4_WaveCluster.py", TAXI, {}),
    ("5_High_dimensional.py", "mnist_784", {"k": "10", "algorithm": "zcdp_lloyd"}),
    ("6_Compare.py", TAXI, {"algorithm": "dplloyd", "k": "5", "curve": "1"}),
    ("8_Release.py", TAXI, {"algorithm": "dplloyd", "k": "5"}),
]


def _run(page: str, dataset: str, params: dict, who: str) -> AppTest:
    at = AppTest.from_file(str(PAGES / page), default_timeout=300)
    for section, values in SECRETS.items():
        at.secrets[section] = values
    at.user = {"is_logged_in": True, "email": who}
    at.query_params["dataset"] = dataset
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    for b in at.button:           # Compare's panels wait for one click, as a person would give
        if b.key == "draw_panels":
            b.click()
            at.run()
            break
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.heavy
@pytest.mark.parametrize("page, dataset, params", CASES, ids=[c[0] for c in CASES])
def test_the_analyst_sees_no_figure_computed_on_the_raw_data(shared_data, monkeypatch, page, dataset, params):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    n = datasets.load(dataset).X.shape[0]
    owner = rendered_texts(_run(page, dataset, params, OWNER))
    assert any(RAW_FACTS in t for _, t in owner), f"the owner should see the raw-facts panel on {page}"
    assert any(NOT_PRIVATE in t or "not private" in t for _, t in owner)

    at = _run(page, dataset, params, ANALYST)
    assert not at.error, [e.value for e in at.error]
    texts = [t for _, t in rendered_texts(at)]
    assert any("Privacy budget of this draw" in t or "ε = " in t for t in texts), f"the analyst saw no draw on {page}"
    assert not any(RAW_FACTS in t for t in texts), f"the raw-facts panel reached the analyst on {page}"
    leaks = [t[:200] for t in texts if NOT_PRIVATE in t or "NICV, non-private" in t or "Non-private k-means" in t]
    assert not leaks, f"a figure computed on the raw data reached the analyst on {page}: {leaks}"
    assert not [t for t in texts if number_pattern(n).search(t)], f"the exact n reached the analyst on {page}"
    if page != "8_Release.py":    # the Release page shows the draw only, and says nothing to leave out
        assert any(OWNER_ONLY in t or "public look-alike" in t for t in texts), \
            f"{page} should say why the comparison is missing"
