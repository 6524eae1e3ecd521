"""The release store's tables: schema, hash chains and schema versions (SQLAlchemy Core).

Append-only, tamper-evident
---------------------------
There is no update or delete API.  Every row of ``datasets``, ``caps``,
``releases``, ``ledger_entries``, ``draw_keys``, ``publications`` and
``grants`` carries ``prev_hash`` (the ``row_hash`` of the row before it in
the same table, 64 zeros for the first) and ``row_hash`` = SHA-256
of ``prev_hash`` and the row's canonical JSON.  :meth:`ReleaseStore.verify`
walks the chains and names the first broken link: a row changed, inserted or
deleted in the middle by raw SQL.  Someone with write access to the database
could rewrite a whole chain; the chain heads (``VerifyReport.heads``, shown by
the gallery) are what to write down or publish elsewhere to catch that too,
and also a truncated tail.

Keyed values (issue 55)
-----------------------
Since version 4 the store keeps a secret key (``store_secret``, one row, outside
the chains, never exported or shown).  Fingerprints and settings keys are stored
as HMAC-SHA256 under it, and the heads handed out are keyed too
(:mod:`dpcore.store.keys`): nothing in a row or a head is a plain function of the
data, so knowing every row but one does not tell which data the store holds.

Schema versions
---------------
A ``schema_version`` table (one row per applied version) instead of Alembic:
the schema is a few append-only tables created by this module, the store is
opened by library code on users' machines (no ``alembic upgrade`` step anyone
would run), and a migration here is a short function in :data:`_MIGRATIONS`
run inside the opening transaction.  A store whose version is *newer* than
:data:`SCHEMA_VERSION` is refused with :class:`~dpcore.exceptions.StoreVersionError`
and not written to.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import secrets
from pathlib import Path

import sqlalchemy as sa

# -- schema ----------------------------------------------------------------------------------
_meta = sa.MetaData()
_hash_cols = lambda: [sa.Column("prev_hash", sa.String(64), nullable=False),  # noqa: E731
                      sa.Column("row_hash", sa.String(64), nullable=False)]
schema_version = sa.Table("schema_version", _meta,
                          sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
                          sa.Column("applied", sa.String(40), nullable=False))
store_meta = sa.Table("store_meta", _meta,  # one row: the store-wide write lock (FOR UPDATE)
                      sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                      sa.Column("created", sa.String(40), nullable=False))
datasets = sa.Table("datasets", _meta,
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("name", sa.String(400), nullable=False, unique=True),
                    sa.Column("fingerprint", sa.String(200)),
                    sa.Column("bounds", sa.Text),  # JSON {"lower": [...], "upper": [...]} or null
                    sa.Column("description", sa.Text, nullable=False),
                    sa.Column("public", sa.Boolean, nullable=False),
                    sa.Column("created", sa.String(40), nullable=False),
                    *_hash_cols())
caps = sa.Table("caps", _meta,
                sa.Column("id", sa.Integer, primary_key=True),
                sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False, index=True),
                sa.Column("epsilon", sa.Float(53)),  # null: no cap from here on
                sa.Column("delta", sa.Float(53), nullable=False),
                sa.Column("who", sa.String(200), nullable=False),
                sa.Column("created", sa.String(40), nullable=False),
                *_hash_cols())
releases = sa.Table("releases", _meta,
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False, index=True),
                    sa.Column("created", sa.String(40), nullable=False),
                    sa.Column("who", sa.String(200), nullable=False),
                    sa.Column("algorithm", sa.String(100), nullable=False),
                    sa.Column("version", sa.String(40), nullable=False),
                    sa.Column("guarantee", sa.Text, nullable=False),
                    sa.Column("epsilon", sa.Float(53), nullable=False),
                    sa.Column("delta", sa.Float(53), nullable=False),
                    sa.Column("simulation", sa.Boolean, nullable=False),
                    sa.Column("body", sa.Text, nullable=False),  # the release, canonical JSON
                    *_hash_cols())
ledger_entries = sa.Table("ledger_entries", _meta,
                          sa.Column("id", sa.Integer, primary_key=True),
                          sa.Column("release_id", sa.Integer, sa.ForeignKey("releases.id"), nullable=False,
                                    index=True),
                          sa.Column("position", sa.Integer, nullable=False),
                          sa.Column("name", sa.Text, nullable=False),
                          sa.Column("mechanism", sa.Text, nullable=False),
                          sa.Column("sensitivity", sa.Float(53)),
                          sa.Column("epsilon", sa.Float(53), nullable=False),
                          sa.Column("delta", sa.Float(53), nullable=False),
                          *_hash_cols())

# Version 2 (issues 24 and 31): a draw's settings key, so that sessions drawing the same settings at once
# record one draw, and publications, so that a draw is not a publication.
draw_keys = sa.Table("draw_keys", _meta,
                     sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("release_id", sa.Integer, sa.ForeignKey("releases.id"), nullable=False),
                     sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
                     sa.Column("settings_key", sa.String(64), nullable=False),  # SHA-256 of the settings
                     *_hash_cols(),
                     sa.Index("ix_draw_keys_lookup", "dataset_id", "settings_key"))
publications = sa.Table("publications", _meta,
                        sa.Column("id", sa.Integer, primary_key=True),
                        sa.Column("release_id", sa.Integer, sa.ForeignKey("releases.id"), nullable=False,
                                  unique=True),
                        sa.Column("who", sa.String(200), nullable=False),
                        sa.Column("created", sa.String(40), nullable=False),
                        *_hash_cols())

# Version 3 (issue 24): who may do what.  The latest row for an identity is its role; every change is a
# new row, so the chain is the history of who was granted what, by whom and when.
grants = sa.Table("grants", _meta,
                  sa.Column("id", sa.Integer, primary_key=True),
                  sa.Column("identity", sa.String(200), nullable=False, index=True),
                  sa.Column("role", sa.String(20), nullable=False),      # owner | analyst | viewer
                  sa.Column("may_publish", sa.Boolean, nullable=False),  # analysts: the owner allows publishing
                  sa.Column("who", sa.String(200), nullable=False),      # who granted it
                  sa.Column("created", sa.String(40), nullable=False),
                  *_hash_cols())


# Version 4 (issue 55): the store's secret key, one row, never chained, exported or shown.  Every
# data-derived hash the store keeps (content fingerprints, settings keys) is an HMAC-SHA256 under it
# (:mod:`dpcore.store.keys`), and the chain heads it hands out are keyed too: someone who knows every
# row but one cannot recompute them to tell which data the store holds.
store_secret = sa.Table("store_secret", _meta,
                        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                        sa.Column("secret", sa.String(64), nullable=False),  # 32 random bytes, hex
                        # Datasets with an id up to this one were registered before version 4: their
                        # fingerprints are an older dpcore's plain digests and cannot be compared with keyed ones.
                        sa.Column("legacy_datasets", sa.Integer, nullable=False),
                        sa.Column("created", sa.String(40), nullable=False))


#: Version of the tables this module writes; see :data:`_MIGRATIONS`.
SCHEMA_VERSION = 4


#: Name of the environment variable holding the store URL.
ENV_VAR = "DPCORE_STORE"


_GENESIS = "0" * 64


_CHAINED = (datasets, caps, releases, ledger_entries, draw_keys, publications, grants)


def _to_v2(conn) -> None:
    """Version 1 -> 2: the draw-key and publication tables (empty: no draw of a version-1 store was published)."""
    draw_keys.create(conn)
    publications.create(conn)


def _to_v3(conn) -> None:
    """Version 2 -> 3: the grants table, empty (a store without grants is a single-user store)."""
    grants.create(conn)


def _new_secret(conn) -> None:
    """Generate the store's secret key (32 bytes from the OS's CSPRNG) and keep it in ``store_secret``."""
    legacy = conn.execute(sa.select(sa.func.max(datasets.c.id))).scalar() or 0
    conn.execute(store_secret.insert().values(id=1, secret=secrets.token_hex(32), legacy_datasets=int(legacy),
                                              created=_now()))


def _to_v4(conn) -> None:
    """Version 3 -> 4: the store's secret key (issue 55).

    Rows written before keep the values they were written with (an append-only chain cannot be
    rewritten without breaking every head written down); new fingerprints and settings keys are
    keyed, and the heads handed out (:attr:`VerifyReport.heads`) are keyed from now on.  The data
    sets registered before are remembered (``legacy_datasets``): their plain fingerprints are not
    compared with keyed ones, so their accounts keep working under their names.
    """
    store_secret.create(conn)
    _new_secret(conn)


#: ``{from_version: function(connection)}`` upgrading a store by one version, run in order
#: inside the opening transaction.
_MIGRATIONS: dict = {1: _to_v2, 2: _to_v3, 3: _to_v4}


# -- helpers ---------------------------------------------------------------------------------
def default_store_url() -> str:
    """The store URL used when none is given.

    ``$DPCORE_STORE`` when set, else a SQLite file ``releases.db`` in the
    user's data directory for ``dpcore`` (``platformdirs.user_data_dir``:
    ``~/.local/share/dpcore/releases.db`` on Linux,
    ``~/Library/Application Support/dpcore/releases.db`` on macOS,
    ``%LOCALAPPDATA%\\dpcore\\releases.db`` on Windows).

    Returns
    -------
    str, an SQLAlchemy URL.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    import platformdirs
    return "sqlite:///" + str(Path(platformdirs.user_data_dir("dpcore", appauthor=False)) / "releases.db")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def _canon(obj) -> str:
    # Sorted keys, no whitespace, floats by repr (exact round trip): the same dict gives the same text.
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _row_hash(prev: str, fields: dict) -> str:
    return hashlib.sha256((prev + "\n" + _canon(fields)).encode("utf-8")).hexdigest()


def _hashed_fields(table: sa.Table, row) -> dict:
    """The row's columns that its hash covers (all but id and the hash columns), normalised."""
    m = row._mapping if hasattr(row, "_mapping") else row
    out = {}
    for c in table.columns:
        if c.name in ("id", "prev_hash", "row_hash"):
            continue
        v = m[c.name]
        if isinstance(c.type, sa.Boolean):
            v = bool(v)
        elif isinstance(c.type, sa.Float) and v is not None:
            v = float(v)
        out[c.name] = v
    out["id"] = int(m["id"]) if "id" in m and m["id"] is not None else None
    return out
