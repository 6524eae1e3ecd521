"""One account per people (issues 55, 68): the content key of the people, not of the file or the ids that held them."""
from __future__ import annotations

import io
import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore import datasets
from dpcore.store import ReleaseStore
from dpcore.store.keys import content_digest

ROWS = [(round(-73.98 + 0.001 * i, 6), round(40.70 + 0.0007 * ((i * 13) % 50), 6), 500 + i % 17) for i in range(300)]


def _digest(raw: bytes, name: str = "checkins.csv") -> str:
    df = datasets.read_table(io.BytesIO(raw), filename=name)
    ds = datasets.dataset_from_frame(df, ["longitude", "latitude"], bounds=(np.array([-74.3, 40.4]),
                                     np.array([-73.7, 41.0])), unit_column="user_id")
    return content_digest(ds.X, ds.units)


def _text(rows, nl="\n", zeros=""):
    return "longitude,latitude,user_id" + nl + nl.join(f"{x:.6f}{zeros},{y:.6f},{u}" for x, y, u in rows) + nl


def test_the_same_rows_give_one_digest_in_any_file():
    base = _digest(_text(ROWS).encode())
    assert _digest(_text(ROWS, "\r\n").encode()) == base                       # Windows line endings
    assert _digest((_text(ROWS) + "\n").encode()) == base                       # a trailing empty line
    assert _digest(_text(ROWS[::-1]).encode()) == base                          # another order
    assert _digest(_text(ROWS).encode("utf-8-sig"), "other name.csv") == base   # a BOM, another name
    assert _digest(_text(ROWS, zeros="00").encode()) == base                    # 1.500 is 1.5


def test_other_bounds_are_the_same_content():
    """Bounds are public inputs, not content: points outside them are kept, so the account is the same."""
    df = datasets.read_table(io.BytesIO(_text(ROWS).encode()), filename="checkins.csv")
    tight = datasets.dataset_from_frame(df, ["longitude", "latitude"], bounds=(np.array([-73.9, 40.7]),
                                        np.array([-73.8, 40.72])), unit_column="user_id")
    assert content_digest(tight.X, tight.units) == _digest(_text(ROWS).encode())


def test_one_person_more_or_less_or_moved_changes_the_digest():
    base = _digest(_text(ROWS).encode())
    assert _digest(_text(ROWS[:-1]).encode()) != base
    assert _digest(_text([*ROWS[:-1], (ROWS[-1][0], ROWS[-1][1], 999)]).encode()) != base   # another person
    assert content_digest(np.array([[0.0, 1.0]])) == content_digest(np.array([[-0.0, 1.0]]))
    with pytest.raises(ValueError, match="one entry per row"):
        content_digest(np.zeros((3, 2)), units=[1, 2])


def test_a_listed_data_set_and_an_upload_of_its_rows_share_one_account():
    X = np.array([(x, y) for x, y, _ in ROWS])
    units = np.array([u for *_, u in ROWS])              # integer ids, as a listed data set loads them
    store = ReleaseStore(":memory:")
    store.register_dataset("gowalla_like", fingerprint=content_digest(X, units))
    assert store.dataset_for_fingerprint(_digest(_text(ROWS[::-1], "\r\n").encode())) == "gowalla_like"
    assert store.dataset_info("gowalla_like")["fingerprint"] == store.content_key(X, units)
    assert store.content_key(X, units) != content_digest(X, units)            # never the plain digest


def test_only_an_owner_may_ask_whether_content_is_registered():
    from dpcore.exceptions import AccessDeniedError
    store = ReleaseStore(":memory:")
    store.grant("owner@example.org", "owner")
    store.grant("ana@example.org", "analyst")
    store.register_dataset("d", fingerprint="digest")
    assert store.acting_as("owner@example.org").dataset_for_fingerprint("digest") == "d"
    with pytest.raises(AccessDeniedError):
        store.acting_as("ana@example.org").dataset_for_fingerprint("digest")
    # A decoy under the owner's name: the analyst gets the refusal an unregistered name gets, either way.
    ana = store.acting_as("ana@example.org")
    with pytest.raises(AccessDeniedError, match="may not register a new dataset") as known:
        ana.register_dataset("d", fingerprint="other digest")
    with pytest.raises(AccessDeniedError, match="may not register a new dataset") as unknown:
        ana.register_dataset("e", fingerprint="other digest")
    assert str(known.value) == str(unknown.value)


# -- issue 68: the people, whatever their ids ------------------------------------------------------
def _people_of(X, units) -> Counter:
    """The reference canon, by brute force: the multiset of people, each the sorted tuple of her rows."""
    rows = {}
    for row, u in zip(np.asarray(X, dtype=float) + 0.0, units):
        rows.setdefault(u, []).append(tuple(row))
    return Counter(tuple(sorted(r)) for r in rows.values())


def test_renamed_ids_give_one_digest():
    """Ids shifted, written as text, permuted or of another type name the same people."""
    X = np.array([(x, y) for x, y, _ in ROWS])
    ids = np.array([u for *_, u in ROWS])
    base = content_digest(X, ids)
    rng = np.random.default_rng(68)
    order = rng.permutation(len(ids))
    mapping = dict(zip(np.unique(ids).tolist(), rng.permutation(np.unique(ids)).tolist()))
    assert content_digest(X, ids + 10_000_000) == base                         # shifted
    assert content_digest(X[order], np.char.add("u", ids[order].astype(str))) == base   # text, another order
    assert content_digest(X, np.array([mapping[i] for i in ids.tolist()])) == base      # permuted
    assert content_digest(X, ids.astype(float)) == base                        # another type
    assert content_digest(X, ids.astype(object)) == base
    assert _digest(_text([(x, y, f"person-{u}") for x, y, u in ROWS]).encode()) == _digest(_text(ROWS).encode())


def test_the_grouping_into_people_is_part_of_the_content():
    """The same rows grouped into other people are other data; identical people count as often as they occur."""
    a, b, c, d = [0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]
    X = np.array([a, b, c, d])
    assert content_digest(X, [1, 1, 2, 2]) != content_digest(X, [1, 2, 1, 2])          # {ab, cd} vs {ac, bd}
    assert content_digest(X, [1, 1, 2, 2]) != content_digest(X, [1, 1, 1, 2])          # {ab, cd} vs {abc, d}
    XX = np.array([a, b, a, b, c, d, c, d])                                               # {ab, ab, cd, cd}
    YY = np.array([a, b, c, d, a, c, b, d])                                               # {ab, cd, ac, bd}
    assert _people_of(XX, [1, 1, 2, 2, 3, 3, 4, 4]) != _people_of(YY, [1, 1, 2, 2, 3, 3, 4, 4])
    assert content_digest(XX, [1, 1, 2, 2, 3, 3, 4, 4]) != content_digest(YY, [1, 1, 2, 2, 3, 3, 4, 4])
    assert content_digest(XX, [1, 1, 2, 2, 3, 3, 4, 4]) != content_digest(XX, [1, 1, 2, 2, 3, 3, 3, 3])
    # Every person with one row: the same people as the rows without a person column.
    assert content_digest(X, ["w", "x", "y", "z"]) == content_digest(X)
    assert content_digest(X, [1, 1, 2, 3]) != content_digest(X)


_cell = st.sampled_from([0.0, -0.0, 1.0, 2.5])           # few values: equal rows and equal people are common


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 2).flatmap(lambda d: st.tuples(
    *[st.lists(st.tuples(st.lists(_cell, min_size=d, max_size=d), st.integers(0, 3)), max_size=7)] * 2)))
def test_equal_digests_are_equal_multisets_of_people(pair):
    """Against the brute-force canon: two data sets share a digest exactly when they hold the same people."""
    (first, second) = pair
    digests, canons = [], []
    for rows in (first, second):
        X = np.array([r for r, _ in rows], dtype=float).reshape(len(rows), -1 if rows else 1)
        units = [u for _, u in rows]
        digests.append(content_digest(X, units))
        canons.append((X.shape, _people_of(X, units)))
    assert (digests[0] == digests[1]) == (canons[0] == canons[1])


def test_renamed_gowalla_uploads_reach_the_capped_account(shared_data):
    """Issue 68, end to end on real data through the functions the app registers an upload with.

    In local mode (no sign-in configured) the person uploading is the data owner.  The first 20,000
    Gowalla check-ins (333 users, person level, L = 5) are uploaded, ε = 1 is spent on them and their
    account is capped at ε = 1.  The same check-ins uploaded again with every id plus 10,000,000, with
    the ids written as text, and with the ids permuted among the users, in another order and under
    other file names, reach that account, and the cap refuses their draws.
    """
    import pandas as pd

    from dpcore.exceptions import BudgetExceededError
    from dpcore.store import draw as D
    from ui import data_picker
    df = pd.read_csv(shared_data / "gowalla_nyc_checkins.csv.gz", nrows=20_000)
    assert df["user_id"].nunique() == 333
    rng = np.random.default_rng(68)
    ids = df["user_id"].unique()
    shuffled = dict(zip(ids, rng.permutation(ids)))
    renamed = {"shifted.csv": df.assign(user_id=df["user_id"] + 10_000_000),
               "as text.csv": df.assign(user_id="u" + df["user_id"].astype(str)).iloc[::-1],
               "permuted.csv": df.assign(user_id=df["user_id"].map(shuffled)).sample(frac=1.0, random_state=1)}
    store = ReleaseStore(os.environ["DPCORE_STORE"])

    def upload(name: str, frame):
        raw = frame.to_csv(index=False).encode()
        ds = datasets.dataset_from_frame(datasets.read_table(io.BytesIO(raw), filename=name),
                                         ["longitude", "latitude"], bounds=datasets.GOWALLA_BOUNDS,
                                         name=f"upload:{name}", unit_column="user_id")
        content = data_picker._fingerprint(ds)             # as the data picker does on every upload
        ds.name = data_picker._upload_account(name, content)
        return ds, content

    def draw(ds, content):
        s = D.settings(ds.name, content, "dplloyd", {"n_clusters": 5, "epsilon": 1.0, "max_contributions": 5},
                       bounds=ds.bounds, d=2)
        return D.draw(store, s, ds.X, privacy_id=ds.units, who="owner", new_draw=True)

    ds, content = upload("checkins.csv", df)
    draw(ds, content)                                         # registers the upload, spends ε = 1
    store.set_cap(ds.name, 1.0)                               # and the owner closes the account
    assert store.spent("upload:checkins.csv")[0] == pytest.approx(1.0)
    for name, frame in renamed.items():
        again, again_content = upload(name, frame)
        assert again.name == "upload:checkins.csv", name          # the same account, not a fresh one
        with pytest.raises(BudgetExceededError):
            draw(again, again_content)
    assert store.datasets() == ["upload:checkins.csv"]
    assert store.spent("upload:checkins.csv")[0] == pytest.approx(1.0)


def _page_upload(page: str, name: str, rows):
    """An owner (local mode) uploads ``rows`` on ``page`` with public bounds and the person column."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "pages" / page), default_timeout=240)
    at.query_params["dataset"] = "Upload a file…"
    for step in (lambda: None,
                 lambda: at.file_uploader(key="dataset_upload").set_value((name, _text(rows).encode(), "text/csv")),
                 lambda: at.text_area(key="dataset_bounds").set_value("-74.3, -73.7\n40.4, 41.0"),
                 lambda: at.selectbox(key="dataset_unit").set_value("user_id")):
        step()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_total_set_before_any_draw_keys_the_account_by_its_content():
    """The Release page's total, set before anything is drawn, opens an account the same people reach again.

    A total used to register the upload's name without its content key, so a file of the same people
    under new ids (or another name) found no account and opened a fresh one.
    """
    def upload(name: str, rows):
        return _page_upload("8_Release.py", name, rows)

    at = upload("checkins.csv", ROWS)
    at.number_input(key="cap_eps").set_value(1.0)
    at.button(key="FormSubmitter:cap_form-Set the total").click()
    at.run()
    store = ReleaseStore(os.environ["DPCORE_STORE"])
    assert store.cap("upload:checkins.csv") == (1.0, pytest.approx(1e-6)) and store.releases() == []
    X, units = np.array([(x, y) for x, y, _ in ROWS]), np.array([u for *_, u in ROWS])
    assert store.dataset_info("upload:checkins.csv")["fingerprint"] == store.content_key(X, units)
    again = upload("export 2.csv", [(x, y, u + 10_000_000) for x, y, u in ROWS[::-1]])
    assert any("already registered as “checkins.csv”" in i.value for i in again.info)
    assert store.datasets() == ["upload:checkins.csv"]


# -- accounts made before issue 68: person data keyed by the ids' names ---------------------------------
def test_an_account_keyed_by_a_former_digest_is_the_same_content():
    from dpcore.store.keys import former_digests
    X, units = np.array([(x, y) for x, y, _ in ROWS]), np.array([u for *_, u in ROWS])
    old, new = former_digests(X, units)[0], content_digest(X, units)
    assert old != new and former_digests(X) == ()
    store = ReleaseStore(":memory:")
    store.register_dataset("gowalla_like", fingerprint=old)                   # as dpcore registered it before
    assert store.dataset_for_fingerprint(new) is None
    assert store.dataset_for_fingerprint(new, former=(old,)) == "gowalla_like"
    store.register_dataset("gowalla_like", fingerprint=new, former=(old,))    # a draw now: the same account
    assert store.dataset_info("gowalla_like")["fingerprint"] != store.content_key(X, units)   # history kept
    with pytest.raises(ValueError, match="another fingerprint"):
        store.register_dataset("gowalla_like", fingerprint=new)               # without it: other data, refused
    with pytest.raises(ValueError, match="already registered as 'gowalla_like'"):
        store.register_dataset("copy of it", fingerprint=new, former=(old,))  # and no second account
    with pytest.raises(ValueError, match="at most 200 characters"):
        store.register_dataset("x", fingerprint=new, former=("f" * 201,))


def test_an_upload_registered_before_issue_68_reaches_its_account():
    """The same file, uploaded after the upgrade, is found through its former digest and drawn on in its account."""
    from dpcore.store import draw as D
    from dpcore.store.keys import former_digests
    from ui import data_picker
    X, units = np.array([(x, y) for x, y, _ in ROWS]), np.array([u for *_, u in ROWS])
    store = ReleaseStore(os.environ["DPCORE_STORE"])
    store.register_dataset("upload:checkins.csv", fingerprint=former_digests(X, units)[0])
    store.set_cap("upload:checkins.csv", 1.0)
    df = datasets.read_table(io.BytesIO(_text(ROWS[::-1]).encode()), filename="checkins (2).csv")
    ds = datasets.dataset_from_frame(df, ["longitude", "latitude"], bounds=(np.array([-74.3, 40.4]),
                                     np.array([-73.7, 41.0])), unit_column="user_id", name="upload:checkins (2).csv")
    content = data_picker._fingerprint(ds)
    ds.name = data_picker._upload_account("checkins (2).csv", content, ds)
    assert ds.name == "upload:checkins.csv"
    s = D.settings(ds.name, content, "eugkm", {"n_clusters": 3, "epsilon": 0.5, "max_contributions": 5},
                   bounds=ds.bounds, d=2)
    D.draw(store, s, ds.X, privacy_id=ds.units, former=former_digests(ds.X, ds.units))
    assert store.datasets() == ["upload:checkins.csv"] and store.spent("upload:checkins.csv")[0] == 0.5


def test_the_explorer_draws_in_an_account_registered_before_issue_68():
    """The app's draw registers the upload with its current and former digests: the old account takes it.

    Before, its draw under the same file name was refused ("another fingerprint: it is different data").
    """
    from dpcore.store.keys import former_digests
    X, units = np.array([(x, y) for x, y, _ in ROWS]), np.array([u for *_, u in ROWS])
    store = ReleaseStore(os.environ["DPCORE_STORE"])
    store.register_dataset("upload:checkins.csv", fingerprint=former_digests(X, units)[0])   # an older dpcore's key
    at = _page_upload("1_Explorer.py", "checkins (2).csv", ROWS[::-1])
    assert any("already registered as “checkins.csv”" in i.value for i in at.info)
    next(b for b in at.button if str(b.key or "").startswith("draw_")).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert store.datasets() == ["upload:checkins.csv"] and len(store.releases("upload:checkins.csv")) == 1
