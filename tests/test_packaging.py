"""The installable package: a built wheel carries its sample data and works outside the repository."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import datasets

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, text=True, timeout=600)
    (whl,) = out.glob("dpcore-*.whl")
    return whl


def test_wheel_contents(wheel):
    import zipfile
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "dpcore/py.typed" in names
    assert {"dpcore/sample_data/s1_like.csv", "dpcore/sample_data/spirals.csv",
            "dpcore/sample_data/nyc_taxi_sample.parquet"} <= names
    assert not any(n.startswith(("tests/", "pages/", "benchmarks/")) for n in names)


def test_wheel_installs_and_runs_outside_the_repo(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    # The new venv sees the packages of the interpreter running the tests (numpy, scipy, scikit-learn, ...,
    # pinned by requirements.txt) through a .pth file, so the test checks dpcore's own wheel, not a fresh
    # download of its dependencies.  system_site_packages would give the *base* interpreter's packages,
    # which inside a virtualenv (how most people run the README's command) do not hold the test's.
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site_dir = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
    here = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (Path(site_dir) / "_test_parent_env.pth").write_text("\n".join(sorted(here)) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=300)
    script = (
        "import warnings, dpcore\n"
        "from dpcore import datasets\n"
        "assert 'site-packages' in dpcore.__file__, dpcore.__file__\n"
        "ds = datasets.load('s1_like')\n"
        "est = dpcore.ALGORITHMS['eugkm'](n_clusters=15, epsilon=1.0, bounds=ds.bounds).fit(ds.X)\n"
        "print(ds.n, est.cluster_centers_.shape)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DPCORE_DATA")}
    res = subprocess.run([str(py), "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    n, shape = res.stdout.split(maxsplit=1)
    assert int(n) > 1000 and shape.strip() == "(15, 2)"
    # The console script (issue 67): `dpcore`, installed by the wheel, draws on a listed data set into the store.
    env["DPCORE_STORE"] = f"sqlite:///{tmp_path / 'releases.db'}"
    res = subprocess.run([str(env_dir / "bin" / "dpcore"), "draw", "s1_like", "--algorithm", "eugkm", "--n-clusters",
                          "15", "--epsilon", "1"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("release #1: EUGkM, k = 15, ε = 1 on s1_like")
    res = subprocess.run([str(env_dir / "bin" / "dpcore"), "draw", "s1_like"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "usage: python -m dpcore draw" in res.stderr


def test_load_reads_parquet_in_dpcore_data(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.uniform([0, 0], [1e6, 1e6], size=(500, 2))
    pd.DataFrame({"x": X[:, 0], "y": X[:, 1], "label": rng.integers(0, 15, 500)}).to_parquet(
        tmp_path / "franti_s1.parquet")
    monkeypatch.setenv("DPCORE_DATA", str(tmp_path))
    assert "franti_s1" in datasets.available()
    ds = datasets.load("franti_s1")
    assert ds.n == 500
    np.testing.assert_allclose(np.sort(ds.X[:, 0]), np.sort(X[:, 0]))
