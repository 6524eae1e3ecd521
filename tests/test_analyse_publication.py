"""'Analyse a publication' on the Explorer (issue 57): k-means on a published sanitized database, no spend."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import datasets
from dpcore.algorithms import Sanitizer
from dpcore.release import build_release
from dpcore.release.view import point_synopsis
from dpcore.store import ReleaseStore

PAGES = Path(__file__).resolve().parents[1] / "pages"
NAME = "s1_like"


@pytest.fixture(scope="module")
def s1():
    return datasets.load(NAME)


@pytest.fixture
def published(s1):
    """A real private synopsis of the data (random_state=None), recorded and published as an author would."""
    est = Sanitizer(epsilon=1.0, bounds=s1.bounds).fit(s1.X)
    rel = build_release(est, algorithm="sanitize", dataset=NAME, columns=list(s1.columns))
    store = ReleaseStore()
    rid = store.record(NAME, rel, who="ana")
    store.publish(rid, who="ana")
    return rel


def _account():
    store = ReleaseStore()
    return len(store.history(NAME)), store.spent(NAME), len(store.releases())


def _open(page="1_Explorer.py"):
    at = AppTest.from_file(str(PAGES / page), default_timeout=120)
    at.query_params["dataset"] = NAME
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _centres(at, columns) -> np.ndarray:
    df = next(d.value for d in at.dataframe if list(d.value.columns) == ["centre", *columns])
    return df[list(columns)].to_numpy()


@pytest.mark.parametrize("page", ["1_Explorer.py", "6_Compare.py"])
def test_a_page_analyses_a_publication_at_any_k_and_records_nothing(published, s1, page):
    before = _account()
    at = _open(page)
    assert at.radio(key="input").value == "draw"         # drawing stays the default; nothing drawn on opening
    assert _account() == before
    at.radio(key="input").set_value("publication").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Analysing publication #1" in i.value and "nothing is recorded" in i.value for i in at.info)
    syn = point_synopsis(published)
    lo, hi = s1.bounds
    costs = {}
    for k in (3, 12):
        at.number_input(key="k").set_value(k).run()
        assert not at.exception, [e.value for e in at.exception]
        c = _centres(at, s1.columns)
        assert c.shape == (k, 2) and np.all((c >= lo) & (c <= hi))
        np.testing.assert_allclose(c, syn.kmeans(k, random_state=0))    # the publication's k-means, nothing else
        costs[k] = syn.cost(c)
    assert costs[12] < costs[3]
    assert not [b for b in at.button if str(b.label).startswith("Draw: spends")]   # no draw offered here
    assert _account() == before                           # post-processing: no draw, no ε, nothing recorded


def test_without_a_published_synopsis_the_choice_is_not_offered(s1):
    at = _open()
    assert not [r for r in at.radio if r.key == "input"]
    assert _account() == (0, (0.0, 0.0), 0)
