"""Start the app (``streamlit run app.py``) with the library already imported: ``python3 -m ui.serve``.

``python3 -m ui.serve --gallery`` does the same for the public gallery (``streamlit run gallery.py``), importing
only what the gallery uses: never a module that reads raw data (:mod:`ui.gallery_guard`).

The first page anyone opens on a fresh server used to pay for importing dpcore and what it stands on
(scikit-learn, SciPy, numba, pandas, pydeck, plotly: ~1.5-2.5 s on 2 cores) and for loading numba's
compiled kernels from their cache (~0.3 s).  This launcher does both before the server starts to listen,
as an application server's preload does: the server answers 1.3-1.9 s later (measured on 2 cores), and no
visitor waits for an import.  What the preload built is then frozen out of the garbage collector's full passes,
which Streamlit runs after every script run (:func:`_freeze_heap`).  Then the Explorer's first screen on the
embedded public data is prepared in the disk cache, once per install (:func:`warm_first_screen`).  Everything
else (data, fits, caches) is computed by the pages themselves, as before.

Any further arguments are ``streamlit run`` options (``--server.port 8502``, ``--server.headless true``).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

#: The app's entry script, beside this package.
APP = Path(__file__).resolve().parents[1] / "app.py"
#: The public gallery's script.
GALLERY = APP.with_name("gallery.py")


def _no_repl_check() -> None:
    """Streamlit's first page element asks whether it runs in a REPL, to warn "use streamlit run" once: through
    inspect.stack(), which reads the source of every frame of the script's deep stack (0.7 s of the first visit in
    a profile on a loaded machine, issue 66).  This process is started as `streamlit run`, so the warning never
    applies.  Internal to Streamlit."""
    import streamlit.delta_generator as dg
    dg._use_warning_has_been_displayed = True


def preload() -> float:
    """Import what every page imports and load numba's compiler context; returns the seconds it took.

    Nothing is computed from any data and nothing is cached but Python modules, compiled code and the advisor's
    calibration tables (package data).
    """
    t0 = time.perf_counter()
    import numpy as np
    import plotly.express  # noqa: F401
    import pydeck  # noqa: F401

    import dpcore.evaluation
    import dpcore.release.view
    import dpcore.store  # noqa: F401  - the library, its dependencies and what the pages use of it
    from dpcore.algorithms._blocks.grid_kmeans import _kmeanspp_kernel, weighted_lloyd
    from dpcore.algorithms.coreset.small_ball import _CellSet, radius_profile
    # Not the app's own modules (ui): their Streamlit caches are set up once the server's runtime exists.
    # One call of each compiled kernel the first screens run, on two points: numba's target context and the
    # kernels' caches (on a fresh install, their compilation: seconds the first visitor would otherwise wait).
    weighted_lloyd(np.zeros((2, 2)), np.ones(2), np.zeros((1, 2)))
    _kmeanspp_kernel(np.zeros((2, 2)), np.ones(2), np.full(1, 0.5))    # a fixed uniform: no generator, no data
    radius_profile(_CellSet(np.zeros((1, 2), dtype=np.int64), np.ones(1, dtype=np.int64), 2), np.array([0]), 1)
    # The advisor's calibration tables (package data, public), read by every fit's check of its regime: ~0.2 s of
    # the first visit otherwise, more while that visit's other threads hold the interpreter.
    from dpcore.advisor import model as advisor_model
    advisor_model.calibrated_keys()
    advisor_model._tables()
    try:     # Streamlit's emoji catalogue, read when a page sets its emoji icon (0.16 s); internal, so optional
        import streamlit.emojis  # noqa: F401
    except ImportError:
        pass
    _no_repl_check()
    _freeze_heap()
    return time.perf_counter() - t0


def warm_first_screen() -> float:
    """Prepare what the Explorer's first screen computes on the embedded public data, unless a server did before;
    returns the seconds it took.

    The first screen (the taxi sample, EUGkM, its literature k, ε = 1) shows the expected-error band of 50
    simulated releases and the non-private k-means reference (~3.5 s of CPU on 2 cores, most of a fresh install's
    first visit, issue 66).  On public data both are kept on disk (:mod:`ui.preview_cache`); this computes them
    into that cache before the server listens, so the first visitor of a fresh install reads them as every visitor
    of a restarted server does.  Once per install and code version: afterwards it reads the two entries back.

    Nothing private is computed or written: the data are public (the disk cache refuses anything else), the
    simulations' noise is fresh and never stored or shown, and nothing is drawn or spent.  A failure (no data,
    a read-only cache) costs only the speed-up: it is printed, and the server starts as before.
    """
    import logging
    t0 = time.perf_counter()
    # Streamlit's cache decorators check their options against the runtime's cache storage when a module defining
    # them is imported, and warn "No runtime found" before the server runs: harmless here (a cached function finds
    # its storage when it is called, once the runtime exists; nothing below calls one), so not shown.
    cache_log = logging.getLogger("streamlit.runtime.caching.cache_data_api")
    level = cache_log.level
    cache_log.setLevel(logging.ERROR)
    try:
        from dpcore import datasets
        from ui.accuracy import error_setting
        from ui.controls import DEFAULT_ALGORITHM, DEFAULT_EPSILON, default_n_clusters
        from ui.data_picker import _fingerprint
        from ui.models.expected_error import expected_error
        from ui.releases import reference_centres
        cache_log.setLevel(level)
        ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
        if getattr(ds, "public", False) and getattr(ds, "units", None) is None:
            fp, k = _fingerprint(ds), default_n_clusters(ds)
            reference_centres(ds, fp, k)            # the map's blue rings, which the band is measured from too
            setting, points = error_setting(ds, fp, DEFAULT_ALGORITHM, k, {})
            expected_error(setting, DEFAULT_EPSILON, points)
    except Exception as exc:    # the speed-up only: the pages compute what is missing, as without it
        print(f"dpcore: the first screen was not prepared ({type(exc).__name__}: {exc})", flush=True)
    finally:
        cache_log.setLevel(level)
    return time.perf_counter() - t0


def _freeze_heap() -> None:
    """Leave what the preload built out of every later garbage collection (``gc.freeze``).

    Streamlit runs a full collection after every script run (``runner.postScriptGC``) with the interpreter lock
    held: over the ~290,000 objects of the imported libraries that is ~0.3 s of each page visit and each widget
    move on 2 cores (issue 66; py-spy of the gallery's first visit), during which the server sends nothing.
    Modules imported at start are never garbage, so moving them to the permanent generation loses nothing; what
    the pages create later is collected as before.
    """
    import gc
    gc.collect()
    gc.freeze()


def preload_gallery() -> float:
    """Import what the public gallery imports (the release store, the release views, pandas, plotly, pydeck), nothing
    that reads raw data; returns the seconds it took (~0.8 s of the gallery's first visit before, issue 66, and
    pandas ~0.6 s more).

    Raises
    ------
    RuntimeError
        A module that reads raw data (:data:`ui.gallery_guard.FORBIDDEN`) came with the imports: the gallery's
        guard could not refuse it later, so the gallery is not started.
    """
    from ui import gallery_guard
    t0 = time.perf_counter()
    gallery_guard.install()      # refused here too: the preload fails rather than carry one in
    import pandas  # noqa: F401  - the gallery's tables (ui.gallery_view): ~0.6 s of its first visit before
    import plotly.graph_objects  # noqa: F401
    import pydeck  # noqa: F401
    from streamlit.runtime.pages_manager import PagesManager

    import dpcore.release
    import dpcore.store  # noqa: F401  - what gallery.py imports, less its Streamlit-cached ui modules
    _no_repl_check()
    # The curator's pages/ folder stands beside gallery.py.  Until a script calls st.navigation, Streamlit runs the
    # page a URL names from that folder (its "pages directory" mode): on a fresh gallery server, /Explorer ran the
    # Explorer's imports before gallery.py could refuse them.  The gallery never uses that folder: this process
    # starts with the mode off, so every URL runs gallery.py, whose st.navigation offers the gallery alone.
    PagesManager.uses_pages_directory = False
    if gallery_guard.loaded():
        raise RuntimeError(f"the gallery's preload imported {gallery_guard.loaded()}, which read raw data")
    _freeze_heap()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    """Preload, then hand over to ``streamlit run app.py`` with ``argv`` (default: this command's arguments).

    ``--gallery`` first in ``argv``: the public gallery instead (:func:`preload_gallery`, ``streamlit run
    gallery.py``).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    gallery = bool(args) and args[0] == "--gallery"
    if gallery:
        args = args[1:]
    took = preload_gallery() if gallery else preload()
    script = GALLERY if gallery else APP
    print(f"dpcore: library preloaded in {took:.1f} s; starting {script.name}", flush=True)
    if not gallery:
        print(f"dpcore: first screen prepared in {warm_first_screen():.1f} s", flush=True)
    from streamlit.web import cli
    sys.argv = ["streamlit", "run", str(script), *args]
    cli.main()


if __name__ == "__main__":
    main()
