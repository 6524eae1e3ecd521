"""The algorithm advisor: which algorithm to use for N, d, k and epsilon, from public inputs only.

:func:`advise` ranks every centre-releasing algorithm by its **calibrated** prediction
(:mod:`dpcore.advisor.model`: measured cost ratios to non-private k-means over Gaussian
mixtures and real sets, interpolated in log n, d, k and epsilon), beside the trivial answer (one
centre at a DP mean) on the same scale; its pick is the first of that ranking, or the trivial
answer when nothing is predicted below it.  The paper's own analysis is kept beside it: it
evaluates the error predictions of Su et al. (2016, §6) for a
dataset size N, dimension d, k clusters and epsilon (data normalised to
``[-r, r]^d`` with r = 1, as the estimators do):

* Eq. 7 / 11, DPLloyd with t iterations: ``2 d (1 + (2 rho r)^2) (k t (d r + 1) / (N eps))^2``;
* Eq. 9 with ``M = (N eps / theta)^(2d / (2 + d))`` (Eq. 4), i.e. Eq. 12, the variance of EUGkM:
  ``2 d r^2 k^((d-2)/d) / (3 theta^(2d/(2+d)) (N eps)^(4/(2+d)))``; its squared bias is at most
  ``d r^2 / M^(2/d)`` (Eq. 10) and depends on the data;
* Eq. 13, the Hybrid (one DPLloyd iteration at eps / 2): ``8 d (1 + (2 rho r)^2) (k (d r + 1) / (N eps))^2``;
* Inequality 14 (``t >= 2``: the Hybrid beats DPLloyd) and Inequality 15
  (``eps >= (X / Y)^((2 + d) / (2 d))``: the Hybrid's MSE is below EUGkM's
  variance, hence below EUGkM's MSE).

Decision rule (the paper's own): if Inequalities 14 and 15 hold, Hybrid;
otherwise the Hybrid falls back to EUGkM, and DPLloyd is predicted best only
when its MSE is below EUGkM's variance (a lower bound of EUGkM's MSE), else
EUGkM.  When DPLloyd's MSE lies between EUGkM's variance and variance +
bias bound the call is flagged as uncertain (DPLloyd may then win if the
grid's bias is near its bound, which is what happens in high dimension).
A consequence of the formulas: with ``t >= 2`` DPLloyd is never predicted
strictly best, because below the threshold of Inequality 15 the Hybrid's
MSE (Eq. 13 = Eq. 7 at t = 2) already exceeds EUGkM's variance, and above
it the Hybrid beats DPLloyd (Inequality 14).  Only ``t = 1`` can make it so.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §6.1-6.3.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..advisor.model import Prediction
from ..advisor.plan import ALGORITHMS, SelectionPlan, advisor_plan, advisor_ranking
from ..advisor.verdict import within_words
from ..algorithms._blocks.lloyd import RHO, auto_schedule
from ..algorithms.centroid.hybrid import hybrid_min_epsilon
from ..algorithms.registry import assess


# -- the Su et al. §6 advisor ----------------------------------------------------------------------
def mse_dplloyd(n: float, d: int, k: int, epsilon: float, t: int, *, r: float = 1.0, rho: float = RHO) -> float:
    """Eq. 7 (= Eq. 11): MSE of one DPLloyd centroid after ``t`` iterations on budget epsilon."""
    return 2 * d * (1 + (2 * rho * r) ** 2) * (k * t * (d * r + 1) / (n * epsilon)) ** 2


def grid_cells(n: float, d: int, epsilon: float, *, theta: float = 10.0) -> float:
    """Eq. 4: the number of EUG cells ``M = (N eps / theta)^(2d / (2 + d))`` (continuous, at least 1)."""
    return max(n * epsilon / theta, 1.0) ** (2 * d / (2 + d))


def var_eugkm(n: float, d: int, k: int, epsilon: float, *, r: float = 1.0, theta: float = 10.0) -> float:
    """Eq. 9 with M from Eq. 4 (= Eq. 12): the variance of one EUGkM centroid."""
    m = grid_cells(n, d, epsilon, theta=theta)
    return 2 * d * m * r ** 2 * k ** ((d - 2) / d) / (3 * n ** 2 * epsilon ** 2)


def bias2_eugkm_bound(n: float, d: int, epsilon: float, *, r: float = 1.0, theta: float = 10.0) -> float:
    """Inequality 10: upper bound ``d r^2 / M^(2/d)`` on EUGkM's squared bias."""
    return d * r ** 2 / grid_cells(n, d, epsilon, theta=theta) ** (2 / d)


def mse_hybrid(n: float, d: int, k: int, epsilon: float, *, r: float = 1.0, rho: float = RHO) -> float:
    """Eq. 13: MSE of the Hybrid's final step, one DPLloyd iteration at epsilon / 2."""
    return 8 * d * (1 + (2 * rho * r) ** 2) * (k * (d * r + 1) / (n * epsilon)) ** 2


@dataclass(frozen=True)
class Advice:
    """The advisor's prediction for one (N, d, k, epsilon).

    Attributes
    ----------
    n, d, k, epsilon, t : the inputs (t: DPLloyd's iterations used in Eq. 7)
    mse : dict algorithm -> predicted MSE per centroid (normalised units):
        ``dplloyd`` (Eq. 7), ``eugkm`` (its variance, Eq. 12: a lower bound),
        ``hybrid`` (Eq. 13 when it refines, else EUGkM's)
    eugkm_bias2_bound : float, Inequality 10
    hybrid_min_epsilon : float, Inequality 15's threshold
    hybrid_refines : bool, Inequalities 14 and 15 hold
    best : str
        The recommendation (:func:`dpcore.advisor.plan.advisor_plan`): the registry key whose
        predicted worst case over the clusters' separation is best; ``"auto"`` when running
        several candidates on shares of epsilon and selecting one privately is predicted better
        in the worst case (``plan`` names them); or ``"dp_mean"`` (publish one centre at a DP mean,
        :data:`TRIVIAL`) when that is.
    certain : bool
        False when DPLloyd's MSE lies between EUGkM's variance and its
        variance + bias bound (the bias depends on the data).
    reason : str, one or two sentences
    regime : dict algorithm -> dpcore.algorithms.regime.Regime
        The same regime check the estimators run before they spend
        (:func:`dpcore.algorithms.registry.assess`); a refused algorithm is never the pick.
    su_best : {"dplloyd", "eugkm", "hybrid"}, Su et al.'s own decision rule
    trivial_mse : float
        ``d r^2``: no data in ``[-r, r]^d`` spreads more than this around its
        mean, so k centres whose error exceeds it lose to one centre at the mean.
    formula_best : str
        The pick of the formulas alone (Su et al.'s rule, zCDP-Lloyd's last-step MSE, the d r² line):
        the advisor of earlier versions, kept for comparison.
    ranking : tuple of Prediction
        Every calibrated algorithm that may run here, best first: predicted k-means cost ratio to
        non-private k-means, with the range of the data the inputs do not describe
        (:class:`dpcore.advisor.model.Prediction`).
    trivial : Prediction
        The same prediction for one centre at a DP mean.
    plan : SelectionPlan
        The candidate set behind ``best`` (:class:`dpcore.advisor.model.SelectionPlan`):
        its keys, each one's epsilon and its predicted worst-case factor over the best answer.
    """

    n: float
    d: int
    k: int
    epsilon: float
    t: int
    mse: dict
    eugkm_bias2_bound: float
    hybrid_min_epsilon: float
    hybrid_refines: bool
    best: str
    certain: bool
    reason: str
    regime: dict = field(default_factory=dict)
    su_best: str = ""
    trivial_mse: float = math.nan
    formula_best: str = ""
    ranking: tuple = ()
    trivial: Prediction | None = None
    plan: SelectionPlan | None = None


#: The advisor's key for the trivial answer: one centre at a DP mean (not a registry key).
TRIVIAL = "dp_mean"


def advice_name(key: str) -> str:
    """Display name of an advisor pick (a registry key or :data:`TRIVIAL`)."""
    from ..algorithms.registry import ALGORITHMS
    return "DP mean (one centre)" if key == TRIVIAL else (ALGORITHMS[key].display_name or key)


def advise(n: float, d: int, k: int, epsilon: float, *, t: int | None = None, r: float = 1.0, rho: float = RHO,
           theta: float = 10.0, delta: float = 1e-6, max_contributions: int = 1) -> Advice:
    """Which algorithm to use: the calibrated ranking of every centre-releasing algorithm, and Su et al.'s formulas.

    Parameters
    ----------
    n : float, dataset size (> 0)
    d, k : int >= 1
    epsilon : float > 0
    t : int or None
        DPLloyd's iterations in Eq. 7.  None: the number dpcore's DPLloyd
        runs by default (``n_iter="auto"``, 2 to 7, :func:`dpcore.algorithms._blocks.lloyd.auto_schedule`);
        5 reproduces the paper's setting.
    r, rho, theta : float
        Half-width of the normalised domain (1), the normalised centroid
        coordinate of Eq. 6 (0.225), the grid constant of Eq. 4 (10).
    delta : float, default 1e-6
        The delta zCDP-Lloyd's prediction assumes ((epsilon, delta)-DP; the
        other three are pure epsilon-DP).
    max_contributions : int, default 1
        The privacy unit's bound L (issue 23): every sensitivity is L times one row's, so the
        prediction is made at ``epsilon / L`` (n is then the number of rows kept, at most L per unit).

    Returns
    -------
    Advice

    Raises
    ------
    ValueError
        For non-positive n, epsilon, d, k or t, or max_contributions < 1.

    Notes
    -----
    The pick (``best``) and ``ranking`` come from measurements (:mod:`dpcore.advisor.model`);
    the separation of the user's clusters is not a public input, so each prediction carries the
    range it takes over the calibration data near these inputs.  Algorithms whose own rule
    refuses on feasibility or run time are not ranked.  The formulas below assume equal-size,
    well-separated clusters (see §6.4 of the paper for where they disagree with measurements);
    they are kept as ``mse``, ``su_best`` and ``formula_best``.

    Beyond Su et al.: zCDP-Lloyd's last-step noise (:func:`dpcore.algorithms.highdim.zcdp_lloyd.predicted_mse`)
    competes with their pick, and a pick whose predicted MSE is at least
    ``d r^2`` is replaced by the DP mean, so the advisor never recommends k
    centres that are predicted worse than the trivial answer on every dataset
    in the box.  (On a particular dataset, whose spread may be smaller, the
    measured inertia against the trivial answer's line is the check.)
    """
    if isinstance(max_contributions, bool) or int(max_contributions) != max_contributions or max_contributions < 1:
        raise ValueError(f"max_contributions must be a whole number >= 1, got {max_contributions!r}")
    n, epsilon = float(n), float(epsilon) / int(max_contributions)
    if not (n > 0 and math.isfinite(n)):
        raise ValueError(f"n must be a positive number, got {n}")
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive number, got {epsilon}")
    d, k = int(d), int(k)
    if d < 1 or k < 1:
        raise ValueError(f"d and k must be at least 1, got d={d}, k={k}")
    if t is None:
        t = auto_schedule(n, d, k, epsilon, r=r, rho=rho)[0]
    t = int(t)
    if t < 1:
        raise ValueError(f"t must be at least 1, got {t}")
    m_dp = mse_dplloyd(n, d, k, epsilon, t, r=r, rho=rho)
    v_eu = var_eugkm(n, d, k, epsilon, r=r, theta=theta)
    b_eu = bias2_eugkm_bound(n, d, epsilon, r=r, theta=theta)
    m_hy = mse_hybrid(n, d, k, epsilon, r=r, rho=rho)
    thr = hybrid_min_epsilon(n, d, k, r=r, rho=rho, theta=theta)
    refines = epsilon >= thr and t >= 2
    certain = True
    if refines:
        best = "hybrid"
        reason = (f"ε = {epsilon:g} ≥ {thr:.3g} (Inequality 15) and t = {t} ≥ 2 (Inequality 14): one DPLloyd "
                  f"iteration at ε/2 after EUGkM (MSE {m_hy:.2g}, Eq. 13) is predicted below both EUGkM's variance "
                  f"({v_eu:.2g}, Eq. 12) and DPLloyd's MSE ({m_dp:.2g}, Eq. 7).")
    elif m_dp < v_eu:
        best = "dplloyd"
        reason = (f"DPLloyd's MSE ({m_dp:.2g}, Eq. 7, t = {t}) is below even EUGkM's variance ({v_eu:.2g}, Eq. 12), "
                  f"and ε = {epsilon:g} < {thr:.3g} so the Hybrid falls back to EUGkM.")
    else:
        best = "eugkm"
        certain = m_dp >= v_eu + b_eu
        reason = (f"ε = {epsilon:g} < {thr:.3g} (Inequality 15), so the Hybrid is EUGkM; DPLloyd's MSE ({m_dp:.2g}, "
                  f"Eq. 7, t = {t}) is above EUGkM's variance ({v_eu:.2g}, Eq. 12)"
                  + ("." if certain else f" but below variance + bias bound ({v_eu + b_eu:.2g}, Eq. 10): "
                                         "the data's shape decides, so this call is uncertain and DPLloyd may "
                                         "do better if the grid's bias is near its bound."))
    mse = {"dplloyd": m_dp, "eugkm": v_eu, "hybrid": m_hy if refines else v_eu}
    regimes = {a: assess(a, n=n, d=d, k=k, epsilon=epsilon, theta=theta) for a in ("dplloyd", "eugkm", "hybrid")}
    if regimes[best].status == "refuse":
        # Outside its paper's regime the formulas above do not hold: pick among the others by predicted MSE.
        allowed = [a for a in ("hybrid", "eugkm", "dplloyd") if regimes[a].status != "refuse"]
        if allowed:
            new = min(allowed, key=lambda a: mse[a])
            # The rule's own words: the verdict in ``regimes`` also names the calibrated pick, which
            # read as a contradiction inside this formula-only account ("ranks X first ... so Y instead").
            from ..algorithms.registry import ALGORITHMS
            own = ALGORITHMS[best].regime(n=n, d=d, k=k, epsilon=epsilon, theta=theta).reason
            reason = f"{own} So the formulas fall back to {new}. (Their pick was {best}: {reason})"
            best, certain = new, False
    su_best = best
    from ..algorithms.highdim.zcdp_lloyd import predicted_mse
    mse["zcdp_lloyd"] = predicted_mse(n, d, k, epsilon, delta, r=r)
    # A grid with fewer than 2 cells per dimension resolves nothing: Eq. 12 (a variance, bias left
    # out) then says nothing about EUGkM's or the Hybrid's error, so they do not compete.
    cells_per_dim = grid_cells(n, d, epsilon, theta=theta) ** (1.0 / d)
    grid_ok = cells_per_dim >= 2.0
    rival = best if grid_ok else "dplloyd"
    if mse["zcdp_lloyd"] < mse[rival] or not grid_ok:
        best, certain = ("zcdp_lloyd", True) if mse["zcdp_lloyd"] < mse[rival] else (rival, True)
        reason = ((f"EUGkM's grid has {cells_per_dim:.2f} cells per dimension here (Eq. 4), too coarse to resolve "
                   "anything, so its Eq. 12 prediction does not apply. " if not grid_ok else "")
                  + (f"zCDP-Lloyd's predicted MSE ({mse['zcdp_lloyd']:.2g}, Gaussian noise of its last step at "
                     f"δ = {delta:g}) is below {rival}'s ({mse[rival]:.2g}): Gaussian noise grows with √d, "
                     "Laplace noise with d." if best == "zcdp_lloyd" else
                     f"DPLloyd's MSE ({mse['dplloyd']:.2g}, Eq. 7) is below zCDP-Lloyd's ({mse['zcdp_lloyd']:.2g}).")
                  + f" (Su et al.'s rule alone: {reason})")
    trivial = d * r ** 2
    if mse[best] >= trivial:
        reason = (f"Even the best prediction ({best}, MSE {mse[best]:.2g}) is at least d r² = {trivial:.3g}, the most "
                  f"any data in the box spread around their mean: {k} private centres would fit worse than one centre "
                  f"at a DP mean, which costs almost nothing. Publish the DP mean, or raise ε. " + reason)
        best, certain = TRIVIAL, True
    formula_best, formula_reason = best, reason
    ranking, triv, _ = advisor_ranking(n, d, k, epsilon, delta, with_pick=False)
    pick, plan = advisor_plan(n, d, k, epsilon, delta)
    worst = within_words(plan.worst)
    if pick == TRIVIAL:
        reason = (f"No algorithm is predicted above the trivial answer here (one centre at a DP mean, about "
                  f"{triv.ratio:.3g}× non-private k-means cost, {worst}): publish the DP mean, or raise ε.")
    elif pick == "auto":
        runs = " and ".join(f"{advice_name(q)} at ε = {e:.3g}" for q, e in zip(plan.keys, plan.budgets()))
        reason = (f"Which algorithm is best depends on how separated the clusters are and whether their sizes "
                  f"are equal, which are not public: "
                  f"“auto” {read_words()}runs {runs} "
                  + ("and releases one chosen privately" if len(plan.keys) > 1 else "alone")
                  + f" ({worst}; one centre at a DP mean at {triv.ratio:.3g}×).")
    else:
        first = next((p for p in ranking if p.key == pick), None)
        said = (f"is predicted at about {first.ratio:.3g}× non-private k-means cost (range {first.low:.3g}–"
                f"{first.high:.3g} over calibration data like these; {worst})" if first else f"is {worst}")
        reason = f"{advice_name(pick)} {said}, one centre at a DP mean at {triv.ratio:.3g}×."
    reason += f" (Su et al.'s formulas alone: {formula_reason})"
    return Advice(n, d, k, epsilon, t, mse, b_eu, thr, refines, pick, certain, reason, regimes, su_best, trivial,
                  formula_best, tuple(ranking), triv, plan)


def auto_separation_share() -> float:
    """The share of auto's budget (after the size) its default separation read spends; 0 when off or absent."""
    return float(ALGORITHMS["auto"]().get_params()["separation_share"]) if "auto" in ALGORITHMS else 0.0


def read_words() -> str:
    """What auto's default separation read does, as a clause before "runs ..." (empty when it is off)."""
    share = auto_separation_share()
    if share <= 0:
        return ""
    return (f"first spends {share:.0%} of what is left after the size on a private read of how separated the "
            "clusters are (a noisy histogram), which may narrow or change the candidates; left unnarrowed, it ")


def _pick_ratio(a: Advice) -> float:
    """The pick's predicted ratio at the whole epsilon (for auto: its first candidate's; inf for none)."""
    keys = (a.best,) + (tuple(a.plan.keys) if a.plan is not None else ())
    return next((p.ratio for k in keys for p in a.ranking if p.key == k),
                a.trivial.ratio if a.best == TRIVIAL and a.trivial else math.inf)


def advice_frame(n: float, d: int, k: int, epsilons, **kw) -> pd.DataFrame:
    """:func:`advise` over an epsilon grid.

    One row per epsilon with the predicted MSEs, the trivial bound and the pick.
    """
    rows = []
    for e in epsilons:
        a = advise(n, d, k, e, **kw)
        rows.append({"epsilon": float(e), "mse_dplloyd": a.mse["dplloyd"], "mse_eugkm": a.mse["eugkm"],
                     "mse_hybrid": a.mse["hybrid"], "mse_zcdp_lloyd": a.mse["zcdp_lloyd"],
                     "eugkm_bias2_bound": a.eugkm_bias2_bound, "trivial_mse": a.trivial_mse, "t": a.t,
                     "predicted_best": a.best, "predicted_ratio": _pick_ratio(a),
                     "trivial_ratio": a.trivial.ratio if a.trivial else math.nan,
                     "formula_best": a.formula_best, "su_best": a.su_best, "certain": a.certain})
    return pd.DataFrame(rows)
