"""dpcore.store on SQLite and on a real PostgreSQL (started by the ``pg_server`` fixture).

Every store test runs on both back ends: the account survives reopening, the cap holds against
8 racing OS processes, a writer killed with SIGKILL inside its transaction leaves the store
consistent, tampering is named by verify(), and each bad input is a clear error that loses nothing.
"""
from __future__ import annotations

import copy
import inspect
import multiprocessing as mp
import os
import signal
import sqlite3
import time
import warnings

import numpy as np
import pytest
import sqlalchemy as sa
import store_workers

from dpcore import ALGORITHMS
from dpcore.exceptions import (
    BudgetExceededError,
    PrivacyLeakWarning,
    ReleaseTooLargeError,
    StoreCorruptError,
    StoreLockedError,
    StoreUnavailableError,
    StoreVersionError,
)
from dpcore.release import build_release
from dpcore.store import MAX_RELEASE_BYTES, SCHEMA_VERSION, ReleaseStore, StoredRelease, default_store_url
from dpcore.store.keys import content_digest


def _data():
    rng = np.random.default_rng(7)
    centres = np.array([[2.0, 2.0], [8.0, 3.0], [5.0, 8.0]])
    return np.clip(np.concatenate([rng.normal(c, 0.5, (700, 2)) for c in centres]), 0, 10)


def _private_release(epsilon: float, algorithm: str = "dplloyd", **params) -> dict:
    """A real release: a private fit (random_state=None, OS-entropy noise) with public bounds."""
    est = ALGORITHMS[algorithm](epsilon=epsilon, bounds=(0.0, 10.0), n_clusters=3, **params).fit(_data())
    return build_release(est, algorithm=algorithm, dataset="blobs", columns=["x", "y"])


def _seeded_release() -> dict:
    """A simulation: a seeded fit, exported with simulation=True where build_release asks for it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        est = ALGORITHMS["dplloyd"](epsilon=0.5, bounds=(0.0, 10.0), n_clusters=3, random_state=0).fit(_data())
    kw = {"simulation": True} if "simulation" in inspect.signature(build_release).parameters else {}
    return build_release(est, algorithm="dplloyd", dataset="blobs", **kw)


@pytest.fixture(scope="module")
def rel():
    return _private_release(0.5)


@pytest.fixture(scope="module")
def rel_tenth():
    return _private_release(0.1)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A fresh, empty store URL: a SQLite file, or a new database on the throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_server").new_database()


def _raw(url: str, sql: str, params: dict | None = None):
    """Run raw SQL behind the store's back (what an attacker or a broken tool would do)."""
    eng = sa.create_engine(url)
    try:
        with eng.begin() as conn:
            res = conn.execute(sa.text(sql), params or {})
            return res.all() if res.returns_rows else None
    finally:
        eng.dispose()


# -- the account ----------------------------------------------------------------------------------
def test_record_spent_and_reopen(url, rel):
    ledger_eps = sum(e["epsilon"] for e in rel["ledger"])
    with ReleaseStore(url) as store:
        store.register_dataset("blobs", fingerprint=content_digest(_data()), bounds=([0, 0], [10, 10]),
                               description="test blobs")
        store.set_cap("blobs", 2.0)
        ids = [store.record("blobs", rel, who="ana"), store.record("blobs", rel, who="ben")]
        assert ids == sorted(ids) and len(set(ids)) == 2
        eps, delta = store.spent("blobs")
        assert eps == pytest.approx(2 * ledger_eps) and delta == 0.0
        assert store.remaining("blobs") == pytest.approx((2.0 - 2 * ledger_eps, 0.0))
    # A new process-level object (a restart) sees everything.
    with ReleaseStore(url) as store:
        assert store.datasets() == ["blobs"]
        assert store.cap("blobs") == (2.0, 0.0)
        assert store.spent("blobs")[0] == pytest.approx(2 * ledger_eps)
        stored = store.releases("blobs")
        assert [s.id for s in stored] == ids and [s.who for s in stored] == ["ana", "ben"]
        assert all(isinstance(s, StoredRelease) and s.release == rel and s.algorithm == "dplloyd" for s in stored)
        assert all(s.created.tzinfo is not None for s in stored)
        hist = store.history("blobs")
        assert [h["total_epsilon"] for h in hist] == pytest.approx([ledger_eps, 2 * ledger_eps])
        assert all(h["cap_epsilon"] == 2.0 for h in hist)
        info = store.dataset_info("blobs")
        # Kept keyed (issue 55), under a secret that survives the restart: never the rows' plain digest.
        assert info["fingerprint"] == store.content_key(_data()) != content_digest(_data())
        assert info["bounds"] == {"lower": [0, 0], "upper": [10, 10]}
        n_ledger = _raw(url, "SELECT count(*) FROM ledger_entries")[0][0]
        assert n_ledger == 2 * len(rel["ledger"])  # one row per release ledger step
        assert store.verify()


def test_over_cap_is_refused_with_a_sentence_and_nothing_recorded(url, rel):
    with ReleaseStore(url) as store:
        store.set_cap("blobs", 0.8)
        store.record("blobs", rel)
        with pytest.raises(BudgetExceededError, match=r"needs ε = 0.5, but only ε = 0.3 of the total 0.8"):
            store.record("blobs", rel)
        assert store.refusal("blobs", 0.5) is not None and store.refusal("blobs", 0.3) is None
        assert len(store.releases("blobs")) == 1 and store.spent("blobs")[0] == pytest.approx(0.5)
        assert store.verify()


def test_delta_cap(url):
    coreset = _private_release(80.0, "coreset", delta=1e-6)  # t_min needs a large ε on 2,100 points
    with ReleaseStore(url) as store:
        d = coreset["privacy"]["delta_spent"]
        assert d > 0
        store.set_cap("blobs", 1000.0, 1.5 * d)  # ε is plentiful: δ is what refuses the second release
        store.record("blobs", coreset)
        with pytest.raises(BudgetExceededError, match="needs δ = .* choose an algorithm with δ = 0"):
            store.record("blobs", coreset)
        assert store.spent("blobs")[1] == pytest.approx(d)


def test_caps_are_append_only_history_and_never_below_spent(url, rel):
    with ReleaseStore(url) as store:
        assert store.cap("blobs") is None and store.remaining("blobs") is None
        store.record("blobs", rel)  # no cap: recorded, counted
        with pytest.raises(ValueError, match="below what is already spent"):
            store.set_cap("blobs", 0.4)
        store.set_cap("blobs", 0.5)  # exactly what is spent is allowed
        assert store.remaining("blobs") == pytest.approx((0.0, 0.0))
        store.set_cap("blobs", 3.0)
        store.set_cap("blobs", None)  # "no cap from now on" is a row too
        assert store.cap("blobs") is None
        for bad in (0.0, -1.0, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="positive"):
                store.set_cap("blobs", bad)
        with pytest.raises(ValueError, match="δ"):
            store.set_cap("blobs", 1.0, 1.0)
    assert _raw(url, "SELECT count(*) FROM caps")[0][0] == 3


def test_simulation_refused_unless_dataset_is_public(url):
    sim = _seeded_release()
    with ReleaseStore(url) as store:
        store.register_dataset("taxi")
        with pytest.raises(ValueError, match="simulation .* not private"):
            store.record("taxi", sim)
        assert store.releases() == [] and store.spent("taxi") == (0.0, 0.0)
        store.register_dataset("iris-public", public=True, description="public teaching data")
        rid = store.record("iris-public", sim)
        assert store.releases("iris-public")[0].simulation and store.releases()[0].id == rid
        with pytest.raises(ValueError, match="cannot be declared public"):
            store.register_dataset("taxi", public=True)


def test_register_dataset_is_idempotent_and_refuses_another_fingerprint(url):
    with ReleaseStore(url) as store:
        store.register_dataset("taxi", fingerprint="f1")
        store.register_dataset("taxi", fingerprint="f1")
        store.register_dataset("taxi")
        with pytest.raises(ValueError, match="another fingerprint"):
            store.register_dataset("taxi", fingerprint="f2")
        assert store.datasets() == ["taxi"]
        with pytest.raises(ValueError, match="non-empty name"):
            store.register_dataset("  ")


# -- tamper evidence ------------------------------------------------------------------------------
def test_verify_names_the_first_tampered_row(url, rel):
    with ReleaseStore(url) as store:
        for _ in range(3):
            store.record("blobs", rel)
        assert store.verify().ok
    _raw(url, "UPDATE releases SET epsilon = 0.01 WHERE id = 2")  # someone makes a release look cheaper
    with ReleaseStore(url) as store:
        report = store.verify()
        assert not report and report.first_broken[:2] == ("releases", 2)
        assert "changed" in report.first_broken[2]
    _raw(url, "UPDATE releases SET epsilon = 0.5 WHERE id = 2")
    _raw(url, "DELETE FROM ledger_entries WHERE id = 3")  # a step of the first release vanishes
    with ReleaseStore(url) as store:
        report = store.verify()
        assert report.first_broken[:2] == ("ledger_entries", 4) and "deleted" in report.first_broken[2]


def test_body_tampering_is_detected(url, rel):
    with ReleaseStore(url) as store:
        store.record("blobs", rel)
    _raw(url, "UPDATE releases SET body = replace(body, '\"dplloyd\"', '\"eugkm\"') WHERE id = 1")
    with ReleaseStore(url) as store:
        assert store.verify().first_broken[:2] == ("releases", 1)


# -- concurrency ----------------------------------------------------------------------------------
@pytest.mark.heavy
def test_eight_processes_racing_never_exceed_the_cap(url, rel_tenth):
    eps = rel_tenth["privacy"]["epsilon_spent"]
    cap = 250 * eps  # 400 attempts, room for exactly 250
    with ReleaseStore(url) as store:
        store.set_cap("taxi", cap)
    ctx = mp.get_context("spawn")
    ready, go, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=store_workers.race, args=(url, "taxi", rel_tenth, 50, ready, go, out))
             for _ in range(8)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    go.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    ids = [i for r in results for i in r[0]]
    refused = [m for r in results for m in r[1]]
    errors = [m for r in results for m in r[2]]
    assert errors == []
    assert len(ids) == 250 and len(set(ids)) == 250 and len(refused) == 150
    assert all("Nothing was recorded" in m and "choose a smaller ε or raise the total" in m for m in refused)
    with ReleaseStore(url) as store:
        spent = store.spent("taxi")[0]
        assert spent <= cap * (1 + 1e-9) and spent == pytest.approx(cap)
        assert len(store.releases("taxi")) == 250
        assert store.verify()


def test_kill_9_inside_a_transaction_leaves_the_store_consistent(url, rel, tmp_path):
    with ReleaseStore(url) as store:
        store.set_cap("taxi", 5.0)
        first = store.record("taxi", rel)
    flag = tmp_path / "in-transaction"
    ctx = mp.get_context("spawn")
    child = ctx.Process(target=store_workers.killed_writer, args=(url, "taxi", rel, str(flag)))
    child.start()
    deadline = time.monotonic() + 120
    while not flag.exists():
        assert child.is_alive() and time.monotonic() < deadline, "the writer never reached its transaction"
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    with ReleaseStore(url, timeout=30) as store:
        assert [r.id for r in store.releases("taxi")] == [first]  # the uncommitted release is gone
        assert store.spent("taxi")[0] == pytest.approx(0.5)
        assert store.verify()
        second = store.record("taxi", rel)  # and the store takes writes again
        assert second > first and store.verify()


def test_first_openers_racing_create_the_store_once(url, rel):
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=store_workers.open_and_record, args=(url, "taxi", rel, out)) for _ in range(4)]
    for p in procs:
        p.start()
    got = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
    assert sorted(got) == [1, 2, 3, 4], got
    with ReleaseStore(url) as store:
        assert store.verify() and store.datasets() == ["taxi"]
    assert _raw(url, "SELECT count(*) FROM schema_version")[0][0] == 1


# -- bad input, nothing lost ----------------------------------------------------------------------
def test_locked_store_times_out_with_a_clear_error(url, rel):
    with ReleaseStore(url) as store:
        store.record("taxi", rel)
    eng = sa.create_engine(url)
    try:
        with eng.connect() as holder:
            if url.startswith("sqlite"):
                holder.connection.driver_connection.isolation_level = None
                holder.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                holder.begin()
                holder.exec_driver_sql("SELECT id FROM store_meta FOR UPDATE")
            with ReleaseStore(url, timeout=0.5) as store:
                t0 = time.monotonic()
                with pytest.raises(StoreLockedError, match="busy: another writer held it for more than 0.5 s"):
                    store.record("taxi", rel)
                assert time.monotonic() - t0 < 10
                assert len(store.releases("taxi")) == 1  # readers are not blocked
            holder.exec_driver_sql("ROLLBACK")
    finally:
        eng.dispose()
    with ReleaseStore(url) as store:
        store.record("taxi", rel)
        assert len(store.releases("taxi")) == 2 and store.verify()


def test_newer_schema_is_refused_and_left_untouched(url, rel):
    with ReleaseStore(url) as store:
        store.record("taxi", rel)
    _raw(url, "INSERT INTO schema_version (version, applied) VALUES (:v, 'future')", {"v": SCHEMA_VERSION + 1})
    before = _raw(url, "SELECT id, row_hash FROM releases ORDER BY id")
    path = url.startswith("sqlite") and sa.engine.make_url(url).database
    file_before = path and open(path, "rb").read()
    with pytest.raises(StoreVersionError, match=f"schema version {SCHEMA_VERSION + 1}.*left untouched"):
        ReleaseStore(url)
    if path:
        assert open(path, "rb").read() == file_before  # not a byte written
    assert _raw(url, "SELECT id, row_hash FROM releases ORDER BY id") == before
    assert _raw(url, "SELECT max(version) FROM schema_version")[0][0] == SCHEMA_VERSION + 1


def test_an_older_store_is_migrated_once(url, rel, monkeypatch):
    import dpcore.store.tables as store_module
    with ReleaseStore(url) as store:
        store.record("taxi", rel)
    calls = []

    def to_v2(conn):  # what a real migration does: change the schema inside the opening transaction
        calls.append(1)
        conn.execute(sa.text("CREATE INDEX ix_releases_created ON releases (created)"))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(store_module, "_MIGRATIONS", {SCHEMA_VERSION: to_v2})
    for _ in range(2):
        with ReleaseStore(url) as store:
            assert store.verify() and len(store.releases("taxi")) == 1
    assert calls == [1]
    assert [r[0] for r in _raw(url, "SELECT version FROM schema_version ORDER BY version")] == [SCHEMA_VERSION,
                                                                                               SCHEMA_VERSION + 1]


def test_a_version_3_store_gets_its_secret_and_keeps_its_chains(url, rel):
    """Issue 55: opening a store written before the secret key adds one; old rows verify, new ones are keyed."""
    with ReleaseStore(url) as store:
        store.register_dataset("old", fingerprint="plain-digest")
        store.record("old", rel)
    _raw(url, "DROP TABLE store_secret")
    _raw(url, "UPDATE schema_version SET version = 3")
    _raw(url, "UPDATE datasets SET fingerprint = 'plain-digest', row_hash = :h WHERE id = 1",
         {"h": _v3_row_hash(url)})
    with ReleaseStore(url) as store:
        report = store.verify()
        assert report and set(report.heads) >= {"datasets", "releases", "draw_keys"}
        store.register_dataset("new", fingerprint="plain-digest-2")
        assert store.dataset_info("old")["fingerprint"] == "plain-digest"      # history is not rewritten
        store.register_dataset("old", fingerprint="the-same-rows-as-a-new-digest")   # its account keeps working
        assert store.spent("old")[0] > 0
        assert store.dataset_info("new")["fingerprint"] not in ("plain-digest-2", "")
        heads = store.verify().heads
    with ReleaseStore(url) as store:      # one secret, kept: the same heads and keys after a restart
        assert store.verify().heads == heads
        assert store.dataset_for_fingerprint("plain-digest-2") == "new"
    assert [r[0] for r in _raw(url, "SELECT version FROM schema_version ORDER BY version")][-1] == 4
    assert len(_raw(url, "SELECT secret FROM store_secret")) == 1


def _v3_row_hash(url):
    """The row hash a version-3 store wrote for its first dataset row with a plain fingerprint."""
    from dpcore.store.tables import _GENESIS, _hashed_fields, _row_hash, datasets
    row = dict(_raw(url, "SELECT * FROM datasets WHERE id = 1")[0]._mapping, fingerprint="plain-digest")
    return _row_hash(_GENESIS, _hashed_fields(datasets, row))


def test_heads_are_keyed_and_still_show_a_change(url, rel):
    """Two stores holding the same rows show unrelated heads; a head changes when its chain does."""
    heads = []
    for store in (ReleaseStore(url), ReleaseStore(":memory:")):
        with store:
            store.register_dataset("blobs", fingerprint=content_digest(_data()), description="same")
            heads.append(store.verify().heads)
            store.set_cap("blobs", 1.0)
            after = store.verify().heads
            assert after["caps"] != heads[-1]["caps"] and after["datasets"] == heads[-1]["datasets"]
    assert heads[0]["datasets"] != heads[1]["datasets"] and heads[0]["caps"] != heads[1]["caps"]


def test_release_over_the_row_limit_is_refused(url, rel):
    big = copy.deepcopy(rel)
    big["private_extras"] = {"padding": "x" * (MAX_RELEASE_BYTES + 1)}
    with ReleaseStore(url) as store:
        store.set_cap("taxi", 3.0)
        first = store.record("taxi", rel)
        with pytest.raises(ReleaseTooLargeError, match="row limit of 16 MiB; nothing was recorded"):
            store.record("taxi", big)
        assert [r.id for r in store.releases("taxi")] == [first] and store.spent("taxi")[0] == pytest.approx(0.5)
        assert store.verify()


def test_not_a_release_is_refused(url, rel):
    bad_eps = copy.deepcopy(rel)
    bad_eps["privacy"]["epsilon_spent"] = float("nan")
    no_ledger = copy.deepcopy(rel)
    del no_ledger["ledger"]
    with ReleaseStore(url) as store:
        for bad, msg in [({"centroids": [[1, 2]]}, "build_release"), ([1, 2], "build_release"),
                         (bad_eps, "positive finite ε"), (no_ledger, "ledger")]:
            with pytest.raises(ValueError, match=msg):
                store.record("taxi", bad)
        assert store.releases() == []


def test_corrupt_store_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "store.db"
    junk = b"this is not a database, it is someone's notes\n" * 200
    path.write_bytes(junk)
    with pytest.raises(StoreCorruptError, match="not a readable SQLite database.*left untouched"):
        ReleaseStore(str(path))
    assert path.read_bytes() == junk


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    before = path.read_bytes()
    with pytest.raises(StoreCorruptError, match="not a dpcore store.*invoices"):
        ReleaseStore(f"sqlite:///{path}")
    assert path.read_bytes() == before
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["invoices"]


def test_damaged_pages_are_a_clear_error(tmp_path, rel):
    path = tmp_path / "store.db"
    with ReleaseStore(str(path)) as store:
        for _ in range(5):
            store.record("taxi", rel)
    data = bytearray(path.read_bytes())
    assert len(data) > 8192
    data[4096:] = bytes(len(data) - 4096)  # every page after the first zeroed: the tables are gone
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorruptError):
        store = ReleaseStore(str(path))
        store.releases()
        store.verify()


def test_unreachable_postgresql_is_a_clear_error():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailableError, match=rf"cannot reach the postgresql store at 127.0.0.1:{port}"):
        ReleaseStore(f"postgresql+psycopg://nobody@127.0.0.1:{port}/dpcore", timeout=3)
    assert time.monotonic() - t0 < 20


def test_readers_never_create_a_store(url):
    from dpcore.exceptions import StoreUnavailableError as Missing
    with pytest.raises(Missing, match="nothing has been published"):
        ReleaseStore(url, create=False)
    if url.startswith("sqlite"):
        assert not os.path.exists(sa.engine.make_url(url).database)
    else:
        assert _raw(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[0][0] == 0


def test_unknown_url_scheme_is_a_clear_error():
    from dpcore.exceptions import StoreError
    with pytest.raises(StoreError, match="SQLite or PostgreSQL"):
        ReleaseStore("mysql://u@h/db")


# -- in-memory mode and the default location ------------------------------------------------------
def test_memory_stores_are_separate_and_complete(rel):
    a, b = ReleaseStore(":memory:"), ReleaseStore("sqlite://")
    a.set_cap("taxi", 1.0)
    a.record("taxi", rel)
    assert b.datasets() == [] and a.spent("taxi")[0] == pytest.approx(0.5)
    assert a.memory and a.verify()
    a.close()
    b.close()


def test_default_url_from_environment_and_user_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'env.db'}")
    assert default_store_url() == f"sqlite:///{tmp_path / 'env.db'}"
    with ReleaseStore() as store:
        store.set_cap("x", 1.0)
    assert (tmp_path / "env.db").is_file()
    monkeypatch.delenv("DPCORE_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_url() == f"sqlite:///{tmp_path / 'xdg' / 'dpcore' / 'releases.db'}"
    with ReleaseStore() as store:  # creates the folder
        assert store.datasets() == []
    assert (tmp_path / "xdg" / "dpcore" / "releases.db").is_file()
