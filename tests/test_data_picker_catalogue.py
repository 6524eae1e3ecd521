"""The data picker's catalogue (issue 56, speed): read once per change of the data folder, never stale."""
from __future__ import annotations

import os

from dpcore import datasets
from ui import data_picker


def test_catalogue_matches_the_library_and_follows_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_DATA", str(tmp_path))
    monkeypatch.delenv("DPCORE_SOURCES", raising=False)
    first = data_picker._catalogue()
    assert list(first) == datasets.available()
    assert all(first[n]["title"] == datasets.info(n, metadata=False)["title"] for n in first)
    assert data_picker._catalogue() is first                  # the same folder: read once, not per call
    (tmp_path / "franti_s1.csv.gz").write_bytes(b"")          # a known file appears: the folder changed
    os.utime(tmp_path, ns=(0, os.stat(tmp_path).st_mtime_ns + 1))   # (a coarse clock may not tick)
    second = data_picker._catalogue()
    assert "franti_s1" in second and "franti_s1" not in first
    assert second["franti_s1"]["title"] == datasets.info("franti_s1", metadata=False)["title"]
    assert data_picker._dataset_label("franti_s1") == second["franti_s1"]["title"]
