"""Choosing the contribution bound L privately (issue 23): a DP quantile of the rows per unit.

A privacy unit's bound ``max_contributions`` (L) must be public.  A bound read off the raw
counts ("the 90th percentile of rows per user is 41") is a function of the data released
without noise, so it is itself a leak: the heaviest user's count moves it.  The standard
remedy (Amin et al. 2019, Sec. 5; Wilson et al. 2020, Sec. 4) is to choose L with a small
share of the budget, as a differentially private quantile of the per-unit counts.

Privacy
-------
Each unit contributes exactly one value (its row count) to the list whose quantile is taken,
so adding or removing a unit moves any rank by at most 1: the quantile
(:meth:`~dpcore.privacy.mechanisms.NoiseSource.quantile`, Smith 2011) is ``epsilon``-DP for
neighbouring datasets that differ by a whole unit.  Its ledger entry says so; a fit that then
uses L spends its own epsilon, and the two add up (basic composition).

References
----------
Amin, Dick, Kulesza, Munoz Medina, Vassilvitskii (2019). Bounding user contributions: a
bias-variance trade-off in differential privacy. ICML.
Smith (2011). Privacy-preserving statistical estimation with optimal convergence rates. STOC.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..utils.contributions import unit_codes
from ..utils.validation import check_epsilon
from .accountant import BudgetLedger
from .mechanisms import NoiseSource
from .rng import check_random_state, is_seeded, warn_seeded


@dataclass(frozen=True)
class ChosenBound:
    """A privately chosen contribution bound and the budget it spent.

    Attributes
    ----------
    max_contributions : int
        L, at least 1 and at most the public ``upper``.
    budget : BudgetLedger
        One entry: the quantile's epsilon, for neighbours that differ by a whole unit.
    """

    max_contributions: int
    budget: BudgetLedger


def choose_max_contributions(privacy_id, *, epsilon: float, quantile: float = 0.9, upper: int = 1000,
                             random_state=None) -> ChosenBound:
    """Choose L = ``max_contributions`` as an epsilon-DP ``quantile`` of the rows per privacy unit.

    Parameters
    ----------
    privacy_id : array-like of shape (n_samples,)
        The unit (e.g. the user) of every row.
    epsilon : float > 0
        The share of the budget this choice spends (for example a tenth of the release's).
    quantile : float in (0, 1], default 0.9
        Which quantile of the rows per unit: 0.9 keeps every row of nine units in ten and bounds
        the heaviest tenth (Amin et al. 2019 discuss the bias-variance trade-off).
    upper : int >= 1, default 1000
        Public upper end of the quantile's range: L never exceeds it.

    Returns
    -------
    ChosenBound
        ``max_contributions`` (an int in ``[1, upper]``) and the ledger of the one spend.

    Raises
    ------
    ValueError
        ``epsilon <= 0``, ``quantile`` outside (0, 1], ``upper < 1``, or no rows.

    Notes
    -----
    **Privacy.** epsilon-DP with respect to adding or removing one unit with all its rows (see the
    module docstring); the output is a lattice point of the public range ``[1, upper]`` rounded up,
    which is post-processing.  ``random_state`` other than None makes it a simulation (warned).
    """
    epsilon = float(check_epsilon(epsilon))  # type: ignore[arg-type]  # never None here
    if not 0.0 < float(quantile) <= 1.0:
        raise ValueError(f"quantile must be in (0, 1], got {quantile!r}")
    if isinstance(upper, bool) or int(upper) != upper or upper < 1:
        raise ValueError(f"upper must be a whole number >= 1, got {upper!r}")
    codes, n_units = unit_codes(privacy_id)
    if n_units == 0:
        raise ValueError("no rows: there is nothing to choose a contribution bound from")
    if is_seeded(random_state):
        warn_seeded(random_state)
    ledger = BudgetLedger(epsilon)
    # Each unit contributes one value (its count) to the quantile: L = 1 for this one spend.
    ledger.privacy_unit = {"unit": "privacy_id", "max_contributions": 1, "bounding": "one count per unit"}
    noise = NoiseSource(check_random_state(random_state), ledger)
    per_unit = np.bincount(codes)
    per_unit = per_unit[per_unit > 0].astype(np.float64)
    value = noise.quantile(per_unit, float(quantile), lower=0.0, upper=float(upper), epsilon=epsilon,
                           name="max_contributions: DP quantile of rows per unit")
    return ChosenBound(max(1, min(int(upper), math.ceil(value))), ledger)
