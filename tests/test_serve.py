"""The README's start command, ``python3 -m ui.serve``: the library preloaded, then ``streamlit run app.py``.

The browser tests start every app server through it (tests/browser_util.py); this checks what the
preload does and does not do.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_preload_imports_the_library_and_none_of_the_app_modules():
    # In a fresh interpreter: the app's modules set up Streamlit caches, which need the server's runtime.
    code = ("import sys; from ui.serve import preload; took = preload(); "
            "print(took > 0, 'dpcore.store' in sys.modules, 'sklearn' in sys.modules, "
            "sorted(m for m in sys.modules if m.startswith('ui.') and m != 'ui.serve'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "True True True []"
    assert "No runtime found" not in out.stderr


def test_the_gallery_preload_imports_nothing_that_reads_raw_data_and_keeps_the_guard():
    code = ("import sys; from ui.serve import preload_gallery; from ui import gallery_guard; took = preload_gallery(); "
            "print(took > 0, 'dpcore.store' in sys.modules, 'dpcore.release' in sys.modules, gallery_guard.loaded()); "
            "print(all(m in sys.modules for m in ('pandas', 'plotly.graph_objects', 'pydeck'))); "
            "import importlib\n"
            "try:\n    importlib.import_module('dpcore.datasets'); print('imported')\n"
            "except ImportError as exc:\n    print('refused' if 'reads raw data' in str(exc) else exc)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["True True True []", "True", "refused"]   # what gallery_view imports


def test_what_the_preload_built_is_left_out_of_the_full_collections_streamlit_runs_after_each_script():
    """Issue 66: Streamlit's gc.collect(2) after every script run walked the ~290,000 objects of the libraries
    (~0.3 s a run, the interpreter lock held).  After the preload they sit in the permanent generation: a full
    collection then visits only what was made since, and gc.get_objects() of the young generations is small."""
    code = ("import gc; from ui.serve import preload; preload(); "
            "print(gc.get_freeze_count() > 100_000, len(gc.get_objects()) < gc.get_freeze_count() // 10)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "True True"


def test_the_warm_up_prepares_exactly_what_the_explorers_first_screen_reads(tmp_path, monkeypatch):
    """Issue 66: ``python -m ui.serve`` computes the Explorer's first screen on the embedded public data into the
    disk cache before it listens (a fresh install's first visit simulated 50 releases and fitted k-means).  After
    it, with the server's memory gone (a restart), the Explorer at its defaults simulates and fits nothing: the
    warm-up's settings are the page's, and a drift of either fails here.  A second warm-up only reads."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import dpcore
    import dpcore.evaluation.accuracy as accuracy
    from ui import serve
    from ui.models import expected_error as E
    assert str(tmp_path) in str(__import__("ui.preview_cache", fromlist=["cache_dir"]).cache_dir())
    serve.warm_first_screen()
    kept = sorted((tmp_path / "previews").rglob("*.json"))
    assert len(kept) == 2                                       # the band's simulations and the reference

    def computed(*a, **k):
        raise AssertionError("computed again, not read from the warm-up's cache")
    monkeypatch.setattr(accuracy, "simulate_errors", computed)
    monkeypatch.setattr(dpcore.ALGORITHMS["kmeans"], "fit", computed)
    E._ERRORS.clear()
    E._POINTS.clear()
    st.cache_data.clear()
    serve.warm_first_screen()                                   # a restart: reads both, computes nothing
    assert sorted((tmp_path / "previews").rglob("*.json")) == kept
    at = AppTest.from_file(str(REPO / "pages" / "1_Explorer.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("NICV" in m.label for m in at.metric)            # the reference's figures
    assert any("expected" in c.value.lower() for c in at.caption)    # the band's sentence
