"""Is a paper's regime met?  The verdict type, the enforcement, and the check estimators call; no algorithm, no plan.

Every algorithm here comes with an error analysis that holds in a regime: EUGkM
needs each cluster's noisy mass to stand above the noise of the cells it
spans (Su et al. 2016, §6.2, Eq. 9), DPLloyd needs enough budget per iteration
to meet the journal version's accuracy target (Su et al. 2017; §6.1, Eq. 7),
PRIVATE-K-MEAN needs more than ``t_min`` points (Feldman et al. 2017, Alg. 1
line 2), and so on.  Outside it an estimator would spend the budget and
return centres that say nothing about the data (the issue's example: EUGkM on
11 columns builds 4^11 cells and puts centres in empty space after 45 s).

Each estimator states its own rule as a classmethod ``regime(n=, d=, k=, epsilon=, delta=, **params)``
(:meth:`dpcore.algorithms.base.DPClusterer.regime`, "ok" by default), as scikit-learn declares
constraints on the class; :func:`dpcore.algorithms.registry.assess` asks the class of a registry
key.  This module knows no algorithm.  A rule evaluates the regime for the **public** inputs of a fit: the
dataset size (a public ``n_samples`` or the already-released noisy count,
never the true n), the dimension d, k, epsilon, delta and the grid
parameters.  Because a refusal or a warning is itself part of what a release
shows, it must not depend on anything else: then it is post-processing of
public and already-released values and costs no privacy.
:func:`enforce` turns the verdict into an :class:`OutOfRegimeError` (status
``"refuse"``: garbage or an unbounded run is certain) or a
:class:`RegimeWarning` (status ``"warn"``: the paper's guarantee does not
cover these inputs, results are likely poor).  Estimators call
:func:`check_fit` after their (public or noisy) size and before any other spend: the class's
rule only, so a fit never waits for the advisor's plans (the calibrated model is asked only where
the rule refuses on utility alone, :func:`check_fit`).  The advice (the calibrated measurements
and the advisor's pick, :mod:`dpcore.advisor.verdict`) is attached where someone asks:
:func:`~dpcore.algorithms.registry.assess`, :func:`dpcore.evaluation.advise` and the app.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.2, §6.1-6.3 (Eqs. 4, 7, 9, 10).
Su et al. (2017). ACM TOPS 20(4) (the iteration rule of DPLloyd).
Feldman, Xiang, Zhu, Rus (2017). IPSN, Alg. 1 (t_min), §5.2 (grid).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

from ..exceptions import InfeasibleBudgetError

#: EUGkM/Hybrid: refuse when the grid's expected noise mass ``M / eps`` exceeds the data mass N
#: (:func:`grid_noise_ratio`) ...
GRID_REFUSE = 1.0
#: ... and warn above this fraction of it.
GRID_WARN = 0.3
#: Above this noise-to-data mass the refusal stands whatever the calibration says: the synopsis is
#: over 90 % noise, and k-means over it is slow in d > 2 (EUGkM on 10^5 points, 11 columns, 4^11 cells,
#: noise mass 84x: 64 s and 230x non-private k-means, where zCDP-Lloyd took 0.3 s at 1.25x).  Between
#: GRID_REFUSE and this, the refusal is about utility and the calibrated predictions may overrule it.
GRID_REFUSE_HARD = 10.0
#: Grids of at most this many cells (tiny data) are only warned about: their fit is instant and the
#: noise-mass argument is about large grids whose empty regions attract centres.
GRID_SMALL = 64
#: Grid cells above which EUGkM's post-processing cannot finish in seconds on one core (its Lloyd
#: passes run on blocks, then on the grid's rows: about 1.5 s at 2^22 cells); refused beyond, so a fit
#: ends in seconds or not at all.  Equal to ``grid.MAX_CELLS``: only a larger ``max_cells`` reaches it.
GRID_MAX_CELLS_FAST = 1 << 22
#: Grids above this many cells run their Lloyd passes on the grid's rows (``grid_kmeans``); below, on
#: the cells themselves (a few thousand weighted points: instant).
GRID_ROW_PASS_CELLS = 8_000
#: ... and a row pass costs ``m^(d-1) k^2`` (rows times centre pairs: each centre's interval on a row).
#: Above this, each pass takes over a second on one core (10-d, k = 64, 4^10 cells: 2.7 s a pass,
#: 100 s a fit), so the fit is refused for run time; 5-d, k = 30, 17^5 cells (7.5e7) takes 6-8 s.
GRID_MAX_PASS_WORK = float(1 << 28)


class OutOfRegimeError(InfeasibleBudgetError):
    """The public inputs lie outside the algorithm's regime: its output would be garbage or its run unbounded.

    Raised before anything but the (public or noisy) dataset size is spent, with the rule's reason;
    ``regime`` is the verdict (None when raised elsewhere), whose :meth:`Regime.advised` names a
    better-suited algorithm.
    """

    def __init__(self, *args, regime: Regime | None = None):
        super().__init__(*args)
        self.regime = regime


class RegimeWarning(UserWarning):
    """The public inputs lie outside the regime covered by the algorithm's error analysis."""


@dataclass(frozen=True)
class Regime:
    """The verdict of :func:`assess`.

    Attributes
    ----------
    algorithm : str
        Registry key.
    status : {"ok", "warn", "refuse"}
    reason : str
        One or two sentences; for ``warn``/``refuse`` after :func:`dpcore.advisor.verdict.with_advice`
        (what :func:`~dpcore.algorithms.registry.assess` returns) they name the algorithm the
        calibrated advisor ranks first for the same public inputs.
    better : str or None
        That algorithm's registry key (or ``"dp_mean"``, one centre at a DP mean); None from a fit's
        check (``est.regime_``), which does not plan.
    figures : dict
        The quantities the verdict was computed from (all public).
    utility_only : bool
        The verdict is about the result's utility (a paper's error analysis), which the calibrated
        measurements may overrule; False for feasibility and run-time refusals, which stand.
    inputs : dict
        The public inputs a fit's check asked the rule at (``n``, ``d``, ``k``, ``epsilon``,
        ``delta``), for :meth:`advised`; empty from a rule asked directly.
    """

    algorithm: str
    status: str
    reason: str
    better: str | None = None
    figures: dict = field(default_factory=dict)
    utility_only: bool = False
    inputs: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def advised(self) -> Regime:
        """This verdict with the advisor's advice, computed now (a fit's check does not plan).

        The calibrated measurements and the advisor's first pick for the same public inputs
        (:func:`dpcore.advisor.verdict.with_advice`), as :func:`~dpcore.algorithms.registry.assess`
        gives them; the verdict itself when it carries no :attr:`inputs`.

        Returns
        -------
        Regime

        Notes
        -----
        **Privacy.** Public inputs and public calibration data only: post-processing.
        """
        if not self.inputs:
            return self
        from ..advisor.verdict import with_advice  # the advisor lies beneath the algorithms
        return with_advice(self, **self.inputs)


def grid_noise_ratio(n: float, epsilon: float, cells: float) -> float:
    """Expected total noise mass of a Laplace grid over the data mass: ``M / (N eps)``.

    Every one of the ``M`` cells of EUGkM's synopsis gets ``Lap(1/eps)``, whose
    mean absolute value is ``1/eps``; the data contribute ``N``.  Eq. 4 of Su et
    al. (2016) sets ``M = (N eps / theta)^(2d / (2 + d))``, so the ratio is
    ``1/theta = 0.1`` in two dimensions and grows like ``(N eps)^((d-2)/(d+2))``
    above: the analysis of §6.2 (Eqs. 9-10) treats the noise as averaging out
    within each cluster, but once the noise mass nears the data mass, k-means
    on the synopsis seeds and keeps centres in regions that hold only noise,
    whose net mass is near zero and whose weighted means land anywhere.
    Measured on 10^5 points in 5 Gaussian blobs (cost ratio to non-private):
    ratio 0.1 (d = 2) -> 1.0-1.1; 0.54 (d = 3, eps 0.5) -> 2.2; 1.67 (d = 4, eps 0.5) -> 6.7;
    85 (the issue's 4^11 grid) -> centres in empty space.

    Returns
    -------
    float >= 0
    """
    return float(cells) / (max(n, 1.0) * epsilon)


def public_inputs(n: float, d: int, k: int, epsilon: float) -> tuple[float, int, int, float]:
    """The public inputs of a rule, normalised: ``n`` at least 1 (a noisy count may be below it)."""
    return max(float(n), 1.0), int(d), int(k), float(epsilon)


def enforce(regime: Regime, *, stacklevel: int = 3) -> Regime:
    """Raise :class:`OutOfRegimeError` for ``refuse``, warn :class:`RegimeWarning` for ``warn``.

    Returns
    -------
    Regime, unchanged.
    """
    if regime.status == "refuse":
        raise OutOfRegimeError(regime.reason, regime=regime)
    if regime.status == "warn":
        warnings.warn(regime.reason, RegimeWarning, stacklevel=stacklevel)
    return regime


def check_fit(est, *, n: float, d: int, epsilon: float, delta: float = 0.0, **params) -> Regime:
    """The estimator class's own rule + :func:`enforce`, for its ``fit``; stores the verdict in ``est.regime_``.

    Call it right after the (public or noisy) dataset size and before any other spend.  It does not
    run the advisor's plans: a warning or refusal gives the paper's reason, and
    :func:`~dpcore.algorithms.registry.assess` (same public inputs) adds the calibrated measurements
    and the advisor's pick.  Only a ``utility_only`` refusal is checked against the calibrated
    prediction (:func:`dpcore.advisor.verdict.calibrated_verdict`), which may turn it into a warning.

    Parameters
    ----------
    est : DPClusterer
        The estimator being fitted; its class's :meth:`~DPClusterer.regime` is asked.
    n : float
        A public ``n_samples`` or the already-released noisy count (never the true n).
    d : int
    epsilon : float
        The budget left for the algorithm; divided by the privacy unit's L when the fit has one
        (``est.privacy_unit_``), since every sensitivity is then L times larger.
    delta : float
    **params
        The estimator's own parameters that enter its rule.

    Returns
    -------
    Regime

    Raises
    ------
    OutOfRegimeError
        The rule refuses (before anything but the size is spent).
    """
    k = int(getattr(est, "n_clusters", 1) or 1)
    # With a privacy unit every sensitivity is L times one row's (issue 23): on the rows kept the noise
    # is that of epsilon / L, so the rule is asked at that budget (L is public).
    unit = getattr(est, "privacy_unit_", None) or {}
    epsilon = float(epsilon) / int(unit.get("max_contributions") or 1)
    n, d, k, epsilon = public_inputs(n, d, k, epsilon)
    regime = type(est).regime(n=n, d=d, k=k, epsilon=epsilon, delta=float(delta), **params)
    if regime.status == "refuse" and regime.utility_only:
        # A refusal about utility alone stands only where the measurements agree (no refusal where the
        # algorithm does better than the trivial answer): the calibrated model's prediction, no plan.
        from ..advisor.verdict import calibrated_verdict
        regime = calibrated_verdict(regime, n=n, d=d, k=k, epsilon=epsilon, delta=float(delta))
    regime = replace(regime, inputs=dict(n=n, d=d, k=k, epsilon=epsilon, delta=float(delta)))
    est.regime_ = regime
    return enforce(regime, stacklevel=4)
