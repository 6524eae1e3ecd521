"""The Hybrid approach: EUGkM centres refined by one DPLloyd iteration (Su et al. 2016, §6.3)."""
from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval

from .._blocks.grid import MAX_CELLS
from .._blocks.lloyd import RHO, noisy_lloyd_step
from ..base import fit_doc
from ..traits import AuditCase, PrivacyCase
from .eugkm import EUGkM


def hybrid_min_epsilon(n: float, d: int, k: int, *, r: float = 1.0, rho: float = RHO, theta: float = 10.0) -> float:
    """Smallest epsilon for which the Hybrid refines EUGkM (Su et al. 2016, Inequality 15).

    ``epsilon >= (X / Y)^((2 + d) / (2 d))`` with
    ``X = 8 d (1 + (2 rho r)^2) (k (d r + 1) / N)^2`` (Eq. 13 without epsilon: one DPLloyd
    iteration at epsilon/2) and
    ``Y = 2 d r^2 k^((d-2)/d) / (3 theta^(2d/(2+d)) N^(4/(2+d)))`` (Eq. 12 without epsilon:
    the variance of EUGkM).  The paper writes theta = 10 in Y.

    Returns
    -------
    float
    """
    X = 8 * d * (1 + (2 * rho * r) ** 2) * (k * (d * r + 1) / n) ** 2
    Y = 2 * d * r ** 2 * k ** ((d - 2) / d) / (3 * theta ** (2 * d / (2 + d)) * n ** (4 / (2 + d)))
    return (X / Y) ** ((2 + d) / (2 * d))


class Hybrid(EUGkM):
    """EUGkM with half the budget, then one DPLloyd iteration with the other half (Su et al. 2016, §6.3).

    When Inequality 15 says one noisy Lloyd iteration at epsilon/2 would have
    a larger error than EUGkM's variance (small N epsilon), all of the budget
    goes to EUGkM instead.  ``branch_`` and ``branch_reason_`` say which ran.

    Parameters
    ----------
    n_clusters, epsilon, bounds, theta, n_init, n_samples, n_share, max_cells, random_state
        As :class:`~dpcore.algorithms.centroid.eugkm.EUGkM`.  The dataset size (public or noisy)
        feeds both Eq. 4 and Inequality 15.
    rho : float, default 0.225
        The normalised centroid coordinate assumed by Inequality 15.
    assignment : {"auto", "cells", "rows"}, default "auto"
        How the refining Lloyd step assigns the data to centres on a source.  ``"cells"``: one pass keeps
        exact counts and fixed-point sums per cell of a fine public grid
        (:mod:`dpcore.sources.cells`, 1024 x 1024 in 2-D) and every step assigns whole cells to the
        centre nearest the cell's middle, in memory: the data are read once per fit.  ``"rows"``:
        the grid and the step each read every row.  ``"auto"``: cells up to 2 dimensions.
        Chosen from d alone (public); the guarantee and the ledger are the same either way.
        With cells, EUGkM's grid counts come from the same statistics (each fine cell to the grid
        cell of its middle: every row still counted once).

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    synopsis_ : GridSynopsis
    branch_ : {"eugkm+dplloyd", "eugkm"}
    branch_reason_ : str
    min_epsilon_ : float, the threshold of Inequality 15 for this N, d, k
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import Hybrid
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = Hybrid(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "hybrid"
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "Hybrid"
    reference = "Su et al. 2016, §6.3 (Inequality 15)"
    summary = "EUGkM's centres refined by one DPLloyd iteration when the data are numerous enough."
    colour = "#2ca02c"
    mse_formula = "Eq. 13"
    audit = AuditCase(
        privacy=(
            PrivacyCase("refinement branch (public N=3000), record at the far corner",
                        dict(n_clusters=1, n_init=1, n_samples=3000), data="corner", n=20, added=(1.0, 1.0),
                        n_runs=10_000, ci_runs=4000,
                        why="a large public N forces the EUGkM + DPLloyd branch, so both halves of the budget "
                            "are spent on 20 records; the far-corner record moves the refinement's count and sums"),
            PrivacyCase("default (noisy N), record in the corner cell", dict(n_clusters=1, n_init=1),
                        data="corner", n=20, added=(-1.0, -1.0), n_runs=8000, ci_runs=3000,
                        why="the EUGkM-only branch with the noisy dataset size choosing branch and grid")),
        structural=dict(n_init=1), exact_sums=dict(n_init=1), sources=dict(n_clusters=4, n_init=5))
    _parameter_constraints = {**EUGkM._parameter_constraints, "rho": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, theta=10.0, n_init=30, n_samples=None,
                 n_share=0.02, max_cells=MAX_CELLS, rho=RHO, random_state=None,
                 max_contributions=None, contribution_bounding="weight", assignment="auto"):
        super().__init__(n_clusters, epsilon=epsilon, bounds=bounds, theta=theta, n_init=n_init,
                         n_samples=n_samples, n_share=n_share, max_cells=max_cells, random_state=random_state)
        self.rho = rho
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding
        self.assignment = assignment

    @classmethod
    def su_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, r: float = 1.0, rho: float = RHO,
               theta: float = 10.0) -> float | None:
        """Eq. 13 (Su et al. 2016): MSE of the final step, one DPLloyd iteration at epsilon / 2, or None.

        ``8 d (1 + (2 rho r)^2) (k (d r + 1) / (N eps))^2`` where Inequalities 14 (``t >= 2``) and 15
        (:func:`hybrid_min_epsilon`) hold; None elsewhere: the Hybrid then runs as EUGkM and has no
        prediction of its own.  See :meth:`DPClusterer.su_mse`.

        Returns
        -------
        float or None
        """
        if t < 2 or epsilon < hybrid_min_epsilon(n, d, k, r=r, rho=rho, theta=theta):
            return None
        return 8 * d * (1 + (2 * rho * r) ** 2) * (k * (d * r + 1) / (n * epsilon)) ** 2

    @classmethod
    def su_bias2_bound(cls, n: float, d: int, epsilon: float, *, r: float = 1.0, theta: float = 10.0) -> float | None:
        """None: Eq. 13 is the refining step's whole MSE, with no grid bias left out.

        Returns
        -------
        None
        """
        return None

    @classmethod
    def _grid_epsilon(cls, n, d, k, epsilon, *, theta=10.0, rho=RHO, **params) -> float:
        """Half of ``epsilon`` when Inequality 15 holds (one DPLloyd iteration gets the other half)."""
        return epsilon / 2 if epsilon >= hybrid_min_epsilon(n, d, k, rho=float(rho), theta=float(theta)) else epsilon

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size, then the grid (all the rest, or half of it when Inequality 15 holds at the
        public or noisy size ``n``, the other half to one DPLloyd iteration).
        See :meth:`DPClusterer.budget_plan`."""
        plan, left = self._size_step()
        n_plan = self._planned_size(n)
        if left >= hybrid_min_epsilon(n_plan, n_features, int(self.n_clusters), rho=float(self.rho),
                                      theta=float(self.theta)):
            return {**plan, "grid cell counts": (left / 2, 0.0), "DPLloyd refinement": (left / 2, 0.0)}
        return {**plan, "grid cell counts": (left, 0.0)}

    @fit_doc('Release the grid synopsis and k centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, n_est, eps_left = self._start_fit(X, privacy_id)
        dom = self.bounds_
        k, d = int(self.n_clusters), X.n_features
        self.min_epsilon_ = hybrid_min_epsilon(n_est, d, k, rho=float(self.rho), theta=float(self.theta))
        refine = eps_left >= self.min_epsilon_
        centers = self._fit_grid(X, noise, eps_left / 2 if refine else eps_left, n_est)
        if refine:
            centers = noisy_lloyd_step(X, centers, noise, epsilon=noise.ledger.remaining()[0],
                                       label="DPLloyd refinement", domain=dom)
            self.branch_ = "eugkm+dplloyd"
            self.branch_reason_ = (f"epsilon {eps_left:.4g} >= {self.min_epsilon_:.4g} (Inequality 15 for "
                                   f"N~{n_est:.0f}, d={d}, k={k}): half to EUGkM, half to one DPLloyd iteration")
        else:
            self.branch_ = "eugkm"
            self.branch_reason_ = (f"epsilon {eps_left:.4g} < {self.min_epsilon_:.4g} (Inequality 15 for "
                                   f"N~{n_est:.0f}, d={d}, k={k}): one noisy Lloyd step would hurt, all to EUGkM")
        self.cluster_centers_ = dom.denormalize(centers)
        return self
