"""``dpcore.session_budget``: the public path of ``SessionBudget`` named in CONTRACT.md (issue 13).

``SessionBudget`` itself (:mod:`dpcore.store.session_budget`) is the deprecated per-session account:
``ReleaseStore(":memory:")`` that warns with :class:`DeprecationWarning` on construction.  This
module only re-exports it, so the contract's import path keeps working.
"""
from __future__ import annotations

from .store.session_budget import SessionBudget

__all__ = ["SessionBudget"]
