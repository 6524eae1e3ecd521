"""Raw facts fenced off (issue #19 item 5): the exact number of rows appears only in the one panel
"Raw data facts: for the data owner only, not private", on every page that shows data.

Each page is rendered with AppTest on real data whose size is a distinctive number (the NYC taxi
sample, 181k rows; scikit-learn's digits, 1,797 rows), and every rendered element (text, tables,
figure and map JSON, widget labels and options, in the main area and the sidebar) is searched for
that number.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from app_walk import number_pattern, rendered_texts
from streamlit.testing.v1 import AppTest

from dpcore import datasets

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

PAGES = Path(__file__).resolve().parents[1] / "pages"
TAXI = "nyc_taxi_2009-2015_bq_sample_pickups"

CASES = [   # page, dataset, other URL parameters, button to press after the first run (or None)
    ("1_Explorer.py", TAXI, {"algorithm": "dplloyd"}, None),
    ("3_Private_coresets.py", TAXI, {}, None),
    ("4_WaveCluster.py", TAXI, {}, None),
    ("5_High_dimensional.py", "digits", {"k": "10"}, None),
    ("6_Compare.py", TAXI, {"algorithm": "dplloyd", "k": "5"}, "draw_panels"),
    ("8_Release.py", TAXI, {"algorithm": "dplloyd", "k": "5"}, None),
]


@pytest.mark.parametrize("page, dataset, params, press", CASES, ids=[c[0] for c in CASES])
def test_exact_n_appears_only_in_the_raw_facts_panel(shared_data, monkeypatch, page, dataset, params, press):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    n = datasets.load(dataset).X.shape[0]
    at = AppTest.from_file(str(PAGES / page), default_timeout=300)
    at.query_params["dataset"] = dataset
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if press:
        at.button(key=press).click()
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("Privacy budget of this draw" in m.value for m in at.markdown) or page == "6_Compare.py"
    pattern = number_pattern(n)
    texts = rendered_texts(at)
    inside = [t for fenced, t in texts if fenced and pattern.search(t)]
    outside = [t[:300] for fenced, t in texts if not fenced and pattern.search(t)]
    assert inside, f"the raw-facts panel of {page} should state n = {n:,} (the check would then see it)"
    assert not outside, f"n = {n:,} appears outside the raw-facts panel of {page}: {outside}"


def test_the_walk_sees_a_number_outside_the_panel():
    """The check can fail: a page that states n in a caption is caught."""
    script = (
        "import streamlit as st\n"
        "from ui.widgets import RAW_FACTS\n"
        "st.caption('181,446 points')\n"
        "with st.expander(RAW_FACTS):\n"
        "    st.markdown('Rows: 181,446')\n"
        "st.dataframe({'rows': [181446]})\n")
    at = AppTest.from_string(script).run()
    pattern = number_pattern(181446)
    texts = rendered_texts(at)
    assert [fenced for fenced, t in texts if pattern.search(t)] == [False, True, False]
    assert not pattern.search("40.7181446") and not pattern.search("1181446") and not pattern.search("181,4467")
