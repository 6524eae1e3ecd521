"""Draws and publications in the release store (issues 24 and 31), on SQLite and PostgreSQL.

A draw is recorded (and charged) before it is shown; sessions that draw the same settings at once
record it once; publishing is a separate, free act that the gallery lists; the chains cover both.
"""
from __future__ import annotations

import multiprocessing as mp

import pytest
import sqlalchemy as sa
import store_workers
from test_store import _raw, rel, url  # noqa: F401  (fixtures: a real release, a fresh store on each back end)

from dpcore.exceptions import BudgetExceededError
from dpcore.store import SCHEMA_VERSION, ReleaseStore

KEY = '["taxi", "fp", "dplloyd", {"n_clusters": 3}, 0.5, 0.0, null]'


def test_one_draw_per_setting_and_new_draw_spends_again(url, rel):  # noqa: F811
    store = ReleaseStore(url)
    first, recorded = store.record_draw("taxi", rel, settings_key=KEY, who="ana")
    assert recorded
    again, recorded = store.record_draw("taxi", rel, settings_key=KEY, who="bo")
    assert (again, recorded) == (first, False)
    assert store.spent("taxi")[0] == pytest.approx(rel["privacy"]["epsilon_spent"])
    other, recorded = store.record_draw("taxi", rel, settings_key=KEY + "x", who="bo")
    assert recorded and other != first
    fresh, recorded = store.record_draw("taxi", rel, settings_key=KEY, who="bo", new_draw=True)
    assert recorded and fresh not in (first, other)
    assert store.spent("taxi")[0] == pytest.approx(3 * rel["privacy"]["epsilon_spent"])
    # the latest draw of a setting is the one another session gets
    assert store.record_draw("taxi", rel, settings_key=KEY)[0] == fresh
    # a refusal is still a refusal: nothing found, nothing recorded over the cap
    store.set_cap("taxi", store.spent("taxi")[0])
    with pytest.raises(BudgetExceededError):
        store.record_draw("taxi", rel, settings_key="never drawn")
    with pytest.raises(ValueError, match="settings_key"):
        store.record_draw("taxi", rel, settings_key="")
    assert store.verify()


def test_sessions_drawing_one_setting_at_once_record_one_draw(url, rel):  # noqa: F811
    """Eight processes (sessions on a server, or servers on one store) draw the same setting together."""
    ReleaseStore(url).register_dataset("taxi")
    ctx = mp.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=store_workers.draw_same_setting, args=(url, "taxi", rel, KEY, ready, go, out))
             for _ in range(8)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=300)
    go.set()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
    assert all(isinstance(r, tuple) for r in results), results
    assert len({rid for rid, _ in results}) == 1
    assert sum(recorded for _, recorded in results) == 1
    store = ReleaseStore(url)
    assert len(store.releases("taxi")) == 1
    assert store.spent("taxi")[0] == pytest.approx(rel["privacy"]["epsilon_spent"])
    assert store.verify()


def test_publishing_is_separate_free_and_chained(url, rel):  # noqa: F811
    store = ReleaseStore(url)
    a = store.record("taxi", rel, who="ana")
    b = store.record("taxi", rel, who="ana")
    c = store.record("gowalla", rel, who="bo")
    spent = store.spent("taxi")
    assert store.published() == []          # drawing is not publishing
    pub = store.publish(b, who="ana (owner)")
    assert store.publish(b, who="someone else") == pub      # once
    store.publish(c, who="bo")
    assert store.spent("taxi") == spent      # post-processing: no epsilon
    shown = store.published()
    assert [r.id for r in shown] == [b, c]
    assert shown[0].published_by == "ana (owner)" and shown[0].is_published
    assert [r.id for r in store.published("taxi")] == [b]
    ledger = store.releases("taxi")
    assert [r.id for r in ledger] == [a, b] and [r.is_published for r in ledger] == [False, True]
    assert store.release(a).release == rel and not store.release(a).is_published
    with pytest.raises(KeyError, match="no release #999"):
        store.publish(999)
    with pytest.raises(KeyError):
        store.release(999)
    report = store.verify()
    assert report and "publications" in report.heads
    _raw(url, "UPDATE publications SET who = 'mallory' WHERE release_id = :b", {"b": b})
    report = store.verify()
    assert not report and report.first_broken[0] == "publications"


def test_a_version_1_store_is_migrated_and_keeps_its_account(url, rel):  # noqa: F811
    store = ReleaseStore(url)
    old = store.record("taxi", rel, who="ana")
    store.close()
    # Make it a version-1 store: the tables of versions 2 (draws, publications), 3 (grants) and 4 (the
    # store's secret key) did not exist then.
    _raw(url, "DROP TABLE store_secret")
    _raw(url, "DROP TABLE grants")
    _raw(url, "DROP TABLE publications")
    _raw(url, "DROP TABLE draw_keys")
    _raw(url, "UPDATE schema_version SET version = 1")
    store = ReleaseStore(url)
    assert _raw(url, "SELECT max(version) FROM schema_version")[0][0] == SCHEMA_VERSION == 4
    assert {"publications", "draw_keys", "grants", "store_secret"} <= set(sa.inspect(sa.create_engine(url)).get_table_names())
    assert [r.id for r in store.releases("taxi")] == [old]
    store.publish(old, who="ana")
    assert store.record_draw("taxi", rel, settings_key=KEY)[1]
    assert store.verify()


def test_a_refusal_after_a_noisy_count_is_charged_and_never_published(tmp_path):
    """The coreset counts (noisily), then finds too few points and refuses: that spend is in the account."""
    import numpy as np

    from dpcore.exceptions import InfeasibleBudgetError
    from dpcore.store.draw import draw, recorded_draws, settings

    store = ReleaseStore(f"sqlite:///{tmp_path / 'store.db'}")
    X = np.random.default_rng(0).uniform(0, 1, size=(300, 2))
    s = settings("small", "fp", "coreset", {"n_clusters": 5, "epsilon": 1.0, "delta": 1e-6}, bounds=(0, 1), d=2)
    from dpcore.algorithms.regime import OutOfRegimeError
    with pytest.raises((InfeasibleBudgetError, OutOfRegimeError)) as info:
        draw(store, s, X, who="ana")
    spent = info.value.spent_budget.total()[0]
    assert 0 < spent < 1.0                                 # the noisy count's share, not the whole budget
    assert store.spent("small")[0] == pytest.approx(spent)
    (row,) = store.history("small")
    assert row["epsilon"] == pytest.approx(spent) and row["who"] == "ana"
    (rec,) = store.releases("small")
    assert rec.release["format"] == "dpcore-refusal/1" and str(info.value) in rec.release["refusal"]
    assert [e["name"] for e in rec.release["ledger"]] == [e.name for e in info.value.spent_budget]
    assert recorded_draws(store, s) == []                   # nothing to show again
    with pytest.raises(ValueError, match="refusal"):
        store.publish(rec.id)
    with pytest.raises(ValueError, match="record_refusal"):
        store.record("small", rec.release)
    assert store.verify()
