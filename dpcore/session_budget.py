"""A privacy budget account per dataset, across the releases of one session.

Each published release of the same data spends its own (epsilon, delta);
by basic sequential composition (Dwork & Roth 2014, Thm. 3.16) the
guarantee for the people in that data after several releases is the *sum*.
:class:`SessionBudget` keeps that running sum per dataset and, when the data
owner sets a total, refuses (:class:`~dpcore.exceptions.BudgetExceededError`)
any release that would take the sum past it, before the release is recorded.

Looking at many epsilon values or seeds on the real data and then choosing
one is itself a use of the data: only what is recorded here is accounted
for, so the honest practice is to explore on public or synthetic data, or to
record every release that anyone outside the data owner's office sees.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .exceptions import BudgetExceededError

# Same float slack as the estimator ledger: 0.1 + 0.2 is not exactly 0.3.
_REL_TOL = 1e-9


@dataclass(frozen=True)
class AccountEntry:
    """One published release on one dataset.

    Attributes
    ----------
    label : str
        What was released, in words ("EUGkM, k = 5, ε = 0.5, seed 0").
    epsilon, delta : float
        Its privacy cost (the release ledger's total).
    algorithm : str
        The ``dpcore.ALGORITHMS`` key.
    """

    label: str
    epsilon: float
    delta: float = 0.0
    algorithm: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


class SessionBudget:
    """Per-dataset sequential-composition account with an optional total cap.

    Parameters
    ----------
    None.  Caps are set per dataset with :meth:`set_cap`.

    Notes
    -----
    Datasets are keyed by a string the caller chooses; the app uses the
    dataset's name plus a fingerprint of its rows, so two different uploads
    with the same file name are different accounts.

    Examples
    --------
    >>> acc = SessionBudget()
    >>> acc.set_cap("taxi", 1.0)
    >>> _ = acc.charge("taxi", 0.6, label="EUGkM at 0.6")
    >>> acc.can_afford("taxi", 0.5)
    False
    """

    def __init__(self):
        self._entries: dict[str, list[AccountEntry]] = {}
        self._caps: dict[str, tuple[float, float]] = {}

    # -- caps -------------------------------------------------------------
    def set_cap(self, dataset: str, epsilon: float | None, delta: float = 0.0) -> None:
        """Set (or with ``epsilon=None`` remove) the total budget for ``dataset``.

        Raises
        ------
        ValueError
            If epsilon is not positive and finite, delta not in [0, 1), or the
            releases already recorded exceed the new total (a cap cannot undo
            what has been published).
        """
        if epsilon is None:
            self._caps.pop(dataset, None)
            return
        epsilon, delta = float(epsilon), float(delta)
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"the total budget must be a positive number, got ε = {epsilon}")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"the total δ must be in [0, 1), got {delta}")
        spent_eps, spent_delta = self.spent(dataset)
        if spent_eps > epsilon * (1 + _REL_TOL) + 1e-15 or spent_delta > delta * (1 + _REL_TOL) + 1e-15:
            raise ValueError(
                f"releases already published on this data spent ε = {spent_eps:.4g}"
                + (f", δ = {spent_delta:.3g}" if spent_delta else "")
                + f"; a total of ε = {epsilon:.4g}" + (f", δ = {delta:.3g}" if delta else "")
                + " would be below what is already spent. Choose a total of at least what is spent.")
        self._caps[dataset] = (epsilon, delta)

    def cap(self, dataset: str) -> tuple[float, float] | None:
        """The total (epsilon, delta) set for ``dataset``, or None."""
        return self._caps.get(dataset)

    # -- reading ----------------------------------------------------------
    def entries(self, dataset: str) -> list[AccountEntry]:
        return list(self._entries.get(dataset, []))

    def records(self, dataset: str) -> list[dict]:
        """The releases of ``dataset`` as plain dicts (for tables)."""
        return [e.as_dict() for e in self._entries.get(dataset, [])]

    def datasets(self) -> list[str]:
        return sorted(set(self._entries) | set(self._caps))

    def spent(self, dataset: str) -> tuple[float, float]:
        """Sum of (epsilon, delta) over the releases recorded for ``dataset``."""
        es = self._entries.get(dataset, [])
        return math.fsum(e.epsilon for e in es), math.fsum(e.delta for e in es)

    def remaining(self, dataset: str) -> tuple[float, float] | None:
        """What is left under the cap, or None when no cap is set."""
        c = self._caps.get(dataset)
        if c is None:
            return None
        eps, dl = self.spent(dataset)
        return max(c[0] - eps, 0.0), max(c[1] - dl, 0.0)

    def refusal(self, dataset: str, epsilon: float, delta: float = 0.0) -> str | None:
        """The sentence explaining why a release of (epsilon, delta) would be refused, or None if allowed."""
        c = self._caps.get(dataset)
        if c is None:
            return None
        eps, dl = self.spent(dataset)
        if eps + float(epsilon) > c[0] * (1 + _REL_TOL) + 1e-15:
            return (f"This release needs ε = {float(epsilon):.4g}, but only ε = {max(c[0] - eps, 0.0):.4g} of the "
                    f"total {c[0]:.4g} set for this data is left (already published: ε = {eps:.4g}). "
                    f"Choose a smaller ε or raise the total.")
        if dl + float(delta) > c[1] * (1 + _REL_TOL) + 1e-15:
            return (f"This release needs δ = {float(delta):.3g}, but only δ = {max(c[1] - dl, 0.0):.3g} of the "
                    f"total {c[1]:.3g} set for this data is left. Choose an algorithm with δ = 0 or raise the "
                    f"total δ.")
        return None

    def can_afford(self, dataset: str, epsilon: float, delta: float = 0.0) -> bool:
        return self.refusal(dataset, epsilon, delta) is None

    # -- spending ---------------------------------------------------------
    def charge(self, dataset: str, epsilon: float, delta: float = 0.0, *, label: str = "",
               algorithm: str = "") -> AccountEntry:
        """Record a release of (epsilon, delta) on ``dataset``, or refuse it.

        Parameters
        ----------
        dataset : str
        epsilon : float > 0
        delta : float in [0, 1)
        label, algorithm : str

        Returns
        -------
        AccountEntry

        Raises
        ------
        ValueError
            If epsilon is not positive and finite or delta not in [0, 1).
        BudgetExceededError
            If a total is set and the release would exceed it; nothing is
            recorded then.
        """
        epsilon, delta = float(epsilon), float(delta)
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"a release must spend a positive ε, got {epsilon}")
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"δ must be in [0, 1), got {delta}")
        why = self.refusal(dataset, epsilon, delta)
        if why is not None:
            raise BudgetExceededError(why)
        entry = AccountEntry(label or f"ε = {epsilon:g}", epsilon, delta, algorithm)
        self._entries.setdefault(dataset, []).append(entry)
        return entry

    def charge_release(self, dataset: str, release: dict) -> AccountEntry:
        """Record a release built by :func:`dpcore.release.build_release` (its ledger's total)."""
        p = release["privacy"]
        label = (f"{release['algorithm']['name']}, k = {release['parameters'].get('n_clusters', '-')}, "
                 f"ε = {p['epsilon']:.4g}, seed {release['seed_policy'].get('random_state')}")
        return self.charge(dataset, p["epsilon_spent"], p["delta_spent"], label=label,
                           algorithm=release["algorithm"]["key"])

    def __repr__(self) -> str:
        return f"SessionBudget(datasets={self.datasets()})"
