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
