"""Large sources for the app: the config file and the dataset list from metadata (nothing loaded)."""

import numpy as np
import pandas as pd
import pytest

from dpcore import datasets
from dpcore.sources.config import read_config

BOUNDS = "lower = [-74.1, 40.7]\nupper = [-73.9, 40.9]\n"


@pytest.fixture
def configured(tmp_path, monkeypatch, taxi_X):
    """A folder of monthly Parquet files and a dpcore_sources.toml naming it (relative to DPCORE_DATA)."""
    data = tmp_path / "lake"
    for i, part in enumerate(np.array_split(taxi_X[:30_000], 3)):
        (data / "big" / f"month=2015-0{i + 1}").mkdir(parents=True)
        pd.DataFrame(part, columns=["pickup_longitude", "pickup_latitude"]).to_parquet(
            data / "big" / f"month=2015-0{i + 1}" / "part-0.parquet")
    cfg = tmp_path / "dpcore_sources.toml"
    cfg.write_text('[[source]]\nname = "big_taxi"\ntitle = "Big taxi"\npath = "big"\n'
                   'columns = ["pickup_longitude", "pickup_latitude"]\n' + BOUNDS + "geo = true\n")
    monkeypatch.setenv("DPCORE_DATA", str(data))
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))
    return cfg


def test_configured_source_is_listed_with_metadata_and_never_loaded(configured):
    assert "big_taxi" in datasets.available()
    meta = datasets.info("big_taxi")
    assert meta["large"] and meta["rows"] == 30_000
    assert meta["columns"] == ["pickup_longitude", "pickup_latitude"]
    ds = datasets.load("big_taxi")
    assert ds.X.shape == (0, 2) and ds.data_source is not None and ds.n == 30_000


def test_bad_config_entries_are_clear(tmp_path, monkeypatch):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[[source]]\nname = "x"\npath = "a"\n')
    with pytest.raises(ValueError, match="public bounds"):
        read_config(cfg)
    cfg.write_text('[[source]]\nname = "x"\nurl = "postgresql://h/db"\n' + BOUNDS)
    with pytest.raises(ValueError, match="no table"):
        read_config(cfg)
    cfg.write_text('[[source]]\nname = "x"\npath = "/nowhere/*.parquet"\n' + BOUNDS)
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))
    assert "matches no file" in datasets.info("x")["error"]
    monkeypatch.setenv("DPCORE_SOURCES", str(tmp_path / "missing.toml"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_config()
