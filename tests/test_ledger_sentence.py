"""The budget ledger's mechanisms and sensitivities as one sentence under the table (issue 56, layout)."""
import re

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
