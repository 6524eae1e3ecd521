"""EUGkM: k-means on a differentially private uniform-grid synopsis (Su et al. 2016, §4.2).

The normalised domain ``[-1, 1]^d`` is cut into ``M`` equal cells with
``M = (N epsilon / theta)^(2d / (2 + d))`` (Eq. 4, theta = 10); every cell's
count gets ``Lap(1/epsilon)`` and stays signed and unrounded.  Lloyd's
algorithm then runs over the cell centres, each cell weighted by its noisy
count and assigned as a whole, from 30 data-independent initialisations; the
run with the lowest NICV *on the synopsis* is kept (choosing on the synopsis
is post-processing, so it costs nothing).
"""
from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

from .._blocks.grid import MAX_CELLS, eug_cells_per_dim, grid_cells, grid_regime, max_cells_per_dim
from .._blocks.grid_kmeans import _grid_synopsis, eugkm_fit
from .._blocks.lloyd import RHO
from ..base import DPClusterer, fit_doc
from ..regime import Regime, check_fit
from ..traits import AuditCase, Control, PrivacyCase


class EUGkM(DPClusterer):
    """k-means on an extended-uniform-grid synopsis, EUGkM (Su et al. 2016, §4.2.1).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total budget (epsilon-DP).
    bounds : (lower, upper), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    theta : float, default 10
        The constant of Eq. 4; 10 "works well in most cases" (§5.1).
    n_init : int, default 30
        Sphere-packing initialisations run on the synopsis (§5.1).
    n_samples : float or None
        A public dataset size for Eq. 4.  ``None`` spends ``n_share`` of
        epsilon on ``N + Lap(.)`` first (ledger entry "dataset size"), because
        N is private under add/remove neighbours.
    n_share : float, default 0.02
    max_cells : int, default 2**22
        Memory cap; ``round(M^(1/d))`` per dimension is lowered to respect it.
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    synopsis_ : GridSynopsis
        Data-unit cell edges and the signed noisy counts (publishable).
    cells_per_dim_ : int
    budget_ : BudgetLedger
    regime_ : dpcore.algorithms.regime.Regime
        Whether Su et al.'s regime held for the public inputs (:func:`dpcore.algorithms.registry.assess`).

    Raises
    ------
    OutOfRegimeError
        Before the grid is spent, when the grid for the public (or noisy) size, d, k and epsilon
        would be mostly noise or too large to finish in seconds (:mod:`dpcore.algorithms.regime`); the
        message names a better-suited algorithm.  A :class:`~dpcore.algorithms.regime.RegimeWarning` when
        the inputs are marginal.
    ValueError, TypeError
        Bad data or parameters.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import EUGkM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "eugkm"
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "EUGkM"
    accepts_source = True
    supports_weighting = True
    reference = "Su et al. 2016, §4.2.1 (Eq. 4)"
    summary = "Publishes a noisy uniform-grid synopsis, then runs k-means on the cells (non-interactive)."
    colour = "#d62728"
    mse_formula = "variance, Eq. 12"
    audit = AuditCase(
        privacy=(PrivacyCase("record added in the corner cell, N near a grid-size boundary",
                             dict(n_clusters=1, n_init=1), data="corner", n=22, added=(-1.0, -1.0),
                             n_runs=10_000, ci_runs=4000,
                             why="22 vs 23 records straddle round(sqrt(N eps / 10)) = 1 | 2 cells per side, so a "
                                 "grid size read from the true N shows; the corner cell count moves by 1 "
                                 "(n_init=1: the Lloyd restarts are post-processing)"),),
        structural=dict(n_init=1), exact_sums=dict(n_init=1), sources=dict(n_clusters=4, n_init=5))
    controls = (Control("theta", "θ (grid-size constant of Eq. 4)", bounds=(1.0, 100.0), default=10.0,
                        glossary="θ"),)
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "theta": [Interval(Real, 0, None, closed="neither")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_cells": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, theta=10.0, n_init=30, n_samples=None,
                 n_share=0.02, max_cells=MAX_CELLS, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.theta = theta
        self.n_init = n_init
        self.n_samples = n_samples
        self.n_share = n_share
        self.max_cells = max_cells
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _expected_failed_checks(self) -> dict[str, str]:
        reason = ("scikit-learn's check fits 10 columns of about 120 rows; there the noisy grid is mostly noise "
                  "(Su et al. 2016 §6), so the regime check refuses up front with OutOfRegimeError naming a "
                  "better-suited algorithm")
        return {**super()._expected_failed_checks(), "check_dtype_object": reason}

    @classmethod
    def su_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, r: float = 1.0, rho: float = RHO,
               theta: float = 10.0) -> float | None:
        """Eq. 9 with M from Eq. 4 (= Eq. 12, Su et al. 2016): the variance of one EUGkM centroid.

        ``2 d M r^2 k^((d-2)/d) / (3 N^2 eps^2)``, a lower bound of its MSE (the squared bias,
        :meth:`su_bias2_bound`, depends on the data); see :meth:`DPClusterer.su_mse`.

        Returns
        -------
        float
        """
        m = grid_cells(n, d, epsilon, theta=theta)
        return 2 * d * m * r ** 2 * k ** ((d - 2) / d) / (3 * n ** 2 * epsilon ** 2)

    @classmethod
    def su_bias2_bound(cls, n: float, d: int, epsilon: float, *, r: float = 1.0, theta: float = 10.0) -> float | None:
        """Inequality 10 (Su et al. 2016): upper bound ``d r^2 / M^(2/d)`` on EUGkM's squared bias.

        Returns
        -------
        float
        """
        return d * r ** 2 / grid_cells(n, d, epsilon, theta=theta) ** (2 / d)

    @classmethod
    def formula_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, delta: float, r: float, rho: float,
                    theta: float) -> float | None:
        """:meth:`su_mse`, or None when Eq. 4's grid has fewer than 2 cells per dimension.

        Such a grid resolves nothing: Eq. 12 (a variance, bias left out) then says nothing about the error.

        Returns
        -------
        float or None
        """
        if grid_cells(n, d, epsilon, theta=theta) ** (1.0 / d) < 2.0:
            return None
        return cls.su_mse(n, d, k, epsilon, t=t, r=r, rho=rho, theta=theta)

    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0, theta: float = 10.0,
               max_cells: int = MAX_CELLS, **params) -> Regime:
        """Su et al. (2016) §6.2: the noisy grid of Eq. 4 must not be mostly noise, nor too large to finish.

        Parameters
        ----------
        n, d, k, epsilon, delta
            Public inputs (``n`` public or noisy); see :meth:`DPClusterer.regime`.
        theta, max_cells
            The estimator's parameters.
        **params
            Ignored.

        Returns
        -------
        Regime
        """
        return grid_regime(cls.key, n, d, k, cls._grid_epsilon(n, d, k, epsilon, theta=theta, **params),
                           theta=theta, max_cells=int(max_cells))

    @classmethod
    def _grid_epsilon(cls, n, d, k, epsilon, **params) -> float:
        """The share of ``epsilon`` the grid gets (all of it; the Hybrid overrides)."""
        return epsilon

    @fit_doc('Release the grid synopsis and k centres computed from it.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, n_est, eps_left = self._start_fit(X, privacy_id)
        self.cluster_centers_ = self.bounds_.denormalize(self._fit_grid(X, noise, eps_left, n_est))
        return self

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size (``n_share``, none with a public ``n_samples``), then the grid cell counts
        (the rest).  See :meth:`DPClusterer.budget_plan`."""
        plan, left = self._size_step()
        return {**plan, "grid cell counts": (left, 0.0)}

    # Shared with the Hybrid, which runs this on part of its budget.
    def _start_fit(self, X, privacy_id=None):
        """Validate, then the dataset size: returns (X, noise, n_est, epsilon left)."""
        X, noise, n = self._begin_fit(X, privacy_id=privacy_id, assignment=getattr(self, "assignment", None),
                                      histogram=self._first_histogram)
        n_est, eps_left = self._public_or_noisy_size(n, noise, float(self.epsilon))
        # Su et al. §6.2's regime, on the public/noisy size only, before the grid is spent (dpcore.algorithms.regime).
        check_fit(self, n=n_est, d=X.n_features, epsilon=eps_left, theta=float(self.theta),
                  max_cells=int(self.max_cells), rho=float(getattr(self, "rho", 0.225)))
        return X, noise, n_est, eps_left

    def _first_histogram(self, d: int) -> tuple[int, ...]:
        """The grid a source's first pass counts with the rows (public inputs only).

        With a public ``n_samples``, Eq. 4's grid itself: the fit reads the data once.  Under a noisy
        size, Eq. 4's largest grid under ``max_cells``: whenever the noisy size asks for it (at epsilon
        = 1 in 2-D, from about 4.3 x 10^7 rows: 2048 x 2048 cells) the fit reads the data once; below,
        the grid it asks for is a second pass, as it always was.
        """
        if self.n_samples is None:
            return (max_cells_per_dim(d, int(self.max_cells)),) * d
        n, theta = max(float(self.n_samples), 1.0), float(self.theta)
        eps = self._grid_epsilon(n, d, int(self.n_clusters), float(self.epsilon), theta=theta,
                                 rho=float(getattr(self, "rho", RHO)))
        return (eug_cells_per_dim(n, eps, d, theta=theta, max_cells=int(self.max_cells)),) * d

    def _fit_grid(self, X, noise, epsilon, n_est):
        """EUGkM on ``epsilon``: sets ``synopsis_`` and ``cells_per_dim_``, returns normalised centres."""
        centers, counts, edges = eugkm_fit(X, int(self.n_clusters), epsilon, n_est, noise, theta=float(self.theta),
                                           n_init=int(self.n_init), max_cells=int(self.max_cells),
                                           domain=self.bounds_)
        self.synopsis_ = _grid_synopsis(counts, edges, self.bounds_)
        self.cells_per_dim_ = counts.shape[0]
        return centers


