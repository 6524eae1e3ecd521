"""The algorithm advisor: which algorithm to use for N, d, k and epsilon, from public inputs only.

:func:`advise` ranks every centre-releasing algorithm by its **calibrated** prediction
(:mod:`dpcore.advisor.model`: measured cost ratios to non-private k-means over Gaussian
mixtures and real sets, interpolated in log n, d, k and epsilon), beside the trivial answer (one
centre at a DP mean) on the same scale; its pick is the first of that ranking, or the trivial
answer when nothing is predicted below it.  The paper's own analysis is kept beside it: the error
predictions of Su et al. (2016, §6) for a dataset size N, dimension d, k clusters and epsilon (data
normalised to ``[-r, r]^d`` with r = 1, as the estimators do).  Each class declares its own formula
(:meth:`~dpcore.algorithms.base.DPClusterer.su_mse`, labelled by its ``mse_formula``) and this module
walks the registry for them: DPLloyd's Eq. 7, EUGkM's variance (Eq. 12, with its squared-bias bound,
Inequality 10) and the Hybrid's Eq. 13 where Inequalities 14 and 15 hold (elsewhere it runs as EUGkM).

Decision rule (the paper's own): the smallest predicted MSE; on a tie the class registered later
wins (the Inequalities are not strict: at t = 2 the Hybrid's Eq. 13 equals DPLloyd's Eq. 7 and the
paper picks the Hybrid; EUGkM beats DPLloyd when its variance equals DPLloyd's MSE).  When another
algorithm's MSE lies between the pick's variance and variance + bias bound the call is flagged as
uncertain (it may then win if the grid's bias is near its bound, which is what happens in high
dimension).  A consequence of the formulas: with ``t >= 2`` DPLloyd is never predicted strictly
best, because below the threshold of Inequality 15 the Hybrid's MSE (Eq. 13 = Eq. 7 at t = 2)
already exceeds EUGkM's variance, and above it the Hybrid beats DPLloyd (Inequality 14).  Only
``t = 1`` can make it so.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §6.1-6.3.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..advisor.model import TRIVIAL, Prediction
from ..advisor.plan import ALGORITHMS, SelectionPlan, advisor_plan, advisor_ranking
from ..advisor.verdict import within_words
from ..algorithms._blocks.lloyd import RHO, auto_schedule
from ..algorithms.registry import assess


@dataclass(frozen=True)
class Advice:
    """The advisor's prediction for one (N, d, k, epsilon).

    Attributes
    ----------
    n, d, k, epsilon, t : the inputs (t: DPLloyd's iterations used in Eq. 7)
    mse : dict algorithm -> predicted MSE per centroid (normalised units)
        Every registered class's closed-form prediction at these inputs
        (:meth:`~dpcore.algorithms.base.DPClusterer.su_mse`, then ``formula_mse`` for classes
        outside Su et al.'s rule): Eq. 7 for DPLloyd, EUGkM's variance (Eq. 12: a lower bound),
        Eq. 13 for the Hybrid where it refines (absent elsewhere: it runs as EUGkM), zCDP-Lloyd's
        last step.
    bias2_bounds : dict algorithm -> float
        Upper bounds on the squared bias a variance in ``mse`` leaves out (EUGkM's Inequality 10).
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
    su_best : str
        Su et al.'s own decision rule: the registry key of the smallest :meth:`su_mse`.
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
    bias2_bounds: dict
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


def advice_name(key: str) -> str:
    """Display name of an advisor pick (a registry key or :data:`TRIVIAL`)."""
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
    # Su et al.'s rule over the classes that declare a formula, in registry order.
    su = {key: v for key, cls in ALGORITHMS.items()
          if (v := cls.su_mse(n, d, k, epsilon, t=t, r=r, rho=rho, theta=theta)) is not None}
    bias = {key: b for key in su
            if (b := ALGORITHMS[key].su_bias2_bound(n, d, epsilon, r=r, theta=theta)) is not None}
    mse = dict(su)
    regimes = {a: assess(a, n=n, d=d, k=k, epsilon=epsilon, theta=theta) for a in su}
    allowed = [a for a in su if regimes[a].status != "refuse"] or list(su)
    best, own = _smallest(allowed, mse), _smallest(list(su), mse)
    reason = (f"{_short(own)}'s predicted MSE per centre ({mse[own]:.2g}, {ALGORITHMS[own].mse_formula}) is "
              "the smallest of Su et al.'s formulas ("
              + "; ".join(f"{_short(a)} {v:.2g}, {ALGORITHMS[a].mse_formula}" for a, v in su.items() if a != own)
              + ")." + _fallback_words(su))
    if best != own:
        # Outside its paper's regime its formula does not hold: the smallest among the others.  The rule's
        # own words: the verdict in ``regimes`` also names the calibrated pick, which read as a
        # contradiction inside this formula-only account ("ranks X first ... so Y instead").
        refused = ALGORITHMS[own].regime(n=n, d=d, k=k, epsilon=epsilon, theta=theta).reason
        reason = f"{refused} So the formulas fall back to {best}. (Their pick was {own}: {reason})"
    close = [a for a in su if a != best and mse[best] <= mse[a] < mse[best] + bias.get(best, 0.0)]
    certain = best == own and not close
    if close:
        reason += (f" {_short(close[0])}'s MSE ({mse[close[0]]:.2g}) is below {_short(best)}'s variance + "
                   f"bias bound ({mse[best] + bias[best]:.2g}, Inequality 10): the data's shape decides, so this "
                   f"call is uncertain and {_short(close[0])} may do better if the grid's bias is near its bound.")
    su_best = best
    # The formula pick: Su et al.'s, against the classes outside their rule that declare a formula
    # (zCDP-Lloyd's last step).  A class whose formula does not apply here (a grid too coarse to resolve
    # anything) does not compete: Su et al.'s pick gives way to the best of theirs that applies.
    formula = {key: v for key, cls in ALGORITHMS.items()
               if (v := cls.formula_mse(n, d, k, epsilon, t=t, delta=delta, r=r, rho=rho, theta=theta)) is not None}
    mse.update({key: v for key, v in formula.items() if key not in su})
    applies = [a for a in su if a in formula]
    rival = best if best in formula else (_smallest(applies, formula) if applies else best)
    others = [a for a in formula if a not in su]
    pick = min([rival, *others], key=lambda a: formula.get(a, math.inf))    # the first wins a tie: Su's
    if pick != best or len(applies) < len(su):
        why = ("" if len(applies) == len(su) else
               ", ".join(_short(a) for a in su if a not in applies) + "'s formula does not apply here (Eq. 4's grid "
               "has fewer than 2 cells per dimension, too coarse to resolve anything). ")
        loser = next((a for a in [rival, *others] if a != pick), None)
        reason = (why + (f"{_short(pick)}'s predicted MSE ({mse[pick]:.2g}, {ALGORITHMS[pick].mse_formula}) is below "
                         f"{_short(loser)}'s ({mse[loser]:.2g})." if loser else "")
                  + f" (Su et al.'s rule alone: {reason})")
        best, certain = pick, True
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
    return Advice(n, d, k, epsilon, t, mse, bias, pick, certain, reason, regimes, su_best, trivial,
                  formula_best, tuple(ranking), triv, plan)


def _smallest(keys: list, values: dict) -> str:
    """The key of the smallest value; a tie (within rounding) goes to the class registered later.

    The paper's Inequalities are not strict: at t = 2 the Hybrid's Eq. 13 equals DPLloyd's Eq. 7 (up
    to rounding) and the paper picks the Hybrid; EUGkM wins over DPLloyd at equal values.
    """
    least = min(values[a] for a in keys)
    return [a for a in keys if values[a] <= least * (1 + 1e-9)][-1]


def _short(key: str) -> str:
    """An algorithm's name in the formulas' sentences: its display name up to any parenthesis."""
    return advice_name(key).split(" (")[0]


def _fallback_words(su: dict) -> str:
    """A sentence for each class that declares a Su et al. formula but has no prediction of its own here."""
    words = ""
    for key, cls in ALGORITHMS.items():
        lineage = [b for b in cls.__mro__ if b.__dict__.get("key")]     # the class and its registered bases
        if key in su or not any("su_mse" in vars(b) for b in lineage):
            continue
        words += f" {_short(key)}: its {cls.mse_formula} does not apply here"
        words += f"; it runs as {_short(lineage[1].key)}." if len(lineage) > 1 else "."
    return words


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

    One row per epsilon with the predicted MSEs (``mse_<key>``, NaN where a class has no prediction
    of its own), the squared-bias bounds (``bias2_<key>``), the trivial bound and the pick.
    """
    rows = []
    for e in epsilons:
        a = advise(n, d, k, e, **kw)
        rows.append({"epsilon": float(e), **{f"mse_{key}": v for key, v in a.mse.items()},
                     **{f"bias2_{key}": v for key, v in a.bias2_bounds.items()}, "trivial_mse": a.trivial_mse, "t": a.t,
                     "predicted_best": a.best, "predicted_ratio": _pick_ratio(a),
                     "trivial_ratio": a.trivial.ratio if a.trivial else math.nan,
                     "formula_best": a.formula_best, "su_best": a.su_best, "certain": a.certain})
    return pd.DataFrame(rows)
