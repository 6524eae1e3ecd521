"""The privacy budget ledger: every private release records each step's cost here.

A :class:`BudgetLedger` is created by an estimator's ``fit`` with the total
``(epsilon, delta)`` the caller granted.  Every draw of privacy noise goes
through :mod:`dpcore.privacy.mechanisms`, which asks the ledger first; the ledger
refuses (:class:`~dpcore.exceptions.BudgetExceededError`) any spend that would
take the running total past the grant, so an output that overspends cannot be
produced.  Composition is basic sequential composition (Dwork & Roth 2014,
Thm. 3.16): the total is the sum of the entries.  Steps that touch disjoint
parts of the data (the cells of a grid, the clusters of one Lloyd step) are a
single entry by parallel composition (McSherry 2009, Thm. 4).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..exceptions import BudgetExceededError
from .calibration import zcdp_rho

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
    sampler : dict or None
        What was actually drawn, for additive noise: ``distribution`` (``"discrete laplace"`` or
        ``"discrete gaussian"``), ``parameter`` (``"scale"`` t of ``P[x] ∝ exp(-|x| / t)``, or
        ``"sigma"`` of ``N_Z(0, sigma^2)``), ``value`` in lattice units, ``granularity`` (one
        lattice unit in the query's units) and ``measure`` (``"pure"``, ``"approximate"`` or
        ``"zcdp"`` with ``rho``).  None for selections and composite steps.
    """

    name: str
    epsilon: float
    delta: float = 0.0
    mechanism: str = ""
    sensitivity: float | None = None
    granularity: float | None = None
    sampler: dict | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _add_exact(partials: list[float], x: float) -> None:
    """Add ``x`` to a list of non-overlapping partials whose exact sum is a running total, in place.

    Shewchuk's algorithm (Shewchuk 1997, "Adaptive precision floating-point arithmetic", Theorem 10;
    the ``msum`` recipe behind :func:`math.fsum`): ``math.fsum(partials)`` is then the correctly rounded
    exact sum of every value added, the same float as ``math.fsum`` over the values themselves.
    """
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


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
    >>> entry = ledger.spend("counts", 0.5, mechanism="laplace", sensitivity=1.0)
    >>> entry.epsilon, ledger.total()
    (0.5, (0.5, 0.0))
    >>> ledger.total()
    (0.5, 0.0)
    """

    def __init__(self, epsilon: float | None, delta: float = 0.0):
        self.epsilon = None if epsilon is None else float(epsilon)
        self.delta = float(delta)
        self._entries: list[LedgerEntry] = []
        # The exact running sums of the entries' epsilons and deltas as Shewchuk's non-overlapping
        # partials (what math.fsum keeps inside): each spend adds in O(len(partials)), a handful,
        # where re-summing every entry made a fit of many steps quadratic.
        self._eps_partials: list[float] = []
        self._delta_partials: list[float] = []
        #: The privacy unit the entries' sensitivities are for (issue 23): None for one row, else
        #: ``{"unit": column, "max_contributions": L, "bounding": "sample" | "weight"}``.
        self.privacy_unit: dict | None = None

    # -- spending ---------------------------------------------------------
    def spend(self, name: str, epsilon: float, delta: float = 0.0, *,
              mechanism: str = "", sensitivity: float | None = None,
              granularity: float | None = None, sampler: dict | None = None) -> LedgerEntry:
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
        entry = LedgerEntry(name, epsilon, delta, mechanism, sensitivity, granularity, sampler)
        self._append(entry)
        return entry

    def _append(self, entry: LedgerEntry) -> None:
        self._entries.append(entry)
        _add_exact(self._eps_partials, entry.epsilon)
        _add_exact(self._delta_partials, entry.delta)

    # -- reading ----------------------------------------------------------
    @property
    def spent_epsilon(self) -> float:
        return math.fsum(self._eps_partials)   # == math.fsum of every entry's epsilon, bit for bit

    @property
    def spent_delta(self) -> float:
        return math.fsum(self._delta_partials)

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

    Examples
    --------
    >>> from dpcore.privacy.accountant import split_budget
    >>> parts = split_budget(1.0, [0.1, 0.3, 0.6])
    >>> len(parts), sum(parts) == 1.0
    (3, True)
    """
    shares = [float(s) for s in shares]
    if any(s < 0 for s in shares) or sum(shares) <= 0:
        raise ValueError(f"budget shares must be non-negative and not all zero, got {shares}")
    tot = math.fsum(shares)
    parts = [total * (s / tot) for s in shares]     # s / tot <= 1: no part above total (subnormal shares)
    parts[-1] = total - math.fsum(parts[:-1])
    return parts


class ZCDPLedger(BudgetLedger):
    """A ledger of Gaussian steps composed in zero-concentrated DP (zCDP).

    The grant ``(epsilon, delta)`` becomes a zCDP budget
    ``rho_total = zcdp_rho(epsilon, delta)``.  A (discrete) Gaussian mechanism
    with L2 sensitivity ``Delta`` and scale ``sigma`` is
    ``Delta^2 / (2 sigma^2)``-zCDP (Bun & Steinke 2016, Prop. 1.6; Canonne,
    Kamath & Steinke 2020, Thm. 14 for the discrete Gaussian), adaptive
    composition adds the rho's (Bun & Steinke 2016, Lemma 2.3), and
    ``rho_total`` converts to (epsilon, delta)-DP (CKS 2020, Cor. 13).  So any
    steps with ``sum rho_i <= rho_total`` are (epsilon, delta)-DP in total: far
    less noise per step than splitting (epsilon, delta) by basic composition
    (at 10 steps about 2.3x less).

    Each entry records its *share* ``s_i = rho_i / rho_total`` of the grant as
    ``(s_i epsilon, s_i delta)``, so the entries add up to at most the grant
    like every other ledger; the guarantee is that of the whole composition,
    an entry's figures are its share of it, not a stand-alone guarantee.  Only
    zCDP steps (:meth:`spend_zcdp`, called by
    :meth:`dpcore.NoiseSource.gaussian_zcdp`) are accepted.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)

    Raises
    ------
    ValueError
        For epsilon or delta out of range.
    BudgetExceededError
        From :meth:`spend_zcdp` when ``sum rho_i`` would exceed ``rho_total``,
        and from :meth:`spend` always (pure-DP steps are not composed here).

    References
    ----------
    Bun & Steinke (2016). Concentrated differential privacy: simplifications,
    extensions, and lower bounds. TCC, Prop. 1.6, Lemma 2.3.
    Canonne, Kamath & Steinke (2020). The discrete Gaussian for differential
    privacy. NeurIPS, Thm. 14, Cor. 13.
    """

    #: How the entries compose (shown in published releases).
    composition = ("zero-concentrated DP: the steps' rho_i add up (Bun & Steinke 2016, Lemma 2.3) and the "
                   "total converts to (epsilon, delta) (Canonne, Kamath & Steinke 2020, Cor. 13); each entry "
                   "shows its share rho_i / rho of the grant")

    def __init__(self, epsilon: float, delta: float):
        super().__init__(epsilon, delta)
        self.epsilon: float = float(epsilon)  # never None: a zCDP ledger is always private
        self.rho_total = zcdp_rho(epsilon, delta)
        self._rho = 0.0

    @property
    def rho_spent(self) -> float:
        """``sum rho_i`` of the steps so far."""
        return self._rho

    def rho_remaining(self) -> float:
        """The largest rho one more step may use."""
        return max(self.rho_total - self._rho, 0.0)

    def spend_zcdp(self, name: str, rho: float, *, mechanism: str = "gaussian", sensitivity: float | None = None,
                   granularity: float | None = None, sampler: dict | None = None) -> LedgerEntry:
        """Record a ``rho``-zCDP step, or refuse it if the zCDP budget would be exceeded.

        Returns
        -------
        LedgerEntry with ``epsilon = s * grant_epsilon``, ``delta = s * grant_delta``,
        ``s = rho / rho_total``.
        """
        rho = float(rho)
        if not (math.isfinite(rho) and rho > 0):
            raise ValueError(f"step {name!r}: rho must be a positive finite number, got {rho}")
        after = self._rho + rho
        if after > self.rho_total * (1 + _REL_TOL) + 1e-15:
            raise BudgetExceededError(
                f"step {name!r} asks for rho={rho:.6g}, but only {self.rho_remaining():.6g} of "
                f"rho={self.rho_total:.6g} (epsilon={self.epsilon:g}, delta={self.delta:g}) is left")
        share = min(rho / self.rho_total, max(1.0 - self._rho / self.rho_total, 0.0))
        entry = LedgerEntry(name, self.epsilon * share, self.delta * share, f"{mechanism} ({rho:.3g}-zCDP)",
                            sensitivity, granularity, sampler)
        self._append(entry)
        self._rho = after
        return entry

    def spend(self, name: str, epsilon: float, delta: float = 0.0, **kw) -> LedgerEntry:
        raise BudgetExceededError(f"step {name!r}: a zCDP ledger composes only Gaussian steps "
                                  "(NoiseSource.gaussian_zcdp); put other mechanisms on an ordinary ledger")
