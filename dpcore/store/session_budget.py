"""Deprecated: the per-session budget account is the release store's in-memory mode.

``SessionBudget()`` is :class:`dpcore.store.ReleaseStore` opened on ``":memory:"``,
kept so that old imports keep working: the same caps, refusals and sums
(basic sequential composition, Dwork & Roth 2014, Thm. 3.16), recorded one
release at a time with reserve-before-reveal.  Use
``dpcore.store.ReleaseStore(":memory:")`` directly, or a persistent store
(``ReleaseStore()``), so that a reload or a restart cannot start the account
again at zero.
"""
from __future__ import annotations

import warnings

from .release_store import ReleaseStore

__all__ = ["SessionBudget"]


class SessionBudget(ReleaseStore):
    """Deprecated alias of ``ReleaseStore(":memory:")``.

    Methods are those of :class:`~dpcore.store.ReleaseStore`, plus
    :meth:`charge_release` (= :meth:`~dpcore.store.ReleaseStore.record`) and
    :meth:`can_afford`.

    Warns
    -----
    DeprecationWarning
        On construction.
    """

    def __init__(self):
        warnings.warn("dpcore.session_budget.SessionBudget is deprecated: use dpcore.store.ReleaseStore(':memory:') "
                      "or a persistent ReleaseStore()", DeprecationWarning, stacklevel=2)
        super().__init__(":memory:")

    def charge_release(self, dataset: str, release: dict, *, who: str = "") -> int:
        """Record a release built by :func:`dpcore.release.build_release`; returns its id."""
        return self.record(dataset, release, who=who)

    def can_afford(self, dataset: str, epsilon: float, delta: float = 0.0) -> bool:
        """Whether a release of (epsilon, delta) fits under the cap now (a preview; only recording reserves)."""
        return self.refusal(dataset, epsilon, delta) is None
