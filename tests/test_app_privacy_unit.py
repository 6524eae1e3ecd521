"""People, not rows, in the app (issue 23): what every page says a release guarantees, and to whom.

* On row-level data (the embedded taxi trips: no person column) no page, report or export states a
  per-person guarantee: every rendered element of every page is searched for the phrases a per-person
  promise is made of.
* On data with a person column (Gowalla check-ins, ``user_id``) releases are person level by default, say
  "for every user", record L in the export, and the raw-facts panel (owner only) shows how many rows each
  person contributed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_walk import rendered_texts
from streamlit.testing.v1 import AppTest

from dpcore.release import to_html
from dpcore.store import ReleaseStore

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

PAGES = Path(__file__).resolve().parents[1] / "pages"
TAXI = "nyc_taxi_sample"
#: What a per-person promise is made of (a row-level release may not say any of these).
PER_PERSON = re.compile(r"for every person|every person in|one person in the data|any one person's record|"
                        r"guarantees one person|for each person|protects every person", re.IGNORECASE)

CASES = [("1_Explorer.py", {}), ("3_Private_coresets.py", {}), ("4_WaveCluster.py", {}),
         ("5_High_dimensional.py", {"dataset": "mnist_sample"}), ("6_Compare.py", {"k": "5"}),
         ("7_Explain.py", {}), ("8_Release.py", {"k": "5"})]


def _page(page, params):
    at = AppTest.from_file(str(PAGES / page), default_timeout=300)
    at.query_params["dataset"] = TAXI
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page, params", CASES, ids=[c[0] for c in CASES])
def test_no_page_promises_people_for_a_row_level_release(page, params):
    at = _page(page, params)
    said = [t[:200] for _, t in rendered_texts(at) if PER_PERSON.search(t)]
    assert not said, f"{page} states a per-person guarantee for row-level data: {said}"


def test_row_level_exports_say_who_is_protected():
    _page("8_Release.py", {"k": "5"})
    (rel,) = [r.release for r in ReleaseStore().releases()]
    assert not PER_PERSON.search(to_html(rel)) and not PER_PERSON.search(str(rel))
    assert rel["privacy_unit"]["protected"] == "trip" and not rel["privacy_unit"]["person_level"]
    assert "for every trip" in rel["privacy"]["guarantee_for"]
    assert "m·ε" in rel["privacy"]["guarantee_for"]            # the group-privacy caveat


def test_person_column_gives_a_person_level_release_by_default(shared_data, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file(str(PAGES / "8_Release.py"), default_timeout=300)
    at.query_params["dataset"] = "gowalla_nyc_checkins"
    at.query_params["k"] = "5"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="unit_mode").value.startswith("each person (user_id)")
    assert any("for every user" in m.value for m in at.markdown)
    (rel,) = [r.release for r in ReleaseStore().releases()]
    unit = rel["privacy_unit"]
    assert unit["person_level"] and unit["column"] == "user_id" and unit["max_contributions"] >= 1
    assert "for every user (each user's check-ins together" in rel["privacy"]["guarantee_for"]
    facts = [t for fenced, t in rendered_texts(at) if fenced]
    assert any("Rows per person (user_id)" in t for t in facts)
    # switching to row level is a different setting (another draw), and says so in its guarantee
    at.radio(key="unit_mode").set_value("each row on its own")
    at.run()
    assert any("for every check-in" in m.value and "m·ε" in m.value for m in at.markdown)


def test_the_running_total_names_a_person_only_when_every_draw_protected_persons(shared_data, monkeypatch):
    """After a row-level draw, the data's total no longer holds per user: the sentence says so (issue 31)."""
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    at = AppTest.from_file(str(PAGES / "8_Release.py"), default_timeout=300)
    at.query_params["dataset"] = "gowalla_nyc_checkins"
    at.query_params["k"] = "5"
    at.run()
    total = next(m.value for m in at.markdown if "ε spent so far on this data" in m.value)
    assert "odds about one user at most" in total and "m times" not in total
    at.radio(key="unit_mode").set_value("each row on its own")
    at.run()
    total = next(m.value for m in at.markdown if "ε spent so far on this data" in m.value)
    assert "odds about one check-in at most" in total and "protected only at up to m times" in total
