"""An algorithm is one module (issue 58): a toy algorithm in a temporary module, registered with the one line
``register(ToyLloyd)``, is picked up by every suite that covers "each estimator" and by the pages, with no
other edit.

The toy is a DPLloyd subclass under a new key that declares its own audit case, colour and page control
(docs/ARCHITECTURE.md, "Where to add an algorithm").  Two checks:

* the suites, run in a fresh interpreter with the toy registered before collection (a ``-p`` plugin, as
  registry.py's line would be read at import): each must collect and pass tests for the toy's key.  A suite
  whose parameter list is written by hand (a list of keys) collects none and fails this test;
* the Explorer page (AppTest, in this process) offers the toy, shows its declared control and draws it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import shared_data_dir

import dpcore
from dpcore.algorithms import registry

ROOT = Path(__file__).resolve().parents[1]
KEY = "toy_lloyd"

#: The toy's module, as a contributor would write it: a subclass and its declarations, nothing else.
TOY_MODULE = '''
"""A toy algorithm: DPLloyd under a key of its own, with its own declarations (tests/test_toy_algorithm.py)."""
from dpcore.algorithms.centroid.dplloyd import DPLloyd
from dpcore.algorithms.traits import AuditCase, Control, PrivacyCase


class ToyLloyd(DPLloyd):
    """DPLloyd's noisy Lloyd iterations under the key ``toy_lloyd`` (Su et al. 2016, §4.1.1)."""

    key = "toy_lloyd"
    display_name = "Toy Lloyd"
    reference = "Su et al. 2016, §4.1.1 (a test's toy)"
    summary = "DPLloyd under another key: what a new algorithm's module looks like."
    colour = "#00a087"
    audit = AuditCase(
        privacy=(PrivacyCase("one iteration, record at the far corner", dict(n_clusters=1, n_iter=1, assignment="rows"),
                             data="corner", n=20, d=2, added=(1.0, 1.0), n_runs=2000, ci_runs=300),),
        structural=dict(n_iter=2, assignment="rows"), exact_sums=dict(n_iter=2), sources=dict(n_clusters=3, n_iter=2))
    controls = (Control("n_iter", "Toy iterations", options=(2, 3), help="Noisy Lloyd steps."),)
'''

#: The suites that cover every registered estimator, and what each must run for the toy.
SUITES = {
    "tests/test_registry.py": "the registry's contract checks",
    "tests/test_sklearn_conformance.py": "scikit-learn's conformance checks",
    "tests/audit/test_estimators_audit.py": "the statistical privacy audit",
    "tests/audit/test_structural_audit.py": "the exact structural audit",
    "tests/audit/test_exact_sums.py": "the exact-sums audit",
    "tests/test_sources.py": "the same release on a DuckDB source as on the array",
}


def write_toy(folder: Path) -> None:
    (folder / "toy_lloyd.py").write_text(textwrap.dedent(TOY_MODULE))
    # The registration, as registry.py would hold it: one line.
    (folder / "toy_plugin.py").write_text("from dpcore.algorithms.registry import register\n\n"
                                          'register("toy_lloyd:ToyLloyd")\n')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy class registered in this process (removed again afterwards)."""
    write_toy(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = registry.register("toy_lloyd:ToyLloyd")     # the one line, as in registry.REGISTERED
    yield cls
    del dpcore.ALGORITHMS[KEY], registry.RELEASE_KINDS[KEY], sys.modules["toy_lloyd"]


def test_every_suite_picks_up_a_registered_toy_algorithm(tmp_path):
    write_toy(tmp_path)
    report = tmp_path / "report.xml"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "toy_plugin", "-p", "no:cacheprovider", "-k",
         "toy_lloyd or ToyLloyd", f"--junitxml={report}", *SUITES],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = list(ET.parse(report).getroot().iter("testcase"))
    failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failed, f"the toy fails {failed}:\n{proc.stdout[-4000:]}"
    for suite, what in SUITES.items():
        if suite == "tests/test_sources.py" and shared_data_dir() is None:
            continue   # the sources test reads the real taxi sample: skipped without the data folder
        module = suite[:-3].replace("/", ".")
        ran = [c.get("name") for c in cases if c.get("classname", "").startswith(module) and c.find("skipped") is None]
        assert ran, f"{suite} ({what}) ran nothing for the toy: is its parameter list written by hand?"
    # The privacy audit really audited it (not an explicit skip), and the structural audit ran every check.
    assert any(c.get("name") == f"test_estimator_passes_audit[{KEY}-0]" for c in cases
               if c.find("skipped") is None)
    structural = {c.get("name").split("[")[0] for c in cases if "structural" in c.get("classname", "")}
    assert {"test_structure_is_public_on_random_neighbours", "test_structure_is_public_across_a_sweep_of_sizes",
            "test_every_exported_value_comes_through_the_noise_module"} <= structural, structural


def test_the_explorer_offers_and_draws_a_registered_toy_algorithm(toy, auto_draw):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "pages" / "1_Explorer.py"), default_timeout=120)
    at.query_params["dataset"] = "s1_like"
    at.query_params["algorithm"] = KEY            # the picker takes a key it offers from the URL
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    picker = at.selectbox(key="algorithm")
    assert KEY in picker.options or toy.display_name in picker.options
    assert picker.value == KEY
    assert at.query_params["algorithm"] == KEY
    control = at.selectbox(key="n_iter")          # the control the toy's class declares
    assert control.label == "Toy iterations" and control.value == 2
    assert at.get("deck_gl_json_chart") or at.get("plotly_chart"), "nothing was drawn"
    assert any(toy.summary in c.value for c in at.caption)
