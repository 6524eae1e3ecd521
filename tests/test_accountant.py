"""The ledger's running totals: exact (math.fsum over every entry) while each spend stays O(1)."""
import math
import random

import pytest

from dpcore.exceptions import BudgetExceededError
from dpcore.privacy.accountant import BudgetLedger, ZCDPLedger


def test_running_total_is_fsum_of_every_entry_bit_for_bit():
    rnd = random.Random(7)
    ledger = BudgetLedger(1.0, 1e-6)
    steps = [rnd.choice([1e-3 / 3, 1e-7, 2.0 ** -40, rnd.random() * 1e-3]) for _ in range(2_000)]
    for i, eps in enumerate(steps):
        ledger.spend(f"step {i}", eps, 1e-6 / 7 / len(steps))
        assert ledger.total() == (math.fsum(e.epsilon for e in ledger), math.fsum(e.delta for e in ledger))


def test_exact_total_meets_the_cap_where_a_naive_sum_drifts():
    """Ten steps of 0.1 fill a grant of 1.0 exactly; an eleventh step (above the cap's rounding tolerance) is refused."""
    ledger = BudgetLedger(1.0)
    for i in range(10):
        ledger.spend(f"tenth {i}", 0.1)
    assert ledger.total() == (1.0, 0.0) and ledger.remaining() == (0.0, 0.0)
    assert sum(e.epsilon for e in ledger) != 1.0            # what a running float sum would say
    with pytest.raises(BudgetExceededError):
        ledger.spend("one more", 1e-6)
    assert len(ledger) == 10


def test_zcdp_ledger_totals_its_shares_exactly():
    ledger = ZCDPLedger(1.0, 1e-6)
    for i in range(100):
        ledger.spend_zcdp(f"step {i}", ledger.rho_total / 100)
    eps, delta = ledger.total()
    assert eps == math.fsum(e.epsilon for e in ledger) and eps == pytest.approx(1.0)
    assert delta == math.fsum(e.delta for e in ledger) and delta == pytest.approx(1e-6)
