"""Plain words for the field's terms (issue 31): one glossary, shown as tooltips at first use."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.glossary import GLOSSARY, help_for

PAGES = Path(__file__).resolve().parents[1] / "pages"


def test_every_term_has_plain_words_and_a_source():
    for term, words in GLOSSARY.items():
        assert len(words) > 60, term
        assert re.search(r"\((?:[^()]*\d{4}[^()]*|Issue \d+[^()]*)\)\.?$", words), f"{term}: no source at the end"


def test_help_for_finds_a_term_by_its_symbol_and_refuses_unknown_terms():
    assert help_for("θ").startswith("**θ (theta)**: EUGkM's grid-size constant")
    assert help_for("NICV", "zCDP").count("**") == 4
    with pytest.raises(KeyError, match="not in dpcore.glossary"):
        help_for("DCOMX")


def test_the_explorer_explains_nicv_where_it_is_first_shown():
    at = AppTest.from_file(str(PAGES / "1_Explorer.py"), default_timeout=300)
    at.query_params["dataset"] = "s1_like"
    at.run()
    assert not at.exception
    nicv = next(m for m in at.metric if m.label == "NICV, private")
    assert nicv.help == help_for("NICV")
    eps = at.select_slider(key="epsilon")
    assert "privacy unit" in eps.help and "sequential composition" in eps.help
