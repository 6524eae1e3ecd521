"""Time to first render of every page in a real browser, cold and warm (issue 31's speed targets).

One Streamlit server on the embedded data and a fresh store; headless Chromium opens each page twice:
*cold* (the first visit after the server started: data loading and fits not cached yet) and *warm*
(a second session on the same server).  "Rendered" means the page's title is shown and Streamlit's
running indicator is gone (the whole script has run, the private draw included on public data).

Run::

    python -m benchmarks.browser_pages

Targets (issue 31): every page <= 2 s warm and <= 4 s cold; the High dimensional page <= 4 s.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: (page path, the page's title)
PAGES = [("", "Private k-means explorer"), ("Private_coresets", "Private coresets"),
         ("WaveCluster", "WaveCluster: clusters of any shape"), ("High_dimensional", "High-dimensional clustering"),
         ("Compare", "Compare privacy levels"), ("Explain", "What does ε mean for the people in the data?"),
         ("Release", "Publish a release")]
TARGET_WARM, TARGET_COLD = 2.0, 4.0


def _render_time(browser, url: str, text: str, timeout_s: float = 300) -> float:
    from browser_util import settled
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(timeout_s * 1000)
    t0 = time.monotonic()
    page.goto(url)
    page.get_by_role("heading", name=text).first.wait_for()
    settled(page, timeout_s)
    took = time.monotonic() - t0 - 0.5          # settled() waits 0.5 s for a rerun to start
    page.close()
    return took


def main() -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from browser_util import chromium, streamlit_server
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, DPCORE_STORE=f"sqlite:///{Path(tmp) / 'releases.db'}")
        with chromium() as browser, streamlit_server("app.py", env=env, log_path=Path(tmp) / "server.log") as url:
            rows = []
            for path, text in PAGES:
                cold = _render_time(browser, f"{url}/{path}", text)
                warm = _render_time(browser, f"{url}/{path}", text)
                rows.append((path or "Explorer", cold, warm))
    print(f"{'page':<18} {'cold (s)':>9} {'warm (s)':>9}   targets: cold <= {TARGET_COLD:g} s, warm <= {TARGET_WARM:g} s")
    for name, cold, warm in rows:
        flag = "" if cold <= TARGET_COLD and warm <= TARGET_WARM else "   over target"
        print(f"{name:<18} {cold:9.2f} {warm:9.2f}{flag}")


if __name__ == "__main__":
    main()
