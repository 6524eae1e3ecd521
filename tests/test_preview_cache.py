"""Previews of public data kept on disk (issue 66): a restart shows the same preview without fitting again, for
the same data and code only, and concurrent writers never leave half an entry."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest
import streamlit as st

from dpcore import datasets
from ui import preview_cache as PC
from ui import releases
from ui.data_picker import _fingerprint


def test_an_entry_comes_back_for_its_key_only(tmp_path):
    assert PC.cache_dir() == tmp_path / "previews"          # the test's own folder (tests/conftest.py)
    PC.save("k1", {"release": {"a": [1, 2.5]}, "regime": None})
    assert PC.load("k1")["release"] == {"a": [1, 2.5]}
    assert PC.load("k2") is None
    files = list((tmp_path / "previews").rglob("*"))
    assert [f.suffix for f in files if f.is_file()] == [".json"]      # no temporary file left behind
    # An entry whose file holds another key (a collision, or a file copied by hand) is not taken for this one.
    path = next(f for f in files if f.is_file())
    path.write_text(json.dumps({"format": PC.FORMAT, "key": "other", "release": {}}))
    assert PC.load("k1") is None
    path.write_text("{half an entr")                           # unreadable: a miss, never an error
    assert PC.load("k1") is None


def test_kept_computes_once_then_reads_back_and_recomputes_what_it_cannot_read(tmp_path):
    """The one "read back, else compute and keep": a second call reads; an entry its decoder refuses or cannot
    read is a miss (computed again), and an entry that cannot be encoded is only not kept."""
    calls = []

    def make():
        calls.append(1)
        return [1.0, 2.0]

    def decode(entry):
        return entry["values"] if len(entry["values"]) == 2 else None

    def encode(values):
        return {"values": values}

    assert PC.kept("v", make, encode=encode, decode=decode) == [1.0, 2.0] and len(calls) == 1
    assert PC.kept("v", make, encode=encode, decode=decode) == [1.0, 2.0] and len(calls) == 1    # read back
    PC.save("v", {"values": [1.0]})                             # the decoder refuses it: computed again
    assert PC.kept("v", make, encode=encode, decode=decode) == [1.0, 2.0] and len(calls) == 2
    PC.save("v", {"other": 1})                                   # a KeyError in the decoder: a miss, not an error
    assert PC.kept("v", make, encode=encode, decode=decode) == [1.0, 2.0] and len(calls) == 3
    assert PC.kept("v", make, encode=encode, decode=decode) == [1.0, 2.0] and len(calls) == 3

    def unencodable(values):
        raise ValueError("no")

    assert PC.kept("w", make, encode=unencodable, decode=decode, background=True) == [1.0, 2.0]
    PC.flush()
    assert PC.load("w") is None and len(calls) == 4


def test_another_code_version_does_not_read_it(monkeypatch):
    PC.save("k", {"release": {"x": 1}})
    monkeypatch.setattr(PC, "code_version", lambda: "0.0.0-other")
    assert PC.load("k") is None


def test_the_code_version_follows_every_file_of_the_package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    before = PC.files_digest(pkg, "1.0")
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    assert PC.files_digest(pkg, "1.0") == before               # compiled files do not count
    (pkg / "a.py").write_text("x = 2\n")
    assert PC.files_digest(pkg, "1.0") != before
    assert PC.files_digest(pkg, "1.1") != PC.files_digest(pkg, "1.0")
    import dpcore
    assert PC.code_version().startswith(dpcore.__version__ + "-")


def test_a_cache_that_cannot_be_written_is_only_a_miss(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(PC.ENV, str(blocker / "previews"))     # a file where the folder would be
    PC.save("k", {"release": {}})                             # no exception
    assert PC.load("k") is None


def test_concurrent_writers_leave_one_whole_entry():
    bodies = [{"release": {"writer": i, "values": list(range(2000))}} for i in range(6)]
    seen, stop = [], threading.Event()

    def write(body):
        for _ in range(15):
            PC.save("same", body)

    def read():
        while not stop.is_set():
            seen.append(PC.load("same"))

    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(b,)) for b in bodies]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    reader.join()
    assert PC.load("same")["release"]["writer"] in range(6)
    assert all(e is None or e["release"]["values"] == list(range(2000)) for e in seen)   # never half a file


@pytest.fixture
def taxi():
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
    assert ds.public
    # An earlier test in this worker may have left the same preview in the server's memory: then no fit, and
    # nothing written to this test's empty disk cache.
    st.cache_resource.clear()
    return ds, _fingerprint(ds)


def test_a_restarted_server_shows_the_same_preview_without_fitting(taxi, monkeypatch):
    ds, fp = taxi
    first = releases.public_preview(ds, fp, "sanitize", {"epsilon": 1.0})
    assert first.preview and first.release_id is None and first.synopsis_.size > 100
    PC.flush()                                                # its release written (a background thread)
    st.cache_resource.clear()                                 # the server's memory gone, as after a restart

    def no_fit(*a, **k):
        raise AssertionError("fitted again")
    monkeypatch.setattr(releases, "_fit_private", no_fit)
    again = releases.public_preview(ds, fp, "sanitize", {"epsilon": 1.0})
    np.testing.assert_array_equal(again.synopsis_.points, first.synopsis_.points)
    np.testing.assert_array_equal(again.synopsis_.weights, first.synopsis_.weights)
    assert again.budget_.total() == first.budget_.total() and again.preview
    assert type(again).__name__ == "ReleasedFit"              # read back: the release the fit would publish
    # Another ε is another setting: not on disk, so it is fitted (here: refused by the stub).
    st.cache_resource.clear()
    with pytest.raises(AssertionError, match="fitted again"):
        releases.public_preview(ds, fp, "sanitize", {"epsilon": 2.0})


def test_the_coreset_preview_keeps_its_regime_check(taxi):
    ds, fp = taxi
    params = {"n_clusters": 5, "delta": 1e-8, "epsilon": 2.0, "budget": "schedule", "constants": "proved"}
    fit = releases.public_preview(ds, fp, "coreset", params)
    PC.flush()
    st.cache_resource.clear()
    again = releases.public_preview(ds, fp, "coreset", params)
    assert fit.regime_ == again.regime_ and again.regime_.status in ("ok", "warn")
    assert again.coreset_size_ == fit.coreset_size_
    np.testing.assert_array_equal(again.cluster_centers_, fit.cluster_centers_)


def test_previews_of_private_data_are_never_kept(taxi, tmp_path):
    ds, fp = taxi
    ds.public = False
    with pytest.raises(ValueError, match="only for public data"):
        releases.public_preview(ds, fp, "sanitize", {"epsilon": 1.0})
    assert not (tmp_path / "previews").exists() or not any((tmp_path / "previews").rglob("*.json"))


def test_a_restarted_server_reads_the_k_means_reference_of_public_data_back(taxi, tmp_path, monkeypatch):
    """The non-private reference of the taxi sample (k-means, ~1.5 s) is kept on disk: after a restart the pages get
    the same centres and inertia without fitting; a reference of private data is never written."""
    import dpcore
    ds, fp = taxi
    st.cache_data.clear()
    first = releases.baseline(ds, fp, "kmeans", n_clusters=4, epsilon=None, random_state=0)
    assert list((tmp_path / "previews").rglob("*.json"))
    st.cache_data.clear()                                     # the server's memory gone, as after a restart
    fit = dpcore.ALGORITHMS["kmeans"].fit

    def no_fit(*a, **k):
        raise AssertionError("fitted again")
    monkeypatch.setattr(dpcore.ALGORITHMS["kmeans"], "fit", no_fit)
    again = releases.baseline(ds, fp, "kmeans", n_clusters=4, epsilon=None, random_state=0)
    np.testing.assert_array_equal(again.cluster_centers_, first.cluster_centers_)
    assert again.inertia_ == first.inertia_ and again.n_iter_ == first.n_iter_ and again.n_clusters == 4
    monkeypatch.setattr(dpcore.ALGORITHMS["kmeans"], "fit", fit)
    monkeypatch.setenv("DPCORE_PREVIEW_CACHE", str(tmp_path / "private"))
    ds.public = False
    st.cache_data.clear()
    releases.baseline(ds, fp, "kmeans", n_clusters=4, epsilon=None, random_state=0)
    assert not list((tmp_path / "private").rglob("*.json"))
