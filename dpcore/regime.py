"""Is a paper's regime met?  One check, on public inputs only, for estimators, the advisor and the app.

Every algorithm here comes with an error analysis that holds in a regime: EUGkM
needs each cluster's noisy mass to stand above the noise of the cells it
spans (Su et al. 2016, §6.2, Eq. 9), DPLloyd needs enough budget per iteration
to meet the journal version's accuracy target (Su et al. 2017; §6.1, Eq. 7),
PRIVATE-K-MEAN needs more than ``t_min`` points (Feldman et al. 2017, Alg. 1
line 2), and so on.  Outside it an estimator would spend the budget and
return centres that say nothing about the data (the issue's example: EUGkM on
11 columns builds 4^11 cells and puts centres in empty space after 45 s).

:func:`assess` evaluates the regime for the **public** inputs of a fit: the
dataset size (a public ``n_samples`` or the already-released noisy count,
never the true n), the dimension d, k, epsilon, delta and the grid
parameters.  Because a refusal or a warning is itself part of what a release
shows, it must not depend on anything else: then it is post-processing of
public and already-released values and costs no privacy.
:func:`enforce` turns the verdict into an :class:`OutOfRegimeError` (status
``"refuse"``: garbage or an unbounded run is certain) or a
:class:`RegimeWarning` (status ``"warn"``: the paper's guarantee does not
cover these inputs, results are likely poor).  Estimators call
:func:`check_fit` after their (public or noisy) size and before any other spend;
:func:`dpcore.evaluation.advise` and the app read :func:`assess` directly.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.2, §6.1-6.3 (Eqs. 4, 7, 9, 10).
Su et al. (2017). ACM TOPS 20(4) (the iteration rule of DPLloyd).
Feldman, Xiang, Zhu, Rus (2017). IPSN, Alg. 1 (t_min), §5.2 (grid).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

from .exceptions import InfeasibleBudgetError

#: EUGkM/Hybrid: refuse when the grid's expected noise mass ``M / eps`` exceeds the data mass N
#: (:func:`grid_noise_ratio`) ...
GRID_REFUSE = 1.0
#: ... and warn above this fraction of it.
GRID_WARN = 0.3
#: Grids of at most this many cells (tiny data) are only warned about: their fit is instant and the
#: noise-mass argument is about large grids whose empty regions attract centres.
GRID_SMALL = 64
#: Grid cells above which EUGkM's post-processing cannot finish in seconds on one core (its Lloyd
#: passes run on blocks, then on the grid's rows: about 1.5 s at 2^22 cells); refused beyond, so a fit
#: ends in seconds or not at all.  Equal to ``grid.MAX_CELLS``: only a larger ``max_cells`` reaches it.
GRID_MAX_CELLS_FAST = 1 << 22
#: PGkM: refuse above this many distance evaluations (n x candidates x k x d x rounds), about 10 s here.
PGKM_MAX_WORK = 4e9


class OutOfRegimeError(InfeasibleBudgetError):
    """The public inputs lie outside the algorithm's regime: its output would be garbage or its run unbounded.

    Raised before anything but the (public or noisy) dataset size is spent; the
    message names a better-suited algorithm.
    """


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
        One or two sentences; for ``warn``/``refuse`` they name a better-suited algorithm.
    better : str or None
        Registry key of the better-suited algorithm.
    figures : dict
        The quantities the verdict was computed from (all public).
    """

    algorithm: str
    status: str
    reason: str
    better: str | None = None
    figures: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


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


def _better_for_mid_dims(k: int) -> str:
    """Suggest the separation-based DPM when it is registered, else DPLloyd."""
    from . import ALGORITHMS
    return "dpm" if "dpm" in ALGORITHMS else "dplloyd"


def _name(key: str) -> str:
    from . import ALGORITHMS
    cls = ALGORITHMS.get(key)
    return (cls.display_name or key) if cls is not None else key


def _grid(algorithm, n, d, k, epsilon, params):
    from .grid import MAX_CELLS, eug_cells_per_dim
    theta = float(params.get("theta", 10.0))
    max_cells = int(params.get("max_cells", MAX_CELLS))
    eps_grid = epsilon
    if algorithm == "hybrid":
        from .dplloyd import RHO
        from .hybrid import hybrid_min_epsilon
        if epsilon >= hybrid_min_epsilon(n, d, k, rho=float(params.get("rho", RHO)), theta=theta):
            eps_grid = epsilon / 2      # Inequality 15 holds: half of the budget goes to the grid
    m = eug_cells_per_dim(n, eps_grid, d, theta=theta, max_cells=max_cells)
    cells = float(m) ** d
    ratio = grid_noise_ratio(n, eps_grid, cells)
    figs = dict(cells_per_dim=m, cells=cells, noise_ratio=ratio, epsilon_grid=eps_grid)
    better = "dplloyd" if d <= 4 else _better_for_mid_dims(k)
    where = (f"{m}^{d} = {cells:,.0f} grid cells for about {n:,.0f} points at ε = {eps_grid:.3g}: the grid's noise "
             f"mass is {ratio:.0%} of the data's (Su et al. 2016, Eq. 4 and §6.2)")
    if cells > GRID_MAX_CELLS_FAST:
        return Regime(algorithm, "refuse", f"{where}, and k-means over that many noisy cells cannot finish in "
                      f"seconds. Use {_name(better)} instead, or fewer columns.", better, figs)
    if ratio > GRID_REFUSE and cells > GRID_SMALL:
        return Regime(algorithm, "refuse", f"{where}; above {GRID_REFUSE:.0%} the synopsis is mostly noise and "
                      f"k-means on it places centres in empty space. Use {_name(better)} instead (or a larger ε, "
                      "fewer columns).", better, figs)
    if ratio > GRID_WARN:     # (a small grid over few points is warned, not refused: cheap and bounded)
        return Regime(algorithm, "warn", f"{where}; above {GRID_WARN:.0%} k-means on the synopsis often keeps "
                      "centres in empty space. "
                      f"{_name(better)} may do better here.", better, figs)
    if m <= 2 and d > 2:
        return Regime(algorithm, "warn", f"{where}; with {m} cells per dimension the grid cannot resolve clusters "
                      f"(bias bound d r²/M^(2/d) = {d / m ** 2:.2g}, Eq. 10). {_name(better)} may do better here.",
                      better, figs)
    return Regime(algorithm, "ok", f"{where}: inside the regime.", None, figs)


def _dplloyd(n, d, k, epsilon, params):
    from .dplloyd import MIN_ITER, RHO, _eps_per_iteration_target, auto_schedule
    eps_m = _eps_per_iteration_target(n, d, k, rho=float(params.get("rho", RHO)))
    affordable = epsilon / eps_m
    t = auto_schedule(n, d, k, epsilon)[0]
    figs = dict(eps_per_iteration_target=eps_m, affordable_iterations=affordable, n_iter=t)
    if affordable < 1.0:
        better = _better_for_mid_dims(k) if k > 16 or d > 4 else "eugkm"
        return Regime("dplloyd", "warn",
                      f"ε = {epsilon:.3g} buys {affordable:.2g} iterations at the accuracy Su et al. (2017) ask of "
                      f"one ({eps_m:.3g} each for about {n:,.0f} points, d = {d}, k = {k}): even the minimum of "
                      f"{MIN_ITER} iterations leaves the centres noisy. {_name(better)} may do better here.",
                      better, figs)
    return Regime("dplloyd", "ok", f"ε = {epsilon:.3g} buys {affordable:.3g} iterations at Su et al. (2017)'s "
                  "accuracy target: inside the regime.", None, figs)


def _pgkm(n, d, k, epsilon, params):
    from .privgene import N_CANDIDATES, N_SELECTED, X_FACTOR, pgkm_rounds
    m = int(params.get("n_candidates", N_CANDIDATES))
    rounds = params.get("n_rounds") or pgkm_rounds(n, epsilon, x=float(params.get("x", X_FACTOR)),
                                                   m_selected=int(params.get("n_selected", N_SELECTED)))
    work = float(n) * m * k * d * rounds
    figs = dict(rounds=rounds, work=work)
    if work > PGKM_MAX_WORK:
        return Regime("pgkm", "refuse", f"PrivGene scores {m} candidate centre sets on every point in each of "
                      f"{rounds} rounds ({work:.2g} distance terms for about {n:,.0f} points, d = {d}, k = {k}); "
                      "Su et al. (2016, §5) run it on small data only. Use DPLloyd instead, or a sample.",
                      "dplloyd", figs)
    return Regime("pgkm", "ok", "small enough for PrivGene's candidate scoring.", None, figs)


def _coreset(n, d, k, epsilon, delta, params):
    from .coreset import MAX_GRID_CELLS, grid_side, min_feasible_epsilon, plan_coreset
    side = grid_side(n, d)
    names = ("beta", "split", "radius_growth", "budget", "constants", "box_factor")
    kw = {key: params[key] for key in names if key in params}
    share = float(params.get("n_share", 0.0))     # share of the total already spent on a noisy size
    if float(side) ** d > MAX_GRID_CELLS:
        return Regime("coreset", "refuse", f"the grid |X|^d = {side}^{d} is too large for prefix-sum counting "
                      f"(Feldman et al. 2017, §4.3): PRIVATE-K-MEAN is a low-dimensional algorithm. Use "
                      f"{_name(_better_for_mid_dims(k))} instead, or fewer columns.", _better_for_mid_dims(k),
                      dict(side=side))
    plan = plan_coreset(n, k, d, epsilon, delta, **kw)
    figs = dict(t_min=plan.t_min, rounds=plan.n_rounds, side=side)
    if plan.n_rounds == 0:
        eps_min = min_feasible_epsilon(n, k, d, delta, n_share=share, **kw)
        need = f"about {eps_min:.3g}" if math.isfinite(eps_min) else "more than any allowed epsilon"
        return Regime("coreset", "refuse",
                      f"epsilon={epsilon / (1 - share):.3g} is too small for about {n:,.0f} points and k={k}: "
                      "PRIVATE-K-MEAN needs "
                      f"more than t_min = {plan.t_min:,} points before its first round (Feldman et al. 2017, Alg. 1 "
                      f"line 2; Table 2). The smallest epsilon that works here is {need} (delta = {delta:g}, d = {d}). "
                      "Use a "
                      "larger epsilon, fewer clusters or more data, or EUGkM / DPLloyd.", "eugkm", figs)
    covered = sum(plan.weights) / max(n, 1.0)
    figs["covered"] = covered
    if covered < 0.5:
        return Regime("coreset", "warn", f"the coreset will represent only {covered:.0%} of about {n:,.0f} points "
                      f"(t_min = {plan.t_min:,}, Alg. 1): the rest is additive error. EUGkM may do better here.",
                      "eugkm", figs)
    return Regime("coreset", "ok", f"the coreset represents {covered:.0%} of the points: inside the regime.",
                  None, figs)


def assess(algorithm: str, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0,
           **params) -> Regime:
    """Whether the algorithm's paper regime holds for these public inputs.

    Parameters
    ----------
    algorithm : str
        Registry key.
    n : float
        Dataset size: a public ``n_samples`` or an already-released noisy count
        (never the true private size).
    d, k : int
    epsilon : float
        The budget left for the algorithm (after any noisy-size release).
    delta : float
    **params
        The estimator's own parameters that enter its rule (``theta``,
        ``max_cells``, ``n_candidates``, ``budget``, ...).

    Returns
    -------
    Regime
        Status ``"ok"`` for algorithms without a regime rule.

    Notes
    -----
    **Privacy.** A function of public or released values only: post-processing, no cost.

    Examples
    --------
    The coreset of Feldman et al. needs far more than 1,000 points; DPLloyd runs:

    >>> from dpcore.regime import assess
    >>> r = assess("coreset", n=1000, d=2, k=3, epsilon=1.0, delta=1e-8)
    >>> r.status, r.better
    ('refuse', 'eugkm')
    >>> assess("dplloyd", n=1000, d=2, k=3, epsilon=1.0).status
    'ok'
    """
    n, epsilon, d, k = max(float(n), 1.0), float(epsilon), int(d), int(k)
    if algorithm in ("eugkm", "hybrid"):
        return _grid(algorithm, n, d, k, epsilon, params)
    if algorithm == "dplloyd":
        return _dplloyd(n, d, k, epsilon, params)
    if algorithm == "pgkm":
        return _pgkm(n, d, k, epsilon, params)
    if algorithm == "coreset":
        return _coreset(n, d, k, epsilon, float(delta), params)
    return Regime(algorithm, "ok", "no regime rule for this algorithm.")


def enforce(regime: Regime, *, stacklevel: int = 3) -> Regime:
    """Raise :class:`OutOfRegimeError` for ``refuse``, warn :class:`RegimeWarning` for ``warn``.

    Returns
    -------
    Regime, unchanged.
    """
    if regime.status == "refuse":
        raise OutOfRegimeError(regime.reason)
    if regime.status == "warn":
        warnings.warn(regime.reason, RegimeWarning, stacklevel=stacklevel)
    return regime


def check_fit(est, algorithm: str, *, n: float, d: int, epsilon: float, delta: float = 0.0, **params) -> Regime:
    """:func:`assess` + :func:`enforce` for an estimator's ``fit``; stores the verdict in ``est.regime_``.

    Call it right after the (public or noisy) dataset size and before any other spend.
    """
    k = int(getattr(est, "n_clusters", 1) or 1)
    regime = assess(algorithm, n=n, d=d, k=k, epsilon=epsilon, delta=delta, **params)
    est.regime_ = regime
    return enforce(regime, stacklevel=4)
