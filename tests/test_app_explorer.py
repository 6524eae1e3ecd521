"""The explorer page through Streamlit's AppTest: slider, algorithm switch, bad uploads, URL state."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dpcore

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "1_Explorer.py")


def run(at):
    at.run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def at():
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.query_params["dataset"] = "s1_like"
    return run(app)


def nicv_private(at):
    return next(m for m in at.metric if m.label == "NICV, private").value


def test_default_page_renders_release_and_ledger(at):
    assert at.title[0].value == "Private k-means explorer"
    assert any("Privacy budget spent" in m.value for m in at.markdown)
    assert len(at.dataframe) == 1  # the ledger table
    assert any("not private" in c.value for c in at.caption)


def test_epsilon_slider_changes_release_and_url(at):
    before = nicv_private(at)
    at.select_slider(key="epsilon").set_value(0.05)
    run(at)
    assert nicv_private(at) != before
    assert at.query_params["epsilon"] == "0.05"
    assert any("ε = 0.05 of 0.05" in m.value for m in at.markdown)


def test_same_inputs_replay_the_same_release(at):
    first = nicv_private(at)
    run(at)  # a rerun must not draw fresh noise
    assert nicv_private(at) == first


def test_algorithm_switch_shows_each_centroid_algorithm(at):
    keys = [k for k, c in dpcore.ALGORITHMS.items() if c.private and c.family == "centroids"]
    assert {"dplloyd", "eugkm", "hybrid"} <= set(keys)
    for key in ("dplloyd", "hybrid"):
        at.selectbox(key="algorithm").set_value(key)
        run(at)
        assert at.query_params["algorithm"] == key
        assert not at.error
    assert any("Hybrid branch" in i.value for i in at.info)


def upload(at, name, content, mime="text/csv"):
    at.selectbox(key="dataset").set_value("Upload a file…")
    run(at)
    at.file_uploader(key="dataset_upload").set_value((name, content, mime))
    return run(at)


def test_bad_uploads_show_a_sentence_not_a_traceback(at):
    upload(at, "empty.csv", b"")
    assert at.error and "empty" in at.error[0].value.lower()
    upload(at, "names.csv", b"name,city\nann,paris\nbob,rome\n")
    assert at.error and "numeric" in at.error[0].value.lower()


def test_good_upload_without_bounds_warns_about_privacy(at):
    rows = "\n".join(f"{i % 7},{(i * 3) % 11}" for i in range(200))
    upload(at, "points.csv", f"x,y\n{rows}\n".encode())
    assert any("NOT private" in w.value for w in at.warning)
    assert any("Privacy budget spent" in m.value for m in at.markdown)


def test_k_larger_than_n_is_explained(at):
    upload(at, "tiny.csv", b"x,y\n1,2\n3,4\n5,6\n")
    at.number_input(key="k").set_value(5)
    run(at)
    assert at.error and "larger than the number of points" in at.error[0].value
