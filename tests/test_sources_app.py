"""Large sources for the app: the config file and the dataset list from metadata (nothing loaded)."""

import numpy as np
import pandas as pd
import pytest

from dpcore import datasets
from dpcore.explain import NOT_PRIVATE
from dpcore.sources.config import read_config

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

BOUNDS = "lower = [-74.1, 40.7]\nupper = [-73.9, 40.9]\n"


def configure_lake(tmp_path, monkeypatch, rows) -> None:
    """Write ``rows`` as 3 monthly Parquet partitions under $DPCORE_DATA/big and a dpcore_sources.toml naming them."""
    data = tmp_path / "lake"
    for i, part in enumerate(np.array_split(rows, 3)):
        folder = data / "big" / f"month=2015-0{i + 1}"
        folder.mkdir(parents=True)
        pd.DataFrame(part, columns=["pickup_longitude", "pickup_latitude"]).to_parquet(folder / "part-0.parquet")
    cfg = tmp_path / "dpcore_sources.toml"
    cfg.write_text('[[source]]\nname = "big_taxi"\ntitle = "Big taxi lake"\npath = "big"\n'
                   'columns = ["pickup_longitude", "pickup_latitude"]\n' + BOUNDS + "geo = true\nn_clusters_hint = 5\n")
    monkeypatch.setenv("DPCORE_DATA", str(data))
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))


@pytest.fixture
def configured(tmp_path, monkeypatch, taxi_X):
    """A folder of monthly Parquet files and a dpcore_sources.toml naming it (relative to DPCORE_DATA)."""
    configure_lake(tmp_path, monkeypatch, taxi_X[:30_000])


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


# -- the Explorer on a large source (issue 14 item 5) ------------------------------------------------------
PAGES = __import__("pathlib").Path(__file__).resolve().parents[1] / "pages"
N_BIG = 30_017      # a distinctive row count, so the raw-facts walk can look for it


@pytest.fixture
def big_source(tmp_path, monkeypatch, taxi_X):
    """A folder of monthly Parquet files (N_BIG finite rows, 3 with a NaN, 1 outside the box) and its config."""
    rows = np.vstack([taxi_X[:N_BIG - 1], [[-75.0, 40.8]], [[np.nan, 40.8]] * 3])
    configure_lake(tmp_path, monkeypatch, rows)
    return rows


def _explorer(**params):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(PAGES / "1_Explorer.py"), default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _deck_json(at) -> str:
    return "\n".join(el.proto.json for el in at.get("deck_gl_json_chart"))


def test_explorer_draws_a_recorded_release_of_a_large_source(big_source):
    from dpcore import SCALABLE
    from dpcore.store import ReleaseStore

    at = _explorer(dataset="big_taxi", epsilon="1", k="5")
    assert not at.error, [e.value for e in at.error]
    assert set(at.selectbox(key="algorithm").options) <= {dpcore_name(k) for k in SCALABLE}
    assert any("Privacy budget of this draw" in m.value for m in at.markdown)
    deck = _deck_json(at)
    import json
    ids = [layer["id"] for layer in json.loads(deck)["layers"]]
    assert "synopsis" in ids and "raw" not in ids       # the released grid; never raw points
    # Recorded in the store before it was shown, as a release of the configured dataset.
    hist = ReleaseStore(None).history("big_taxi")
    assert [h["algorithm"] for h in hist] == ["eugkm"]
    # Utility against the non-private reference fitted on the same source (NICV, both on the raw data).
    nicv = {m.label: float(m.value) for m in at.metric}
    assert nicv["NICV, private"] <= 1.5 * nicv["NICV, non-private"]
    # The exact-density overlay replaces the noisy cells and says it is not private.
    at.checkbox(key="show_raw").check()
    at.run()
    assert not at.exception and not at.error
    assert any("EXACT density" in c.value and NOT_PRIVATE in c.value for c in at.caption)
    assert "exact count (not private)" in _deck_json(at)
    assert len(ReleaseStore(None).history("big_taxi")) == 1      # the overlay spent nothing


def dpcore_name(key):
    import dpcore
    return dpcore.ALGORITHMS[key].display_name or key


def test_only_scalable_algorithms_run_on_a_large_source(big_source):
    at = _explorer(dataset="big_taxi", algorithm="gkm", k="3")     # GkM needs the rows in memory
    assert at.selectbox(key="algorithm").value in ("dplloyd", "eugkm", "hybrid")
    assert not at.error, [e.value for e in at.error]
    at = _explorer(dataset="big_taxi", algorithm="dplloyd", k="3")
    assert not at.error and at.selectbox(key="algorithm").value == "dplloyd"
    assert any("Privacy budget of this draw" in m.value for m in at.markdown)


def test_large_source_row_count_appears_only_in_the_raw_facts_panel(big_source):
    from app_walk import number_pattern, rendered_texts

    at = _explorer(dataset="big_taxi", algorithm="dplloyd", k="5")
    texts = rendered_texts(at)
    pattern = number_pattern(N_BIG)
    inside = [t for fenced, t in texts if fenced and pattern.search(t)]
    outside = [t[:300] for fenced, t in texts if not fenced and pattern.search(t)]
    assert inside and not outside, outside
    facts = " ".join(t for fenced, t in texts if fenced)
    assert "skipped by every aggregate" in facts and "clipped onto them: 1" in facts


def test_a_broken_source_entry_is_a_sentence_not_a_traceback(big_source, tmp_path, monkeypatch):
    cfg = tmp_path / "broken.toml"
    cfg.write_text('[[source]]\nname = "gone"\npath = "/nowhere/*.parquet"\ncolumns = ["a", "b"]\n' + BOUNDS)
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))
    at = _explorer(dataset="gone")
    assert at.error and "matches no file" in at.error[0].value and "dpcore_sources.toml" in at.error[0].value


def test_duckdb_progress_within_a_pass_changes_nothing(big_source):
    """The progress-polling path returns the same exact aggregate, and reports fractions in [0, 1]."""
    from dpcore import sources

    lo, hi = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))
    plain = sources.from_files(big_source_path(), columns=["pickup_longitude", "pickup_latitude"])
    polled = sources.from_files(big_source_path(), columns=["pickup_longitude", "pickup_latitude"])
    seen, labels = [], []
    polled.on_progress, polled.on_pass = seen.append, labels.append
    assert np.array_equal(plain.grid_counts((lo, hi), (64, 64)), polled.grid_counts((lo, hi), (64, 64)))
    assert labels == ["grid counts"] and all(0.0 <= f <= 1.0 for f in seen)


def big_source_path():
    import os
    return os.path.join(os.environ["DPCORE_DATA"], "big")


def test_compare_draws_whole_source_panels_and_skips_the_curve(big_source):
    from streamlit.testing.v1 import AppTest

    from dpcore.store import ReleaseStore

    at = AppTest.from_file(str(PAGES / "6_Compare.py"), default_timeout=300)
    at.query_params.update({"dataset": "big_taxi", "algorithm": "eugkm", "k": "5", "epsilon": "1"})
    at.run()
    at.button(key="draw_panels").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception or at.error]
    assert len(ReleaseStore(None).history("big_taxi")) >= 3          # one recorded release per panel
    assert at.toggle(key="curve").disabled
    assert any("not computed here" in i.value for i in at.info)
    assert not any("Switch on" in i.value for i in at.info)      # no invitation to a switch that is off


def test_changed_files_of_a_source_do_not_reset_its_account(big_source, taxi_X):
    """Appending a month changes the source's content key: the store refuses instead of opening a fresh account."""
    import os

    at = _explorer(dataset="big_taxi", k="5")
    assert not at.error
    month = os.path.join(big_source_path(), "month=2015-04")
    os.makedirs(month)
    pd.DataFrame(taxi_X[-500:], columns=["pickup_longitude", "pickup_latitude"]).to_parquet(
        os.path.join(month, "part-0.parquet"))
    at = _explorer(dataset="big_taxi", k="4")
    assert at.error and "another fingerprint" in at.error[0].value and "new name" in at.error[0].value
    assert not any("Privacy budget of this draw" in m.value for m in at.markdown)


def test_an_unreachable_database_is_a_sentence_not_a_traceback(tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:          # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "db.toml"
    cfg.write_text(f'[[source]]\nname = "warehouse"\nurl = "postgresql://nobody@127.0.0.1:{port}/tlc"\n'
                   'table = "trips"\ncolumns = ["lon", "lat"]\n' + BOUNDS)
    monkeypatch.setenv("DPCORE_SOURCES", str(cfg))
    at = _explorer(dataset="warehouse")
    assert at.error and "could not run where the data lie" in at.error[0].value
    assert "reachable" in at.error[0].value and "nobody@" not in at.error[0].value   # no user/password echoed


def test_release_page_publishes_the_explorer_draw_of_a_large_source(big_source):
    from streamlit.testing.v1 import AppTest

    from dpcore.release import validate_release
    from dpcore.store import ReleaseStore

    _explorer(dataset="big_taxi", algorithm="eugkm", k="5", epsilon="1")
    at = AppTest.from_file(str(PAGES / "8_Release.py"), default_timeout=300)
    at.query_params.update({"dataset": "big_taxi", "algorithm": "eugkm", "k": "5", "epsilon": "1"})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception or at.error]
    recs = ReleaseStore(None).releases("big_taxi")
    assert len(recs) == 1                                   # the same draw: nothing spent again
    validate_release(recs[0].release)
    assert any(f"Release #{recs[0].id}" in c.value for c in at.caption)
