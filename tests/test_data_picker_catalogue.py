"""The data picker's catalogue (issue 56): read once per change of the data folder, never stale; every name whole."""
from __future__ import annotations

import os

import pandas as pd
import pytest

from dpcore import datasets
from ui import data_picker
from ui.page import UPLOAD


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


def _labels(monkeypatch, folder) -> dict[str, str]:
    if folder is None:
        monkeypatch.delenv("DPCORE_DATA", raising=False)
    else:
        monkeypatch.setenv("DPCORE_DATA", str(folder))
    monkeypatch.delenv("DPCORE_SOURCES", raising=False)
    listed = data_picker._catalogue()
    return {n: data_picker._dataset_label(n, listed) for n in listed}


@pytest.mark.parametrize("with_files", [False, True], ids=["bundled", "with DPCORE_DATA"])
def test_every_title_fits_the_sidebar_box_and_names_one_data_set(with_files, monkeypatch, request):
    """Issue 56, layout: the sidebar's one-line select box shows ~30 characters; every listed name is whole there.

    The five NYC taxi sets were once told apart only by words the box cut off.  Each title fits as shown
    (with its mark), no two are the same, and each has a summary line for the caption under the box.
    """
    folder = request.getfixturevalue("shared_data") if with_files else None
    labels = _labels(monkeypatch, folder)
    assert len(labels) > (30 if with_files else 8)           # the folder's files are listed, not only the bundled
    too_long = {n: t for n, t in labels.items() if len(t) > data_picker.LABEL_FITS}
    assert not too_long, f"cut in the sidebar's box: {too_long}"
    assert len(set(labels.values())) == len(labels), "two data sets share a title"
    assert len({t.casefold() for t in labels.values()}) == len(labels)
    taxi = [t for n, t in labels.items() if n.startswith("nyc_taxi")]
    assert len(taxi) == (6 if with_files else 2) and all(t.startswith("NYC taxi ") for t in taxi)
    missing = [n for n in labels if not datasets.info(n, metadata=False)["summary"]]
    assert not missing, f"no summary for the caption under the box: {missing}"


def test_local_taxi_copies_get_short_readable_titles(tmp_path, monkeypatch):
    """Generated titles of local taxi files name their period in words, whatever the file's stem."""
    for stem in ("2009-01", "2016-01to03", "2009-2015_bq_sample", "2015-12", "1999-2024", "my_own_extract"):
        pd.DataFrame({"pickup_longitude": [-74.0], "pickup_latitude": [40.75]}).to_parquet(
            tmp_path / f"nyc_taxi_{stem}_pickups.parquet")
    monkeypatch.setenv("DPCORE_DATA", str(tmp_path))
    titles = {n: datasets.info(n)["title"] for n in datasets.available() if n.endswith("_pickups")}
    assert titles == {"nyc_taxi_2009-01_pickups": "NYC taxi Jan 2009 (local)",
                      "nyc_taxi_2016-01to03_pickups": "NYC taxi Jan–Mar 2016 (local)",
                      "nyc_taxi_2009-2015_bq_sample_pickups": "NYC taxi 2009–15 (local)",
                      "nyc_taxi_2015-12_pickups": "NYC taxi Dec 2015 (local)",
                      "nyc_taxi_1999-2024_pickups": "NYC taxi 1999–2024 (local)",
                      "nyc_taxi_my_own_extract_pickups": "NYC taxi my own extract (local)"}
    assert all(f"nyc_taxi_{s}" in datasets.info(n)["summary"] for n in titles for s in [n[9:-8]])


class _Sidebar:
    def __init__(self):
        self.captions: list[str] = []

    def caption(self, text):
        self.captions.append(text)


def test_caption_under_the_box_gives_the_summary_and_a_cut_title_in_full(tmp_path, monkeypatch):
    """The caption says what the chosen data is; a configured source's title too long for the box leads it whole."""
    long_title = "Every trip of the city's taxis, 2009-2024, partitioned"
    cfg = tmp_path / "dpcore_sources.toml"
    cfg.write_text(f'[[source]]\nname = "short"\ntitle = "Big taxi lake"\nsummary = "Pickups, read where they lie."\n'
                   f'path = "lake"\ncolumns = ["x", "y"]\nlower = [0, 0]\nupper = [1, 1]\n\n'
                   f'[[source]]\nname = "long"\ntitle = "{long_title}"\npath = "lake"\ncolumns = ["x", "y"]\n'
                   'lower = [0, 0]\nupper = [1, 1]\n')
    monkeypatch.delenv("DPCORE_DATA", raising=False)
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))
    listed = data_picker._catalogue()
    assert data_picker._dataset_label("short", listed) == "Big taxi lake" + data_picker.LARGE_MARK
    shown = {}
    for name in ("short", "long", "spirals", UPLOAD):
        where = _Sidebar()
        data_picker._about(where, name, listed)
        shown[name] = where.captions
    assert shown["short"] == ["Pickups, read where they lie."]          # fits: the summary only
    assert shown["long"] == [long_title + data_picker.LARGE_MARK]       # cut in the box: in full here
    assert shown["spirals"] == [datasets.info("spirals")["summary"]]
    assert shown[UPLOAD] == []


def test_the_other_choices_beside_the_data_set_fit_the_box_too():
    """The person-level 'Bounding' box cut "keep at most L rows of each pers…" in Chromium at 1280×720."""
    shown = [*data_picker.BOUNDINGS.values(), data_picker.NO_UNIT]
    assert all(len(label) <= data_picker.LABEL_FITS for label in shown), shown
