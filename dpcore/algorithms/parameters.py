"""What an estimator declares about its parameters: scikit-learn constraints and the budget plan's steps.

Every estimator lists ``_parameter_constraints`` with scikit-learn's own machinery
(:mod:`sklearn.utils._param_validation`); the constraints many of them share are here
(:data:`COMMON_CONSTRAINTS`), with the constraint of a tuple of budget shares (:func:`share_tuple`).
Budget shares follow one naming scheme (issue 58): ``<step>_share`` for one step's fraction of epsilon,
``budget_shares`` for a tuple over named steps; ``DPClusterer.budget_plan`` turns them into
``{step: (epsilon, delta)}`` and :func:`ledger_by_step` groups a fit's ledger the same way.
"""
from __future__ import annotations

import functools
import re
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..utils.contributions import check_max_contributions
from ..utils.validation import EPSILON, N_CLUSTERS, Checked

#: ``max_contributions``: a public bound L >= 1 on the rows of one privacy unit, or None (row level).
MAX_CONTRIBUTIONS = Checked(functools.partial(check_max_contributions, allow_auto=False), "a whole number >= 1")
#: ``random_state``: what :func:`dpcore.privacy.rng.check_random_state` takes (None is the private setting).
RANDOM_STATE: list = [None, Interval(Integral, 0, None, closed="left"), np.random.Generator,
                      np.random.SeedSequence]
#: A share of epsilon spent on one step: strictly between 0 and 1 (the ``*_share`` parameters).
SHARE = Interval(Real, 0, 1, closed="neither")


def share_tuple(name: str, steps: tuple[str, ...], *, last_may_be_zero: bool = False) -> Checked:
    """The constraint of a tuple of budget shares, one per named step (normalised to sum 1 by the fit).

    Parameters
    ----------
    name : str
        The parameter (``"budget_shares"``), for the sentence.
    steps : tuple of str
        The steps, in order.
    last_may_be_zero : bool, default False
        The last step is optional (a share of 0 skips it).

    Returns
    -------
    Checked
        Satisfied by ``len(steps)`` finite numbers, all positive (the last one may be 0 when allowed).
    """
    def check(value) -> None:
        try:
            s = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            s = np.array([])
        body = s[:-1] if last_may_be_zero else s
        if s.shape != (len(steps),) or not np.all(np.isfinite(s)) or np.any(body <= 0) or np.any(s < 0):
            also = f", the last ({steps[-1]}) may be 0" if last_may_be_zero else ""
            raise ValueError(f"{name} must be {len(steps)} positive numbers ({', '.join(steps)}){also}; "
                             f"got {value!r}")
    return Checked(check, f"{len(steps)} positive shares ({', '.join(steps)})")


#: Constraints of the parameters many estimators share; a class lists its own parameters'
#: constraints as ``{**Parent._parameter_constraints, ...}`` (scikit-learn's idiom).
COMMON_CONSTRAINTS: dict[str, list] = {
    "n_clusters": [N_CLUSTERS],
    "epsilon": [EPSILON],
    # The bounds' shape and values are checked against the number of columns by check_bounds in _begin_fit.
    "bounds": ["array-like", None],
    "random_state": RANDOM_STATE,
    "max_contributions": [MAX_CONTRIBUTIONS, None],
    "contribution_bounding": [StrOptions({"sample", "weight"})],
    # Finite as well: public_or_noisy_size says so in its own sentence.
    "n_samples": [Interval(Real, 1, None, closed="left"), None],
    "n_share": [SHARE],
    "assignment": [StrOptions({"auto", "cells", "rows"})],
}


#: The name a budget plan's step starts with when the fit leaves that budget unused by design (the
#: coreset's worst-case provisioning): no ledger entry belongs to it.
UNSPENT = "unspent"


def ledger_by_step(plan, ledger) -> dict[str, tuple[float, float]]:
    """The (epsilon, delta) a fit's ledger spent per step of a budget plan.

    Parameters
    ----------
    plan : Mapping of str
        The steps (:meth:`DPClusterer.budget_plan`'s keys).
    ledger : iterable of LedgerEntry
        ``est.budget_``.

    Returns
    -------
    dict
        ``{step: (epsilon, delta)}`` summed over the entries whose name, with every number written
        ``#``, starts with the step (the longest such step); an entry no step claims appears under
        its own name, so a comparison with the plan shows it.
    """
    steps = sorted(plan, key=len, reverse=True)
    out: dict[str, list[float]] = {}
    for entry in ledger:
        name = re.sub(r"\d+", "#", entry.name)
        step = next((s for s in steps if name.startswith(s)), entry.name)
        acc = out.setdefault(step, [0.0, 0.0])
        acc[0] += float(entry.epsilon)
        acc[1] += float(entry.delta)
    return {k: (v[0], v[1]) for k, v in out.items()}
