"""Reserve before reveal, as a library: fit, build the release, record it, and only then hand it out.

The app and a script draw a private release the same way:

1. :func:`settings` names what is being drawn: (dataset, content fingerprint, algorithm, public
   parameters, epsilon, delta, bounds).  Its ``key`` identifies "the same settings" everywhere.
2. :func:`recorded_draws` finds the draws the store already holds for exactly these settings, so a
   rerun, a reload or another session shows the kept draw instead of spending again.
3. :func:`draw` fits with unpredictable noise (``random_state=None``), turns the fit into a release
   (:func:`dpcore.release.build_release`), registers the dataset with its fingerprint and records the
   release (:meth:`~dpcore.store.ReleaseStore.record`: one transaction, refused over the cap).  The
   fitted estimator is dropped; only the recorded release dict comes back, so nothing the release
   does not hold (the true size, clipped rows, labels) can leak through it.
4. :class:`dpcore.release.view.ReleasedFit` shows that dict through the fitted attributes a page draws.

Example
-------
>>> import numpy as np
>>> from dpcore.store import ReleaseStore
>>> from dpcore.store.draw import draw, recorded_draws, settings
>>> X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
>>> store = ReleaseStore(":memory:")
>>> s = settings("demo", "fp1", "eugkm", {"n_clusters": 3, "epsilon": 1.0}, bounds=(0, 1), d=2)
>>> rid, rel = draw(store, s, X, who="a script")
>>> [r.id for r in recorded_draws(store, s)] == [rid]
True
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..algorithms.regime import OutOfRegimeError
from ..algorithms.registry import releasable
from ..exceptions import InfeasibleBudgetError
from ..release.build import build_refusal, build_release
from .records import StoredRelease
from .release_store import ReleaseStore

#: Estimator parameters that are not "public settings" (they have fields of their own, or are never stored).
_NOT_SETTINGS = ("epsilon", "delta", "bounds", "random_state")


@dataclass(frozen=True)
class Settings:
    """One release setting: what is drawn, on which data.

    Attributes
    ----------
    key : str
        JSON of everything below: equal keys mean the same settings (a kept draw may be shown again).
    dataset, fingerprint, algorithm : str
    public : dict
        The estimator's public parameters as the release records them (``build_release``'s ``parameters``).
    params : dict
        The parameters to construct the estimator with (``epsilon`` and ``delta`` included).
    epsilon, delta : float
    bounds : list of two lists of floats (lower, upper), or None when the data have no public bounds.
    """

    key: str
    dataset: str
    fingerprint: str
    algorithm: str
    public: dict
    params: dict
    epsilon: float
    delta: float
    bounds: list | None


def settings(dataset: str, fingerprint: str, algorithm: str, params: dict, *, bounds, d: int) -> Settings:
    """Name one release setting (see :class:`Settings`).

    Parameters
    ----------
    dataset : str
        The dataset's name in the store.
    fingerprint : str
        A content fingerprint of the data (the store ties the dataset's account to it).
    algorithm : str
        Registry key.
    params : dict
        Estimator parameters, ``epsilon`` required; ``random_state`` is ignored (draws are private).
    bounds : (lower, upper) or None
        The public bounds, scalars or arrays of shape (d,).
    d : int
        Number of columns.

    Returns
    -------
    Settings

    Raises
    ------
    KeyError
        ``algorithm`` is not a registry key.
    """
    cls = releasable(algorithm)
    params = {k: v for k, v in params.items() if k != "random_state"}
    public = {k: v for k, v in sorted(cls(**params).get_params(deep=False).items()) if k not in _NOT_SETTINGS}
    public = json.loads(json.dumps(public, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
    blist = None if bounds is None else [np.broadcast_to(np.asarray(b, dtype=float), (int(d),)).tolist()
                                         for b in bounds]
    eps, delta = float(params["epsilon"]), float(params.get("delta") or 0.0)
    key = json.dumps([dataset, fingerprint, algorithm, public, eps, delta, blist])
    return Settings(key, dataset, fingerprint, algorithm, public, params, eps, delta, blist)


def matches(release: dict, s: Settings) -> bool:
    """True when a recorded release was drawn with exactly the settings ``s``.

    Returns
    -------
    bool
    """
    if not str(release.get("format", "")).startswith("dpcore-release/"):
        return False       # a refusal record: budget spent, no result to show again
    return (release["algorithm"]["key"] == s.algorithm and release["parameters"] == s.public
            and release["privacy"]["epsilon"] == s.epsilon and release["privacy"]["delta"] == s.delta
            and [release["bounds"]["lower"], release["bounds"]["upper"]] == s.bounds)


def recorded_draws(store: ReleaseStore, s: Settings, *,
                   releases_of: Callable[[str, int], list[StoredRelease]] | None = None) -> list[StoredRelease]:
    """The store's draws of exactly these settings on this dataset, oldest first.

    The light history (no release bodies) is read first, so settings never drawn with this algorithm
    cost one query.

    Parameters
    ----------
    store : ReleaseStore
    s : Settings
    releases_of : callable (dataset, newest release id) -> list of StoredRelease, optional
        Where to read the parsed releases from (the app caches them per newest id); default
        ``store.releases(dataset)``.

    Returns
    -------
    list of StoredRelease
    """
    hist = store.history(s.dataset)
    if not any(h["algorithm"] == s.algorithm for h in hist):
        return []
    rels = releases_of(s.dataset, hist[-1]["id"]) if releases_of is not None else store.releases(s.dataset)
    return [r for r in rels if matches(r.release, s)]


def fit_private(s: Settings, X, *, bounds, privacy_id=None):
    """One fit of ``s`` with unpredictable noise (``random_state=None``): never seeded, never cached.

    Parameters
    ----------
    s : Settings
    X : array-like (n, d) or DataSource
    bounds : (lower, upper) or None, the public bounds (as given to :func:`settings`)
    privacy_id : array-like (n,), str or None
        The rows' privacy units (a person-level release; ``s.params`` then hold ``max_contributions``).

    Returns
    -------
    the fitted estimator

    Raises
    ------
    Whatever the estimator's ``fit`` raises (bad data, a regime refusal, an infeasible budget).
    """
    est = releasable(s.algorithm)(**s.params, bounds=bounds, random_state=None)
    try:
        return est.fit(X) if privacy_id is None else est.fit(X, privacy_id=privacy_id)
    except Exception as exc:
        attach_spend(est, exc)
        raise


def attach_spend(est, exc: BaseException) -> None:
    """Put what ``est`` spent before it raised on ``exc.spent_budget`` (nothing when it spent nothing).

    A refusal after a spend (a noisy count, then "infeasible"): the spend travels with the error, so
    the caller records it (:func:`record_refusal`) and the account agrees with what the person saw.
    """
    ledger = getattr(est, "budget_", None)
    if ledger is not None and ledger.total()[0] > 0:
        exc.spent_budget = ledger   # type: ignore[attr-defined]


def refusal_of(exc: BaseException, *, algorithm: str, dataset: str) -> dict | None:
    """The refusal record the store keeps for ``exc`` (:func:`dpcore.release.build_refusal`), or None.

    Only the regime and budget refusals keep their sentence (public inputs and the paid-for noisy
    count); any other error's text stays in the log, and only its spend is recorded.  The structural
    audit compares this record on neighbouring data sets (tests/audit/structure.py).
    """
    ledger = getattr(exc, "spent_budget", None)
    if ledger is None:
        return None
    reason = str(exc) if isinstance(exc, (OutOfRegimeError, InfeasibleBudgetError)) else (
        f"the fit stopped with {type(exc).__name__} after spending")
    return build_refusal(ledger, algorithm=algorithm, dataset=dataset, reason=reason)


def record_refusal(store: ReleaseStore, s: Settings, exc: BaseException, *, who: str = "",
                   description: str = "", former=()) -> int | None:
    """Record the spend behind a refused fit (``exc.spent_budget`` from :func:`fit_private`), if any.

    Parameters
    ----------
    store : ReleaseStore
    s : Settings
    exc : the exception :func:`fit_private` raised
    who, description : str
        As :func:`record_fit`.
    former : sequence of str, optional
        As :func:`record_fit`.

    Returns
    -------
    int or None: the refusal's id in the store, or None when the fit spent nothing.
    """
    refusal = refusal_of(exc, algorithm=s.algorithm, dataset=s.dataset)
    if refusal is None:
        return None
    _register(store, s, description, former)
    return store.record_refusal(s.dataset, refusal, who=who)


def _register(store: ReleaseStore, s: Settings, description: str, former=()) -> None:
    """Register ``s.dataset`` with its fingerprint and public bounds: the account is tied to the data's content."""
    bounds = None if s.bounds is None else (np.asarray(s.bounds[0]), np.asarray(s.bounds[1]))
    store.register_dataset(s.dataset, fingerprint=s.fingerprint.split(":")[0], bounds=bounds,
                           description=description, former=former)


def record_fit(store: ReleaseStore, s: Settings, est, *, who: str = "", columns=None,
               description: str = "", kind: str = "points", new_draw: bool = False,
               former=()) -> tuple[int, dict]:
    """Build the release of a private fit and record it: the reserve-before-reveal step.

    Parameters
    ----------
    store : ReleaseStore
    s : Settings
    est : fitted private estimator (``random_state=None``)
    who : str
        Who drew it (recorded with the release).
    columns : list of str, optional
    description : str
        The dataset's description, used when the store first registers it.
    kind : str
        What a row is, for the guarantee in words (:func:`dpcore.explain.unit_words`).
    new_draw : bool, default False
        False: if another session recorded a draw of ``s`` meanwhile, that draw comes back and this
        fit is dropped unseen and uncharged (:meth:`~dpcore.store.ReleaseStore.record_draw`: one
        transaction, so sessions that open a page together spend once).  True: always a new draw.
    former : sequence of str, optional
        The data's fingerprints under former canonical forms (:func:`dpcore.store.keys.former_digests`
        of the rows), so that an account registered before issue 68 is recognised as this data's.

    Returns
    -------
    (release_id, release) : int, dict
        Hand out ``release`` only after this returns.

    Raises
    ------
    dpcore.exceptions.BudgetExceededError
        Over the dataset's cap: nothing was recorded.
    dpcore.exceptions.StoreError
        The store refused (another fingerprint under this name, locked, unreachable, ...).
    """
    rel = build_release(est, algorithm=s.algorithm, dataset=s.dataset, columns=columns, kind=kind)
    _register(store, s, description, former)      # another file under the same name is refused
    rid, recorded = store.record_draw(s.dataset, rel, settings_key=s.key, who=who, new_draw=new_draw)
    if not recorded:       # another session's draw of the same settings: show that one, never this fit
        rel = store.release(rid).release
    return rid, rel


def draw(store: ReleaseStore, s: Settings, X, *, who: str = "", columns=None, description: str = "",
         kind: str = "points", privacy_id=None, new_draw: bool = False, former=()) -> tuple[int, dict]:
    """Fit, build, record: one new private draw of ``s`` on ``X``, spent and recorded before it is returned.

    Parameters
    ----------
    store : ReleaseStore
    s : Settings
    X : array-like (n, d) or DataSource
        The data (the same the fingerprint was taken of).
    who, columns, description, kind, new_draw, former
        As :func:`record_fit`.
    privacy_id : array-like (n,), str or None
        As :func:`fit_private`.

    Returns
    -------
    (release_id, release) : int, dict

    Raises
    ------
    dpcore.exceptions.BudgetExceededError, dpcore.exceptions.StoreError
        As :func:`record_fit`.
    ValueError, TypeError, dpcore.exceptions.InfeasibleBudgetError
        From the estimator's ``fit``.

    Notes
    -----
    **Privacy.** The fit spends at most ``(s.epsilon, s.delta)``; the store records exactly what
    its ledger spent, under the dataset's cap.  The estimator (with its exact, non-private
    attributes such as ``n_clipped_``) never leaves this function.
    """
    bounds = None if s.bounds is None else (np.asarray(s.bounds[0]), np.asarray(s.bounds[1]))
    try:
        est = fit_private(s, X, bounds=bounds, privacy_id=privacy_id)
    except Exception as exc:
        record_refusal(store, s, exc, who=who, description=description, former=former)
        raise
    return record_fit(store, s, est, who=who, columns=columns, description=description, kind=kind,
                      new_draw=new_draw, former=former)
