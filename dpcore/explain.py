"""Privacy levels in plain words: what a given epsilon (and delta) promises one privacy unit (a record or a person).

For any output event, epsilon-DP bounds the ratio of its probability with and
without one person's record by ``e^epsilon`` (Dwork & Roth 2014, Def. 2.4).
Consequences used here:

* odds ratio: an observer's odds about any fact concerning the person can
  change by a factor of at most ``e^epsilon``;
* posterior from a prior ``p``: at most ``p e^eps / (p e^eps + 1 - p)``
  (Kasiviswanathan & Smith 2014);
* membership-inference advantage (true-positive minus false-positive rate of
  any test): at most ``(e^eps - 1) / (e^eps + 1)`` for epsilon-DP, plus
  delta terms for (epsilon, delta)-DP (Kairouz, Oh, Viswanath 2015;
  Yeom et al. 2018).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .formatting import fmt_delta, fmt_epsilon, fmt_odds, fmt_share


@dataclass(frozen=True)
class Deployment:
    """A published use of differential privacy with its documented ε and privacy unit (issue 31).

    Entries are taken from Desfontaines, "A list of real-world uses of differential privacy"
    (https://desfontain.es/privacy/real-world-differential-privacy.html) and checked against the
    source named in ``source``; ``docs/guide/epsilon_scale.rst`` cites each one.
    """

    organization: str
    product: str
    epsilon: float
    delta: float
    unit: str          # what one ε protects: "user-day", "person", "action", ...
    model: str         # "central" or "local" differential privacy
    source: str


#: Real deployments on the ε scale, smallest ε first (documented ε and unit only).
DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment("Facebook", "Full URLs data set (per type of action)", 0.45, 1e-5, "action", "central",
               "Messing et al. 2020, Facebook Privacy-Protected Full URLs Data Set; Desfontaines' list"),
    Deployment("Google", "COVID-19 Search Trends symptoms", 1.68, 0.0, "user-day", "central",
               "Bavadekar et al. 2020, arXiv:2009.01265"),
    Deployment("Apple", "Health type usage (iOS)", 2.0, 0.0, "user-day", "local",
               "Apple Differential Privacy Team 2017; Desfontaines' list"),
    Deployment("Google", "COVID-19 Vaccination Search Insights", 2.19, 1e-5, "user-day", "central",
               "Bavadekar et al. 2021, arXiv:2107.01179"),
    Deployment("Apple", "Emoji suggestions (iOS)", 4.0, 0.0, "user-day", "local",
               "Apple Differential Privacy Team 2017; Desfontaines' list"),
    Deployment("Apple", "QuickType suggestions (iOS)", 16.0, 0.0, "user-day", "local",
               "Apple Differential Privacy Team 2017; Desfontaines' list"),
    Deployment("U.S. Census Bureau", "2020 Census redistricting data (P.L. 94-171), persons", 17.14, 1e-10,
               "person", "central", "Abowd et al. 2022, HDSR, the TopDown Algorithm (ρ = 2.63 zCDP); "
               "Desfontaines' list"),
)


def nearest_deployments(epsilon: float, n: int = 2) -> list[Deployment]:
    """The ``n`` deployments whose ε is closest to ``epsilon`` on a log scale, smallest ε first."""
    near = sorted(DEPLOYMENTS, key=lambda d: abs(math.log(d.epsilon) - math.log(epsilon)))[:n]
    return sorted(near, key=lambda d: d.epsilon)


def deployment_words(d: Deployment) -> str:
    """One deployment in a phrase: ``"Google, COVID-19 Search Trends symptoms: ε = 1.68 per user-day"``."""
    # The deployment's own documented ε as published (17.14, not rounded); its δ in the one form (1e-5).
    return (f"{d.organization}, {d.product}: ε = {d.epsilon:g}" + (f", δ = {fmt_delta(d.delta)}" if d.delta else "")
            + f" per {d.unit}" + (" (local DP)" if d.model == "local" else ""))


@dataclass(frozen=True)
class PrivacyLevel:
    """A point of the app's ε slider, described by facts only: the odds bound and nearby deployments.

    Earlier versions named levels ("Moderate privacy", ...) without a source; the names are now
    the odds bound e^ε, and the guidance places ε beside real deployments (:data:`DEPLOYMENTS`).
    """

    epsilon: float
    name: str
    guidance: str


def deployments_sentence(epsilon: float) -> str:
    """Where ``epsilon`` sits among :data:`DEPLOYMENTS`, in one sentence (sources in the docs)."""
    lo, hi = DEPLOYMENTS[0], DEPLOYMENTS[-1]
    if epsilon < lo.epsilon / 1.5:
        return f"Smaller than every published deployment on the list; the smallest is {deployment_words(lo)}."
    if epsilon > hi.epsilon * 1.5:
        return f"Larger than every published deployment on the list; the largest is {deployment_words(hi)}."
    return "Published deployments near this ε: " + "; ".join(map(deployment_words, nearest_deployments(epsilon))) + "."


#: From this ε on, a release gets a warning that names the deployments' units (issue 56).
LARGE_EPSILON = 5.0


def large_epsilon_warning(epsilon: float, unit: str = "record (or person, at person level)") -> str | None:
    """A warning for ε ≥ :data:`LARGE_EPSILON`, naming what the large published ε protect; None below.

    Deployments with ε this large (:data:`DEPLOYMENTS`) are not like-for-like: local DP (each device
    adds its own noise) per user-day, or a census's central ε over many tabulations.  Here ε is
    central DP per ``unit`` over every draw of the data, with no reset per day.

    Parameters
    ----------
    epsilon : float
        The ε chosen.
    unit : str
        What one ε protects in this app ("record", "user", ...).

    Returns
    -------
    str (one sentence, Markdown) or None.
    """
    if epsilon < LARGE_EPSILON:
        return None
    large = [d for d in DEPLOYMENTS if d.epsilon >= LARGE_EPSILON / 1.5]
    named = "; ".join(f"{d.organization}'s {d.product}: ε = {d.epsilon:g} per {d.unit}, "
                      f"{'local DP (each device adds its own noise)' if d.model == 'local' else 'central DP'}"
                      for d in large)
    return (f"**ε = {epsilon:g} is large:** an observer's odds about one {unit} may change by up to "
            f"{_odds(epsilon)}. The published deployments with ε this large protect other units: {named}. "
            f"Here ε is central DP per {unit}, over every draw of this data (no reset per day).")


def guidance_sentence(epsilon: float, unit: str = "unit") -> str:
    """The odds bound about one ``unit`` ("trip", "user", ...) and where ``epsilon`` sits among the deployments."""
    return (f"An observer's odds about one {unit} can change by at most {_odds(epsilon)}. "
            + deployments_sentence(epsilon))


def _level(epsilon: float) -> PrivacyLevel:
    return PrivacyLevel(epsilon, f"odds ≤ {_odds(epsilon)}", guidance_sentence(epsilon))


def level_for(epsilon: float) -> PrivacyLevel:
    """The slider point whose epsilon is closest on a log scale (its odds bound and nearby deployments)."""
    return min(PRIVACY_LEVELS, key=lambda lv: abs(math.log(lv.epsilon) - math.log(epsilon)))


def odds_ratio_bound(epsilon: float) -> float:
    """Largest factor by which one record can change the odds of any conclusion: ``e^epsilon``.

    ``inf`` beyond epsilon of about 709, where ``e^epsilon`` exceeds the largest float.
    """
    return math.exp(epsilon) if epsilon < 709 else math.inf


def odds_words(epsilon: float) -> str:
    """The odds bound e^ε as people read it: ``"2.72×"``, ``"22,026×"``, ``"e^900×"``."""
    return _odds(epsilon)


def _odds(epsilon: float) -> str:
    return fmt_odds(epsilon)


#: The points the app's slider offers, strongest privacy first.
PRIVACY_LEVELS: tuple[PrivacyLevel, ...] = tuple(_level(e) for e in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0,
                                                                     5.0, 10.0))


def running_total(release_epsilon: float | None, total_epsilon: float, cap_epsilon: float | None = None, *,
                  unit: str = "unit", total_unit: str | None = None, group_caveat: bool = False) -> str:
    """Risk as a running total (issue 31): this release, the data's total so far and what is left of the cap.

    Every release of the same data adds up (basic sequential composition, Dwork & Roth 2014,
    Thm. 3.16), so the protection one ``unit`` has is set by the *total*, not by one release.

    Parameters
    ----------
    release_epsilon : float or None
        This release's epsilon; None on a page that shows no single release (the sentence then
        gives the totals only).
    total_epsilon : float
        The sum over every draw recorded on the data so far (this one included).
    cap_epsilon : float or None
        The total set for the data, or None when none is set.
    unit : str
        What this release protects ("trip", "user", ...).
    total_unit : str or None
        What the total holds for: ``unit`` when every release of the data protected the same unit;
        otherwise the row (a person-level total would be wrong after row-level releases).
    group_caveat : bool
        Add that a person with m rows is protected only at up to m times the row-level share (group
        privacy, Dwork & Roth 2014, Thm. 2.2).

    Returns
    -------
    str, one Markdown sentence with each epsilon and its odds bound ``e^epsilon``.
    """
    total_unit = total_unit or unit
    text = ""
    if release_epsilon is not None:
        text = (f"This release: ε = {fmt_epsilon(release_epsilon)} (an observer's odds about one {unit} change by at "
                f"most {_odds(release_epsilon)}). ")
    text += f"ε spent so far on this data: **{fmt_epsilon(total_epsilon)}** ({cap_words(total_epsilon, cap_epsilon)})"
    text += (f", every draw counted, published or not; odds about one {total_unit} at most "
             f"**{_odds(total_epsilon)}**")
    text += ("; a person with m rows is protected only at up to m times the row-level releases' ε" if group_caveat
             else "")
    if cap_epsilon is None:
        return text + ". No total is set, so nothing stops the ε spent from growing."
    return text + f". Odds at most {_odds(cap_epsilon)} when all of the total is spent."


def cap_words(total_epsilon: float, cap_epsilon: float | None) -> str:
    """What is left of a data set's total, as people read it: ``"total 1, nothing left"``, ``"total 2, 1.5 left"``.

    The total (the store's cap) is the most ε every draw of the data may spend together; one word for it
    on every page, in the gallery and in the report (issue 65).

    Parameters
    ----------
    total_epsilon : float
        ε spent so far on the data (every draw, published or not).
    cap_epsilon : float or None
        The total set for the data; None when none is set (``"no total set"``).
    """
    if cap_epsilon is None:
        return "no total set"
    left = max(cap_epsilon - total_epsilon, 0.0)
    nothing = left <= 1e-12 * max(1.0, cap_epsilon)
    return f"total {fmt_epsilon(cap_epsilon)}, " + ("nothing left" if nothing else f"{fmt_epsilon(left)} left")


def attacker_advantage_bound(epsilon: float, delta: float = 0.0) -> float:
    """Upper bound on TPR - FPR of any membership test: ``(e^eps - 1 + 2 delta) / (e^eps + 1)``.

    For delta = 0 this is the tight bound of Kairouz et al. (2015) at the
    equal-error point; with delta it is their (epsilon, delta) extension.
    """
    r = math.exp(-epsilon)  # e^-eps: no overflow at any accepted epsilon
    return min(1.0, (1 - r + 2 * delta * r) / (1 + r))


def posterior_bound(epsilon: float, prior: float = 0.5, delta: float = 0.0) -> float:
    """Largest posterior belief about a fact concerning one person, from ``prior``.

    ``p e^eps / (p e^eps + 1 - p)`` (+ delta, capped at 1): with a 50% prior
    and epsilon = 1 an observer ends up at most 73% sure.
    """
    if not 0 <= prior <= 1:
        raise ValueError("prior must be a probability in [0, 1]")
    if prior == 0:
        return min(1.0, delta)
    r = math.exp(-epsilon)
    return min(1.0, prior / (prior + (1 - prior) * r) + delta)


# -- plain-word explanations (Explain page, release report) ------------------------------------
#: Label for every figure or layer computed from the raw data.
NOT_PRIVATE = "not private: for the data owner's eyes only"


@dataclass(frozen=True)
class UnitWords:
    """How a release's privacy unit is said in a sentence (issue 23: people, not rows).

    Attributes
    ----------
    one : str
        The unit, singular: ``"user"`` for a person-level release, ``"trip"`` / ``"check-in"`` /
        ``"record"`` for a row-level one.
    whole : str
        What one unit covers: ``"each user's check-ins together, at most 20 of them"`` or ``"one row"``.
    person_level : bool
        True when a unit is a person (all their rows); False when it is one row.
    rows : str
        The rows, plural (``"trips"``), for the group-privacy note of a row-level release.
    example : str
        A fact about one unit, for the posterior sentence (``"that they took a trip"``).
    """

    one: str
    whole: str
    person_level: bool
    rows: str
    example: str

    def guarantee(self, guarantee: str) -> str:
        """``"1-differential privacy for every user (...)"`` or, for rows, with the group-privacy caveat.

        Returns
        -------
        str
        """
        if self.person_level:
            return f"{guarantee} for every {self.one} ({self.whole})"
        return (f"{guarantee} for every {self.one} ({self.whole}); a person with m {self.rows} in the data is "
                f"protected only at m·ε (group privacy)")


#: Row-level wording by data kind: (unit, rows, example fact).
_KINDS = {"trips": ("trip", "trips", "that a given trip was taken"),
          "check-ins": ("check-in", "check-ins", "that someone checked in at a given place"),
          "images": ("image", "images", "that a given image is in the data"),
          "points": ("record", "records", "that a given record is in the data")}


def unit_words(privacy_unit: dict | None = None, kind: str = "points") -> UnitWords:
    """The words for a release's privacy unit.

    Parameters
    ----------
    privacy_unit : dict or None
        An estimator's ``privacy_unit_`` (``{"unit", "max_contributions", "bounding"}``); None for a
        row-level release.
    kind : {"trips", "check-ins", "images", "points"}
        What a row of the data is.

    Returns
    -------
    UnitWords
    """
    one, rows, example = _KINDS.get(kind, _KINDS["points"])
    if not privacy_unit:
        return UnitWords(one, "one row", False, rows, example)
    L = privacy_unit.get("max_contributions")
    how = privacy_unit.get("bounding", "sample")
    col = str(privacy_unit.get("unit") or "unit")
    person = "user" if col in ("user_id", "user", "userid", "person", "person_id", "privacy_id") else col
    cover = (f"each {person}'s {rows} together, at most {L} of them" if how == "sample" else
             f"each {person}'s {rows} together, weighted to count as at most {L}")
    return UnitWords(person, cover, True, rows, f"that a given {person} is in the data or went to a given place")


@dataclass(frozen=True)
class EpsilonStatement:
    """One plain-word consequence of (epsilon, delta)-DP with its number.

    Attributes
    ----------
    title : str
        Short name ("Odds ratio").
    value : str
        The number, formatted ("at most 2.72x").
    sentence : str
        What it means for one person in the data.
    formula : str
        The formula, for those who want it.
    """

    title: str
    value: str
    sentence: str
    formula: str


def epsilon_statements(epsilon: float, delta: float = 0.0, *, prior: float = 0.5,
                       unit: UnitWords | None = None) -> list[EpsilonStatement]:
    """What (epsilon, delta)-DP promises one privacy unit, as numbered statements.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in [0, 1), default 0
    prior : float in [0, 1], default 0.5
        The observer's belief before seeing the release.
    unit : UnitWords, optional
        Who is protected (:func:`unit_words`); default one record.

    Returns
    -------
    list of EpsilonStatement: odds ratio (e^eps), attacker advantage
    ((e^eps - 1 + 2 delta) / (e^eps + 1)), posterior from ``prior``, and what
    delta adds.

    Raises
    ------
    ValueError
        If epsilon is not a positive finite number, delta not in [0, 1) or
        prior not in [0, 1].

    References
    ----------
    Dwork & Roth (2014), Def. 2.4; Kasiviswanathan & Smith (2014) (posterior);
    Kairouz, Oh & Viswanath (2015) (advantage, hypothesis-testing view).
    """
    epsilon, delta = _check_eps_delta(epsilon, delta)
    unit = unit or unit_words(None)
    who = unit.one
    odds_text = fmt_odds(epsilon).removesuffix("×")
    adv = attacker_advantage_bound(epsilon, delta)
    post = posterior_bound(epsilon, prior, delta)
    out = [
        EpsilonStatement(
            "Odds ratio", f"at most {odds_text}×",
            f"Whatever anyone concludes from the release, the odds of that conclusion change by a factor of at "
            f"most {odds_text} whether or not any one {who}'s data ({unit.whole}) are in the data.",
            "e^ε"),
        EpsilonStatement(
            "Attacker's advantage", f"at most {fmt_share(adv)}",
            f"In a membership test where a given {who} is in the data or not with even odds, an attacker who sees "
            f"the release guesses right with probability at most {fmt_share((1 + adv) / 2)} (a coin toss: 50 %); "
            f"equivalently, the test's true-positive rate exceeds its false-positive rate by at most {fmt_share(adv)}.",
            "(e^ε − 1 + 2δ) / (e^ε + 1)"),
        EpsilonStatement(
            "Belief after seeing the release", f"at most {fmt_share(post)} (from {fmt_share(prior)})",
            f"Someone who was {fmt_share(prior)} sure of a fact about one {who} (for example, {unit.example}) can "
            f"be at most {fmt_share(post)} sure after seeing the release.",
            "p e^ε / (p e^ε + 1 − p) + δ"),
    ]
    if not unit.person_level:
        out.append(EpsilonStatement(
            "Who is protected", f"one {who}",
            f"The unit protected is one {who} (one row). A person with m {unit.rows} in the data is protected only "
            f"at m·ε = {epsilon:g}·m (group privacy): use a person-level release (privacy_id) to protect people.",
            "ε_group = m ε"))
    if delta > 0:
        out.append(EpsilonStatement(
            "What δ adds", f"δ = {fmt_delta(delta)}",
            f"With probability up to δ = {fmt_delta(delta)} the bounds above may fail. Choose δ much smaller than "
            f"1 / (number of {who}s): with δ ≥ 1/N, publishing one random {who}'s data outright would be "
            f"allowed.",
            "Pr[M(D) ∈ S] ≤ e^ε Pr[M(D′) ∈ S] + δ"))
    else:
        out.append(EpsilonStatement(
            "What δ adds", "δ = 0",
            "This algorithm is pure ε-DP (δ = 0): the bounds above hold always, with no failure probability.",
            "Pr[M(D) ∈ S] ≤ e^ε Pr[M(D′) ∈ S]"))
    return out


def levels_table(*, prior: float = 0.5) -> list[dict]:
    """The named levels with their numbers: one dict per distinct level name.

    Returns
    -------
    list of dict with keys ``name``, ``epsilons`` (the slider values with
    that name), ``odds_ratio``, ``advantage``, ``posterior`` (from ``prior``,
    at the level's largest epsilon: the weakest promise of that level) and
    ``guidance``.
    """
    rows: dict[str, dict] = {}
    for lv in PRIVACY_LEVELS:
        row = rows.setdefault(lv.name, {"name": lv.name, "epsilons": [], "guidance": lv.guidance})
        row["epsilons"].append(lv.epsilon)
        row["guidance"] = lv.guidance
    out = []
    for row in rows.values():
        e = max(row["epsilons"])
        out.append(dict(row, odds_ratio=odds_ratio_bound(e), advantage=attacker_advantage_bound(e),
                        posterior=posterior_bound(e, prior)))
    return out


def sequential_total(epsilons, deltas=None) -> tuple[float, float]:
    """Total (epsilon, delta) of several releases on the same data (basic sequential composition).

    Parameters
    ----------
    epsilons : iterable of float
    deltas : iterable of float or None

    Returns
    -------
    (float, float)

    References
    ----------
    Dwork & Roth (2014), Thm. 3.16.
    """
    eps = math.fsum(float(e) for e in epsilons)
    dl = math.fsum(float(d) for d in deltas) if deltas is not None else 0.0
    return eps, dl


def _check_eps_delta(epsilon, delta):
    epsilon = float(epsilon)
    delta = float(delta)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    return epsilon, delta
