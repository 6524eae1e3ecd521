"""Runs of like ledger steps in one row (PRIVATE-K-MEAN's rounds, DPLloyd's iterations): the rows still add up."""
from __future__ import annotations

import math

import pytest

import dpcore
from dpcore.privacy.accountant import BudgetLedger
from dpcore.release import build_release
from ui.charts import GROUP_STEPS, ledger_frame, ledger_rows
from ui.gallery_view import ledger_table


@pytest.mark.parametrize("algorithm, params", [("dplloyd", {}), ("zcdp_lloyd", {"delta": 1e-6}),
                                               ("coreset", {"delta": 1e-8, "epsilon": 10.0}), ("eugkm", {})])
def test_grouped_rows_add_up_to_the_ledger_and_cover_every_step(blobs, algorithm, params):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS[algorithm](n_clusters=3, bounds=bounds, **{"epsilon": 2.0, **params}).fit(X)
    records = est.budget_.to_records()
    rows = ledger_rows(records, grouped=True)
    assert rows["steps"].sum() == len(records)
    assert math.isclose(rows["epsilon"].sum(), est.budget_.total()[0], rel_tol=1e-12)
    assert math.isclose(rows["delta"].sum(), est.budget_.total()[1], rel_tol=1e-12, abs_tol=1e-300)
    assert len(rows) <= len(records)
    # The release's ledger (the gallery, the sanitized database's panel) is grouped the same way.
    rel = build_release(est, algorithm=algorithm, dataset="blobs", columns=["x", "y"])
    assert list(ledger_table(rel)["step"]) == list(rows["step"])


def test_dplloyd_iterations_become_one_row_per_kind_of_step(blobs):
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS["dplloyd"](n_clusters=3, epsilon=1.0, bounds=bounds).fit(X)
    iterations = sum(r["name"].endswith("cluster sums") for r in est.budget_.to_records())
    assert iterations >= GROUP_STEPS
    steps = list(ledger_frame(est.budget_, grouped=True)["step"])
    assert f"iteration 1–{iterations}: cluster counts" in " ".join(steps)
    assert f"iteration 1–{iterations}: cluster sums" in " ".join(steps)
    assert len(steps) == len(ledger_frame(est.budget_)) - 2 * (iterations - 1)


def test_short_or_unlike_runs_stay_one_row_a_step():
    ledger = BudgetLedger(1.0)
    ledger.spend("round 1: SMALL-BALL", 0.1, mechanism="laplace", sensitivity=1.0)
    ledger.spend("round 2: SMALL-BALL", 0.1, mechanism="laplace", sensitivity=1.0)
    ledger.spend("round 3: SMALL-BALL", 0.2, mechanism="laplace", sensitivity=1.0)   # another ε: not like the others
    ledger.spend("round 5: SMALL-BALL", 0.2, mechanism="laplace", sensitivity=1.0)   # not the next number
    rows = ledger_rows(ledger.to_records(), grouped=True)
    assert list(rows["steps"]) == [1, 1, 1, 1]
    ledger.spend("round 6: SMALL-BALL", 0.2, mechanism="laplace", sensitivity=1.0)
    ledger.spend("round 7: SMALL-BALL", 0.2, mechanism="laplace", sensitivity=1.0)
    rows = ledger_rows(ledger.to_records(), grouped=True)
    assert list(rows["step"])[-1] == "round 5–7: SMALL-BALL (3 steps of ε = 0.2)"
    assert rows["epsilon"].iloc[-1] == pytest.approx(0.6)


@pytest.mark.parametrize("algorithm, params", [("zcdp_lloyd", {"delta": 1e-6}), ("coreset", {"delta": 1e-8, "epsilon": 10.0})])
def test_a_draw_and_its_release_show_one_ledger(blobs, algorithm, params):
    """The pages' ledger of a fit and the gallery's of its release: the same steps, ε and δ, written by the one
    formatter (two formatters had written 1e-06 on a page and 0.000001 in the gallery)."""
    X, bounds, _ = blobs
    est = dpcore.ALGORITHMS[algorithm](n_clusters=3, bounds=bounds, **{"epsilon": 2.0, **params}).fit(X)
    page = ledger_frame(est.budget_, grouped=True)
    gallery = ledger_table(build_release(est, algorithm=algorithm, dataset="blobs", columns=["x", "y"]))
    for column in ("step", "ε", "δ", "mechanism", "sensitivity"):
        assert list(page[column]) == list(gallery[column]), column
    assert "share" in page and "share" not in gallery
    assert not any("-" in cell for cell in list(page["ε"]) + list(page["δ"]))    # U+2212: no wrap at a hyphen
    assert list(page.columns[:2]) == ["step", "ε"]


def test_a_ledger_granted_nothing_has_an_empty_share():
    ledger = BudgetLedger(0.0)
    assert list(ledger_frame(ledger)["share"]) == []
