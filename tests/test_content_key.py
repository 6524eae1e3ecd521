"""One account per people (issue 55): the content key of the rows, not of the file that held them."""
from __future__ import annotations

import io

import numpy as np
import pytest

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
