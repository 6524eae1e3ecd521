"""The store's connection: engines for SQLite and PostgreSQL, transactions, the write lock, errors as sentences.

* SQLite: every write transaction starts with ``BEGIN IMMEDIATE`` (pysqlite's own transaction
  handling is switched off), so at most one writer runs at a time, across processes; others wait up to
  ``timeout`` seconds and then get :class:`~dpcore.exceptions.StoreLockedError`.  WAL mode, so readers
  never block a writer.
* PostgreSQL: every write transaction takes ``SELECT ... FOR UPDATE`` on the single ``store_meta`` row,
  with ``lock_timeout`` = ``timeout``.

:class:`StoreConnection` holds these; :class:`~dpcore.store.release_store.ReleaseStore` adds the
account (datasets, caps, releases) on top.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from ..exceptions import (
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    StoreVersionError,
)
from . import tables as T  # SCHEMA_VERSION and _MIGRATIONS read through the module (tests patch them)
from .keys import keyed
from .tables import (
    _GENESIS,
    ENV_VAR,
    _hashed_fields,
    _meta,
    _new_secret,
    _now,
    _row_hash,
    default_store_url,
    schema_version,
    store_meta,
    store_secret,
)

#: Seconds a writer waits for another writer's lock before StoreLockedError.
DEFAULT_TIMEOUT = 30.0


class StoreConnection:
    """Engine, transactions and schema checks of a release store (the base of :class:`ReleaseStore`).

    See :class:`~dpcore.store.release_store.ReleaseStore` for the parameters.
    """

    def __init__(self, url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT, create: bool = True):
        raw = default_store_url() if url is None else str(url).strip()
        self.timeout = float(timeout)
        self.create = bool(create)
        self._lock = threading.RLock()  # one store object may serve several Streamlit sessions (threads)
        self._before_commit = None      # test seam: called inside record's transaction, before commit
        self._secret_cache: dict = {}   # the store's key once read; shared by acting_as handles (a shallow copy)
        self.memory = raw in (":memory:", "sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://")
        if self.memory:
            self.url = "sqlite://"
        elif "://" not in raw:
            self.url = "sqlite:///" + str(Path(raw).expanduser().resolve())
        else:
            self.url = raw
        try:
            parsed = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError as exc:
            raise StoreError(f"the store URL {raw!r} is not a database URL: use a file path, "
                             "sqlite:////absolute/path.db or postgresql+psycopg://user@host:port/dbname") from exc
        self.dialect = parsed.get_backend_name()
        self._where = (f"the store file {parsed.database}" if self.dialect == "sqlite" and not self.memory else
                       "the in-memory store" if self.memory else
                       f"the {self.dialect} store at {parsed.host or 'localhost'}:{parsed.port or ''}"
                       f"/{parsed.database or ''}")
        if self.dialect == "sqlite":
            self._engine = self._sqlite_engine(parsed)
        elif self.dialect == "postgresql":
            self._engine = sa.create_engine(parsed, connect_args={"connect_timeout": max(1, int(self.timeout))},
                                            pool_pre_ping=True)
        else:
            raise StoreError(f"dpcore stores releases in SQLite or PostgreSQL, not {self.dialect!r}: "
                             "use sqlite:///path.db or postgresql+psycopg://...")
        try:
            self._open()
        except BaseException:
            self._engine.dispose()
            raise

    # -- engine and transactions ------------------------------------------------------------
    def _sqlite_engine(self, parsed):
        if self.memory:
            eng = sa.create_engine("sqlite://", poolclass=StaticPool,
                                   connect_args={"check_same_thread": False})
        else:
            path = Path(parsed.database)
            if not path.exists():
                if not self.create:
                    raise StoreUnavailableError(
                        f"there is no store file at {path}: nothing has been published there yet. Set "
                        f"{ENV_VAR} to the store the curator's app writes to.")
                path.parent.mkdir(parents=True, exist_ok=True)
            eng = sa.create_engine(parsed, connect_args={"timeout": self.timeout, "check_same_thread": False})

        @event.listens_for(eng, "connect")
        def _connect(dbapi_conn, _record):
            # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite would defer it).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            cur.execute("PRAGMA foreign_keys = ON")
            if not self.memory:
                cur.execute("PRAGMA synchronous = FULL")  # per connection; writes nothing to the file
            cur.close()

        @event.listens_for(eng, "begin")
        def _begin(conn):
            # Writers take the database's RESERVED lock at BEGIN: no two can read the same
            # "spent so far" and both commit (reserve before reveal, across processes).
            write = conn.get_execution_options().get("dpcore_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
        return eng

    @contextmanager
    def _errors(self):
        """Turn driver errors into store errors with a sentence saying what to do."""
        try:
            yield
        except StoreError:
            raise
        except sa.exc.DBAPIError as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc) -> StoreError:
        msg = str(getattr(exc, "orig", exc)).lower()
        code = getattr(getattr(exc, "orig", None), "sqlstate", None)
        if "database is locked" in msg or "database table is locked" in msg or code in ("55P03",):
            return StoreLockedError(
                f"{self._where} is busy: another writer held it for more than {self.timeout:g} s. Nothing was "
                "recorded; try again in a moment, or give ReleaseStore a longer timeout.")
        if "not a database" in msg or "malformed" in msg or "file is encrypted" in msg:
            return StoreCorruptError(
                f"{self._where} is not a readable SQLite database (corrupt or another kind of file); it was left "
                "untouched. Restore it from a backup, or point DPCORE_STORE at another file.")
        if self.dialect == "postgresql" and (isinstance(exc, sa.exc.OperationalError) and code is None
                                             or "connection" in msg or "could not connect" in msg):
            return StoreUnavailableError(
                f"cannot reach {self._where} ({str(getattr(exc, 'orig', exc)).strip().splitlines()[0]}). Check "
                "that the server is running and that DPCORE_STORE names the right host, port, database and "
                "user; nothing was recorded.")
        if "unable to open database file" in msg:
            return StoreUnavailableError(
                f"cannot open {self._where}: check that its folder exists and is writable; nothing was recorded.")
        return StoreError(f"{self._where} failed: {str(getattr(exc, 'orig', exc)).strip()}. Nothing was recorded.")

    @contextmanager
    def _read(self):
        with self._lock, self._errors(), self._engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def _write(self):
        """One write transaction holding the store-wide lock; commits on exit, rolls back on error."""
        with self._lock, self._errors(), \
                self._engine.connect().execution_options(dpcore_write=True) as conn, conn.begin():
            if self.dialect == "postgresql":
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = {int(self.timeout * 1000)}")
            conn.execute(sa.select(store_meta.c.id).where(store_meta.c.id == 1).with_for_update())
            yield conn

    # -- opening: create or check the schema ------------------------------------------------
    def _open(self):
        with self._lock, self._errors():
            insp_tables = set(sa.inspect(self._engine).get_table_names())
            if "schema_version" in insp_tables:
                self._check_version(insp_tables)
                return
            if not self.create:
                raise StoreUnavailableError(f"{self._where} holds no dpcore store yet: nothing has been published "
                                            f"there. Set {ENV_VAR} to the store the curator's app writes to.")
            if insp_tables:
                raise StoreCorruptError(
                    f"{self._where} is a database but not a dpcore store (it has tables "
                    f"{', '.join(sorted(insp_tables)[:5])} and no schema_version); it was left untouched. "
                    "Point DPCORE_STORE at an empty database or a new file.")
            if self.dialect == "sqlite" and not self.memory:
                # WAL (readers never block the writer) is a property of the file, set once at creation,
                # so that opening a file that is not (yet) ours never writes to it.
                with self._engine.connect() as conn:  # on the driver connection: outside any transaction
                    conn.connection.driver_connection.execute("PRAGMA journal_mode = WAL")
            with self._engine.connect().execution_options(dpcore_write=True) as conn, conn.begin():
                # Two first openers at once: one creates, the other waits (BEGIN IMMEDIATE on SQLite,
                # an advisory lock on PostgreSQL) and then finds the tables there.
                if self.dialect == "postgresql":
                    conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7312029)")
                if sa.inspect(conn).has_table("schema_version"):
                    return
                _meta.create_all(conn)
                conn.execute(schema_version.insert().values(version=T.SCHEMA_VERSION, applied=_now()))
                conn.execute(store_meta.insert().values(id=1, created=_now()))
                _new_secret(conn)

    def _check_version(self, tables):
        with self._engine.connect() as conn, conn.begin():
            version = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
        if version is None:
            raise StoreCorruptError(f"{self._where} has an empty schema_version table; it was left untouched.")
        if version > T.SCHEMA_VERSION:
            raise StoreVersionError(
                f"{self._where} was written by a newer dpcore (store schema version {version}; this dpcore reads "
                f"up to {T.SCHEMA_VERSION}). It was left untouched: upgrade dpcore to use it.")
        if version < T.SCHEMA_VERSION:
            with self._engine.connect().execution_options(dpcore_write=True) as conn, conn.begin():
                # Under the write lock, and re-read: another opener may have migrated meanwhile.
                conn.execute(sa.select(store_meta.c.id).where(store_meta.c.id == 1).with_for_update())
                v = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar()
                while v < T.SCHEMA_VERSION:
                    T._MIGRATIONS[v](conn)
                    v += 1
                    conn.execute(schema_version.insert().values(version=v, applied=_now()))
                tables = sa.inspect(conn).get_table_names()   # a migration may add tables
        missing = {t.name for t in _meta.sorted_tables} - set(tables)
        if missing:
            raise StoreCorruptError(f"{self._where} lacks the tables {', '.join(sorted(missing))}; it was left "
                                    "untouched. Restore it from a backup.")

    # -- keyed identifiers (issue 55) ------------------------------------------------------------
    def _secret(self, conn=None) -> str:
        """The store's secret key (hex), read once; never returned by any public method."""
        if "key" not in self._secret_cache:
            q = sa.select(store_secret.c.secret, store_secret.c.legacy_datasets).where(store_secret.c.id == 1)
            if conn is None:
                with self._read() as c:
                    row = c.execute(q).first()
            else:
                row = conn.execute(q).first()
            if row is None or not row.secret:
                raise StoreCorruptError(f"{self._where} has lost its secret key (the store_secret table is empty); "
                                        "its fingerprints can no longer be matched. Restore it from a backup.")
            self._secret_cache["legacy"] = int(row.legacy_datasets or 0)
            self._secret_cache["key"] = row.secret
        return self._secret_cache["key"]

    def _legacy_dataset(self, dataset_id: int, conn=None) -> bool:
        """True for a data set registered before version 4 (its fingerprint is an older plain digest)."""
        self._secret(conn)
        return int(dataset_id) <= self._secret_cache["legacy"]

    def _keyed(self, purpose: str, value: str | bytes, conn=None) -> str:
        """HMAC-SHA256 of ``value`` under the store's secret (:func:`dpcore.store.keys.keyed`)."""
        return keyed(self._secret(conn), purpose, value)

    # -- chained inserts -----------------------------------------------------------------------
    def _append(self, conn, table: sa.Table, values: dict) -> tuple[int, str]:
        """Insert a row at the end of ``table``'s hash chain (caller holds the write lock)."""
        prev = conn.execute(sa.select(table.c.row_hash).order_by(table.c.id.desc()).limit(1)).scalar()
        prev = prev or _GENESIS
        last_id = conn.execute(sa.select(sa.func.max(table.c.id))).scalar() or 0
        values = dict(values, id=last_id + 1)  # explicit ids: the chain order is the id order
        h = _row_hash(prev, _hashed_fields(table, values))
        conn.execute(table.insert().values(**values, prev_hash=prev, row_hash=h))
        return values["id"], h

    def close(self) -> None:
        """Release the database connections (an in-memory store is gone after this)."""
        self._engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"ReleaseStore({self._engine.url.render_as_string(hide_password=True)!r})"
