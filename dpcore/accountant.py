"""The privacy budget ledger: every private release records each step's cost here.

A :class:`BudgetLedger` is created by an estimator's ``fit`` with the total
``(epsilon, delta)`` the caller granted.  Every draw of privacy noise goes
through :mod:`dpcore.mechanisms`, which asks the ledger first; the ledger
refuses (:class:`~dpcore.exceptions.BudgetExceededError`) any spend that would
take the running total past the grant, so an output that overspends cannot be
produced.  Composition is basic sequential composition (Dwork & Roth 2014,
Thm. 3.16): the total is the sum of the entries.  Steps that touch disjoint
parts of the data (the cells of a grid, the clusters of one Lloyd step) are a
single entry by parallel composition (McSherry 2009, Thm. 4).
"""
from __future__ import annotations

from dataclasses import dataclass, asdict
import math

from .exceptions import BudgetExceededError

# Float slack when comparing sums of shares with the total: 0.7 + 0.2 + 0.1
# is not exactly 1.0 in binary floating point.
_REL_TOL = 1e-9


@dataclass(frozen=True)
class LedgerEntry:
    """One privacy-consuming step.

    Attributes
    ----------
    name : str
        What the step released, in words (e.g. ``"iteration 3: cluster sums"``).
    epsilon, delta : float
        The step's privacy cost (delta is 0 for pure-DP mechanisms).
    mechanism : str
        ``"laplace"``, ``"exponential"``, ``"gaussian"``, ...
    sensitivity : float or None
        The sensitivity used to scale the noise (L1 for Laplace, L2 for
        Gaussian, of the quality score for the exponential mechanism),
        including what rounding onto the output lattice adds.
    granularity : float or None
        The lattice the released values lie on: 1 for integer noise on an
        integer query, a power of two for a real query rounded onto its
        lattice (every released value is an integer multiple of it), None
        for selections (only an index is released).
    """

    name: str
    epsilon: float
    delta: float = 0.0
    mechanism: str = ""
    sensitivity: float | None = None
    granularity: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


class BudgetLedger:
    """Sequential-composition accountant with a hard cap.

    Parameters
    ----------
    epsilon : float or None
        Total epsilon granted; ``None`` for a non-private estimator, whose
        ledger must stay empty.
    delta : float, default 0.0
        Total delta granted.

    Raises
    ------
    BudgetExceededError
        From :meth:`spend`, when a step would exceed the grant.

    Examples
    --------
    >>> ledger = BudgetLedger(1.0)
    >>> ledger.spend("counts", 0.5, mechanism="laplace", sensitivity=1.0)
    >>> ledger.total()
    (0.5, 0.0)
    """

    def __init__(self, epsilon: float | None, delta: float = 0.0):
        self.epsilon = None if epsilon is None else float(epsilon)
        self.delta = float(delta)
        self._entries: list[LedgerEntry] = []

    # -- spending ---------------------------------------------------------
    def spend(self, name: str, epsilon: float, delta: float = 0.0, *,
              mechanism: str = "", sensitivity: float | None = None,
              granularity: float | None = None) -> LedgerEntry:
        """Record a step's cost, or refuse it if the grant would be exceeded.

        Parameters
        ----------
        name : str
            Human-readable description of what is released.
        epsilon : float
            Must be finite and > 0.
        delta : float, default 0
            Must be in [0, 1).

        Returns
        -------
        LedgerEntry

        Raises
        ------
        ValueError
            If epsilon is not a finite positive number or delta not in [0, 1).
        BudgetExceededError
            If the ledger is non-private (granted ``epsilon=None``) or the
            running total would exceed the grant.
        """
        epsilon = float(epsilon)
        delta = float(delta)
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"step {name!r}: epsilon must be a positive finite number, got {epsilon}")
        if not (0.0 <= delta < 1.0):
            raise ValueError(f"step {name!r}: delta must be in [0, 1), got {delta}")
        if self.epsilon is None:
            raise BudgetExceededError(
                f"step {name!r} asks for privacy budget, but this estimator was given none "
                "(epsilon=None is only for non-private baselines)")
        eps_after = self.spent_epsilon + epsilon
        delta_after = self.spent_delta + delta
        if eps_after > self.epsilon * (1 + _REL_TOL) + 1e-15:
            raise BudgetExceededError(
                f"step {name!r} asks for epsilon={epsilon:.6g}, but only "
                f"{self.remaining()[0]:.6g} of {self.epsilon:.6g} is left")
        if delta_after > self.delta * (1 + _REL_TOL) + 1e-15:
            raise BudgetExceededError(
                f"step {name!r} asks for delta={delta:.3g}, but only "
                f"{self.remaining()[1]:.3g} of {self.delta:.3g} is left")
        entry = LedgerEntry(name, epsilon, delta, mechanism, sensitivity, granularity)
        self._entries.append(entry)
        return entry

    # -- reading ----------------------------------------------------------
    @property
    def spent_epsilon(self) -> float:
        return math.fsum(e.epsilon for e in self._entries)

    @property
    def spent_delta(self) -> float:
        return math.fsum(e.delta for e in self._entries)

    def total(self) -> tuple[float, float]:
        """Return ``(epsilon_spent, delta_spent)``, never above the grant."""
        return self.spent_epsilon, self.spent_delta

    def remaining(self) -> tuple[float, float]:
        """Return the ``(epsilon, delta)`` still available (0 for non-private)."""
        if self.epsilon is None:
            return 0.0, 0.0
        return max(self.epsilon - self.spent_epsilon, 0.0), max(self.delta - self.spent_delta, 0.0)

    def to_records(self) -> list[dict]:
        """The entries as a list of plain dicts (for tables and JSON export)."""
        return [e.as_dict() for e in self._entries]

    def __iter__(self):
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, i):
        return self._entries[i]

    def __repr__(self) -> str:
        eps, dl = self.total()
        return (f"BudgetLedger(granted=({self.epsilon}, {self.delta}), spent=({eps:.6g}, {dl:.3g}), "
                f"steps={len(self)})")


def split_budget(total: float, shares) -> list[float]:
    """Split ``total`` by ``shares`` so that the parts sum to ``total`` exactly.

    The last part absorbs floating-point rounding, so spending every part on a
    ledger granted ``total`` never trips the cap.

    Parameters
    ----------
    total : float
    shares : sequence of float
        Non-negative weights (need not sum to 1).

    Returns
    -------
    list of float, one part per share, in the order given.

    Raises
    ------
    ValueError
        If a share is negative or all are zero.
    """
    shares = [float(s) for s in shares]
    if any(s < 0 for s in shares) or sum(shares) <= 0:
        raise ValueError(f"budget shares must be non-negative and not all zero, got {shares}")
    tot = math.fsum(shares)
    parts = [total * s / tot for s in shares]
    parts[-1] = total - math.fsum(parts[:-1])
    return parts
