"""Warnings and errors shared by every dpcore module."""


class PrivacyLeakWarning(UserWarning):
    """A value that should be public was read from the private data.

    Raised (as a warning) when, for example, no public ``bounds`` are given and
    the estimator falls back to the data's own minimum and maximum.  The
    released output is then *not* differentially private with respect to the
    records that define those extremes: an attacker who sees the output can
    learn the range of the data.
    """


class BudgetExceededError(RuntimeError):
    """A step asked the budget ledger for more (epsilon, delta) than is left.

    The ledger refuses the spend before any noise is drawn, so no output that
    overspends can ever be produced.
    """


class InfeasibleBudgetError(ValueError):
    """The privacy budget is too small for the algorithm to produce any answer.

    The message names the smallest budget (or largest data size) that would
    work, so the caller knows what to change.
    """
