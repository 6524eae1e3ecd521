"""dpcore: differentially private clustering algorithms, faithful to their papers.

``ALGORITHMS`` maps a stable key to each estimator class (see CONTRACT.md);
every estimator follows the scikit-learn protocol (``fit``, ``predict``,
fitted attributes ending in ``_``) and records its privacy spending in
``budget_``.
"""
from __future__ import annotations

import os

# OpenMP threads (scikit-learn's k-means, numba's parallel kernels) that wait by spinning take the CPU from each
# other and from anything else on the machine: on a 2-core virtual machine, scikit-learn's KMeans on 181,446 taxi
# rows took 1.0 s with two spinning threads and 0.42 s with OMP_WAIT_POLICY=PASSIVE (0.39 s on one thread), and
# 1.3-1.6 s while a browser drew the page beside it.  Read once, when the OpenMP runtime loads (the imports below):
# a value the user set, or a runtime already loaded, wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._version import __version__  # noqa: E402
from .algorithms.registry import ALGORITHMS, SCALABLE  # noqa: E402
from .algorithms.sanitize import sanitize  # noqa: E402
from .exceptions import BudgetExceededError, InfeasibleBudgetError, PrivacyLeakWarning, SeededNoiseWarning  # noqa: E402
from .metrics import nicv, relative_error  # noqa: E402
from .privacy.accountant import BudgetLedger, LedgerEntry, split_budget  # noqa: E402
from .privacy.mechanisms import NoiseSource  # noqa: E402
from .synopsis import PointSynopsis  # noqa: E402
from .utils.domain import Domain  # noqa: E402
from .utils.nearest import inertia  # noqa: E402

__all__ = ["ALGORITHMS", "BudgetLedger", "LedgerEntry", "NoiseSource", "PrivacyLeakWarning", "SeededNoiseWarning",
           "BudgetExceededError", "InfeasibleBudgetError", "Domain", "nicv", "inertia", "relative_error",
           "split_budget", "SCALABLE", "sanitize", "PointSynopsis", "__version__"]
