"""The public API's docstrings: numpydoc sections complete, Examples that run, a Sphinx site that builds.

Issue #17 item 5.  The numpydoc checks are the ones a reader of the rendered API reference
notices: a missing docstring or summary, an unknown or misordered section (dropped by the
renderer), undocumented or phantom parameters, no Returns, no Examples.
"""
from __future__ import annotations

import doctest
import importlib
import warnings
from pathlib import Path

import pytest

import dpcore

numpydoc_validate = pytest.importorskip("numpydoc.validate")

ROOT = Path(__file__).resolve().parents[1]

#: numpydoc validation codes that must not fire on the public API.
CHECKS = {
    "GL08": "no docstring",
    "GL06": "unknown section",
    "GL07": "sections in the wrong order",
    "PR01": "parameter not documented",
    "PR02": "documented parameter that does not exist",
    "RT01": "no Returns section",
    "SS01": "no summary",
    "EX01": "no Examples section",
}

#: The public API: every registry estimator and its ``fit``, and the functions/classes a user calls.
PUBLIC_API = [f"{cls.__module__}.{cls.__name__}{member}"
              for cls in dpcore.ALGORITHMS.values() for member in ("", ".fit")] + [
    "dpcore.privacy.mechanisms.NoiseSource",
    "dpcore.algorithms.sanitize.sanitize",
    "dpcore.algorithms.sanitize.Sanitizer",
    "dpcore.algorithms.sanitize.Sanitizer.fit",
    "dpcore.synopsis.PointSynopsis",
    "dpcore.privacy.accountant.BudgetLedger",
    "dpcore.privacy.accountant.split_budget",
    "dpcore.preprocessing.BoundsScaler",
    "dpcore.metrics.nicv",
    "dpcore.metrics.inertia",
    "dpcore.release.build_release",
    "dpcore.release.to_json",
    "dpcore.release.validate_release",
    "dpcore.datasets.load",
    "dpcore.datasets.available",
    "dpcore.algorithms.registry.assess",
    "dpcore.store.ReleaseStore",
    "dpcore.store.ReleaseStore.record",
    "dpcore.sources.from_files",
    "dpcore.sources.from_spark",
    "dpcore.sources.from_table",
    "dpcore.sources.spark_session",
]


def _module_of(name: str) -> str:
    """The importable module of a dotted public name (``dpcore.store.ReleaseStore.record`` -> ``dpcore.store``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        try:
            importlib.import_module(candidate)
        except ImportError:
            continue
        return candidate
    raise ImportError(name)


def _defining_module(name: str) -> str:
    """The module that defines a public name (a package re-exports; its submodule holds the docstring)."""
    module = _module_of(name)
    obj = importlib.import_module(module)
    for part in name[len(module) + 1:].split(".")[:1]:
        obj = getattr(obj, part)
    return getattr(obj, "__module__", None) or module


#: Modules whose docstring Examples are run (every module defining a public name).
DOCTEST_MODULES = sorted({_defining_module(name) for name in PUBLIC_API})


def test_public_api_docstrings_pass_numpydoc_validation():
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpydoc's own deprecation chatter, not ours
        for name in PUBLIC_API:
            for code, message in numpydoc_validate.validate(name)["errors"]:
                if code in CHECKS:
                    failures.append(f"{name}: {code} ({CHECKS[code]}): {message}")
    assert not failures, f"{len(failures)} numpydoc failure(s):\n" + "\n".join(failures)


def test_every_public_module_has_examples_to_run():
    # Guards the doctest test below against silently collecting nothing.
    for module in DOCTEST_MODULES:
        tests = doctest.DocTestFinder().find(importlib.import_module(module))
        assert sum(len(t.examples) for t in tests) > 0, module


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_docstring_examples_run(module):
    # Run under the project's warning filters (pyproject.toml): a PrivacyLeakWarning fails the example.
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(importlib.import_module(module)):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)


def test_sphinx_site_builds_without_warnings(tmp_path):
    pytest.importorskip("pydata_sphinx_theme")
    build = pytest.importorskip("sphinx.cmd.build")
    # -W: any warning (a dropped section, a broken cross-reference, an import error) fails the build.
    # The output goes to a temporary directory; autosummary's stubs go to docs/api/generated (git-ignored).
    status = build.build_main(["-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
                               str(ROOT / "docs"), str(tmp_path / "html")])
    assert status == 0, "sphinx-build -W failed: see the warnings above"
    assert (tmp_path / "html" / "index.html").exists()
