"""The budget ledger's mechanisms and sensitivities as one sentence under the table (issue 56, layout)."""
import re

import pytest

import dpcore
from ui.account import noise_sentence
from ui.charts import ledger_frame


def test_the_sentence_names_every_mechanism_and_accounts_for_every_step(blobs):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS["zcdp_lloyd"](n_clusters=3, epsilon=1.0, delta=1e-6, bounds=bounds,
                                           random_state=0).fit(X)
    frame = ledger_frame(est.budget_)
    text = noise_sentence(frame)
    assert text.startswith("Noise: ") and text.endswith(".")
    for mech in set(frame["mechanism"]):
        assert re.sub(r"\s*\([^)]*\d[^)]*\)", "", mech) in text   # the ρ in brackets is in the ε column
    # Steps are named (up to three) or counted: together they are the ledger's entries, none twice.
    counted = sum(int(n) for n in re.findall(r"\((\d+) steps\)", text))
    named = [s for s in frame["step"] if s in text]
    assert counted + len(named) == len(frame)
    assert "sensitivity 1 " in text


def test_a_short_ledger_names_its_steps():
    from dpcore.privacy.accountant import BudgetLedger
    ledger = BudgetLedger(1.0)
    ledger.spend("dataset size", 0.1, mechanism="discrete laplace", sensitivity=1.0)
    ledger.spend("grid cell counts", 0.9, mechanism="discrete laplace", sensitivity=1.0)
    assert noise_sentence(ledger_frame(ledger)) == ("Noise: discrete laplace, sensitivity 1 (dataset size, grid cell "
                                                   "counts).")


def test_the_side_ledger_shows_every_step_name_whole_and_numbers_unbroken(blobs):
    """Issue 56, layout: zCDP-Lloyd's long step names were clipped at the narrow column's edge in a grid.

    The ledger beside a draw is a static table (its cells wrap), with each step's full name from the
    estimator's ledger, and numbers written with a minus sign that no line break splits ("1e−06").
    """
    from streamlit.testing.v1 import AppTest

    X, bounds, _ = blobs

    def page(X, bounds):
        import streamlit as st

        import dpcore
        from ui.account import show_ledger
        est = dpcore.ALGORITHMS["zcdp_lloyd"](n_clusters=3, epsilon=1.0, delta=1e-6, bounds=bounds,
                                               random_state=0).fit(X)
        from ui.charts import ledger_rows
        st.session_state["names"] = list(ledger_rows(est.budget_.to_records(), grouped=True)["step"])
        _, side = st.columns([3, 1])
        show_ledger(est, where=side)

    at = AppTest.from_function(page, args=(X, bounds), default_timeout=60).run()
    assert not at.exception, at.exception
    assert not at.dataframe, "a grid cell is one line: long step names are clipped there"
    table = at.table[0].value
    assert list(table.columns) == ["step", "ε", "δ"]
    names = at.session_state["names"]
    assert list(table["step"]) == names and max(map(len, names)) > 30   # long names (runs of steps grouped), in full
    assert all("-" not in v for v in [*table["ε"], *table["δ"]])
    assert any("e−" in v for v in table["δ"])                              # δ's exponent, with a minus sign
    shown = [float(v.replace("−", "-")) for v in table["ε"]]                # 3 significant digits each
    assert sum(shown) == pytest.approx(1.0, rel=0.005)
