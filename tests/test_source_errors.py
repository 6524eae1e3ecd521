"""Exceptions of a private fit carry public facts only (issue 29 item 4), on DuckDB, Spark and PostgreSQL.

An engine's own message can quote a record (``CSV Error on Line: 43212``, the bad value, a count).  A
private fit on a source with one malformed value must raise a ``SourceError`` that names the source, its
columns and the type they need, and nothing that depends on the rows: two sources whose malformed values
sit on other lines, with other text and in other numbers give the *same* message (the structural rule:
an exception is a function of public inputs only).  The engine's full message goes to the server log.
"""
from __future__ import annotations

import logging
import os
import re
import shutil

import numpy as np
import pytest

import dpcore
from dpcore import sources
from dpcore.sources import SourceError

N = 30_000


def _csv(path, bad: dict[int, str]):
    """N rows of x,y in [0, 1]; ``bad`` maps a data line number to the text put in its y column."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(N, 2))
    lines = ["x,y"] + [f"{x:.6f},{bad.get(i + 1, f'{y:.6f}')}" for i, (x, y) in enumerate(X)]
    path.write_text("\n".join(lines) + "\n")
    return path


#: (lines and values of the malformed cells) in two datasets that differ in where, what and how many.
VARIANTS = [{25_001: "n/a"}, {27_113: "12,5x", 29_000: "#REF!"}]


def _fit_error(make_source) -> str:
    est = dpcore.ALGORITHMS["eugkm"](n_clusters=3, epsilon=1.0, bounds=(0, 1), n_init=2)
    with pytest.raises(SourceError) as info:
        est.fit(make_source())
    return str(info.value)


def _assert_public_only(messages: list[str], bad_values):
    assert messages[0] == messages[1], messages          # the same, whatever the rows
    for m in messages:
        # The source's own path is a public input; its digits (pytest's tmp counter) are not a row's.
        bare = re.sub(r"(/[^\s]*)+", "<path>", m)
        assert not re.search(r"\d{3,}", bare), m          # no line number, no count
        for v in bad_values:
            assert v not in m, m                           # no value
        assert "x, y" in m and "number" in m, m           # what to fix: the columns and their type


def _bad_values():
    return [v for d in VARIANTS for v in d.values()]


def test_duckdb_csv_error_names_columns_not_rows(tmp_path, caplog):
    path = tmp_path / "trips.csv"
    messages = []
    with caplog.at_level(logging.ERROR, logger="dpcore.sources"):
        for bad in VARIANTS:
            _csv(path, bad)
            messages.append(_fit_error(lambda: sources.from_files(path, columns=["x", "y"])))
    _assert_public_only(messages, _bad_values())
    # The engine's full message (for the data owner) is in the server log.
    assert any("n/a" in r.getMessage() or "25" in r.getMessage() for r in caplog.records)


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        if os.environ.get("CI"):
            pytest.fail("no Java in CI: .ci/run installs openjdk-17-jre-headless")
        pytest.skip("no Java")
    session = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                      "spark.sql.shuffle.partitions": "2"})
    session.sparkContext.setLogLevel("OFF")
    yield session


def test_spark_failfast_error_names_columns_not_rows(tmp_path, spark):
    messages = []
    for i, bad in enumerate(VARIANTS):
        path = _csv(tmp_path / f"v{i}.csv", bad)

        def make(path=path):
            df = (spark.read.schema("x double, y double").option("header", True).option("mode", "FAILFAST")
                  .csv(str(path)))
            return sources.from_spark(df, columns=["x", "y"])
        messages.append(_fit_error(make).replace(str(path), "<file>"))
    _assert_public_only(messages, _bad_values())


def test_postgres_cast_error_names_columns_not_rows(pg_server):
    import ibis
    import pandas as pd
    url = pg_server.new_database("malformed")
    con = ibis.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    messages = []
    rng = np.random.default_rng(1)
    for i, bad in enumerate(VARIANTS):
        X = rng.uniform(0, 1, size=(2_000, 2))
        ys = [f"{y:.6f}" for y in X[:, 1]]
        for line, text in bad.items():
            ys[line % len(ys)] = text
        con.create_table(f"raw{i}", pd.DataFrame({"x": [f"{x:.6f}" for x in X[:, 0]], "y": ys}), overwrite=True)
        con.raw_sql(f"CREATE OR REPLACE VIEW trips{i} AS SELECT x::double precision AS x, y::double precision AS y "
                    f"FROM raw{i}")
        message = _fit_error(lambda i=i: sources.from_table(url, f"trips{i}", columns=["x", "y"]))
        # the source's public description (table, host:port/database) is not a fact about the rows
        messages.append(re.sub(r"trips\d at [\d.]+:\d+/\w+", "<table>", message))
    _assert_public_only(messages, _bad_values())
