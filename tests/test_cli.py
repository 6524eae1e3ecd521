"""The command line (issue 67): every subcommand on a temporary SQLite store and the throwaway PostgreSQL.

Small real data: 3,000 pickups of the embedded NYC taxi sample, written to CSV and Parquet.  The CLI is
called in-process (``dpcore.cli.main``) and, once, as ``python -m dpcore`` (tests/test_packaging.py
runs the installed ``dpcore`` console script).
"""
from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import datasets
from dpcore.cli import main
from dpcore.explain import cap_words
from dpcore.release import build_release
from dpcore.store import ReleaseStore
from dpcore.store.draw import matches, settings
from dpcore.store.roles import local_identity

REPO = Path(__file__).resolve().parents[1]
BOUNDS = ["--lower=-74.1,40.7", "--upper=-73.9,40.9"]
EUGKM = ["--columns", "longitude,latitude", *BOUNDS, "--algorithm", "eugkm", "--n-clusters", "5"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """3,000 real pickups as CSV and Parquet, plus three bad files."""
    folder = tmp_path_factory.mktemp("cli_data")
    ds = datasets.load("nyc_taxi_sample")
    df = pd.DataFrame(ds.X[:3000], columns=list(ds.columns))
    df.to_csv(folder / "taxi.csv", index=False)
    df.to_parquet(folder / "taxi.parquet")
    nan = df.copy()
    nan.loc[7, "latitude"] = np.nan
    nan.to_csv(folder / "nan.csv", index=False)
    text = df.astype({"longitude": str})
    text["longitude"] = text["longitude"] + " °E"
    text.to_csv(folder / "text.csv", index=False)
    return folder


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path, monkeypatch):
    """The store the command line uses ($DPCORE_STORE): a SQLite file or a new PostgreSQL database."""
    url = (f"sqlite:///{tmp_path / 'cli.db'}" if request.param == "sqlite"
           else request.getfixturevalue("pg_server").new_database())
    monkeypatch.setenv("DPCORE_STORE", url)
    return url


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([str(a) for a in argv], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def account(url: str, name: str) -> tuple:
    """Everything a draw or a publication would change: the draws, the spend, the publications."""
    store = ReleaseStore(url)
    return len(store.releases()), store.spent(name), len(store.published()), store.datasets()


def test_every_subcommand(files, store_url, tmp_path):
    name = "upload:taxi.parquet"
    # draw: recorded before it is printed, under the command line's identity
    status, out, err = run("draw", files / "taxi.parquet", *EUGKM, "--epsilon", 1, "--json", tmp_path / "r.json")
    assert status == 0, err
    store = ReleaseStore(store_url)
    (rec,) = store.releases(name)
    assert out.startswith(f"release #{rec.id}:") and rec.who == local_identity("command line")
    assert rec.epsilon == pytest.approx(1.0) and store.spent(name)[0] == pytest.approx(1.0)
    assert json.loads((tmp_path / "r.json").read_text()) == rec.release
    printed = [line for line in out.splitlines() if line.count(",") == 1 and line[0] in "-0123456789"]
    np.testing.assert_allclose(np.array([list(map(float, p.split(","))) for p in printed]),
                               rec.release["centroids"], rtol=1e-9)
    assert "1-differential privacy for every record" in out and "ε spent so far on this data: 1" in out

    # cap: a total; over it, exit 3 and nothing recorded
    assert run("cap", name, "--epsilon", 1.5)[0] == 0
    before = account(store_url, name)
    status, out, err = run("draw", files / "taxi.parquet", *EUGKM, "--epsilon", 1)
    assert status == 3 and out == "" and "only ε = 0.5" in err and "Nothing was recorded" in err
    assert account(store_url, name) == before
    assert run("cap", name, "--epsilon", 0.5)[0] == 3                    # below what is spent: refused
    assert store.cap(name) == (1.5, 0.0)

    # sanitize: a point synopsis within what is left
    status, out, err = run("sanitize", files / "taxi.parquet", "--columns", "longitude,latitude", *BOUNDS,
                           "--epsilon", 0.5)
    assert status == 0, err
    san = store.releases(name)[-1]
    assert san.algorithm == "sanitize" and f"analyse {san.id} --n-clusters" in out

    # publish: asks for --yes first, then publishes (no ε)
    before = account(store_url, name)
    status, out, err = run("publish", san.id)
    assert status == 2 and "add --yes" in err and account(store_url, name) == before
    assert run("publish", san.id, "--yes")[0] == 0
    assert store.release(san.id).is_published and store.spent(name) == before[1]

    # history: every draw with id, ε, who, published or not
    status, out, _ = run("history", name)
    assert status == 0
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines[1:3]] == [f"#{rec.id}", f"#{san.id}"]
    assert "no" in lines[1].split() and "(command line)" in lines[2] and cap_words(1.5, 1.5) in out

    # analyse at k = 10: post-processing, nothing recorded
    before = account(store_url, name)
    status, out, err = run("analyse", san.id, "--n-clusters", 10)
    assert status == 0 and "no ε is spent" in err
    centres = np.array([list(map(float, ln.split(","))) for ln in out.splitlines()[1:]])
    assert centres.shape == (10, 2) and np.all((centres >= [-74.1, 40.7]) & (centres <= [-73.9, 40.9]))
    assert account(store_url, name) == before

    # export in every format; verify
    for fmt in ("json", "csv", "html", "py", "ipynb"):
        status, _, err = run("export", san.id, "--format", fmt, "--out", tmp_path / f"r.{fmt}")
        assert status == 0, err
    assert json.loads((tmp_path / "r.json").read_text()) == san.release
    assert (tmp_path / "r.csv").read_text().splitlines()[1].startswith('centroid,,,"Private centres')
    assert "None" not in (tmp_path / "r.html").read_text()
    assert account(store_url, name) == before
    status, out, _ = run("verify")
    assert status == 0 and "intact" in out


@pytest.mark.parametrize("bad, what", [("nan.csv", "missing or infinite value"), ("text.csv", "hold text"),
                                       ("taxi.csv", "no public bounds")])
def test_bad_data_exit_4_with_a_sentence_and_nothing_recorded(files, bad, what, monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'bad.db'}")
    args = EUGKM if bad != "taxi.csv" else ["--columns", "longitude,latitude", "--algorithm", "eugkm",
                                            "--n-clusters", "5"]
    status, out, err = run("draw", files / bad, *args, "--epsilon", 1)
    assert status == 4 and out == "" and what in err and "Traceback" not in err
    assert err.startswith("Bad data: ") and "Nothing was recorded" in err
    assert ReleaseStore().datasets() == [] and ReleaseStore().releases() == []


def test_drop_missing_draws_on_the_rows_the_app_keeps(files, monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'nan.db'}")
    status, _, err = run("draw", files / "nan.csv", *EUGKM, "--epsilon", 1, "--drop-missing")
    assert status == 0 and "1 row(s) with a missing value were left out" in err


def test_usage_errors_exit_2(files, monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'usage.db'}")
    assert run("draw", files / "taxi.csv", *EUGKM, "--epsilon", 0)[0] == 2                 # ε must be positive
    assert run("draw", files / "taxi.csv", *EUGKM[:-4], "--algorithm", "kmeans", "--epsilon", 1)[0] == 2
    status, _, err = run("draw", files / "taxi.csv", *EUGKM[:-4], "--algorithm", "coreset", "--n-clusters", 5,
                         "--epsilon", 1)
    assert status == 2 and "--delta" in err                                                   # (ε, δ) needs δ
    assert run("draw", files / "taxi.csv", *EUGKM, "--epsilon", 1, "--param", "no_such=1")[0] == 2
    assert run("export", 99, "--format", "py")[0] == 1          # no store yet: said, not a traceback
    assert ReleaseStore().releases() == []
    assert run("export", 99, "--format", "py")[0] == 2          # no such release


def test_same_account_as_the_apps_upload_of_the_same_rows(files, monkeypatch, tmp_path):
    """The CLI keys a file by its parsed rows exactly as the app's upload does: one account for one people."""
    from ui.data_picker import _fingerprint, _upload_account
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'same.db'}")
    assert run("draw", files / "taxi.parquet", *EUGKM, "--epsilon", 0.5)[0] == 0
    # The app's upload of the CSV file (another name, another format, the same rows) lands in that account ...
    df = datasets.read_table(files / "taxi.csv", filename="taxi.csv")
    ds = datasets.dataset_from_frame(df, ["longitude", "latitude"], bounds=([-74.1, 40.7], [-73.9, 40.9]))
    assert _upload_account("taxi.csv", _fingerprint(ds)) == "upload:taxi.parquet"
    # ... and so does the command line's draw on the CSV file; another name for the same rows is refused.
    status, _, err = run("draw", files / "taxi.csv", *EUGKM, "--epsilon", 0.5)
    assert status == 0 and "already registered as 'upload:taxi.parquet'" in err
    status, _, err = run("draw", files / "taxi.csv", *EUGKM, "--epsilon", 0.5, "--name", "taxi-copy")
    assert status == 3 and "--name 'upload:taxi.parquet'" in err
    store = ReleaseStore()
    assert store.datasets() == ["upload:taxi.parquet"] and len(store.releases()) == 2


def test_a_store_with_roles_refuses_what_the_command_line_may_not_do(files, monkeypatch, tmp_path):
    url = f"sqlite:///{tmp_path / 'roles.db'}"
    monkeypatch.setenv("DPCORE_STORE", url)
    store = ReleaseStore(url)
    store.grant("owner@example.org", "owner", who="secrets.toml")
    # Not granted: a viewer. Refused before the data is read (this path does not even exist).
    status, _, err = run("draw", tmp_path / "never_read.csv", *EUGKM, "--epsilon", 1)
    assert status == 3 and "viewer" in err and store.releases() == []
    assert run("cap", "upload:taxi.csv", "--epsilon", 2)[0] == 3 and store.datasets() == []
    store.grant(local_identity("command line"), "owner", who="secrets.toml")
    assert run("draw", files / "taxi.csv", *EUGKM, "--epsilon", 1)[0] == 0
    assert store.releases()[0].who == local_identity("command line")


def test_analyse_refuses_an_unpublished_draw_of_someone_else(monkeypatch, tmp_path, blobs):
    from dpcore.algorithms import Sanitizer
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'other.db'}")
    X, bounds, _ = blobs
    rel = build_release(Sanitizer(epsilon=1.0, bounds=bounds).fit(X), algorithm="sanitize", dataset="blobs")
    store = ReleaseStore()
    rid = store.record("blobs", rel, who="ana@example.org · Explorer")
    status, _, err = run("analyse", rid, "--n-clusters", 4)
    assert status == 3 and "someone else's" in err
    assert run("export", rid, "--format", "ipynb")[0] == 3
    store.publish(rid, who="ana@example.org")
    assert run("analyse", rid, "--n-clusters", 4)[0] == 0
    own = store.record("blobs", rel, who=local_identity("local mode") + " · Release page")   # the app, this user
    assert run("analyse", own, "--n-clusters", 4)[0] == 0
    assert math.isclose(store.spent("blobs")[0], 2 * rel["privacy"]["epsilon_spent"])


def test_exported_script_draws_the_same_settings_again_through_the_store(files, monkeypatch, tmp_path):
    url = f"sqlite:///{tmp_path / 'script.db'}"
    monkeypatch.setenv("DPCORE_STORE", url)
    assert run("draw", files / "taxi.parquet", *EUGKM, "--epsilon", 0.7)[0] == 0
    first = ReleaseStore(url).releases()[0]
    script = tmp_path / "again.py"
    assert run("export", first.id, "--format", "py", "--out", script)[0] == 0
    env = dict(os.environ, DPCORE_STORE=url, PYTHONPATH=str(REPO))
    res = subprocess.run([sys.executable, str(script)], cwd=files, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    store = ReleaseStore(url)
    second = store.releases()[-1]
    assert second.id != first.id and f"release #{second.id}" in res.stdout
    s = settings(first.dataset, "", "eugkm", {"n_clusters": 5, "epsilon": 0.7},
                 bounds=([-74.1, 40.7], [-73.9, 40.9]), d=2)
    assert matches(first.release, s) and matches(second.release, s)          # the same settings ...
    assert second.release["centroids"] != first.release["centroids"]         # ... with fresh noise
    store.set_cap(first.dataset, 1.5)                                         # ... and refused over the cap
    res = subprocess.run([sys.executable, str(script)], cwd=files, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 3 and "Refused" in res.stderr and len(store.releases()) == 2


def test_exported_notebook_runs_top_to_bottom_and_records_nothing(files, monkeypatch, tmp_path):
    import nbformat
    from nbclient import NotebookClient
    url = f"sqlite:///{tmp_path / 'nb.db'}"
    monkeypatch.setenv("DPCORE_STORE", url)
    monkeypatch.setenv("PYTHONPATH", str(REPO))    # the kernel imports dpcore from this checkout (not installed)
    assert run("sanitize", files / "taxi.parquet", "--columns", "longitude,latitude", *BOUNDS, "--epsilon", 1)[0] == 0
    rid = ReleaseStore(url).releases()[0].id
    path = tmp_path / "analyse.ipynb"
    assert run("export", rid, "--format", "ipynb", "--out", path)[0] == 0
    before = account(url, "upload:taxi.parquet"), ReleaseStore(url).verify().heads
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if c.source.startswith("K = ")]
    cell.source = re.sub(r"^K = \d+", "K = 12", cell.source)           # the reader's own k
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                   ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("application/vnd.plotly.v1+json" in o.get("data", {}) for o in outputs) >= 2   # the pictures
    assert any("differential privacy" in o.get("data", {}).get("text/markdown", "") for o in outputs)
    last = outputs[-1]["data"]["text/plain"].splitlines()                 # the k-means centres' table
    assert last[-1].split()[0] == "11" and len(last) == 12 + 2
    assert (account(url, "upload:taxi.parquet"), ReleaseStore(url).verify().heads) == before
    assert "dpcore.store" not in "".join(c.source for c in nb.cells)       # it never opens a store


def test_python_m_dpcore_and_a_progress_bar_over_a_source(files, tmp_path):
    """``python -m dpcore`` as a process; ``--engine duckdb`` reads the file where it lies, with the app's bar."""
    url = f"sqlite:///{tmp_path / 'proc.db'}"
    env = dict(os.environ, DPCORE_STORE=url, PYTHONPATH=str(REPO))
    res = subprocess.run([sys.executable, "-m", "dpcore", "draw", str(files / "taxi.parquet"), "--engine", "duckdb",
                          *EUGKM, "--epsilon", "1"], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "Private release: pass 1 over the data" in res.stderr and "in DuckDB" in res.stderr
    (rec,) = ReleaseStore(url).releases()
    assert res.stdout.startswith(f"release #{rec.id}:") and rec.dataset == "taxi.parquet"
    res = subprocess.run([sys.executable, "-m", "dpcore", "draw", str(files / "taxi.parquet")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_a_total_for_new_data_is_tied_to_its_rows(files, monkeypatch, tmp_path):
    """``cap`` on a name the store has not seen takes the data too: the account is keyed by its rows from the start."""
    from ui.data_picker import _fingerprint
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'cap.db'}")
    status, _, err = run("cap", "taxi-2025-01", "--epsilon", 2)
    assert status == 2 and "--data FILE" in err and ReleaseStore().datasets() == []
    assert run("cap", "taxi-2025-01", "--epsilon", 2, "--data", files / "taxi.csv", "--columns", "longitude,latitude",
               *BOUNDS)[0] == 0
    store = ReleaseStore()
    assert store.cap("taxi-2025-01") == (2.0, 0.0)
    ds = datasets.dataset_from_frame(pd.read_parquet(files / "taxi.parquet"), ["longitude", "latitude"])
    assert store.dataset_for_fingerprint(_fingerprint(ds)) == "taxi-2025-01"
    status, out, _ = run("draw", files / "taxi.parquet", *EUGKM, "--epsilon", 1)     # no --name: found by its rows
    assert status == 0 and " on taxi-2025-01" in out.splitlines()[0]


def test_person_level_draws_bound_as_the_app_and_renamed_ids_reach_one_account(files, monkeypatch, tmp_path):
    """Issue 68 on the command line: weighting by default where the algorithm can weight (as the app), a clear usage
    error where it cannot, and the same people under new ids in the account that a cap already closed."""
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'people.db'}")
    df = pd.read_csv(files / "taxi.csv")
    df["user_id"] = np.arange(len(df)) % 400
    df.to_csv(tmp_path / "people.csv", index=False)
    renamed = df.assign(user_id="u" + (df["user_id"] + 10_000_000).astype(str)).iloc[::-1]
    renamed.to_csv(tmp_path / "renamed.csv", index=False)
    people = [*EUGKM, "--privacy-id", "user_id"]
    status, _, err = run("draw", tmp_path / "people.csv", *people, "--epsilon", 1)
    assert status == 0, err
    store = ReleaseStore()
    (rec,) = store.releases()
    assert rec.release["privacy_unit"]["bounding"] == "weight"
    status, _, err = run("draw", tmp_path / "people.csv", "--columns", "longitude,latitude", *BOUNDS,
                         "--algorithm", "gkm", "--n-clusters", "5", "--epsilon", 1, "--privacy-id", "user_id",
                         "--bounding", "weight")
    assert status == 2 and "--bounding sample" in err and len(store.releases()) == 1
    name = rec.dataset if hasattr(rec, "dataset") else store.datasets()[0]
    assert run("cap", name, "--epsilon", 1)[0] == 0
    status, _, err = run("draw", tmp_path / "renamed.csv", *people, "--epsilon", 1)
    assert status == 3 and len(store.releases()) == 1 and store.datasets() == [name]


def test_an_account_registered_before_issue_68_is_found(files, monkeypatch, tmp_path):
    """Person data registered under the former digest (ids' names hashed) is the same account on the command line."""
    from dpcore.store.keys import former_digests
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'former.db'}")
    df = pd.read_csv(files / "taxi.csv")
    df["user_id"] = np.arange(len(df)) % 300
    df.to_csv(tmp_path / "people.csv", index=False)
    (old,) = former_digests(df[["longitude", "latitude"]].to_numpy(float), df["user_id"].to_numpy())
    store = ReleaseStore()
    store.register_dataset("checkins-2025", fingerprint=old, bounds=([-74.1, 40.7], [-73.9, 40.9]))
    status, _, err = run("draw", tmp_path / "people.csv", *EUGKM, "--privacy-id", "user_id", "--epsilon", 1)
    assert status == 0 and "already registered as 'checkins-2025'" in err, err
    assert store.datasets() == ["checkins-2025"] and len(store.releases("checkins-2025")) == 1
