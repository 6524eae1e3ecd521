"""Privacy levels in plain words: what a given epsilon (and delta) promises one person.

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


@dataclass(frozen=True)
class PrivacyLevel:
    """A named privacy level for people who choose a level rather than a number."""

    epsilon: float
    name: str
    guidance: str


#: The levels the app's slider offers, strongest privacy first.
PRIVACY_LEVELS: tuple[PrivacyLevel, ...] = (
    PrivacyLevel(0.01, "Maximal privacy", "Almost nothing about any one person can be learned; results are very noisy."),
    PrivacyLevel(0.02, "Maximal privacy", "Almost nothing about any one person can be learned; results are very noisy."),
    PrivacyLevel(0.05, "Very strong privacy", "Suitable for sensitive data; needs large datasets for useful results."),
    PrivacyLevel(0.1, "Very strong privacy", "Suitable for sensitive data; needs large datasets for useful results."),
    PrivacyLevel(0.2, "Strong privacy", "A common choice for public releases of sensitive data."),
    PrivacyLevel(0.5, "Strong privacy", "A common choice for public releases of sensitive data."),
    PrivacyLevel(1.0, "Moderate privacy", "Widely used in practice; an observer's odds can change by at most 2.7x."),
    PrivacyLevel(2.0, "Moderate privacy", "An observer's odds about a person can change by at most 7.4x."),
    PrivacyLevel(5.0, "Weak privacy", "Above epsilon = 5 little protection is left: odds can change 148-fold."),
    PrivacyLevel(10.0, "Minimal privacy", "Close to publishing the non-private result; use only for testing."),
)


def level_for(epsilon: float) -> PrivacyLevel:
    """The named level whose epsilon is closest on a log scale."""
    return min(PRIVACY_LEVELS, key=lambda lv: abs(math.log(lv.epsilon) - math.log(epsilon)))


def odds_ratio_bound(epsilon: float) -> float:
    """Largest factor by which one record can change the odds of any conclusion: ``e^epsilon``."""
    return math.exp(epsilon)


def attacker_advantage_bound(epsilon: float, delta: float = 0.0) -> float:
    """Upper bound on TPR - FPR of any membership test: ``(e^eps - 1 + 2 delta) / (e^eps + 1)``.

    For delta = 0 this is the tight bound of Kairouz et al. (2015) at the
    equal-error point; with delta it is their (epsilon, delta) extension.
    """
    e = math.exp(epsilon)
    return min(1.0, (e - 1 + 2 * delta) / (e + 1))


def posterior_bound(epsilon: float, prior: float = 0.5, delta: float = 0.0) -> float:
    """Largest posterior belief about a fact concerning one person, from ``prior``.

    ``p e^eps / (p e^eps + 1 - p)`` (+ delta, capped at 1): with a 50% prior
    and epsilon = 1 an observer ends up at most 73% sure.
    """
    if not 0 <= prior <= 1:
        raise ValueError("prior must be a probability in [0, 1]")
    e = math.exp(epsilon)
    return min(1.0, prior * e / (prior * e + 1 - prior) + delta)
