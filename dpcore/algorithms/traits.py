"""What an estimator class declares about itself besides its code: its audit case and its page controls.

An algorithm is one module (issue 58): the app, the tests and the docs learn everything they need about
an estimator from its class attributes (``key``, ``family``, ``accepts_source``, ``needs_delta``,
``display_name``, ``colour``, ``audit``, ``controls``) through the registry, and never from a list of
keys kept elsewhere.  This module holds the two declarations that are more than a string or a flag:

* :class:`AuditCase`: the public parameters and tiny neighbouring datasets with which the privacy
  audit (``tests/audit/test_estimators_audit.py``), the structural audit
  (``tests/audit/test_structural_audit.py``), the exact-sums audit (``tests/audit/test_exact_sums.py``)
  and the sources test (``tests/test_sources.py``) exercise the estimator;
* :class:`Control`: a page control of one of the estimator's own parameters (the Explorer's
  "Algorithm settings").

Both are plain, immutable descriptions: no numpy data, no Streamlit, nothing that runs.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def _frozen(mapping: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


#: CI audit size of the estimators whose audit cannot certify their claim at any CI size (see ``ci_runs``).
CI_RUNS_SLOW = 1500

@dataclass(frozen=True)
class PrivacyCase:
    """One neighbouring-datasets case of the statistical privacy audit.

    The audit fits the estimator many times on ``D`` and on ``D'`` (``D`` plus the record ``added``)
    and tests whether any released feature tells them apart beyond what (epsilon, delta)-DP allows
    (``tests/audit/dp_audit.py``, after Ding et al. 2018, "Detecting violations of differential
    privacy", CCS).

    Parameters
    ----------
    name : str
        What the case stresses (the audit prefixes the registry key).
    params : Mapping
        Constructor parameters besides ``epsilon``, ``bounds=(-1, 1)`` and ``random_state``
        (public inputs only; ``n_clusters`` defaults to 2 when the estimator has it).
    data : {"two groups", "corner"}, default "two groups"
        ``"two groups"``: 10 records in each of two tight groups near ``(-0.6, ...)`` and
        ``(0.6, ...)``; ``"corner"``: ``n`` records stacked on the corner ``(-1, ..., -1)``.
    n : int, default 20
        Records in ``D`` for ``"corner"`` (``"two groups"`` always has 20).
    d : int, default 2
        Columns.
    added : tuple of float, default (1.0, 1.0)
        The record ``D'`` adds (length ``d``).
    delta : float, default 0.0
        The delta of the claim the audit checks (the estimator's own delta for (epsilon, delta)-DP).
    n_runs : int, default 6000
        Fits per side in the benchmark (``benchmarks/privacy_audit.py``).
    ci_runs : int or None, default 3000
        Fits per side in CI; None: too slow for CI at a size that means anything (an explicit skip).
        :data:`CI_RUNS_SLOW` for the GUPT and exponential-mechanism estimators (GkM, GkM-3K, PGkM,
        KMeans-Guarantee): a fit costs ~10 ms of small k-means and exponential-mechanism draws, and at any CI
        size the audit certifies far below their claim on these 20-row neighbours (KMeans-Guarantee spending
        3 epsilon: epsilon >= 0.04 certified at 1,500 fits, 0.24 at 3,000).  What fails their CI audit is a
        sharp leak, a released value read from the data unpaid
        (``tests/audit/test_audit_catches_bugs.py`` catches GkM-3K's block count from the true n at this
        size); the finer power is the benchmark's (``n_runs``).
    why : str
        Why these neighbours stress the estimator.
    known_issue : str or None
        A privacy problem found and not yet fixed: the CI test is then a strict xfail.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=_frozen)
    data: str = "two groups"
    n: int = 20
    d: int = 2
    added: tuple[float, ...] = (1.0, 1.0)
    delta: float = 0.0
    n_runs: int = 6000
    ci_runs: int | None = 3000
    why: str = "20 records in two tight groups; the added record sits alone in the corner"
    known_issue: str | None = None

    def __post_init__(self):
        if self.data not in ("two groups", "corner"):
            raise ValueError(f"data must be 'two groups' or 'corner', got {self.data!r}")
        if len(self.added) != self.d:
            raise ValueError(f"the added record has {len(self.added)} coordinates for d = {self.d}")
        object.__setattr__(self, "params", _frozen(self.params))


@dataclass(frozen=True)
class AuditCase:
    """How the test suites exercise an estimator: small, fast, public settings and its audit cases.

    Every suite that covers "every estimator" builds its parameter list from
    :data:`dpcore.ALGORITHMS` at collection time and reads the settings here, so a new algorithm is
    audited as soon as it is registered (``tests/test_toy_algorithm.py`` proves it).

    Parameters
    ----------
    privacy : tuple of PrivacyCase, str or None, default None
        The statistical privacy audit's cases; a string says why the estimator cannot be audited on
        tiny data (an explicit skip); None: no case declared yet (an explicit skip that says so).
    structural : Mapping
        Fast parameters a user could pick, for the exact structural audit (they win over its
        epsilon and public size).
    exact_sums : Mapping
        Fast parameters for the exact-sums audit (``n_clusters=3``, ``bounds=(0, 1)``).
    sources : Mapping or None
        Parameters of the sources test (an estimator with ``accepts_source`` must release the same
        on a DuckDB source as on the array); None: its release on a source is an approximation by
        design (an explicit skip; its own test covers it).
    slow : bool, default False
        Fits take 0.05 to 0.2 s: the structural audit draws fewer examples and fewer sizes.
    coupled : bool, default True
        False when a draw's size is the data's (GkM's random blocks): the exact-sums audit cannot
        couple the two fits and checks the estimator's noised query in a test of its own.
    n_clusters : int, default 3
        k of the structural audit's threshold pairs and size sweep.
    k_above_n : Mapping
        Extra parameters for the structural audit's k = 4 > n check (a plan that refuses k = 4 at
        the fast epsilon gets a larger one).
    """

    privacy: tuple[PrivacyCase, ...] | str | None = None
    structural: Mapping[str, Any] = field(default_factory=_frozen)
    exact_sums: Mapping[str, Any] = field(default_factory=_frozen)
    sources: Mapping[str, Any] | None = field(default_factory=_frozen)
    slow: bool = False
    coupled: bool = True
    n_clusters: int = 3
    k_above_n: Mapping[str, Any] = field(default_factory=_frozen)

    def __post_init__(self):
        for name in ("structural", "exact_sums", "sources", "k_above_n"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _frozen(getattr(self, name)))


@dataclass(frozen=True)
class Control:
    """A page control of one of the estimator's own parameters.

    Parameters
    ----------
    param : str
        The constructor parameter it sets (also the widget's key).
    label : str
    options : tuple, default ()
        A select box over these values (the first is the default).
    bounds : (float, float) or None
        A number input within these bounds, starting at ``default``.
    default : float or None
        None: the constructor's own default for ``param`` (one place states it).
    help : str, default ""
    glossary : str or None
        A :mod:`dpcore.glossary` term whose entry is the help (wins over ``help``).
    percent : bool, default False
        ``bounds`` hold a share of the budget: a slider in whole percent instead of a number input.
    """

    param: str
    label: str
    options: tuple = ()
    bounds: tuple[float, float] | None = None
    default: float | None = None
    help: str = ""
    glossary: str | None = None
    percent: bool = False

    def __post_init__(self):
        if bool(self.options) == (self.bounds is not None):
            raise ValueError(f"control {self.param!r}: give options or bounds, one of them")
