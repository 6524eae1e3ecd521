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
from collections.abc import Callable
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)

from ..privacy.mechanisms import NoiseSource
from ..utils.contributions import check_max_contributions
from ..utils.validation import EPSILON, N_CLUSTERS, Checked
from ._blocks.size import public_or_noisy_size

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


class DeclaredParameters:
    """The estimator's declared parameters at work: their validation and the budget plan they make.

    Mixed into :class:`~dpcore.algorithms.base.DPClusterer` (its first base, so :meth:`_validate_params`
    replaces scikit-learn's); reads ``_parameter_constraints``, ``epsilon``, ``private`` and the shares
    the subclass declares.
    """

    # Declared (annotation only: nothing here shadows the estimator's own values) for the type checker.
    private: ClassVar[bool]
    _parameter_constraints: ClassVar[dict]
    epsilon: float
    n_share: float
    get_params: Callable[..., dict]
    #: The size the last fit planned with (set by :meth:`_public_or_noisy_size`; None: it planned with none).
    n_samples_estimate_: float | None

    # -- the declared budget plan ------------------------------------------
    def budget_plan(self, n_features: int, n: float | None = None, **released) -> dict[str, tuple[float, float]]:
        """How ``fit`` splits (epsilon, delta) over its steps, from the parameters and public inputs.

        Every budget share is a constructor parameter: ``<step>_share`` for one step's fraction,
        ``budget_shares`` for a tuple over the named steps (issue 58's one naming scheme); this
        method turns them into the plan a fit's ledger (``budget_``) must follow.  A ledger entry
        belongs to the step whose name begins the entry's name once every number in it is written
        ``#`` (the longest such step): ``"iteration #"`` holds ``"iteration 3: cluster counts and
        sums"`` (:func:`ledger_by_step`).  ``tests/test_budget_plan.py`` compares the plan with the
        ledger of a fit of every registered estimator.

        Parameters
        ----------
        n_features : int
            d, the number of columns (public).
        n : float or None
            The dataset size the fit plans with: the public ``n_samples``, or the noisy size the fit
            released (its ``"dataset size"`` entry).  Only estimators whose split depends on it
            read it (for example DPLloyd's grid start, the Hybrid's branch, PGkM's rounds).
        **released
            Other released values a split depends on (AutoKMeans: ``hypotheses``, the separation
            read's ``separation_["hypotheses"]``, which decide how many candidates share the budget).

        Returns
        -------
        dict
            ``{step: (epsilon, delta)}``; the values add up to ``(epsilon, delta)`` given (the
            delta of pure epsilon-DP estimators is 0).  A step named ``"unspent ..."``
            (:data:`~dpcore.algorithms.parameters.UNSPENT`) is budget the fit leaves unused by design
            (the coreset's worst-case provisioning).  Empty for a non-private baseline.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A parameter outside its constraints (:meth:`_validate_params`): no plan of invalid shares.
        ValueError
            The split depends on ``n`` and none was given.

        Notes
        -----
        **Privacy.** A function of public inputs and released values only: it reads no row.
        """
        self._validate_params()
        return self._budget_plan(int(n_features), n, **released)

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The class's own plan (:meth:`budget_plan` validates the parameters first): each estimator says it."""
        if not self.private:
            return {}
        raise NotImplementedError(f"{type(self).__name__} declares no budget plan: define _budget_plan")

    def _planned_size(self, n: float | None) -> float:
        """The size a plan depends on: ``n``, else the public ``n_samples``; ValueError without either."""
        size = n if n is not None else getattr(self, "n_samples", None)
        if size is None:
            raise ValueError(f"{type(self).__name__}'s budget plan depends on the dataset size: pass n (the "
                             "public n_samples or the noisy size the fit released)")
        return max(float(size), 1.0)

    def _size_step(self) -> tuple[dict[str, tuple[float, float]], float]:
        """The plan's "dataset size" step (none with a public ``n_samples``) and the epsilon left after it."""
        eps = float(self.epsilon)
        if getattr(self, "n_samples", None) is not None:
            return {}, eps
        e = eps * float(self.n_share)
        return {"dataset size": (e, 0.0)}, eps - e

    def _public_or_noisy_size(self, n_true, noise: NoiseSource, epsilon: float, *, share: float | None = None,
                              name: str = "dataset size") -> tuple[float, float]:
        """The size the fit plans with, kept as ``n_samples_estimate_``: the one door to the size block.

        Calls :func:`~dpcore.algorithms._blocks.size.public_or_noisy_size` with the estimator's public
        ``n_samples`` (if it takes one) and stores what it returns, so every estimator names the size
        its plan read the same way (issue 58) and :meth:`budget_plan` can be given it
        (``est.budget_plan(d, est.n_samples_estimate_)``).

        Parameters
        ----------
        n_true : int or FixedPoint
            The exact size (private: read only through the noise).
        noise : NoiseSource
            The fit's noise (its ledger records the ``name`` entry when a noisy size is bought).
        epsilon : float
            The budget the share is taken from.
        share : float or None
            The fraction of ``epsilon`` spent on the noisy size; None: the ``n_share`` parameter.
        name : str, default "dataset size"
            The ledger entry's name.

        Returns
        -------
        (n_estimate, epsilon_left) : float, float
            ``n_estimate`` (also ``self.n_samples_estimate_``) is the public ``n_samples`` or the
            released noisy size, at least 1; never the true size.

        Raises
        ------
        ValueError
            As :func:`~dpcore.algorithms._blocks.size.public_or_noisy_size` (public inputs only).
        """
        n_est, left = public_or_noisy_size(n_true, getattr(self, "n_samples", None),
                                           self.n_share if share is None else share, epsilon, noise, name=name)
        self.n_samples_estimate_ = float(n_est)
        return n_est, left

    def _validate_params(self) -> None:
        """Check the constructor parameters against ``_parameter_constraints`` (scikit-learn's validation).

        As :meth:`sklearn.base.BaseEstimator._validate_params`, except that a parameter whose
        constraint is one of the project's checks (:class:`~dpcore.utils.validation.Checked`:
        ``epsilon``, ``delta``, ``n_clusters``) gets that check's own sentence.  Called by
        :meth:`_begin_fit` whatever scikit-learn's ``skip_parameter_validation`` setting says: the
        shares and epsilon it checks are what keeps the ledger honest.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A ``ValueError`` and a ``TypeError``: a parameter is outside its constraints.  Depends
            on the parameters only (public inputs).
        """
        params = self.get_params(deep=False)
        for name, constraints in self._parameter_constraints.items():
            checked = [c for c in constraints if isinstance(c, Checked)]
            if checked and name in params and not any(make_constraint(c).is_satisfied_by(params[name])
                                                      for c in constraints):
                try:
                    checked[0].check(params[name])
                except (TypeError, ValueError) as err:
                    raise InvalidParameterError(str(err)) from None
        validate_parameter_constraints(self._parameter_constraints, params, caller_name=type(self).__name__)
