"""One account per data set (issue 29 item 3): the same bytes under another file name reach the same cap."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpcore.store import ReleaseStore

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "1_Explorer.py")
UPLOAD = "Upload a file…"
CONTENT = ("x,y\n" + "\n".join(f"{(i * 37) % 100},{(i * 53) % 100}" for i in range(400)) + "\n").encode()


def _run(at):
    at.run(timeout=240)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _upload(name: str, *, epsilon: float | None = None):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.query_params["dataset"] = UPLOAD
    _run(at)
    at.file_uploader(key="dataset_upload").set_value((name, CONTENT, "text/csv"))
    _run(at)
    at.text_area(key="dataset_bounds").set_value("0, 100\n0, 100")
    _run(at)
    if epsilon is not None:
        at.select_slider(key="epsilon").set_value(epsilon)
        _run(at)
    return at


def _released(at) -> bool:
    return any("Privacy budget of this draw" in m.value for m in at.markdown)


def test_store_refuses_a_second_account_for_the_same_content():
    store = ReleaseStore(":memory:")
    store.register_dataset("upload:patients.csv", fingerprint="abc123")
    assert store.dataset_for_fingerprint("abc123") == "upload:patients.csv"
    assert store.dataset_for_fingerprint("other") is None
    with pytest.raises(ValueError, match="already registered as 'upload:patients.csv'"):
        store.register_dataset("upload:patients (1).csv", fingerprint="abc123")
    store.register_dataset("upload:patients.csv", fingerprint="abc123")   # the same name: idempotent
    assert store.datasets() == ["upload:patients.csv"]


def test_same_bytes_under_two_names_share_one_account_and_its_cap():
    first = _upload("patients.csv")
    assert _released(first)
    store = ReleaseStore(os.environ["DPCORE_STORE"])
    assert store.datasets() == ["upload:patients.csv"]
    spent = store.spent("upload:patients.csv")[0]
    store.set_cap("upload:patients.csv", spent)          # the owner closes the account: nothing is left

    second = _upload("patients (1).csv")                   # a new session, the same bytes, another name
    assert any("already registered as “patients.csv”" in i.value for i in second.info)
    assert _released(second)                               # the draw already made is shown again, at no cost
    assert store.spent("upload:patients.csv")[0] == spent
    second.select_slider(key="epsilon").set_value(0.5)
    _run(second)
    assert not _released(second)                           # a new draw cannot fit under the owner's cap:
    draw = [b for b in second.button if str(b.key or "").startswith("draw_")]
    assert draw and all(b.proto.disabled for b in draw)    # its button says so before it is pressed (issue 65)
    assert store.datasets() == ["upload:patients.csv"]     # no second, uncapped account was opened
    assert store.spent("upload:patients.csv")[0] == spent
