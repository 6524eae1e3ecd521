"""dpcore: differentially private clustering algorithms, faithful to their papers.

``ALGORITHMS`` maps a stable key to each estimator class (see CONTRACT.md);
every estimator follows the scikit-learn protocol (``fit``, ``predict``,
fitted attributes ending in ``_``) and records its privacy spending in
``budget_``.
"""
from __future__ import annotations

from ._version import __version__
from .algorithms.registry import ALGORITHMS, SCALABLE
from .algorithms.sanitize import sanitize
from .exceptions import BudgetExceededError, InfeasibleBudgetError, PrivacyLeakWarning, SeededNoiseWarning
from .metrics import nicv, relative_error
from .privacy.accountant import BudgetLedger, LedgerEntry, split_budget
from .privacy.mechanisms import NoiseSource
from .synopsis import PointSynopsis
from .utils.domain import Domain
from .utils.nearest import inertia

__all__ = ["ALGORITHMS", "BudgetLedger", "LedgerEntry", "NoiseSource", "PrivacyLeakWarning", "SeededNoiseWarning",
           "BudgetExceededError", "InfeasibleBudgetError", "Domain", "nicv", "inertia", "relative_error",
           "split_budget", "SCALABLE", "sanitize", "PointSynopsis", "__version__"]
