"""Roles in the release store (issue 24): owner, analyst, viewer, enforced by the store on SQLite and PostgreSQL.

A page hiding a form is not the guard: a handle acting for a person is refused by the store itself,
inside the write's transaction, and nothing is written.
"""
from __future__ import annotations

import pytest
from test_store import rel, url  # noqa: F401  (fixtures: a real release, a fresh store on each back end)

from dpcore.exceptions import AccessDeniedError, BudgetExceededError
from dpcore.store import ReleaseStore

KEY = '["taxi", "fp", "dplloyd", {"n_clusters": 3}, 0.5, 0.0, null]'


def _state(store: ReleaseStore, dataset: str = "taxi"):
    """Everything a refused write must leave as it was."""
    return (store.spent(dataset), store.cap(dataset), len(store.releases()), len(store.published()),
            store.cap_history(dataset), store.role_history())


def test_a_store_without_roles_is_single_user_and_a_handle_names_its_person(url, rel):  # noqa: F811
    store = ReleaseStore(url)
    rid = store.record("taxi", rel, who="script")
    store.publish(rid, who="script")
    store.set_cap("taxi", 10.0, who="script")
    assert store.role("nobody@example.org") == ("viewer", False)
    # a handle acting for someone nobody granted anything is a viewer, even in a store without grants
    with pytest.raises(AccessDeniedError, match="viewer"):
        store.acting_as("nobody@example.org").record("taxi", rel, who="Explorer")
    with pytest.raises(ValueError, match="identity"):
        store.acting_as("  ")


def test_viewer_analyst_owner(url, rel):  # noqa: F811
    store = ReleaseStore(url)              # the operator: grants from the app's secrets file
    assert store.grant("owner@example.org", "owner", who="secrets.toml")
    assert store.grant("ana@example.org", "analyst", who="secrets.toml")
    assert not store.grant("ana@example.org", "analyst", who="secrets.toml")     # unchanged: no row
    owner = store.acting_as("owner@example.org")
    ana = store.acting_as("ana@example.org")
    viewer = store.acting_as("vic@example.org")

    # the owner registers the data and sets its total; the history names them
    owner.register_dataset("taxi", fingerprint="fp")
    owner.set_cap("taxi", 3 * rel["privacy"]["epsilon_spent"], who="owner@example.org · Release page")
    (change,) = store.cap_history("taxi")
    assert change["who"] == "owner@example.org · Release page"

    # a viewer writes nothing at all
    before = _state(store)
    for write in (lambda: viewer.record("taxi", rel), lambda: viewer.record_draw("taxi", rel, settings_key=KEY),
                  lambda: viewer.set_cap("taxi", 100.0), lambda: viewer.register_dataset("other"),
                  lambda: viewer.grant("vic@example.org", "owner")):
        with pytest.raises(AccessDeniedError, match="vic@example.org is a viewer"):
            write()
    assert _state(store) == before

    # an analyst draws within what is left, under their own name (whatever free text the caller passes)
    rid, recorded = ana.record_draw("taxi", rel, settings_key=KEY, who="Explorer")
    assert recorded
    assert store.history("taxi")[-1]["who"] == "ana@example.org · Explorer"
    # ... but cannot raise the total (a forged form submission reaches the store and is refused there),
    # register data, grant roles, or publish without the owner's permission
    before = _state(store)
    with pytest.raises(AccessDeniedError, match="owner role"):
        ana.set_cap("taxi", 100.0, who="ana@example.org · Release page")
    with pytest.raises(AccessDeniedError, match="register a new dataset"):
        ana.record("gowalla", rel)
    with pytest.raises(AccessDeniedError, match="grant"):
        ana.grant("ana@example.org", "owner")
    with pytest.raises(AccessDeniedError, match="permission for analysts to publish"):
        ana.publish(rid)
    assert _state(store) == before
    assert store.dataset_info("gowalla") is None

    # the owner allows analysts to publish: now she may; the publication names her
    owner.grant("ana@example.org", "analyst", may_publish=True)
    ana.publish(rid, who="publish")
    assert store.published()[0].published_by == "ana@example.org · publish"
    assert store.role_history()[-1]["who"] == "owner@example.org"

    # the cap holds for everyone: the analyst cannot spend past it
    ana.record("taxi", rel, who="Explorer")
    ana.record("taxi", rel, who="Explorer")          # the third draw: the total is now spent
    with pytest.raises(BudgetExceededError, match="only ε"):
        ana.record("taxi", rel, who="Explorer")

    # a role taken away is taken away at the next write (the check is inside the write's transaction)
    store.grant("ana@example.org", "viewer", who="secrets.toml")
    with pytest.raises(AccessDeniedError):
        ana.record_draw("taxi", rel, settings_key=KEY + "x")
    assert [g["role"] for g in store.role_history() if g["identity"] == "ana@example.org"] == [
        "analyst", "analyst", "viewer"]
    assert store.verify()


def test_grants_are_chained(url, rel):  # noqa: F811
    import sqlalchemy as sa

    store = ReleaseStore(url)
    store.grant("owner@example.org", "owner")
    store.grant("ana@example.org", "analyst")
    assert store.verify()
    eng = sa.create_engine(url)
    with eng.begin() as conn:   # someone with database access promotes the analyst behind the chain's back
        conn.execute(sa.text("UPDATE grants SET role = 'owner' WHERE identity = 'ana@example.org'"))
    eng.dispose()
    report = store.verify()
    assert not report.ok and report.first_broken[0] == "grants"
