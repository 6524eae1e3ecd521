"""Is a paper's regime met?  The verdict type, the enforcement, and the check estimators call; no algorithm.

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
:func:`check_fit` after their (public or noisy) size and before any other spend;
:func:`dpcore.evaluation.advise` and the app read :func:`~dpcore.algorithms.registry.assess`.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.2, §6.1-6.3 (Eqs. 4, 7, 9, 10).
Su et al. (2017). ACM TOPS 20(4) (the iteration rule of DPLloyd).
Feldman, Xiang, Zhu, Rus (2017). IPSN, Alg. 1 (t_min), §5.2 (grid).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ..exceptions import InfeasibleBudgetError

if TYPE_CHECKING:
    from .calibrated import SelectionPlan

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
#: ``advisor_plan``: a single pick whose predicted worst case over the hypotheses is more than this
#: many times the best answer gives way to ``auto`` where auto with its separation read is predicted
#: to cut that worst case this many times (:func:`read_rescue`).  The issue's own line ("never worse
#: than 2x"); it was GUARD (3) before stop 51.  Leave-one-out over the calibration's 1,698 cells
#: (``calibrated_loo.leave_one_out(advisor=True)``, auto modelled from the fits), the advisor's pick
#: is within 1.25x of the best in 83.9 % and within 2x in 92.4 % (3: 83.3 %, 91.9 %; 1.5: 83.6 %,
#: 92.4 %; no rescue: 83.5 %, 92.0 %).  Held-out (``advisor_heldout --picks``): four picks move to
#: auto, among them the 3,000-row 8-d c = 16 set at eps 0.5 (Hybrid 2.76x to auto 0.60x), a cell
#: seen before the line moved.  With the d = 25 column (2,148 cells): 86.6 % and 93.5 %.
READ_GUARD = 2.0


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
        One or two sentences; for ``warn``/``refuse`` (after :func:`with_advice`) they name the
        algorithm the calibrated advisor ranks first for the same public inputs.
    better : str or None
        That algorithm's registry key (or ``"dp_mean"``, one centre at a DP mean).
    figures : dict
        The quantities the verdict was computed from (all public).
    utility_only : bool
        The verdict is about the result's utility (a paper's error analysis), which the calibrated
        measurements may overrule; False for feasibility and run-time refusals, which stand.
    """

    algorithm: str
    status: str
    reason: str
    better: str | None = None
    figures: dict = field(default_factory=dict)
    utility_only: bool = False

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


def public_inputs(n: float, d: int, k: int, epsilon: float) -> tuple[float, int, int, float]:
    """The public inputs of a rule, normalised: ``n`` at least 1 (a noisy count may be below it)."""
    return max(float(n), 1.0), int(d), int(k), float(epsilon)


#: Every registry estimator class, by key: filled by :mod:`dpcore.algorithms.registry` when it
#: gathers them (this module knows no algorithm).  The advisor's pick asks each class's own rule and
#: skips keys that refuse on feasibility or run time.
ESTIMATORS: dict = {}


def _name(key: str) -> str:
    cls = ESTIMATORS.get(key)
    return (getattr(cls, "display_name", None) or key) if cls is not None else "one centre at a DP mean"


def runnable(key: str, n: float, d: int, k: int, epsilon: float, delta: float = 0.0) -> bool:
    """False when the algorithm's own rule refuses for feasibility or run time (not ``utility_only``).

    Returns
    -------
    bool; True for keys not in :data:`ESTIMATORS`.
    """
    cls = ESTIMATORS.get(key)
    if cls is None:
        return True
    verdict = cls.regime(n=n, d=d, k=k, epsilon=epsilon, delta=delta)
    return not (verdict.status == "refuse" and not verdict.utility_only)


def advisor_ranking(n: float, d: int, k: int, epsilon: float, delta: float = 0.0, *, with_pick: bool = True):
    """The calibrated predictions for these public inputs, best first, the trivial answer's, and the pick.

    Algorithms whose own rule refuses on feasibility or run time (not ``utility_only``) are left
    out, as are those whose calibration neighbours mostly failed or timed out.

    Returns
    -------
    (list of Prediction, Prediction, str or None)
        The ranking, the trivial answer's prediction and the advisor's first pick
        (:func:`advisor_plan`; None when ``with_pick`` is False).
    """
    preds, triv = _ranking(float(f"{float(n):.3g}"), int(d), int(k), float(f"{float(epsilon):.3g}"), float(delta),
                           len(ESTIMATORS))
    return list(preds), triv, (advisor_plan(n, d, k, epsilon, delta)[0] if with_pick else None)


@lru_cache(maxsize=4096)
def _ranking(n: float, d: int, k: int, epsilon: float, delta: float, registered: int):
    # Asked on every fit: the size and epsilon rounded to 3 significant digits (as in advisor_plan)
    # let repeated fits share it.  Rounding public inputs is post-processing.
    from .calibrated import predict, predict_trivial
    preds = [p for p in predict(n, d, k, epsilon) if p.available and runnable(p.key, n, d, k, epsilon, delta)]
    return tuple(preds), predict_trivial(n, d, k, epsilon)


def candidate_filter(n: float, d: int, k: int, delta: float):
    """``(key, epsilon_c, m) -> bool``: may ``key`` run as one of m candidates at ``epsilon_c``?

    Its own rule must not refuse on feasibility or run time at ``(epsilon_c, delta / m)``, and an
    algorithm that needs delta is out when ``delta`` is 0.
    """
    def allowed(key: str, eps_c: float, m: int) -> bool:
        cls = ESTIMATORS.get(key)
        if cls is not None and cls.needs_delta and not delta > 0:
            return False
        return runnable(key, n, d, k, eps_c, delta / m)
    return allowed


def auto_plan(n: float, d: int, k: int, epsilon: float, delta: float, *, max_candidates: int = 3,
              selection_share: float | None = None, hypotheses=None, exclude: str | None = None) -> SelectionPlan:
    """The candidates ``auto`` runs for public inputs (epsilon already divided by a privacy unit's L).

    :func:`~dpcore.algorithms.calibrated.selection_plan` (minimax over the separations) when it takes
    two or more keys; otherwise the advisor's single pick (lowest predicted regret, or the minimax
    single key where the regret pick's worst case is more than :data:`~dpcore.algorithms.calibrated.GUARD`
    times larger: the key :func:`~dpcore.algorithms.calibrated.first_pick` names when no set is worth
    its split), on the whole epsilon.  Keys that refuse for these inputs (feasibility, run time, delta) are skipped.
    ``selection_share`` None is :data:`~dpcore.algorithms.calibrated.SELECTION_SHARE`.  ``hypotheses``
    (a subset of :data:`~dpcore.algorithms.calibrated.HYPOTHESES` left plausible by a released read,
    :mod:`dpcore.algorithms.separation`): the minimax plan over them, a set or a single key (the
    regret pick averages over every hypothesis, which the read has narrowed).  ``exclude``: a
    calibration data set's id to leave out (leave-one-out validation, :mod:`.calibrated_loo`).

    Returns
    -------
    SelectionPlan (``keys`` empty when no calibrated algorithm can run).

    Notes
    -----
    **Privacy.** Public inputs and public calibration data only: post-processing, no cost.
    """
    from .calibrated import HYPOTHESES, SELECTION_SHARE, first_pick, selection_plan
    allowed = candidate_filter(n, d, k, delta)
    share = SELECTION_SHARE if selection_share is None else float(selection_share)
    narrowed = hypotheses is not None and set(hypotheses) != set(HYPOTHESES)
    plan = selection_plan(n, d, k, epsilon, max_candidates=max_candidates, selection_share=share, allowed=allowed,
                          hypotheses=hypotheses if narrowed else None, exclude=exclude)
    if len(plan.keys) == 1 and not narrowed:
        # The minimax single key hedges against every separation at once; the advisor's pick, by
        # average regret, is within 1.25x of the best more often (held-out: 8-d, k = 12, eps = 1,
        # DPM 4.8x where the pick measures 1.2x).  The trivial answer is not a candidate here.
        key, single = first_pick(n, d, k, epsilon, allowed=allowed, auto=False, exclude=exclude)
        if key in ESTIMATORS:
            return single
    return plan


def worst_with_read(n: float, d: int, k: int, epsilon: float, delta: float, *, max_candidates: int = 3,
                    selection_share: float | None = None, separation_share: float | None = None,
                    exclude: str | None = None) -> float:
    """``auto``'s predicted worst case with its read: ``max_h mean_r factor_h(plan after read r)``.

    ``epsilon`` is what is left after the size (divided by a privacy unit's L).  Under each
    hypothesis h, the read's simulated outcomes
    (:func:`~dpcore.algorithms.separation.read_hypotheses`: the separation named and the size laws
    kept) each lead to a plan (:func:`~dpcore.algorithms.regime.auto_plan` over the hypotheses the
    outcome leaves, on ``(1 - separation_share) epsilon``); the plan's predicted factor over the best
    answer at the whole epsilon under h (:class:`~dpcore.algorithms.calibrated.SelectionPlan`), averaged over the
    outcomes; the largest over the hypotheses.  A misread that drops h is charged the plan's factor
    under h, from the same keys' plan over every hypothesis.  Where no read could change the plan
    (:func:`read_matters`), auto skips it: the plan over every hypothesis on the whole epsilon, its
    worst case.  ``exclude`` as in :func:`auto_plan`.

    Returns
    -------
    float >= 1 (inf when no plan can run).

    Notes
    -----
    **Privacy.** Public inputs, public calibration data and public simulations: no cost.
    """
    from .calibrated import HYPOTHESES, selection_plan
    from .separation import SEPARATION_SHARE, read_hypotheses
    separation_share = SEPARATION_SHARE if separation_share is None else float(separation_share)
    if not read_matters(n, d, k, epsilon, delta, max_candidates=max_candidates, selection_share=selection_share,
                        separation_share=separation_share, exclude=exclude):
        # auto skips a read that could not change its plan: the plan over every hypothesis, whole epsilon.
        plan = auto_plan(n, d, k, epsilon, delta, max_candidates=max_candidates, selection_share=selection_share,
                         exclude=exclude)
        return plan.worst if plan.keys else math.inf
    eps_plan = float(epsilon) * (1.0 - separation_share)
    eps_read = float(f"{float(epsilon) * separation_share:.3g}")
    n_read = float(f"{float(n):.3g}")
    plans: dict = {}

    def factor(kept, h) -> float:
        if kept not in plans:
            plan = auto_plan(n, d, k, eps_plan, delta, max_candidates=max_candidates,
                             selection_share=selection_share, hypotheses=kept, exclude=exclude)
            every = (selection_plan(n, d, k, eps_plan, max_candidates=len(plan.keys), pool=plan.keys,
                                    exclude=exclude).by_hypothesis if plan.keys else {})
            plans[kept] = (plan, every)
        plan, every = plans[kept]
        return plan.by_hypothesis.get(h, every.get(h, math.inf)) if plan.keys else math.inf

    outcomes = {h: read_hypotheses(n_read, int(d), int(k), eps_read, h) for h in HYPOTHESES}
    return max(sum(factor(kept, h) for kept in left) / len(left) for h, left in outcomes.items())


def read_matters(n: float, d: int, k: int, epsilon: float, delta: float, *, max_candidates: int = 3,
                 selection_share: float | None = None, separation_share: float | None = None,
                 exclude: str | None = None) -> bool:
    """Whether ``auto``'s separation read could change the candidates it runs.

    False when every outcome the read could release (any separation named, or none, with any
    non-empty set of size laws kept: :func:`~dpcore.algorithms.separation.plausible` and
    :func:`~dpcore.algorithms.separation.kept_laws`) leads to a plan with the same keys
    (:func:`auto_plan` over the hypotheses it leaves, on ``(1 - separation_share) epsilon``), and the
    plan without a read (over every hypothesis, on the whole ``epsilon``) has those keys too.  Then the
    read buys nothing and :class:`~dpcore.algorithms.selection.AutoKMeans` skips it: its share goes
    to the candidates (11 of the 42 held-out cells of ``benchmarks/advisor_auto.py``, where it ran
    zCDP-Lloyd alone whatever it read).  ``epsilon``: what is left after the size, per privacy unit;
    n and epsilon to 3 significant figures (the cache's key).  ``exclude`` as in :func:`auto_plan`.

    Notes
    -----
    **Privacy.** Public inputs and public calibration data only: whether to read is itself public.
    """
    return _read_matters(float(f"{float(n):.3g}"), int(d), int(k), float(f"{float(epsilon):.3g}"), float(delta or 0.0),
                         max_candidates, selection_share, separation_share, exclude)


@lru_cache(maxsize=256)
def _read_matters(n: float, d: int, k: int, epsilon: float, delta: float, max_candidates: int,
                  selection_share: float | None, separation_share: float | None, exclude: str | None) -> bool:
    from itertools import combinations

    from .calibrated import SEPARATIONS, SIZES
    from .separation import SEPARATION_SHARE, _narrowed
    share = SEPARATION_SHARE if separation_share is None else float(separation_share)
    eps_plan = float(epsilon) * (1.0 - share)
    outcomes = {_narrowed(named, laws) for named in (None, *SEPARATIONS)
                for r in range(1, len(SIZES) + 1) for laws in combinations(SIZES, r)}
    # The plan without the read (the public one, whole epsilon) must have the same keys too: at 3,030
    # rows, 8-d, k = 4, eps 0.49 every outcome gives zCDP-Lloyd, the public plan the Hybrid (65x worse).
    seen = {auto_plan(n, d, k, float(epsilon), delta, max_candidates=max_candidates, selection_share=selection_share,
                      exclude=exclude).keys}
    for kept in sorted(outcomes, key=len, reverse=True):
        seen.add(auto_plan(n, d, k, eps_plan, delta, max_candidates=max_candidates, selection_share=selection_share,
                           hypotheses=kept, exclude=exclude).keys)
        if len(seen) > 1:
            return True
    return False


def read_rescue(single_worst: float, n: float, d: int, k: int, epsilon: float, delta: float, *, params: dict,
                exclude: str | None = None) -> float | None:
    """``auto``'s predicted worst case with its read where it rescues a single pick, else None.

    A single pick whose worst case over the hypotheses (``single_worst``) is above :data:`READ_GUARD`
    gives way to ``auto`` where :func:`worst_with_read` (at ``epsilon``, what is left after the size)
    is less than ``single_worst / READ_GUARD``.  ``params``: ``AutoKMeans``'s (``n_candidates``,
    ``selection_share``, ``separation_share``); ``exclude`` as in :func:`auto_plan`.  Public inputs only.
    """
    share = float(params["separation_share"])
    if not (share > 0 and single_worst > READ_GUARD):
        return None
    worst = worst_with_read(n, d, k, epsilon, delta, max_candidates=int(params["n_candidates"]),
                            selection_share=float(params["selection_share"]), separation_share=share,
                            exclude=exclude)
    return worst if single_worst > READ_GUARD * worst else None


def advisor_plan(n: float, d: int, k: int, epsilon: float, delta: float = 0.0, *, exclude: str | None = None):
    """The advisor's first pick and the plan behind it (issue 25):
    :func:`dpcore.algorithms.calibrated.first_pick` for these public inputs, keys that refuse on
    feasibility or run time left out.

    ``"auto"`` (:class:`~dpcore.algorithms.selection.AutoKMeans`, when the registry has it) where
    running two or three candidates on shares of epsilon and selecting one privately is predicted
    better in the worst case over the clusters' separation than any single key; otherwise the key of
    lowest predicted regret (unless its worst case is more than
    :data:`~dpcore.algorithms.calibrated.GUARD` times the minimax single key's: then that key), or
    ``"dp_mean"`` for one centre at a DP mean.  With ``"auto"`` the plan
    is the one auto makes itself with its defaults (:func:`auto_plan`
    after the noisy size's share and its separation read's): the keys and shares its ledger will
    show unless the read narrows them.  Where that plan is a single key, the pick is the single key
    instead.  Any single key picked (either way) gives way to ``"auto"`` where its worst case over the
    hypotheses exceeds :data:`READ_GUARD` (2) and :data:`READ_GUARD` times auto's predicted with its
    read (:func:`read_rescue`); its plan's ``worst`` is then that prediction.  ``exclude``: a
    calibration data set's id to leave out (leave-one-out validation, :mod:`.calibrated_loo`).

    Returns
    -------
    (str, SelectionPlan)
    """
    # A coarse function of its inputs (log-scaled neighbours), asked on every fit that warns: a noisy
    # size and epsilon rounded to 3 significant digits let repeated fits (audits, curves, simulated
    # releases) share one plan.  Rounding public inputs is post-processing.
    return _advisor_plan(float(f"{float(n):.3g}"), int(d), int(k), float(f"{float(epsilon):.3g}"), float(delta),
                         "auto" in ESTIMATORS, len(ESTIMATORS), exclude)


@lru_cache(maxsize=4096)
def _advisor_plan(n: float, d: int, k: int, epsilon: float, delta: float, auto: bool, registered: int,
                  exclude: str | None = None):
    from .calibrated import TRIVIAL, first_pick
    pick, plan = first_pick(n, d, k, epsilon, allowed=candidate_filter(n, d, k, delta), auto=auto, exclude=exclude)
    p = ESTIMATORS["auto"]().get_params() if auto else {}
    left = epsilon * (1.0 - float(p.get("n_share", 0.0)))

    @lru_cache(maxsize=1)   # asked at most twice (the fallback below, then the read's rescue)
    def run_plan():         # auto's plan over every hypothesis, on what its size and read leave
        return auto_plan(n, d, k, left * (1.0 - float(p["separation_share"])), delta,
                         max_candidates=int(p["n_candidates"]), selection_share=float(p["selection_share"]),
                         exclude=exclude)

    if pick == "auto":
        # The plan auto itself makes with its defaults (after its size's share), so that the advice names
        # the keys and shares the ledger will show; near a boundary that plan may be one key, then the
        # advice is the single pick on the whole epsilon (advise at eps 0.5, 8-d, k = 12 named two
        # candidates where auto at 0.49 ran one), unless the read rescues it (below).
        # With the separation read on, the plan over every hypothesis on what the read leaves: the read
        # may narrow it (AutoKMeans.fit), which the advice's words say.
        run = run_plan()
        if len(run.keys) > 1:
            return pick, run
        pick, plan = first_pick(n, d, k, epsilon, allowed=candidate_filter(n, d, k, delta), auto=False,
                                exclude=exclude)
    # A single key that may miss the 2x line on some kind of clusters gives way to auto where auto's
    # separation read is predicted to cut that worst case READ_GUARD times (held-out: 14-d, 32 equal
    # far-apart clusters at eps 1, zCDP-Lloyd 64x the best, auto with its read 1.05x).
    worst = (read_rescue(plan.worst, n, d, k, left, delta, params=p, exclude=exclude)
             if pick != TRIVIAL and auto else None)
    if worst is not None:
        return "auto", replace(run_plan(), worst=worst)
    return pick, plan


def within_words(worst: float) -> str:
    """How a plan's predicted worst case reads: over which separations and sizes the calibration speaks.

    The calibration's hypotheses run from overlapping clusters to far-apart ones
    (:data:`~dpcore.algorithms.calibrated.SEPARATIONS`), each with equal, unequal or skewed cluster
    sizes (:data:`~dpcore.algorithms.calibrated.SIZES`); data packed tighter still (DPM's own benchmark,
    c = 46) lie beyond them, so the words name the range rather than "whatever the separation".
    """
    from .calibrated import SEPARATIONS
    return (f"within {worst:.3g}× the best answer at every separation calibrated, from overlapping "
            f"(c = {min(SEPARATIONS):g}) to far apart (c = {max(SEPARATIONS):g}), with clusters of equal, "
            "unequal or skewed sizes")


def near_trivial_sentence(factor: float, separation: float, sizes: str | None = None) -> str:
    """The warning's sentence: under which separation an algorithm nears or passes the trivial answer.

    ``factor`` and ``(separation, sizes)`` as :func:`~dpcore.algorithms.calibrated.trivial_factor`
    returns them (sizes None: every size law alike, said no more).
    """
    kind = "overlapping" if separation <= 1 else ("far apart" if separation >= 16 else "moderately separated")
    verdict = "no better than" if factor >= 1 else "little better than"
    of_sizes = f" and of {sizes} sizes" if sizes else ""
    return (f"If the clusters are {kind} (separation c ≈ {separation:g}){of_sizes}, data like these "
            f"put it at {factor:.2g}× the trivial answer's cost: {verdict} one centre at a DP mean.")


def with_advice(regime: Regime, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0) -> Regime:
    """A rule's verdict checked against the calibrated predictions (issue 25), with the advisor's pick.

    * ``ok`` becomes ``warn`` when, under some separation of the clusters (not public: each calibrated
      separation a hypothesis), the algorithm's predicted cost ratio is above
      :data:`~dpcore.algorithms.calibrated.WARN_SHARE` (0.9) of the trivial answer's (one centre at a
      DP mean) under the same separation (:func:`~dpcore.algorithms.calibrated.trivial_factor`):
      no silent garbage, with a margin for the prediction's error.
    * A ``utility_only`` ``warn`` becomes ``ok`` when the prediction is below that line, and a
      ``utility_only`` ``refuse`` becomes ``warn`` unless the prediction is clearly
      worse (its lower end above the trivial answer's upper end): no refusal where the algorithm
      would have done better than the trivial answer.  Feasibility and run-time refusals stand.
    * Every ``warn`` and ``refuse`` names the advisor's first pick for these inputs.

    Algorithms outside the calibration (WaveCluster, k-means) keep their rule's verdict.

    Parameters
    ----------
    regime : Regime
        The class's own verdict.
    n, d, k, epsilon, delta : public inputs (``n`` public or noisy; epsilon already divided by L).

    Returns
    -------
    Regime

    Notes
    -----
    **Privacy.** Public inputs and public calibration data only: post-processing.

    Examples
    --------
    >>> from dpcore.algorithms.registry import assess      # assess() applies with_advice
    >>> v = assess("dplloyd", n=1_000, d=2, k=30, epsilon=0.05)
    >>> v.status in ("ok", "warn") and (v.status == "ok" or v.better is not None)
    True
    """
    from .calibrated import CANDIDATES, TRIVIAL, WARN_SHARE, trivial_factor
    # k = 1 is the trivial answer itself (the DP mean): nothing to compare it with.
    if regime.algorithm not in CANDIDATES or k == 1:
        return regime
    preds, triv, _ = advisor_ranking(n, d, k, epsilon, delta, with_pick=False)
    own = next((p for p in preds if p.key == regime.algorithm), None)
    status, reason = regime.status, regime.reason
    figures = dict(regime.figures, trivial_ratio=triv.ratio)
    if own is not None:
        figures["predicted_ratio"] = own.ratio
        measured = (f"Measured on data like these (n, d, k, ε), it costs about {own.ratio:.3g}× non-private "
                    f"k-means (range {own.low:.3g}–{own.high:.3g}), one centre at a DP mean {triv.ratio:.3g}×.")
        factor, where = trivial_factor(regime.algorithm, n, d, k, epsilon)
        worse = factor > WARN_SHARE
        figures["trivial_factor"] = factor
        if status == "ok" and worse:
            status, reason = "warn", (f"{measured} {near_trivial_sentence(factor, *where)} (Paper rule: {reason})")
        elif status == "warn" and regime.utility_only and not worse:
            status, reason = "ok", f"{measured} (Paper rule, overruled by the measurements: {reason})"
        elif status == "refuse" and regime.utility_only and not own.low > triv.high:
            status, reason = "warn", f"{reason} {measured} So it runs, with this warning."
        elif status != "ok":
            reason = f"{reason} {measured}"
    if status == "ok":
        return Regime(regime.algorithm, status, reason, None, figures, regime.utility_only)
    # The pick for these inputs with the advisor's delta: an estimator of pure epsilon (delta = 0) may
    # still be told that an (epsilon, delta) algorithm does better.
    from .calibrated import DELTA
    pick, plan = advisor_plan(n, d, k, epsilon, delta or DELTA)
    figures["advisor_pick"] = pick
    if pick == regime.algorithm:
        tail = "Even so, the advisor ranks it first for these inputs."
    elif pick == TRIVIAL:
        tail = ("The advisor ranks no algorithm above the trivial answer here: publish one centre at a DP "
                "mean, or raise ε.")
    elif pick == "auto":
        tail = (f"The advisor ranks {_name(pick)} ('auto') first for these inputs: it runs "
                f"{' and '.join(map(repr, plan.keys))} on shares of ε and releases one chosen privately (how "
                f"separated the clusters are, which is not public, decides between them).")
    else:
        tail = f"The advisor ranks {_name(pick)} ({pick!r}) first for these inputs ({within_words(plan.worst)})."
    return Regime(regime.algorithm, status, f"{reason} {tail}", pick, figures, regime.utility_only)


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


def check_fit(est, *, n: float, d: int, epsilon: float, delta: float = 0.0, **params) -> Regime:
    """The estimator class's own rule + :func:`enforce`, for its ``fit``; stores the verdict in ``est.regime_``.

    Call it right after the (public or noisy) dataset size and before any other spend.

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
    regime = with_advice(regime, n=n, d=d, k=k, epsilon=epsilon, delta=float(delta))
    est.regime_ = regime
    return enforce(regime, stacklevel=4)
