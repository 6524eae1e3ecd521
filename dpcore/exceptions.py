"""Warnings and errors shared by every dpcore module."""


class PrivacyLeakWarning(UserWarning):
    """A value that should be public was read from the private data.

    Raised (as a warning) when, for example, no public ``bounds`` are given and
    the estimator falls back to the data's own minimum and maximum.  The
    released output is then *not* differentially private with respect to the
    records that define those extremes: an attacker who sees the output can
    learn the range of the data.
    """


class SeededNoiseWarning(PrivacyLeakWarning):
    """A private estimator was fitted with a seed: the result is a simulation, not a private release.

    With an integer ``random_state`` (or a Generator or SeedSequence the
    caller holds) the noise is reproducible: anyone who knows the seed can
    regenerate the noise vector and subtract it from the output, which then
    reveals the exact answers (epsilon = infinity).  Seeds are for tests,
    papers' figures and teaching on public data; leave ``random_state=None``
    (the default) for a release.  :func:`dpcore.release.build_release`
    refuses a seeded fit unless ``simulation=True``.
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


class StoreError(RuntimeError):
    """The release store (:mod:`dpcore.store`) cannot do what was asked.

    Every subclass carries a sentence saying what went wrong and what to do;
    none of them is raised after a partial write: the store is left as it was.
    """


class StoreLockedError(StoreError):
    """Another writer held the store longer than the store's ``timeout``."""


class StoreCorruptError(StoreError):
    """The store file is not a readable database, or not a dpcore store."""


class StoreVersionError(StoreError):
    """The store was written by a newer version of dpcore (a newer schema)."""


class StoreUnavailableError(StoreError):
    """The database server named by the store URL cannot be reached."""


class AccessDeniedError(StoreError, PermissionError):
    """The identity a store handle acts for may not do this (issue 24): its role does not allow it.

    Raised by :meth:`dpcore.store.ReleaseStore.acting_as` handles before anything is written; the
    message names the role needed and who can grant it.
    """


class ReleaseTooLargeError(StoreError, ValueError):
    """A release's JSON text is larger than the store's row limit."""
