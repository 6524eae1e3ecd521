"""Many real browser sessions on one app server at once (issue 24): time to first render, and what
a simultaneous "Draw" records under a cap that allows only some of the draws.

Every session is its own Chromium context (its own cookies, its own Streamlit session) on one
Streamlit server.  All open the Explorer on private data (Gowalla check-ins from ``$DPCORE_DATA``:
nothing is drawn on opening) at once; then all press "Draw" at once.  Sessions come in pairs with
the same settings (k differs between pairs), so a pair may cost one draw, never two.

Run::

    DPCORE_DATA=../shared/data python -m benchmarks.browser_sessions --sessions 20 --cap 4

It prints each session's time to first render (the "Draw" button shown), the draws recorded and
what each session saw.  ``tests/test_browser_load.py`` runs the same driver with 6 sessions and
asserts on it.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

GOWALLA = "gowalla_nyc_checkins"
REPO = Path(__file__).resolve().parents[1]
RELEASE_ID = re.compile(r"release #(\d+) in the release store")
REFUSED = "Refused, to protect privacy"


def settings_of(i: int) -> dict:
    """Session ``i``'s settings: pairs of sessions share one setting (k = 3, 3, 4, 4, ...)."""
    return {"dataset": GOWALLA, "epsilon": "1", "k": str(3 + i // 2)}


async def _one(browser, url: str, i: int, opened: asyncio.Barrier, timeout_s: float, chromium_wait) -> dict:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    page.set_default_timeout(timeout_s * 1000)
    query = "&".join(f"{k}={v}" for k, v in settings_of(i).items())
    out = {"session": i, "k": int(settings_of(i)["k"])}
    try:
        t0 = time.monotonic()
        await page.goto(f"{url}/?{query}")
        button = page.get_by_role("button", name=re.compile(r"^Draw: spends ε"))
        await button.wait_for()
        out["first_render_s"] = time.monotonic() - t0
        await chromium_wait(page)
        await opened.wait()                 # every session has rendered: now all press at once
        t1 = time.monotonic()
        await button.click()
        drawn = page.get_by_text(RELEASE_ID)
        refused = page.get_by_text(REFUSED)
        await drawn.or_(refused).first.wait_for()
        await chromium_wait(page)
        out["outcome_s"] = time.monotonic() - t1
        main = await page.locator('[data-testid="stMain"]').inner_text()
        m = RELEASE_ID.search(main)
        out["outcome"] = "drawn" if m else "refused"
        out["release_id"] = int(m.group(1)) if m else None
        out["main_text"] = main
        out["exceptions"] = await page.locator('[data-testid="stException"]').all_inner_texts()
    except Exception as exc:   # a session that did not get through is a finding, not a crash of the run
        out.setdefault("outcome", "failed")
        out["error"] = f"{type(exc).__name__}: {exc}"[:500]
        out.setdefault("exceptions", [])
    finally:
        await ctx.close()
    return out


async def run_sessions(url: str, n: int, *, timeout_s: float = 600) -> list[dict]:
    """Drive ``n`` Chromium sessions against the app at ``url``; see the module docstring.

    Returns
    -------
    list of dict, one per session: ``session``, ``k``, ``first_render_s``, ``outcome_s``,
    ``outcome`` ("drawn", "refused" or "failed"), ``release_id`` (drawn), ``main_text`` (what the
    page's main area said), ``exceptions`` (texts of Streamlit exception elements) and ``error``.
    """
    from playwright.async_api import async_playwright

    sys.path.insert(0, str(REPO / "tests"))
    from browser_util import CHROMIUM, CHROMIUM_ARGS

    async def wait_settled(page):
        await page.wait_for_timeout(500)
        await page.wait_for_function(
            """() => !document.querySelector('[data-testid="stStatusWidget"]')
                     && !document.querySelector('[data-stale="true"]')""", timeout=timeout_s * 1000, polling=250)

    opened = asyncio.Barrier(n)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            return await asyncio.gather(*(_one(browser, url, i, opened, timeout_s, wait_settled) for i in range(n)))
        finally:
            await browser.close()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--cap", type=float, default=4.0, help="the data's total ε (each draw spends ε = 1)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO / "tests"))
    from browser_util import streamlit_server

    from dpcore.store import ReleaseStore
    with tempfile.TemporaryDirectory() as tmp:
        store_url = f"sqlite:///{Path(tmp) / 'releases.db'}"
        ReleaseStore(store_url).set_cap(GOWALLA, args.cap, who="benchmark")
        env = dict(os.environ, DPCORE_STORE=store_url)
        with streamlit_server("app.py", env=env, log_path=Path(tmp) / "server.log") as url:
            t0 = time.monotonic()
            res = asyncio.run(run_sessions(url, args.sessions))
            wall = time.monotonic() - t0
        store = ReleaseStore(store_url)
        recorded = store.releases(GOWALLA)
        renders = [r["first_render_s"] for r in res if "first_render_s" in r]
        print(f"{args.sessions} sessions on one server, cap ε = {args.cap:g}, each draw ε = 1, "
              f"{len({r['k'] for r in res})} settings; wall {wall:.1f} s")
        if renders:
            print(f"time to first render (s): median {statistics.median(renders):.2f}, max {max(renders):.2f}, "
                  f"min {min(renders):.2f}")
        outcomes = [r.get("outcome_s") for r in res if r.get("outcome_s") is not None]
        if outcomes:
            print(f"time from the simultaneous click to the result or refusal (s): median "
                  f"{statistics.median(outcomes):.2f}, max {max(outcomes):.2f}")
        print(f"draws recorded: {len(recorded)} (ε spent {store.spent(GOWALLA)[0]:g} of {args.cap:g}); "
              f"sessions that saw a draw: {sum(r['outcome'] == 'drawn' for r in res)}, a refusal: "
              f"{sum(r['outcome'] == 'refused' for r in res)}, failed: {sum(r['outcome'] == 'failed' for r in res)}; "
              f"exceptions shown: {sum(len(r['exceptions']) for r in res)}; verify: {bool(store.verify())}")
        for r in res:
            if r["outcome"] == "failed":
                print(f"  session {r['session']}: {r.get('error')}")


if __name__ == "__main__":
    main()
