"""A durable privacy-budget account and release store per dataset, in a real database.

Each release published on a dataset spends its (epsilon, delta); by basic
sequential composition (Dwork & Roth 2014, Thm. 3.16) the guarantee for the
people in that data after several releases is the *sum*.  :class:`ReleaseStore`
keeps that sum in a database (an embedded SQLite file by default, PostgreSQL by
URL) so that a reload, a second tab, a second analyst or a restart of the
server cannot start the account again at zero, and a cap the data owner set
cannot be exceeded by any sequence of actions.

Reserve before reveal
---------------------
:meth:`ReleaseStore.record` is one database transaction: take the store's
write lock, check the dataset's cap against the sum already spent, insert the
release and its ledger entries, commit.  Only after ``record`` returns may a
release be shown or exported.  If anything fails after the commit, the budget
stays spent (conservative), never the other way round.

* SQLite: every write transaction starts with ``BEGIN IMMEDIATE`` (pysqlite's
  own transaction handling is switched off, as the SQLAlchemy documentation on
  "Serializable isolation / Savepoints / Transactional DDL" for pysqlite
  shows), so at most one writer runs at a time, across processes; others wait
  up to ``timeout`` seconds (SQLite's busy timeout) and then get
  :class:`~dpcore.exceptions.StoreLockedError`.  The file is in WAL mode, so
  readers (the gallery) never block a writer.
* PostgreSQL: every write transaction takes ``SELECT ... FOR UPDATE`` on the
  single row of ``store_meta`` (the head of the hash chains), then on the
  dataset row, with ``lock_timeout`` = ``timeout``.

Every table is hash-chained, so appends must be serialised store-wide anyway;
one lock per store (not per dataset) is what makes the chains linear.  A few
releases a minute is this store's load: the lock is never the bottleneck.

The tables, their hash chains and the schema versions are in :mod:`dpcore.store.tables`.

Simulations
-----------
A release from a seeded fit (``seed_policy.random_state`` set, or a guarantee
or flag that says "simulation"/"not private") can be undone by anyone who
knows the seed, so it is not private.  ``record`` refuses it on a dataset
unless that dataset was registered ``public=True`` (public data, e.g. for
teaching); then it is stored with ``simulation=True`` and counted like any
other release (the account shows what was nominally used).

The row limit is :data:`MAX_RELEASE_BYTES` (16 MiB of JSON text); a larger
release is refused before anything is written.
"""
from __future__ import annotations

import json
import math

import sqlalchemy as sa

from ..exceptions import (
    BudgetExceededError,
)
from .accounts import Accounts
from .records import (
    StoredRelease,
    VerifyReport,
    _check_name,
    _check_release,
    _is_simulation,
    _over,
)
from .tables import (
    _CHAINED,
    _GENESIS,
    _hashed_fields,
    _now,
    _row_hash,
    caps,
    datasets,
    draw_keys,
    ledger_entries,
    releases,
)


def _check_key(settings_key: str) -> str:
    if not isinstance(settings_key, str) or not settings_key:
        raise ValueError("settings_key must be a non-empty string (the draw's settings)")
    return settings_key


# -- the store -------------------------------------------------------------------------------
class ReleaseStore(Accounts):
    """Durable per-dataset privacy-budget account and store of published releases.

    Parameters
    ----------
    url : str or None
        ``None``: :func:`default_store_url` (``$DPCORE_STORE`` or a SQLite file
        under the user's data directory).  ``"sqlite://"`` or ``":memory:"``:
        an in-memory store for this process (tests, one browser session).
        ``"sqlite:////abs/path.db"``, or a plain file path: a SQLite file
        (created with its folder if missing).
        ``"postgresql+psycopg://user:password@host:port/dbname"``: PostgreSQL.
    timeout : float, default 30
        Seconds a writer waits for another writer (SQLite busy timeout,
        PostgreSQL ``lock_timeout``) and for a PostgreSQL server to answer a
        connection, before a clear error.
    create : bool, default True
        Create the store (file and tables) when it does not exist.  Readers
        such as the gallery pass False: a missing store is then
        :class:`~dpcore.exceptions.StoreUnavailableError`, and nothing is created.

    Raises
    ------
    StoreCorruptError
        The file is not a database, or a database that is not a dpcore store.
    StoreVersionError
        The store was written by a newer dpcore (its schema version is higher
        than :data:`T.SCHEMA_VERSION`); it is left untouched.
    StoreUnavailableError
        The PostgreSQL server cannot be reached.
    StoreLockedError
        Another writer held the store longer than ``timeout`` while it was
        being created.

    Notes
    -----
    Privacy: the store holds only released (differentially private) output
    and public inputs; reading it costs nothing.  Recording enforces basic
    sequential composition (Dwork & Roth 2014, Thm. 3.16) of the releases on
    each dataset against its cap.  See the module docstring for locking,
    hash chains and schema versions.

    Roles (issue 24): ``store.acting_as(identity)`` is a handle whose every write first checks that
    identity's role (owner, analyst, viewer: :mod:`dpcore.store.roles`) in the same transaction,
    and records the identity as who acted.  A store handle acting for nobody (this constructor) is
    the operator's or the library's and is not checked.

    Examples
    --------
    >>> store = ReleaseStore("sqlite://")
    >>> store.set_cap("taxi", 1.0)
    >>> store.spent("taxi")
    (0.0, 0.0)
    """

    # -- public API ----------------------------------------------------------------------------
    def register_dataset(self, name: str, *, fingerprint: str | None = None, bounds=None, description: str = "",
                         public: bool = False, former=()) -> None:
        """Declare a dataset (idempotent; ``set_cap`` and ``record`` also do it implicitly).

        Parameters
        ----------
        name : str
            The account's key (the app uses the dataset's name plus a fingerprint).
        fingerprint : str or None
            A content fingerprint (the app gives :func:`dpcore.store.keys.content_digest` of the parsed
            rows).  The store keeps only its HMAC under the store's secret (issue 55), so a plain
            digest of the rows is never stored, chained or shown; it is never put in a release.
        bounds : (lower, upper) or None
            Public bounds (scalars or arrays), stored as JSON.
        description : str
        public : bool, default False
            True for public data (teaching): seeded simulations may then be
            recorded.  Cannot be switched on later for a private dataset.
        former : sequence of str, optional
            The same content's fingerprints under dpcore's former canonical forms
            (:func:`dpcore.store.keys.former_digests`, issue 68): a dataset registered with one of them
            is the same content.  Only ``fingerprint`` is ever written.

        Raises
        ------
        ValueError
            If the name is empty, or a dataset of that name exists with another
            fingerprint (neither ``fingerprint`` nor a former one), or the same fingerprint (or a former one)
            is registered under another name (one
            account per data set: see :meth:`dataset_for_fingerprint`), or ``public`` would
            turn a private dataset public.
        AccessDeniedError
            A new dataset, on a handle acting for someone who is not an owner (:meth:`acting_as`).
        """
        name = _check_name(name)
        for f in ([] if fingerprint is None else [fingerprint, *former]):
            if len(str(f)) > 200:
                raise ValueError(f"a fingerprint may have at most 200 characters (a hex digest), this one has "
                                 f"{len(str(f))}")
        with self._write() as conn:
            self._ensure_dataset(conn, name, fingerprint=fingerprint, bounds=bounds, description=description,
                                 public=public, former=tuple(former))

    def set_cap(self, dataset: str, epsilon: float | None, delta: float = 0.0, *, who: str = "") -> None:
        """Set the total (epsilon, delta) that releases on ``dataset`` may spend.

        Caps are history too: each call appends a row; the latest one is in
        force.  ``epsilon=None`` records "no cap from now on".

        Parameters
        ----------
        dataset : str
        epsilon : float > 0, or None
        delta : float in [0, 1), default 0
        who : str, default ""

        Raises
        ------
        ValueError
            If epsilon is not positive and finite, delta not in [0, 1), or the
            releases already recorded exceed the new cap (a cap cannot undo
            what has been published).
        AccessDeniedError
            A handle acting for someone who is not an owner (:meth:`acting_as`); nothing is written.
        """
        dataset = _check_name(dataset)
        if epsilon is not None:
            epsilon, delta = float(epsilon), float(delta)
            if not (math.isfinite(epsilon) and epsilon > 0):
                raise ValueError(f"the total budget must be a positive number, got ε = {epsilon}")
            if not (math.isfinite(delta) and 0.0 <= delta < 1.0):
                raise ValueError(f"the total δ must be in [0, 1), got {delta}")
        else:
            delta = 0.0
        with self._write() as conn:
            self._permit(conn, "cap")
            row = self._ensure_dataset(conn, dataset)
            if epsilon is not None:
                eps, dl = self._spent(conn, row.id)
                if _over(eps, 0.0, epsilon) or _over(dl, 0.0, delta):
                    raise ValueError(
                        f"the draws already recorded on {dataset!r} (published or not) spent ε = {eps:.4g}"
                        + (f", δ = {dl:.3g}" if dl else "")
                        + f"; a total of ε = {epsilon:.4g}" + (f", δ = {delta:.3g}" if delta else "")
                        + " would be below what is already spent. Choose a total of at least what is spent.")
            self._append(conn, caps, {"dataset_id": row.id, "epsilon": epsilon, "delta": delta,
                                      "who": self._who(who), "created": _now()})

    def cap_history(self, dataset: str) -> list[dict]:
        """Every change of ``dataset``'s total, oldest first: ``time``, ``who``, ``epsilon`` (None: no cap), ``delta``.

        The identity that set each total is in ``who`` (a handle from :meth:`acting_as` records it).
        """
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            if row is None:
                return []
            rows = conn.execute(sa.select(caps).where(caps.c.dataset_id == row.id).order_by(caps.c.id)).all()
        return [{"time": r.created, "who": r.who, "epsilon": None if r.epsilon is None else float(r.epsilon),
                 "delta": float(r.delta)} for r in rows]

    def cap(self, dataset: str) -> tuple[float, float] | None:
        """The (epsilon, delta) cap in force for ``dataset``, or None if none is set."""
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            return None if row is None else self._cap(conn, row.id)

    def _cap(self, conn, dataset_id):
        r = conn.execute(sa.select(caps.c.epsilon, caps.c.delta).where(caps.c.dataset_id == dataset_id)
                         .order_by(caps.c.id.desc()).limit(1)).first()
        return None if r is None or r.epsilon is None else (float(r.epsilon), float(r.delta))

    def _spent(self, conn, dataset_id):
        rows = conn.execute(sa.select(releases.c.epsilon, releases.c.delta)
                            .where(releases.c.dataset_id == dataset_id)).all()
        return math.fsum(r.epsilon for r in rows), math.fsum(r.delta for r in rows)

    def spent(self, dataset: str) -> tuple[float, float]:
        """Sum of (epsilon, delta) over the releases recorded on ``dataset`` ((0, 0) if unknown)."""
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            return (0.0, 0.0) if row is None else self._spent(conn, row.id)

    def remaining(self, dataset: str) -> tuple[float, float] | None:
        """What is left under the cap of ``dataset``, or None when no cap is set."""
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            if row is None:
                return None
            c = self._cap(conn, row.id)
            if c is None:
                return None
            eps, dl = self._spent(conn, row.id)
            return max(c[0] - eps, 0.0), max(c[1] - dl, 0.0)

    def refusal(self, dataset: str, epsilon: float, delta: float = 0.0) -> str | None:
        """The sentence explaining why a release of (epsilon, delta) would now be refused, or None.

        A preview for interfaces (e.g. to disable a button); only
        :meth:`record` reserves, atomically.
        """
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            if row is None:
                return None
            return self._refusal(dataset, self._cap(conn, row.id), self._spent(conn, row.id), epsilon, delta)

    @staticmethod
    def _refusal(dataset, cap, spent, epsilon, delta) -> str | None:
        if cap is None:
            return None
        eps, dl = spent
        if _over(eps, float(epsilon), cap[0]):
            return (f"This release needs ε = {float(epsilon):.4g}, but only ε = {max(cap[0] - eps, 0.0):.4g} of the "
                    f"total {cap[0]:.4g} set for {dataset!r} is left (already drawn: ε = {eps:.4g}, every draw "
                    "counted whether published or not). "
                    "Nothing was recorded: choose a smaller ε or raise the total.")
        if _over(dl, float(delta), cap[1]):
            return (f"This release needs δ = {float(delta):.3g}, but only δ = {max(cap[1] - dl, 0.0):.3g} of the "
                    f"total δ = {cap[1]:.3g} set for {dataset!r} is left. Nothing was recorded: choose an "
                    "algorithm with δ = 0 or raise the total δ.")
        return None

    def record(self, dataset: str, release: dict, *, who: str = "") -> int:
        """Reserve the release's budget and store it, atomically; only then may it be shown.

        Parameters
        ----------
        dataset : str
            The account to charge (registered implicitly if new).
        release : dict
            From :func:`dpcore.release.build_release`; its
            ``privacy.epsilon_spent`` / ``delta_spent`` are charged and its
            ``ledger`` stored one row per step.
        who : str, default ""
            Who publishes it (free text, shown in the history).

        Returns
        -------
        int, the release id.

        Raises
        ------
        BudgetExceededError
            If the dataset has a cap and this release would take the sum past
            it; nothing is recorded.
        ValueError
            If ``release`` is not a dpcore release, or is a seeded simulation
            (not private) on a dataset not declared public.
        ReleaseTooLargeError
            If its JSON text exceeds :data:`MAX_RELEASE_BYTES`.
        StoreLockedError, StoreUnavailableError, StoreError
            If the database cannot take the write; nothing is recorded.
        AccessDeniedError
            A handle acting for a viewer (:meth:`acting_as`), or for an analyst on a dataset not yet
            registered by an owner; nothing is recorded.

        Notes
        -----
        One transaction: lock, read cap and spent, check, insert release and
        ledger entries, commit (module docstring).  Basic sequential
        composition (Dwork & Roth 2014, Thm. 3.16).

        Examples
        --------
        An in-memory store (a file or database URL in production) with a cap of 2:

        >>> from dpcore.store import ReleaseStore
        >>> import numpy as np
        >>> from dpcore.algorithms import DPLloyd
        >>> from dpcore.release import build_release
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
        >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
        >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
        >>> store = ReleaseStore(":memory:")
        >>> store.set_cap("demo", 2.0)
        >>> rid = store.record("demo", rel)
        >>> isinstance(rid, int), store.spent("demo")[0] <= 1.0
        (True, True)
        """
        return self._record(dataset, release, who=who, settings_key=None, new_draw=True)[0]

    def record_draw(self, dataset: str, release: dict, *, settings_key: str, who: str = "",
                    new_draw: bool = False) -> tuple[int, bool]:
        """Record a draw of one setting, or find the draw another session has just recorded for it.

        One transaction under the store's write lock: when ``new_draw`` is False and a draw with the
        same ``settings_key`` is already recorded on ``dataset``, its id comes back and nothing is
        charged (``release`` is discarded unseen: the caller shows the stored one).  Otherwise the
        release is recorded as :meth:`record` does and tied to the key.  So sessions that open the
        same page at once cost at most one draw (issue 24); "New draw" passes ``new_draw=True``.

        Parameters
        ----------
        dataset : str
        release : dict
            As for :meth:`record`.
        settings_key : str
            What identifies the setting (dataset, data fingerprint, algorithm, parameters, epsilon,
            delta, bounds: :attr:`dpcore.store.draw.Settings.key`); stored as its HMAC-SHA256 under the
            store's secret (issue 55).
        who : str
            Who drew it.
        new_draw : bool, default False
            Record a fresh draw even when one of this setting exists (it spends again).

        Returns
        -------
        (release_id, recorded) : (int, bool)
            ``recorded`` is False when an existing draw was returned (nothing spent).

        Raises
        ------
        As :meth:`record`.
        """
        return self._record(dataset, release, who=who, settings_key=self._keyed("settings", _check_key(settings_key)),
                            new_draw=new_draw)

    def record_refusal(self, dataset: str, refusal: dict, *, who: str = "") -> int:
        """Record what a fit spent before it refused (issue 24): the account then agrees with what was seen.

        A refusal decided on a noisy count (the coreset's infeasibility) is an output of that count's
        mechanism.  It is charged under the cap like a release, listed in :meth:`history` and
        :meth:`releases` (its body's ``format`` is ``dpcore-refusal/1``), and can never be published.

        Parameters
        ----------
        dataset : str
        refusal : dict
            From :func:`dpcore.release.build_refusal`.
        who : str

        Returns
        -------
        int, its id in the releases table.

        Raises
        ------
        ValueError
            Not a refusal record.
        BudgetExceededError
            The spend would pass the cap (the fit could not have started: the app checks first).
        """
        return self._record(dataset, refusal, who=who, settings_key=None, new_draw=True, refusal=True)[0]

    def _record(self, dataset: str, release: dict, *, who: str, settings_key: str | None,
                new_draw: bool, refusal: bool = False) -> tuple[int, bool]:
        dataset = _check_name(dataset)
        eps, dl, body, entries = _check_release(release, refusal=refusal)
        sim = _is_simulation(release)
        with self._write() as conn:
            self._permit(conn, "draw")
            row = self._ensure_dataset(conn, dataset)
            if settings_key is not None and not new_draw:
                found = conn.execute(sa.select(draw_keys.c.release_id)
                                     .where(draw_keys.c.dataset_id == row.id, draw_keys.c.settings_key == settings_key)
                                     .order_by(draw_keys.c.id.desc()).limit(1)).scalar()
                if found is not None:
                    return int(found), False
            if sim and not row.public:
                raise ValueError(
                    f"this release is a simulation (seeded noise, random_state = "
                    f"{release.get('seed_policy', {}).get('random_state')}): anyone who knows the seed can remove "
                    f"the noise, so it is not private and cannot be published on {dataset!r}. Refit with "
                    "random_state=None, or, if the data is public, register it with public=True.")
            why = self._refusal(dataset, self._cap(conn, row.id), self._spent(conn, row.id), eps, dl)
            if why is not None:
                raise BudgetExceededError(why)
            rid, _ = self._append(conn, releases, {
                "dataset_id": row.id, "created": _now(), "who": self._who(who),
                "algorithm": str(release["algorithm"]["key"]),
                "version": str(release.get("package", {}).get("version", "")),
                "guarantee": str(release["privacy"].get("guarantee", "")), "epsilon": eps, "delta": dl,
                "simulation": sim, "body": body})
            for i, e in enumerate(entries):
                self._append(conn, ledger_entries, dict(e, release_id=rid, position=i))
            if settings_key is not None:
                self._append(conn, draw_keys, {"release_id": rid, "dataset_id": row.id, "settings_key": settings_key})
            if self._before_commit is not None:
                self._before_commit()
            return rid, True

    def releases(self, dataset: str | None = None) -> list[StoredRelease]:
        """The releases recorded (on ``dataset``, or on all), oldest first."""
        return self._select_releases(dataset=dataset)

    def history(self, dataset: str) -> list[dict]:
        """Rows for a table of the releases on ``dataset``, oldest first.

        Returns
        -------
        list of dict with keys ``id``, ``time`` (ISO UTC), ``who``,
        ``algorithm``, ``epsilon``, ``delta``, ``total_epsilon``,
        ``total_delta`` (running sums including this release),
        ``cap_epsilon``, ``cap_delta`` (the cap in force when it was recorded,
        None if none) and ``simulation``.
        """
        with self._read() as conn:
            row = self._dataset_row(conn, dataset)
            if row is None:
                return []
            rels = conn.execute(sa.select(releases.c.id, releases.c.created, releases.c.who, releases.c.algorithm,
                                          releases.c.epsilon, releases.c.delta, releases.c.simulation)
                                .where(releases.c.dataset_id == row.id).order_by(releases.c.id)).all()
            cap_rows = conn.execute(sa.select(caps.c.created, caps.c.epsilon, caps.c.delta)
                                    .where(caps.c.dataset_id == row.id).order_by(caps.c.id)).all()
        out, te, td, ci, cap = [], [], [], 0, None
        for r in rels:
            while ci < len(cap_rows) and cap_rows[ci].created <= r.created:
                cap = cap_rows[ci]
                ci += 1
            te.append(float(r.epsilon))
            td.append(float(r.delta))
            cap_eps = float(cap.epsilon) if cap is not None and cap.epsilon is not None else None
            cap_delta = float(cap.delta) if cap is not None and cap_eps is not None else None
            out.append({"id": r.id, "time": r.created, "who": r.who, "algorithm": r.algorithm,
                        "epsilon": float(r.epsilon), "delta": float(r.delta), "total_epsilon": math.fsum(te),
                        "total_delta": math.fsum(td), "cap_epsilon": cap_eps, "cap_delta": cap_delta,
                        "simulation": bool(r.simulation)})
        return out

    def datasets(self) -> list[str]:
        """Names of the datasets in the store, sorted."""
        with self._read() as conn:
            return sorted(conn.execute(sa.select(datasets.c.name)).scalars())

    def dataset_info(self, dataset: str) -> dict | None:
        """The dataset's declaration: name, fingerprint, bounds (dict or None), description, public, created."""
        with self._read() as conn:
            r = self._dataset_row(conn, dataset)
        if r is None:
            return None
        return {"name": r.name, "fingerprint": r.fingerprint, "bounds": json.loads(r.bounds) if r.bounds else None,
                "description": r.description, "public": bool(r.public), "created": r.created}

    def verify(self) -> VerifyReport:
        """Walk every table's hash chain; report the first broken link.

        Returns
        -------
        VerifyReport
            ``ok`` (and truthiness) True when every row's ``prev_hash`` is the
            previous row's ``row_hash`` and every ``row_hash`` matches the row's
            content; else ``first_broken = (table, id, reason)``.
        """
        checked, heads = 0, {}  # type: tuple[int, dict[str, str]]
        with self._read() as conn:
            for table in _CHAINED:
                prev = _GENESIS
                for r in conn.execute(sa.select(table).order_by(table.c.id)):
                    checked += 1
                    if r.prev_hash != prev:
                        return VerifyReport(False, checked, (table.name, r.id, "its prev_hash is not the hash of the "
                                                             "row before it: a row was deleted or inserted"), heads)
                    if _row_hash(prev, _hashed_fields(table, r)) != r.row_hash:
                        return VerifyReport(False, checked, (table.name, r.id, "its content does not match its "
                                                             "hash: the row was changed"), heads)
                    prev = r.row_hash
                heads[table.name] = self._public_head(table.name, prev, conn)
        return VerifyReport(True, checked, None, heads)
