"""dpcore: differentially private clustering algorithms, faithful to their papers.

``ALGORITHMS`` maps a stable key to each estimator class (see CONTRACT.md);
every estimator follows the scikit-learn protocol (``fit``, ``predict``,
fitted attributes ending in ``_``) and records its privacy spending in
``budget_``.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING

# OpenMP threads (scikit-learn's k-means, numba's parallel kernels) that wait by spinning take the CPU from each
# other and from anything else on the machine: on a 2-core virtual machine, scikit-learn's KMeans on 181,446 taxi
# rows took 1.0 s with two spinning threads and 0.42 s with OMP_WAIT_POLICY=PASSIVE (0.39 s on one thread), and
# 1.3-1.6 s while a browser drew the page beside it.  Read once, when the OpenMP runtime loads (with scikit-learn
# or numba, after this line): a value the user set, or a runtime already loaded, wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._version import __version__  # noqa: E402
from .exceptions import BudgetExceededError, InfeasibleBudgetError, PrivacyLeakWarning, SeededNoiseWarning  # noqa: E402

# The face's other names are imported when first read (PEP 562), not with the package: ``import dpcore.store`` or
# ``dpcore.release`` (the public gallery, a script reading the store) then loads neither the estimators nor
# scikit-learn, SciPy's statistics and numba (~2-3 s on 2 cores; issue 66).  ``dpcore.ALGORITHMS`` and
# ``from dpcore import ALGORITHMS`` work as before.
_LAZY = {"ALGORITHMS": ".algorithms.registry", "SCALABLE": ".algorithms.registry", "sanitize": ".algorithms.sanitize",
         "nicv": ".metrics", "relative_error": ".metrics", "BudgetLedger": ".privacy.accountant",
         "LedgerEntry": ".privacy.accountant", "split_budget": ".privacy.accountant",
         "NoiseSource": ".privacy.mechanisms", "PointSynopsis": ".synopsis", "Domain": ".utils.domain",
         "inertia": ".utils.nearest"}

if TYPE_CHECKING:
    from .algorithms.registry import ALGORITHMS, SCALABLE
    from .algorithms.sanitize import sanitize
    from .metrics import nicv, relative_error
    from .privacy.accountant import BudgetLedger, LedgerEntry, split_budget
    from .privacy.mechanisms import NoiseSource
    from .synopsis import PointSynopsis
    from .utils.domain import Domain
    from .utils.nearest import inertia


def __getattr__(name: str):
    """A name of the face, imported on first use; or a subpackage (``dpcore.algorithms``), as after the eager
    imports this package used to make."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["ALGORITHMS", "BudgetLedger", "LedgerEntry", "NoiseSource", "PrivacyLeakWarning", "SeededNoiseWarning",
           "BudgetExceededError", "InfeasibleBudgetError", "Domain", "nicv", "inertia", "relative_error",
           "split_budget", "SCALABLE", "sanitize", "PointSynopsis", "__version__"]
