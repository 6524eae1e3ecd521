"""``dpcore.regime``: the public path of the regime check named in CONTRACT.md (issue 16).

The code lives in :mod:`dpcore.algorithms.regime` (the verdict, its enforcement) and
:mod:`dpcore.algorithms.registry` (``assess`` asks a registry key's class for its rule); this
module only re-exports the names the contract promises, so ``dpcore.regime.assess(...)`` keeps
working without loading anything the face does not already load.
"""
from __future__ import annotations

from .algorithms.regime import OutOfRegimeError, Regime, RegimeWarning
from .algorithms.registry import assess

__all__ = ["OutOfRegimeError", "Regime", "RegimeWarning", "assess"]
