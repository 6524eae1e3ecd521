"""An algorithm is one module (issue 58): a toy algorithm in a temporary module, registered with the one line
``register("toy_lloyd:ToyLloyd")`` (as ``registry.REGISTERED`` lists every algorithm), is picked up by every
suite that covers "each estimator", by the pages and by the advisor, with no other edit.

The toy is a DPLloyd subclass under a new key that declares its own audit case, colour, page control, the
``high_dimensional`` tag and a Su et al.-style MSE formula; its module also holds a grid-cluster toy (a
PrivTHR subclass) whose constructor states its own budget split (docs/ARCHITECTURE.md, "Where to add an
algorithm").  The checks:

* the suites, run in a fresh interpreter with the toy registered before collection (a ``-p`` plugin, as
  registry.py's line would be read at import): each must collect and pass tests for the toy's key.  A suite
  whose parameter list is written by hand (a list of keys) collects none and fails this test;
* the Explorer page (AppTest, in this process) offers the toy, shows its declared control and draws it;
* the High-dimensional page offers it (it declares ``high_dimensional``), the WaveCluster page shows the
  grid toy's split control at its constructor's default, and the advisor's Su et al. walk predicts and
  picks it (it declares the smallest formula).  A page or the advisor that keeps its own list of keys
  misses the toy and fails these tests.
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
from dpcore.algorithms.wavecluster.private import PrivTHR
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
    high_dimensional = True
    mse_formula = "a toy's Eq. 7 / 100"

    @classmethod
    def su_mse(cls, n, d, k, epsilon, *, t, r=1.0, rho=0.225, theta=10.0):
        return DPLloyd.su_mse(n, d, k, epsilon, t=t, r=r, rho=rho, theta=theta) / 100


class ToyTHR(PrivTHR):
    """PrivTHR under the key ``toy_thr`` with its own default budget split (Chen, Yu & Chirkova 2015, §4.3)."""

    key = "toy_thr"
    display_name = "Toy THR"

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", quantization_share=0.6, random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, quantization_share=quantization_share,
                         random_state=random_state, max_contributions=max_contributions,
                         contribution_bounding=contribution_bounding)
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
    """The toy classes registered in this process (removed again afterwards); yields ToyLloyd."""
    write_toy(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = registry.register("toy_lloyd:ToyLloyd")     # the one line, as in registry.REGISTERED
    registry.register("toy_lloyd:ToyTHR")
    yield cls
    for key in (KEY, "toy_thr"):
        del dpcore.ALGORITHMS[key], registry.RELEASE_KINDS[key]
    del sys.modules["toy_lloyd"]


def run_suites(folder: Path, plugin: str, selector: str) -> list:
    """Run :data:`SUITES` in a fresh interpreter with ``plugin`` (a module in ``folder`` that registers the
    algorithm, as registry.py's line would at import) and ``-k selector``; returns the junit test cases."""
    report = folder / "report.xml"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", plugin, "-p", "no:cacheprovider", "-k", selector,
         f"--junitxml={report}", *SUITES],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = list(ET.parse(report).getroot().iter("testcase"))
    failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert not failed, f"{selector} fails {failed}:\n{proc.stdout[-4000:]}"
    for suite, what in SUITES.items():
        if suite == "tests/test_sources.py" and shared_data_dir() is None:
            continue   # the sources test reads the real taxi sample: skipped without the data folder
        module = suite[:-3].replace("/", ".")
        ran = [c.get("name") for c in cases if c.get("classname", "").startswith(module) and c.find("skipped") is None]
        assert ran, f"{suite} ({what}) ran nothing for {selector}: is its parameter list written by hand?"
    return cases


def assert_audited(cases: list, key: str) -> None:
    """The privacy audit really audited ``key`` (not an explicit skip), and the structural audit ran every check."""
    assert any(c.get("name") == f"test_estimator_passes_audit[{key}-0]" for c in cases
               if c.find("skipped") is None)
    structural = {c.get("name").split("[")[0] for c in cases if "structural" in c.get("classname", "")}
    assert {"test_structure_is_public_on_random_neighbours", "test_structure_is_public_across_a_sweep_of_sizes",
            "test_every_exported_value_comes_through_the_noise_module"} <= structural, structural


@pytest.mark.heavy
def test_every_suite_picks_up_a_registered_toy_algorithm(tmp_path):
    write_toy(tmp_path)
    assert_audited(run_suites(tmp_path, "toy_plugin", "toy_lloyd or ToyLloyd"), KEY)


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


def _options(at, key):
    return at.selectbox(key=key).options


def test_the_high_dimensional_page_offers_a_toy_that_declares_the_tag(toy, auto_draw, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.delenv("DPCORE_DATA", raising=False)        # offline, bundled data only
    at = AppTest.from_file(str(ROOT / "pages" / "5_High_dimensional.py"), default_timeout=300)
    at.query_params["k"] = "2"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    options = _options(at, "algorithm")
    assert KEY in options or toy.display_name in options, options


def test_the_wavecluster_page_shows_a_toy_s_own_budget_split(toy, auto_draw):
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "pages" / "4_WaveCluster.py"), default_timeout=120)
    at.query_params["dataset"] = "s1_like"
    at.query_params["algorithm"] = "toy_thr"
    at.query_params["num_grid"] = "16"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="algorithm").value == "toy_thr"
    split = at.sidebar.slider(key="quantization_share")     # the control PrivTHR declares, inherited
    assert split.value == 60                                 # at the toy's own constructor default (60 %)
    assert any(m.value.startswith("**Private · Toy THR") for m in at.markdown)


def test_the_advisor_walks_a_toy_s_declared_formula(toy):
    from dpcore import evaluation as E
    a = E.advise(100_000, 2, 5, 1.0)
    assert a.mse[KEY] == pytest.approx(dpcore.ALGORITHMS["dplloyd"].su_mse(100_000, 2, 5, 1.0, t=a.t) / 100)
    assert a.su_best == KEY and KEY in a.regime               # the smallest of Su et al.'s formulas: its pick
    frame = E.advice_frame(100_000, 2, 5, [0.5, 1.0])
    assert f"mse_{KEY}" in frame
    from ui.charts import advice_figure
    assert any(toy.mse_formula in (t.name or "") for t in advice_figure(frame).data)
