"""Sphinx configuration of the dpcore documentation (``sphinx-build -W docs docs/_build``)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpcore  # noqa: E402

project = "dpcore"
author = "the dpcore developers"
copyright = "2026, the dpcore developers"
release = version = dpcore.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# The examples run against real data in the test-suite; the docs build never loads data.
os.environ.setdefault("DPCORE_DATA", "")

templates_path: list[str] = []
exclude_patterns = ["_build", "ARCHITECTURE.md", "**/.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext"}
html_theme = "pydata_sphinx_theme"
html_title = "dpcore"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path: list[str] = []
html_extra_path = ["../benchmarks/results"]


def _estimators_inc() -> str:
    """The API page's estimator table and list, from the registry (an algorithm is one module: no list here)."""
    lines = [".. currentmodule:: dpcore", "", ".. list-table::", "   :header-rows: 1", "   :widths: 12 22 40 26", "",
             "   * - key", "     - algorithm", "     - what it does", "     - source"]
    for key, cls in dpcore.ALGORITHMS.items():
        lines += [f"   * - ``{key}``", f"     - {cls.display_name or cls.__name__}", f"     - {cls.summary or ''}",
                  f"     - {cls.reference or '—'}"]
    lines += ["", ".. autosummary::", "   :toctree: api/generated", "   :nosignatures:", ""]
    lines += [f"   {cls.__module__.removeprefix('dpcore.')}.{cls.__name__}" for cls in dpcore.ALGORITHMS.values()]
    return "\n".join(lines) + "\n"


# Read by ``.. include::`` in api.rst; ``.inc`` is not a source suffix, so Sphinx does not build it alone.
_GENERATED = ROOT / "docs" / "api" / "generated"
_GENERATED.mkdir(parents=True, exist_ok=True)
_ESTIMATORS_INC = _GENERATED / "estimators.inc"
_ESTIMATORS_INC.write_text(_estimators_inc(), encoding="utf-8")


def _estimator_stubs(app) -> None:
    """autosummary's stubs for the included list (autosummary scans source files only, not their includes)."""
    from sphinx.ext.autosummary.generate import generate_autosummary_docs
    generate_autosummary_docs([str(_ESTIMATORS_INC)], output_dir=str(_GENERATED), app=app, base_path=app.srcdir)


def setup(app):
    app.connect("builder-inited", _estimator_stubs)
