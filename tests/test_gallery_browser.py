"""End to end in a real browser: `streamlit run gallery.py` on a store holding a published taxi release.

The release is a real private EUGkM fit (random_state=None) on the NYC taxi sample, recorded through
the store.  Chromium (Playwright) opens the gallery - first by the URL of a curator page, which must
not run here - and checks the release, its guarantee and a map canvas that is not blank, with no
exception or error alert.  Skipped only when /usr/bin/chromium is missing (`.ci/run` installs it).
"""
from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from dpcore import ALGORITHMS
from dpcore.release import build_release
from dpcore.store import ReleaseStore

CHROMIUM = "/usr/bin/chromium"
REPO = Path(__file__).resolve().parents[1]
BAD = '[data-testid="stException"], [data-testid="stAlertContentError"]'

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not found: install Debian's chromium "
                       "(.ci/run does) to run the real-browser test"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def gallery_server(tmp_path_factory, taxi_X, taxi_bounds):
    """The gallery on a free loopback port, reading a store with one published taxi release."""
    base = tmp_path_factory.mktemp("gallery")
    url = f"sqlite:///{base / 'store.db'}"
    est = ALGORITHMS["eugkm"](epsilon=1.0, bounds=taxi_bounds, n_clusters=5).fit(taxi_X)
    rel = build_release(est, algorithm="eugkm", dataset="nyc taxi", columns=["pickup_longitude", "pickup_latitude"])
    with ReleaseStore(url) as store:
        store.set_cap("nyc taxi", 2.0, who="data owner")
        store.record("nyc taxi", rel, who="city data office")
    port = _free_port()
    log_path = base / "server.log"
    env = dict(os.environ, DPCORE_STORE=url, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "gallery.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as resp:
                    if resp.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer /_stcore/health within 90 s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield base_url, log_path, rel
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: only this server and its children
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def test_gallery_shows_the_published_taxi_release_on_a_map(gallery_server):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from PIL import Image
    url, log_path, rel = gallery_server
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(120_000)
            # A fresh server asked for a curator page: the gallery answers, nothing else runs.
            page.goto(f"{url}/Explorer", timeout=120_000)
            page.get_by_text("Release #1: EUGkM").wait_for()
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                                   polling=250)
            bad = page.locator(BAD)
            assert bad.count() == 0, bad.first.inner_text()[:500] + "\n" + log_path.read_text()[-2000:]
            assert page.get_by_text("1-differential privacy").count() >= 1
            assert page.get_by_text("city data office").count() >= 1
            assert page.get_by_text("every hash-chain link intact").count() == 1
            canvas = page.locator("#deckgl-overlay").first
            canvas.wait_for(state="visible")
            page.wait_for_timeout(2000)  # a frame or two for WebGL (software) to draw
            img = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB"), dtype=np.int16)
            flat = img.reshape(-1, 3)
            colours, counts = np.unique(flat, axis=0, return_counts=True)
            differs = np.abs(flat - colours[counts.argmax()]).sum(axis=1) > 30
            assert img.std() > 2.0 and differs.mean() > 0.001, "the map canvas looks blank"
            with page.expect_download() as dl:
                page.get_by_text("Download JSON").click()
            assert dl.value.suggested_filename == "release_1_eugkm.json"
            assert json.loads(Path(dl.value.path()).read_text()) == rel  # the stored release, unchanged
        finally:
            browser.close()
    assert "ImportError" not in log_path.read_text() and "Traceback" not in log_path.read_text()
