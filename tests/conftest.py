"""Shared fixtures: the real data folder, the NYC taxi sample, a small blob set."""
from __future__ import annotations

import os
from pathlib import Path

# One compute thread per test process.  The README's command runs two xdist workers on a two-core
# machine; OpenMP (scikit-learn's k-means) and BLAS would each start a thread per core in each worker,
# and the spin-waiting threads of one worker starve the other: GkM-3K's privacy audit took 199 s with
# them and 32 s without.  Set before the libraries load (and inherited by the app servers the browser
# tests start); threadpool_limits below covers any already loaded by a plugin.
# DPCORE_NUM_THREADS: dpcore's simulated releases one after another (dpcore.utils.threads), for the same reason;
# tests/test_threads.py runs them side by side.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "DPCORE_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

_ONE_THREAD = threadpool_limits(1)

REPO = Path(__file__).resolve().parents[1]
TAXI_BOUNDS = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))  # Feldman et al. 2017, §5.1


def shared_data_dir() -> Path | None:
    env = os.environ.get("DPCORE_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder of real data sets (``$DPCORE_DATA``; CI sets ``../shared/data``)."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("real data folder not found: set DPCORE_DATA to shared/data")
    return path


@pytest.fixture(scope="session")
def taxi_X(shared_data) -> np.ndarray:
    """Real NYC taxi pickups (lon, lat) inside the Feldman et al. box, about 181k rows."""
    import pandas as pd
    df = pd.read_csv(shared_data / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz",
                     usecols=["pickup_longitude", "pickup_latitude"])
    X = df.to_numpy(dtype=float)
    lo, hi = TAXI_BOUNDS
    return X[((X >= lo) & (X <= hi)).all(axis=1)]


@pytest.fixture(scope="session")
def taxi_bounds():
    return TAXI_BOUNDS


@pytest.fixture(scope="session")
def blobs():
    """3 well-separated Gaussian blobs in [0, 10]^2: (X, bounds, true centres)."""
    rng = np.random.default_rng(12345)
    centres = np.array([[2.0, 2.0], [8.0, 2.5], [5.0, 8.0]])
    X = np.concatenate([rng.normal(c, 0.4, size=(2000, 2)) for c in centres])
    return np.clip(X, 0, 10), (0.0, 10.0), centres


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL server for the session (tests/pg_fixture.py); ``.new_database()`` per test.

    Locally a missing PostgreSQL skips with the reason; in CI (``CI=true``) it is a failure.
    """
    from pg_fixture import start_server
    try:
        server = start_server()
    except RuntimeError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"PostgreSQL is required in CI: {exc}")
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _restore_main_module():
    """Put back ``sys.modules["__main__"]`` after each test.

    Streamlit's script runner (AppTest) installs the page it ran as ``__main__`` and leaves it there.
    A later test in the same worker that starts processes with ``spawn`` (the store's racing tests)
    would then re-run that page in every child, outside Streamlit, where a page that drew nothing
    yet fails before the child does its work.
    """
    import sys
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True)
def _drop_the_gallerys_import_guard():
    """AppTest runs gallery.py in this process, which installs its no-data-loaders import guard for good;
    take it out again after every test (the gallery's, the metadata audit's), so that later tests in the
    same worker can import the curator's modules (a lazy ``dpcore.sources.ibis_source`` import failed)."""
    import sys
    yield
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "NoDataLoaders"]


@pytest.fixture(autouse=True)
def _own_release_store(tmp_path, monkeypatch):
    """Every test gets its own empty release store (``$DPCORE_STORE``), never the user's default file, and its own
    empty folder of previews kept on disk (``$DPCORE_PREVIEW_CACHE``), never the user's cache."""
    monkeypatch.setenv("DPCORE_STORE", f"sqlite:///{tmp_path / 'releases.db'}")
    monkeypatch.setenv("DPCORE_PREVIEW_CACHE", str(tmp_path / "previews"))


@pytest.fixture
def captured(monkeypatch):
    """Bytes of every file an app page hands to the browser (download buttons) during the test, by file name.

    A deferred download (a callable, written when its button is pressed) is written here at once, as a press
    would."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    files = {}
    original = MemoryMediaFileStorage.load_and_get_id
    original_deferred = MediaFileManager.add_deferred

    def spy(self, path_or_data, mimetype, kind, filename=None):
        files[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    def spy_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        data = data_callable()
        files[file_name] = data.encode() if isinstance(data, str) else data
        return original_deferred(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    monkeypatch.setattr(MediaFileManager, "add_deferred", spy_deferred)
    return files


@pytest.fixture
def auto_draw(monkeypatch):
    """Every ``AppTest.run`` in the test presses "Draw: spends ε = …" when a page shows it, as a person would.

    On data that is not public a page draws nothing when it opens (issue 24): it states the cost and
    waits for this click.  Modules testing what a draw shows use this fixture; the gate itself is
    tested without it (tests/test_no_spend_on_open.py).
    """
    from streamlit.testing.v1 import AppTest
    original = AppTest.run

    def run(self, *args, **kwargs):
        at = original(self, *args, **kwargs)
        for b in at.button:
            # A button that cannot fit under the total is disabled, as a person sees it (issue 65): not pressed.
            if (str(b.key or "").startswith("draw_") and str(b.label).startswith("Draw: spends")
                    and not getattr(b.proto, "disabled", False)):
                b.click()
                return original(at, *args, **kwargs)
        return at

    monkeypatch.setattr(AppTest, "run", run)


def pytest_collection_modifyitems(config, items):
    """The heavy tests (marker ``heavy``, and every real-browser test) first, in their order: two xdist
    workers hand out tests in collection order, and a two-minute test started last kept one worker busy
    while the other had nothing left (the suite's wall time is its longest worker's)."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None and item.get_closest_marker("browser") is None)
