"""What the real-browser tests share: a headless `streamlit run` on a free loopback port, Debian's
Chromium launched through Playwright, and the checks they make on a page.

* :func:`streamlit_server` starts ``python -m streamlit run <script>`` in its own session, waits for
  ``/_stcore/health``, fails the test with the log tail if the server exits or does not answer, and
  always stops it (SIGTERM to its process group, then SIGKILL).
* :func:`launch_chromium` (or :func:`chromium`, with its own Playwright) opens headless Chromium
  with no network beyond the app.
* :func:`settled`, :func:`no_errors` and :func:`canvas_spread` wait for a rerun to end, fail on an
  exception or error alert, and measure whether a deck.gl map canvas is blank.
* :data:`BROWSER_MARKS` marks a module ``browser`` and skips it when /usr/bin/chromium is missing.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

CHROMIUM = "/usr/bin/chromium"
REPO = Path(__file__).resolve().parents[1]
BAD = '[data-testid="stException"], [data-testid="stAlertContentError"]'
#: No network beyond the app: on a machine without internet the basemap tiles cannot load.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

#: ``pytestmark`` of every real-browser test module.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not found: install Debian's chromium "
                       "(.ci/run does) to run the real-browser test"),
]


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: How the README starts each app script (``ui.serve``: the library imported before the server listens).
SERVE = {"app.py": ("ui.serve",), "gallery.py": ("ui.serve", "--gallery")}


@contextlib.contextmanager
def streamlit_server(script: str = "app.py", *, env: dict, log_path: Path, port: int | None = None,
                     health_timeout: float = 90, address: str | None = "127.0.0.1", args: tuple = ()):
    """`streamlit run <script>` (relative to the repository) headless on a loopback port; yields its base URL.

    ``app.py`` and ``gallery.py`` start as the README starts them, through ``python -m ui.serve [--gallery]``
    (the library preloaded, then ``streamlit run``); other scripts (the benchmark's floor page) with
    ``streamlit run``.

    ``env`` is the server's whole environment (usage statistics are turned off on top of it).  The
    server's output is appended to ``log_path``, so a restart on the same log keeps both runs.  The
    server runs in its own session and is always stopped on exit, with its children.  ``address=None``
    leaves the address to the project's ``.streamlit/config.toml`` (local mode: localhost).  ``args``
    are more ``streamlit run`` options (e.g. ``("--secrets.files", path)``).
    """
    port = port or free_port()
    env = dict(env, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    with open(log_path, "a") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", *SERVE.get(script, ("streamlit", "run", script)),
             "--server.headless", "true",
             "--server.port", str(port), *(["--server.address", address] if address else []),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *args],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + health_timeout
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer /_stcore/health within {health_timeout:g} s:\n"
                            f"{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)   # its own session: only this server and its children
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def launch_chromium(playwright):
    """Headless Debian Chromium (software WebGL, no background network); the caller closes it."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def chromium():
    """:func:`launch_chromium` under its own Playwright, closed on exit; skips when Playwright is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            yield browser
        finally:
            browser.close()


def settled(page, timeout_s: float, *, start_ms: int = 500, poll_ms: int = 250) -> None:
    """Wait until the script rerun is over: the app's own run state says so, no running indicator, no
    stale (greyed) element.

    ``start_ms``: how long to let a rerun start first (0 when the caller has already seen the run's
    output, as the speed benchmark has once the page's heading is shown); ``poll_ms``: how often the
    page is checked (a timing wants 50 ms: at 250 ms a figure could be up to a quarter second late).

    The run state (``data-test-script-state`` on ``stApp``) turns to ``rerunRequested`` in the same
    event as the click or key press, before the server has even started; the status widget alone
    appears only once the server answers, which on a loaded machine (CI) can be after the 500 ms below,
    so a wait on it alone could return while a draw was still running and the next click stopped it.
    """
    if start_ms:
        page.wait_for_timeout(start_ms)   # let the rerun start
    page.wait_for_function(
        """() => {
             const app = document.querySelector('[data-testid="stApp"]');
             const state = app && app.getAttribute('data-test-script-state');
             return (state === 'notRunning' || state === 'compilationError')
                 && !document.querySelector('[data-testid="stStatusWidget"]')
                 && !document.querySelector('[data-stale="true"]')
                 && !document.querySelector('[data-testid="stSkeleton"]');
           }""",
        timeout=timeout_s * 1000, polling=poll_ms)


def upload_on_explorer(page, url: str, csv: Path, bounds: str, *, step_s: float, query: str = ""):
    """Open the Explorer on its upload box, upload ``csv`` and enter its public ``bounds`` (one
    "lower, upper" line per column); return the sidebar's locator.  ``query``: more URL settings
    ("&k=5&epsilon=1.0")."""
    page.set_default_timeout(step_s * 1000)
    page.goto(f"{url}/?dataset={quote('Upload a file…')}{query}")        # straight to the upload box
    page.get_by_role("heading", name="Private k-means explorer").first.wait_for()
    settled(page, step_s)
    sidebar = page.locator('[data-testid="stSidebar"]')
    page.locator('input[type="file"]').set_input_files(str(csv))
    page.get_by_text(re.compile("looks like an identifier")).first.wait_for()    # its id column was seen
    settled(page, step_s)
    box = sidebar.locator("textarea").first
    box.fill(bounds)
    box.press("Control+Enter")
    settled(page, step_s)
    return sidebar


def no_errors(page, log_path: Path) -> None:
    """Fail with the texts of any exception or error alert in the page, and the server log's tail."""
    bad = page.locator(BAD)
    if bad.count():
        texts = "\n".join(bad.nth(i).inner_text()[:500] for i in range(bad.count()))
        pytest.fail(f"error element in the page:\n{texts}\n--- server log ---\n{log_path.read_text()[-2000:]}")


def canvas_spread(page, canvas, *, draw_ms: int = 1500) -> tuple[float, float, float]:
    """(pixel standard deviation, fraction of pixels unlike the commonest colour, fraction of reddish
    pixels) of one deck.gl canvas: the layers only, never the basemap (a canvas of its own).

    Waits for the canvas as long as the page's default timeout, then ``draw_ms`` for it to draw."""
    from PIL import Image
    canvas.wait_for(state="visible")
    page.wait_for_timeout(draw_ms)  # a frame or two for WebGL (software) to draw
    img = np.asarray(Image.open(io.BytesIO(canvas.screenshot())).convert("RGB"), dtype=np.int16)
    flat = img.reshape(-1, 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    background = colours[counts.argmax()]
    differs = np.abs(flat - background).sum(axis=1) > 30
    red = (flat[:, 0] > 150) & (flat[:, 0] - flat[:, 2] > 60)   # positive noisy counts / private centres
    return float(img.std()), float(differs.mean()), float(red.mean())
