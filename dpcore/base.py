"""The estimator protocol shared by every algorithm in :data:`dpcore.ALGORITHMS`.

Follows scikit-learn: ``__init__`` only stores its arguments; ``fit`` checks
them (through :mod:`dpcore.validation`), creates the budget ledger and the
noise source, clips the data to the public bounds and calls ``_fit``.
Fitted attributes end in ``_``.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .accountant import BudgetLedger
from .mechanisms import NoiseSource
from .metrics import assign
from .validation import (Domain, _check_span, check_array, check_bounds, check_delta, check_epsilon,
                         check_n_clusters, check_random_state, is_seeded, warn_seeded)


class DPClusterer(ClusterMixin, BaseEstimator):
    """Base of all dpcore clusterers (private and non-private baselines).

    Class attributes (registry metadata, shown in the app)
    ------------------------------------------------------
    display_name : str
    reference : str
        Paper, section or algorithm.
    summary : str
        One line: what it does.
    private : bool
        False only for baselines (they accept ``epsilon=None``).
    needs_delta : bool
        True for (epsilon, delta)-DP algorithms.
    family : str
        ``"centroids"`` or ``"grid clusters"``.

    Fitted attributes (set by ``fit``)
    ----------------------------------
    cluster_centers_ : ndarray (k, d), data units
    budget_ : BudgetLedger
    synopsis_ : GridSynopsis, CoresetSynopsis, WaveletGridSynopsis or None
    bounds_ : Domain
        The public box used (``from_data`` is True when it was read from the data).
    n_clipped_ : int
        Rows moved onto the box boundary because they lay outside it.
    n_features_in_ : int
    simulation_ : bool
        True when ``random_state`` was given (an int, SeedSequence or
        Generator): the noise is reproducible from it, so the result is a
        simulation, not a private release (a private estimator then warns
        with :class:`~dpcore.exceptions.SeededNoiseWarning`).  False for the
        default ``random_state=None``: unpredictable noise, nothing about the
        generator is kept.
    """

    display_name: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    private: ClassVar[bool] = True
    needs_delta: ClassVar[bool] = False
    family: ClassVar[str] = "centroids"

    # -- shared fit scaffolding --------------------------------------------
    def _begin_fit(self, X, *, min_samples: int = 1) -> tuple[np.ndarray, NoiseSource]:
        """Validate inputs, set the common fitted attributes, return (clipped X, noise source).

        Parameters
        ----------
        X : array-like (n, d)
        min_samples : int, default 1
            Fewest rows a *non-private* baseline needs.  Private estimators
            ignore it: they accept any n >= 0, because an exception that
            depends on n would publish n (see "Structure" in
            docs/ARCHITECTURE.md).

        Raises
        ------
        ValueError, TypeError
            From :mod:`dpcore.validation`, with a sentence saying what to fix.
            For a private estimator every one of them depends on public inputs
            only (the parameters, the bounds, the number of columns, the
            dtype), never on the number or the values of the rows, except
            NaN/infinite values, which are the caller's to remove before
            anything is computed.

        Warns
        -----
        SeededNoiseWarning
            A private estimator with a ``random_state``: a simulation.
        """
        # The release's structure must not depend on n (issue #19): a private fit accepts n = 0
        # (its release is then pure noise) and k > n (clusters without points get centres from
        # their noisy sums, as a cluster emptied during the iterations does).
        X = check_array(X, min_samples=0 if self.private else min_samples)
        epsilon = check_epsilon(getattr(self, "epsilon", None), allow_none=not self.private)
        delta = check_delta(getattr(self, "delta", 0.0), required=self.needs_delta and self.private)
        if hasattr(self, "n_clusters"):
            check_n_clusters(self.n_clusters, None if self.private else X.shape[0])
        domain = check_bounds(getattr(self, "bounds", None), X) if (self.private or self.bounds is not None) \
            else _silent_data_domain(X)
        Xc, n_clipped = domain.clip(X)
        ledger = BudgetLedger(epsilon if self.private else None, delta if self.private else 0.0)
        random_state = getattr(self, "random_state", None)
        noise = NoiseSource(check_random_state(random_state), ledger)
        self.simulation_ = is_seeded(random_state)
        if self.simulation_ and self.private:
            warn_seeded(random_state, stacklevel=3)
        self.bounds_ = domain
        self.n_clipped_ = n_clipped
        self.n_features_in_ = X.shape[1]
        self.budget_ = ledger
        self.synopsis_ = None
        return Xc, noise

    def _check_fitted(self):
        if not hasattr(self, "budget_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit(X) first")

    def _check_predict_X(self, X) -> np.ndarray:
        self._check_fitted()
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} columns, but the model was fitted on {self.n_features_in_}")
        return X

    def predict(self, X) -> np.ndarray:
        """Label each row with its nearest released centre.

        Parameters
        ----------
        X : array-like (n, d), data units

        Returns
        -------
        ndarray (n,) int in ``[0, k)``.

        Notes
        -----
        Uses only released output, so labelling costs no extra privacy; but
        the labels are a function of X and are as private as X itself.
        """
        X = self._check_predict_X(X)
        return assign(X, self.cluster_centers_)

    def fit_predict(self, X, y=None):
        return self.fit(X).predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def _silent_data_domain(X: np.ndarray) -> Domain:
    """Data box for non-private baselines, where reading the range leaks nothing new."""
    lower, upper = X.min(axis=0), X.max(axis=0)
    with np.errstate(over="ignore"):
        _check_span(upper - lower, "the data's range")
    pad = np.where(upper > lower, 0.0, 1e-6 * np.maximum(np.abs(upper), 1.0))
    return Domain(lower - pad, upper + pad, from_data=True)
