"""The advice on a regime verdict: the calibrated measurements and the advisor's pick (issue 25).

A class's own rule (:mod:`dpcore.algorithms.regime`) says whether the paper's regime holds; this
module checks that verdict against the calibrated predictions (:func:`calibrated_verdict`: no plan,
a few milliseconds once the table is loaded) and names the advisor's first pick
(:func:`with_advice`: a plan, up to about a second for inputs not seen before).  Estimators' fits do
not run either (:func:`dpcore.algorithms.regime.check_fit` asks only the class's rule, and the
calibration only where that rule refuses on utility alone); :func:`dpcore.algorithms.registry.assess`,
:func:`dpcore.evaluation.advise` and the app do.

**Privacy.** Public inputs and public calibration data only: post-processing, no cost.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from .model import DELTA, SEPARATIONS, TRIVIAL, WARN_SHARE, calibrated_keys, trivial_factor
from .plan import ALGORITHMS, advisor_plan, advisor_ranking

#: A regime verdict (:class:`dpcore.algorithms.regime.Regime`), read by its fields and rebuilt with
#: :func:`dataclasses.replace`: the advisor lies below the algorithms and does not import them.
R = TypeVar("R")


def _name(key: str) -> str:
    cls = ALGORITHMS.get(key)
    return (getattr(cls, "display_name", None) or key) if cls is not None else "one centre at a DP mean"


def within_words(worst: float) -> str:
    """How a plan's predicted worst case reads: over which separations and sizes the calibration speaks.

    The calibration's hypotheses run from overlapping clusters to far-apart ones
    (:data:`~dpcore.advisor.model.SEPARATIONS`), each with equal, unequal or skewed cluster
    sizes (:data:`~dpcore.advisor.model.SIZES`); data packed tighter still (DPM's own benchmark,
    c = 46) lie beyond them, so the words name the range rather than "whatever the separation".
    """
    return (f"within {worst:.3g}× the best answer at every separation calibrated, from overlapping "
            f"(c = {min(SEPARATIONS):g}) to far apart (c = {max(SEPARATIONS):g}), with clusters of equal, "
            "unequal or skewed sizes")


def near_trivial_sentence(factor: float, separation: float, sizes: str | None = None) -> str:
    """The warning's sentence: under which separation an algorithm nears or passes the trivial answer.

    ``factor`` and ``(separation, sizes)`` as :func:`~dpcore.advisor.model.trivial_factor`
    returns them (sizes None: every size law alike, said no more).
    """
    kind = "overlapping" if separation <= 1 else ("far apart" if separation >= 16 else "moderately separated")
    verdict = "no better than" if factor >= 1 else "little better than"
    of_sizes = f" and of {sizes} sizes" if sizes else ""
    return (f"If the clusters are {kind} (separation c ≈ {separation:g}){of_sizes}, data like these "
            f"put it at {factor:.2g}× the trivial answer's cost: {verdict} one centre at a DP mean.")


def _not_calibrated(regime: R) -> R:
    """An algorithm outside the calibration keeps its rule's verdict; a warning or refusal says so."""
    v: Any = regime
    if v.status == "ok" or v.algorithm not in ALGORITHMS:
        return regime
    return replace(v, reason=f"{v.reason} (Not calibrated: the advisor has no measurements of this algorithm.)",
                   figures=dict(v.figures, calibrated=False))


def calibrated_verdict(regime: R, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0) -> R:
    """A rule's verdict checked against the calibrated predictions (issue 25), without a pick.

    * ``ok`` becomes ``warn`` when, under some separation of the clusters (not public: each calibrated
      separation a hypothesis), the algorithm's predicted cost ratio is above
      :data:`~dpcore.advisor.model.WARN_SHARE` (0.9) of the trivial answer's (one centre at a
      DP mean) under the same separation (:func:`~dpcore.advisor.model.trivial_factor`):
      no silent garbage, with a margin for the prediction's error.
    * A ``utility_only`` ``warn`` becomes ``ok`` when the prediction is below that line, and a
      ``utility_only`` ``refuse`` becomes ``warn`` unless the prediction is clearly
      worse (its lower end above the trivial answer's upper end): no refusal where the algorithm
      would have done better than the trivial answer.  Feasibility and run-time refusals stand.

    Algorithms outside the calibration (:func:`~dpcore.advisor.model.calibrated_keys`: WaveCluster,
    k-means, any class not ``calibrated``) keep their rule's verdict; a warning or refusal says they
    are not calibrated.

    Parameters
    ----------
    regime : Regime
        The class's own verdict (:class:`dpcore.algorithms.regime.Regime`).
    n : float
        Public or already-released noisy size.
    d, k : int
    epsilon : float
        Budget of the fit, already divided by a privacy unit's L.
    delta : float

    Returns
    -------
    Regime
        ``better`` None (the pick is :func:`with_advice`'s).

    Notes
    -----
    **Privacy.** Public inputs and public calibration data only: post-processing.
    """
    v: Any = regime
    # k = 1 is the trivial answer itself (the DP mean): nothing to compare it with.
    if v.algorithm not in calibrated_keys():
        return _not_calibrated(regime)
    if k == 1:
        return regime
    preds, triv, _ = advisor_ranking(n, d, k, epsilon, delta, with_pick=False)
    own = next((p for p in preds if p.key == v.algorithm), None)
    status, reason = v.status, v.reason
    figures = dict(v.figures, trivial_ratio=triv.ratio)
    if own is not None:
        figures["predicted_ratio"] = own.ratio
        measured = (f"Measured on data like these (n, d, k, ε), it costs about {own.ratio:.3g}× non-private "
                    f"k-means (range {own.low:.3g}–{own.high:.3g}), one centre at a DP mean {triv.ratio:.3g}×.")
        factor, where = trivial_factor(v.algorithm, n, d, k, epsilon)
        worse = factor > WARN_SHARE
        figures["trivial_factor"] = factor
        if status == "ok" and worse:
            status, reason = "warn", (f"{measured} {near_trivial_sentence(factor, *where)} (Paper rule: {reason})")
        elif status == "warn" and v.utility_only and not worse:
            status, reason = "ok", f"{measured} (Paper rule, overruled by the measurements: {reason})"
        elif status == "refuse" and v.utility_only and not own.low > triv.high:
            status, reason = "warn", f"{reason} {measured} So it runs, with this warning."
        elif status != "ok":
            reason = f"{reason} {measured}"
    return replace(v, status=status, reason=reason, better=None, figures=figures)


def with_advice(regime: R, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0) -> R:
    """:func:`calibrated_verdict`, and every ``warn`` and ``refuse`` names the advisor's first pick.

    The pick (:func:`~dpcore.advisor.plan.advisor_plan`) is a plan over every hypothesis: up to
    about a second for inputs not seen before, so estimators' fits do not ask for it;
    :func:`dpcore.algorithms.registry.assess`, :func:`dpcore.evaluation.advise` and the app do.

    Parameters
    ----------
    regime : Regime
        The class's own verdict.
    n, d, k, epsilon, delta
        The public inputs, as for :func:`calibrated_verdict`.

    Returns
    -------
    Regime
        With ``better`` the advisor's pick (a registry key, ``"auto"`` or ``"dp_mean"``) and
        ``figures["advisor_pick"]`` when the status is not ``ok``.

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
    checked: Any = calibrated_verdict(regime, n=n, d=d, k=k, epsilon=epsilon, delta=delta)
    if checked.status == "ok" or checked.algorithm not in calibrated_keys() or k == 1:
        return checked
    # The pick for these inputs with the advisor's delta: an estimator of pure epsilon (delta = 0) may
    # still be told that an (epsilon, delta) algorithm does better.
    pick, plan = advisor_plan(n, d, k, epsilon, delta or DELTA)
    if pick == checked.algorithm:
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
    return replace(checked, reason=f"{checked.reason} {tail}", better=pick,
                   figures=dict(checked.figures, advisor_pick=pick))
