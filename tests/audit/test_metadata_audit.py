"""Metadata is data (issue 55): everything beside the noise is the same on neighbouring data sets.

The structural audit (test_structural_audit.py) compares what an estimator exposes on neighbours D
and D′; this one compares what the app and the store expose.  D is a small Gowalla-like table of
check-ins (longitude, latitude, user_id); D′ is D without one person's rows (the heaviest user).  In
each world the data owner uploads the world's data and draws once, as in the app; then

* a gallery visitor opens ``gallery.py`` (every rendered element, chain heads included);
* a viewer reads the store (datasets, their declarations, histories, totals, published draws, heads);
* an analyst uploads the candidate D's rows (reordered, with Windows line endings) under the owner's
  file name and under another name, and reads every element each page rendered;

and every one of these is identical in both worlds.  The owner's own draw is private noise and differs;
only what is beside it is compared, so everything the noise touches is left to the DP audits.

Three things are fixed for the test as the structural audit seeds the noise: the noise itself (the
same seeded generator in both worlds), the clock (the store's ``_now``) and the store's secret key.  The HMAC under a secret key is, to anyone without it, a random function
(RFC 2104; Bellare 2006): the test replaces it by a lazily sampled random function whose labels
are drawn in query order from a seeded generator, the same in both worlds.  A plain hash in its place
(a mutant below) gives different labels on D and D′, and is caught.

Mutants (each must make the audit fail): a plain unkeyed hash where the store keys; the upload lookup
answered to an analyst; an account keyed by the order of the rows (as bytes are) instead of their
content; an account keyed by the people's ids instead of their rows (issue 68: the same check-ins
under shifted, textual or permuted ids then open a fresh, uncapped account).
"""
from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import numpy as np
import pytest
from app_walk import rendered_texts
from streamlit.testing.v1 import AppTest

from dpcore.store import ReleaseStore

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = str(ROOT / "pages" / "1_Explorer.py")
GALLERY = str(ROOT / "gallery.py")
OWNER, ANALYST, VIEWER = "owner@example.org", "ana@example.org", "viewer@example.org"
SECRETS = {
    "auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
             "client_id": "dpcore-test", "client_secret": "secret",
             "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"},
    "dpcore": {"owners": [OWNER], "analysts": [ANALYST]},
}
BOUNDS = "-74.3, -73.7\n40.4, 41.0"


# -- the neighbours ------------------------------------------------------------------------------
def _checkins() -> tuple[list[tuple], list[tuple]]:
    """D and D′: 60 users with 1-6 check-ins each, and one heavy user (25 check-ins) only in D."""
    rng = np.random.default_rng(55)
    rows = []
    for user in range(60):
        for _ in range(int(rng.integers(1, 7))):
            rows.append((round(float(rng.uniform(-74.2, -73.8)), 5), round(float(rng.uniform(40.5, 40.9)), 5),
                         1000 + user))
    heavy = [(round(float(rng.uniform(-74.0, -73.9)), 5), round(float(rng.uniform(40.7, 40.8)), 5), 4242)
             for _ in range(25)]
    return rows + heavy, rows


def _csv(rows, *, crlf: bool = False, reverse: bool = False, trailing: bool = False) -> bytes:
    nl = "\r\n" if crlf else "\n"
    body = list(reversed(rows)) if reverse else rows
    text = "longitude,latitude,user_id" + nl + nl.join(f"{x},{y},{u}" for x, y, u in body) + nl
    return (text + (nl if trailing else "")).encode()


# -- what is fixed for the test: the clock and the store's key -------------------------------------
def _fix_clock_and_key(monkeypatch):
    """A clock that ticks once per call, and the store's HMAC as a lazily sampled random function."""
    import dpcore.store.accounts as accounts
    import dpcore.store.connection as connection
    import dpcore.store.publications as publications
    import dpcore.store.release_store as release_store
    import dpcore.store.roles as roles
    import dpcore.store.tables as tables
    ticks = itertools.count()

    def now():
        return f"2026-01-01T00:00:{next(ticks) % 60:02d}.{next(ticks):06d}+00:00"

    for module in (tables, connection, accounts, publications, release_store, roles):
        monkeypatch.setattr(module, "_now", now, raising=False)
    labels: dict = {}
    rng = np.random.default_rng(2026)

    def random_function(secret, purpose, value):
        key = (purpose, value)
        if key not in labels:
            labels[key] = rng.bytes(32).hex()
        return labels[key]

    monkeypatch.setattr(connection, "keyed", random_function, raising=False)
    # The same noise draws in both worlds, as the structural audit seeds them (the draws stay unpublished).
    import dpcore.privacy.rng as rng_module
    monkeypatch.setattr(rng_module, "secure_generator", lambda: np.random.default_rng(55))


def _page(path: str, who: str | None) -> AppTest:
    at = AppTest.from_file(path, default_timeout=300)
    for section, values in SECRETS.items():
        at.secrets[section] = values
    if who is not None:
        at.user = {"is_logged_in": True, "email": who}
    return at


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _upload(at: AppTest, name: str, content: bytes) -> AppTest:
    at.query_params["dataset"] = "Upload a file…"
    at.query_params["algorithm"] = "eugkm"     # a fixed number of noisy steps: its ledger's length is public
    _run(at)
    at.file_uploader(key="dataset_upload").set_value((name, content, "text/csv"))
    _run(at)
    at.text_area(key="dataset_bounds").set_value(BOUNDS)
    _run(at)
    at.selectbox(key="dataset_unit").set_value("user_id")
    _run(at)
    for b in at.button:          # "Draw: spends ε = …", pressed as a person would (shown to owners and analysts)
        # A button shown disabled with its reason (issue 65: a role or the total refuses before a press) is not
        # pressed: a person cannot; the reason it shows is part of what is compared.
        if str(b.key or "").startswith("draw_") and not b.proto.disabled:
            b.click()
            return _run(at)
    return at


def _texts(at: AppTest) -> list[str]:
    return [t for _, t in rendered_texts(at)]


def _store_view(url: str) -> dict:
    """Everything a viewer's handle on the store reads."""
    store = ReleaseStore(url, create=False).acting_as(VIEWER)
    names = store.datasets()
    return {"datasets": names, "info": [store.dataset_info(n) for n in names],
            "history": [store.history(n) for n in names], "spent": [store.spent(n) for n in names],
            "cap": [store.cap(n) for n in names], "published": [len(store.published(n)) for n in names],
            "heads": store.verify().heads, "roles": store.roles()}


def _world(tmp_path, monkeypatch, rows, tag: str, *, parts=("gallery", "viewer", "analyst")) -> dict:
    """One world: the owner uploads ``rows`` and draws once; then what each role sees."""
    url = f"sqlite:///{tmp_path / f'{tag}.db'}"
    monkeypatch.setenv("DPCORE_STORE", url)
    _fix_clock_and_key(monkeypatch)
    owner = _upload(_page(EXPLORER, OWNER), "checkins.csv", _csv(rows))
    assert any("ε spent so far" in t for t in _texts(owner)), "the owner's draw was not shown"
    assert len(ReleaseStore(url, create=False).releases()) == 1, "the owner's draw was not recorded"
    view = {}
    if "viewer" in parts:
        view["viewer"] = _store_view(url)
    if "gallery" in parts:
        view["gallery"] = _texts(_run(_page(GALLERY, None)))
    if "analyst" in parts:
        D = _checkins()[0]
        candidate = _csv(D, crlf=True, reverse=True)          # the candidate rows, written another way
        ana = _upload(_page(EXPLORER, ANALYST), "checkins.csv", candidate)   # a decoy under the owner's name
        view["analyst, owner's file name"] = _texts(ana)
        ana.file_uploader(key="dataset_upload").set_value(("mine.csv", candidate, "text/csv"))
        view["analyst, another name"] = _texts(_run(ana))
        view["store after the analyst"] = _store_view(url)
    return view


def _differences(a: dict, b: dict) -> list[str]:
    out = []
    for part in a:
        if a[part] != b[part]:
            if isinstance(a[part], list):
                only = [t[:160] for t in a[part] if t not in b[part]][:3]
                out.append(f"{part}: e.g. {only}")
            else:
                out.append(f"{part}: {[k for k in a[part] if a[part][k] != b[part].get(k)]}")
    return out


def _audit(tmp_path, monkeypatch, **kw) -> list[str]:
    D, D_prime = _checkins()
    return _differences(_world(tmp_path, monkeypatch, D, "D", **kw),
                        _world(tmp_path, monkeypatch, D_prime, "D_prime", **kw))


# -- the audit ---------------------------------------------------------------------------------------
def test_visitor_viewer_and_analyst_see_the_same_on_neighbouring_data(tmp_path, monkeypatch):
    diffs = _audit(tmp_path, monkeypatch)
    assert not diffs, f"something beside the noise tells D from D′: {diffs}"


def test_the_same_rows_in_any_file_share_one_account(tmp_path, monkeypatch):
    """Line endings, a trailing empty line, the rows' order and the file name open no fresh account."""
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'one.db'}")
    D = _checkins()[0]
    _upload(_page(EXPLORER, OWNER), "checkins.csv", _csv(D))
    again = _upload(_page(EXPLORER, OWNER), "checkins (windows).csv", _csv(D, crlf=True, reverse=True, trailing=True))
    assert any("already registered as “checkins.csv”" in t for t in _texts(again))
    assert ReleaseStore().datasets() == ["upload:checkins.csv"]


def _renamed(rows) -> dict[str, list[tuple]]:
    """The same people under new ids (issue 68): shifted, written as text, permuted among the people."""
    ids = sorted({u for *_, u in rows})
    shuffled = dict(zip(ids, np.random.default_rng(68).permutation(ids).tolist()))
    return {"shifted.csv": [(x, y, u + 10_000_000) for x, y, u in rows],
            "as text.csv": [(x, y, f"u{u}") for x, y, u in rows],
            "permuted.csv": [(x, y, shuffled[u]) for x, y, u in rows]}


def test_the_same_people_under_new_ids_share_one_account(tmp_path, monkeypatch):
    """Ids renamed one to one (a pseudonymised export rotates them) open no fresh account (issue 68)."""
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'one.db'}")
    D = _checkins()[0]
    _upload(_page(EXPLORER, OWNER), "checkins.csv", _csv(D))
    for name, rows in _renamed(D).items():      # the owner's next uploads, in another order
        again = _upload(_page(EXPLORER, OWNER), name, _csv(rows, reverse=True))
        assert any("already registered as “checkins.csv”" in t for t in _texts(again)), name
    assert ReleaseStore().datasets() == ["upload:checkins.csv"]


# -- the audit can fail -------------------------------------------------------------------------------
def test_a_plain_hash_in_the_store_is_caught(tmp_path, monkeypatch):
    import dpcore.store.connection as connection
    diffs = []

    def plain(secret, purpose, value):   # the mutant: what the store kept before issue 55
        return hashlib.sha256(value.encode() if isinstance(value, str) else value).hexdigest()

    D, D_prime = _checkins()
    views = []
    for rows, tag in ((D, "D"), (D_prime, "D_prime")):
        url = f"sqlite:///{tmp_path / f'{tag}.db'}"
        monkeypatch.setenv("DPCORE_STORE", url)
        _fix_clock_and_key(monkeypatch)
        monkeypatch.setattr(connection, "keyed", plain)
        _upload(_page(EXPLORER, OWNER), "checkins.csv", _csv(rows))
        views.append({"viewer": _store_view(url)})
    diffs = _differences(*views)
    assert diffs and any("heads" in d or "info" in d for d in diffs), diffs


def test_an_analyst_visible_lookup_is_caught(tmp_path, monkeypatch):
    import ui.data_picker as data_picker
    from ui.store import _open_store

    def told(filename, content, ds=None):   # the mutant: the lookup answered to anyone, as on main before issue 55
        import os

        import streamlit as st
        known = _open_store(os.environ["DPCORE_STORE"]).dataset_for_fingerprint(content)
        if known is not None and known != f"upload:{filename}":
            st.info(f"This file's content is already registered as “{known}”.")
        return data_picker.ANALYST_UPLOAD.format(who="ana", file=filename)

    monkeypatch.setattr(data_picker, "_upload_account", told)
    diffs = _audit(tmp_path, monkeypatch, parts=("analyst",))
    assert any(d.startswith("analyst") for d in diffs), diffs


def test_an_account_keyed_by_the_rows_order_is_caught(tmp_path, monkeypatch):
    import dpcore.store.keys as keys

    def ordered(X, units=None):          # the mutant: the rows as written, in the file's order (as bytes are)
        return hashlib.sha256(np.ascontiguousarray(X, dtype=float).tobytes()).hexdigest()

    monkeypatch.setattr(keys, "content_digest", ordered)
    with pytest.raises(AssertionError):
        test_the_same_rows_in_any_file_share_one_account(tmp_path, monkeypatch)


def test_an_account_keyed_by_the_ids_is_caught(tmp_path, monkeypatch):
    import dpcore.store.keys as keys

    def by_ids(X, units=None):           # the mutant: each row hashed with its person's id, as before issue 68
        ids = [""] * len(X) if units is None else [str(u) for u in units]
        return hashlib.sha256(repr(sorted(zip(ids, np.asarray(X, dtype=float).tolist()))).encode()).hexdigest()

    monkeypatch.setattr(keys, "content_digest", by_ids)
    with pytest.raises(AssertionError, match="shifted.csv"):      # the first renamed upload opened a fresh account
        test_the_same_people_under_new_ids_share_one_account(tmp_path, monkeypatch)
