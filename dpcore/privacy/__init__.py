"""Privacy: samplers, calibration (every privacy map), the accountant, the one NoiseSource, the generator.

Imports only :mod:`dpcore.utils` and the ground floor (docs/ARCHITECTURE.md).
"""
from .accountant import BudgetLedger, LedgerEntry, ZCDPLedger, split_budget
from .mechanisms import NoiseSource
from .rng import check_random_state, secure_generator

__all__ = ["BudgetLedger", "LedgerEntry", "ZCDPLedger", "split_budget", "NoiseSource", "check_random_state",
           "secure_generator"]
