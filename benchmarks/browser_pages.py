"""Time to first render of every page in a real browser, cold and warm (issue 31's speed targets).

One Streamlit server on the embedded data and a fresh store; headless Chromium opens each page twice:
*cold* (the first visit after the server started: data loading and fits not cached yet) and *warm*
(a second session on the same server, in a fresh browser context: its HTTP cache empty, as on a person's
first visit).  *Returning* is a second session on the warm server from a browser that has opened the page
before (its cache holds Streamlit's element code: deck.gl, plotly, the data grid), as a person's browser
does on the next visit; it is not the target's figure, it says how much of "warm" is the browser's loading.  "Rendered" means the page's title is shown and Streamlit's
running indicator is gone (the whole script has run, the private draw included on public data).

The app's server starts as the README starts it (``python -m ui.serve``: the library is imported before the
server listens); "cold" is timed from the server's first answer, and the start itself is printed.

Run::

    python -m benchmarks.browser_pages                       # every table
    python -m benchmarks.browser_pages --only issue66 --trace /tmp/traces
    python -m benchmarks.browser_pages --only issue66 --repeat 3          # medians, on a noisy machine

Issue 66's table (``--only issue66``) times, from the click (or the address typed) to the page settled and
painted and the browser quiet again (its maps drawn: :func:`_quiet`; the "settled" column stops at the page
painted, as the table did before stop 75): a browse on a freshly started server (the Explorer, then Private coresets, WaveCluster and Compare by
the sidebar's links, then second visits), Figure 8's levels view ("Every level side by side" on the coreset
page) on its first opening, in a second browser and after a restart of the server (the previews' disk cache,
``ui.preview_cache``, in a fresh temporary folder), the Explorer's first visit after another restart (its
expected-error simulations and k-means reference read back from that cache), and the public gallery with one publication (a sanitized
database of the taxi sample drawn and published through ``dpcore.store.draw``, as a script does), first visit
and reload.  Each row also gives the CPU seconds the Streamlit servers and Chromium used meanwhile (Linux:
``/proc``), which a shared machine's other work moves far less than the wall clock.  ``--trace DIR`` writes
Chromium's performance trace of each row (open it in Chrome's Performance panel or ui.perfetto.dev) and prints
the main thread's busiest kinds of work.  Targets (issue 66, idle machine): Explorer first visit <= 5 s, levels
view first opening <= 10 s and in a second browser <= 5 s, gallery <= 4 s / reload <= 2.5 s, Private coresets
and WaveCluster first visit in a browse <= 2.5 s, second visits <= 2.5 s.

Targets (issue 56, tighter than issue 31's 2 s / 4 s): every page's first render <= 1.5 s warm and <= 5 s on a
cold server, the Explorer included; the privacy-utility curve at Compare's defaults complete within 10 s of the
click (first ε within 3 s).

Each row also gives when the page's title was placed ("placed") and when its first map's canvas appeared
("map", ``-`` on a page without a map): the rest of "rendered" is the script's run and the browser
drawing (Streamlit loads each element's code on first use; the maps and charts draw in software WebGL
here).  The load average before and after is printed: the machine's other work counts in every figure.  The curve is timed from the click on "Compute the curve" to its figure, in a
first session (computed) and a second one (the server's cache).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: (page path, the page's title)
PAGES = [("", "Private k-means explorer"), ("Private_coresets", "Private coresets"),
         ("WaveCluster", "WaveCluster: clusters of any shape"), ("High_dimensional", "High-dimensional clustering"),
         ("Compare", "Compare privacy levels"), ("Explain", "What does ε mean for the people in the data?"),
         ("Release", "Publish a release")]
TARGET_WARM, TARGET_COLD = 1.5, 5.0
#: The floor (``benchmarks/floor_page.py``): (query, label) of a page that computes nothing, without and with one
#: plotly chart and one pydeck map; its title.
FLOOR = [("", "floor: text"), ("?charts=chart", "floor: chart"), ("?charts=map", "floor: map"),
         ("?charts=grid", "floor: data grid"), ("?charts=1", "floor: chart+map")]
FLOOR_TITLE = "Floor page"
VIEWPORT = {"width": 1400, "height": 1000}
#: Issue 66's rows: the headings waited for, and the coreset page's box of Figure 8's levels.
EXPLORER, CORESETS, WAVECLUSTER, COMPARE = (title for _, title in PAGES[:2] + PAGES[2:3] + PAGES[4:5])
GALLERY = "Published private releases"
LEVELS_BOX = "Every level side by side"


#: Records, in the page, when the first map canvas appears (ms after navigation): read once the page settled.
_MAP_WATCH = """window.__dpMapAt = null;
const __dpWatch = setInterval(() => {
  if (document.querySelector('[data-testid="stDeckGlJsonChart"] canvas')) {
    window.__dpMapAt = performance.now(); clearInterval(__dpWatch);
  }
}, 50);"""


def _render_time(browser, url: str, text: str, timeout_s: float = 300, *, context=None
                 ) -> tuple[float, float | None, float]:
    """(placed, map, rendered) seconds after navigation: heading shown, the first map's canvas drawn (None: the
    page has no map), and no skeleton left / script done.

    ``context``: a browser context to open the page in (its HTTP cache holds what an earlier visit loaded, as a
    person's browser does on a second visit); None: a fresh context with an empty cache (a first visit).
    """
    from browser_util import settled
    viewport = {"width": 1400, "height": 1000}     # a context's pages take the context's viewport
    page = context.new_page() if context is not None else browser.new_page(viewport=viewport)
    page.set_default_timeout(timeout_s * 1000)
    page.add_init_script(_MAP_WATCH)
    t0 = time.monotonic()
    page.goto(url)
    page.get_by_role("heading", name=text).first.wait_for()
    placed = time.monotonic() - t0
    # The heading comes from the script's run, so the run has started: no wait for it to start (settled()'s
    # 0.5 s, subtracted before) and a check every 50 ms (at 250 ms a figure could be a quarter second late).
    settled(page, timeout_s, start_ms=0, poll_ms=50)
    took = time.monotonic() - t0
    map_ms = page.evaluate("window.__dpMapAt")
    page.close()
    return placed, (None if map_ms is None else map_ms / 1000), took


def _curve_time(browser, url: str, timeout_s: float = 300) -> tuple[float, float]:
    """Seconds from the click on "Compute the curve" (Compare at its defaults) to the first ε drawn and
    to the whole curve."""
    import re

    from browser_util import settled
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(timeout_s * 1000)
    page.goto(f"{url}/Compare")
    page.get_by_role("heading", name="Compare privacy levels").first.wait_for()
    settled(page, timeout_s)
    draw = page.get_by_role("button", name=re.compile(r"^Draw \d+ panel"))
    if draw.count():
        draw.first.click()
        settled(page, timeout_s)
    charts = page.locator('[data-testid="stPlotlyChart"]').count()
    t0 = time.monotonic()
    page.get_by_text("Compute the curve", exact=True).click()
    # The first ε's figure (or, from the cache, the whole curve): one more chart on the page.
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length > {charts}",
                           polling=50)
    first = time.monotonic() - t0
    page.locator(".st-key-curve_fig").wait_for()
    took = time.monotonic() - t0
    page.close()
    return first, took


#: Waits for two animation frames: whatever the last script run sent has been laid out and painted (a chart whose
#: drawing blocks the main thread, e.g. thousands of SVG markers, ends before the second frame).
_PAINTED = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r())))"


#: The browser is *quiet* once its processes used under QUIET_CPU_S CPU seconds in a window of QUIET_WINDOW_S
#: (a fifth of one core).  A map's first frame is drawn after the script's run is over and the page painted:
#: SwiftShader (software WebGL) compiles deck.gl's and maplibre's shaders on its own threads, 1-4 s of CPU after the
#: Explorer's first visit had "settled" (stop 75); a step that stopped there left that work to the next step.
QUIET_WINDOW_S, QUIET_CPU_S = 0.3, 0.06


def _quiet(timeout_s: float) -> float:
    """Wait until the browser is quiet (:data:`QUIET_CPU_S` in :data:`QUIET_WINDOW_S`); the monotonic time at which
    the first quiet window began (the page's work ended there), or now after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while True:
        start, before = time.monotonic(), _cpu_snapshot()
        time.sleep(QUIET_WINDOW_S)
        if _cpu_used(before)[1] < QUIET_CPU_S or time.monotonic() > end:
            return start


def _settle(page, timeout_s: float, step: _Step | None = None) -> None:
    """The script's run is over (:func:`browser_util.settled`, checked every 50 ms), the page painted, and the
    browser quiet (:func:`_quiet`): ``step``'s *settled* time is the first, its wall time ends at the last."""
    from browser_util import settled
    settled(page, timeout_s, start_ms=0, poll_ms=50)
    page.evaluate(_PAINTED)
    if step is not None:
        step.settled = time.monotonic() - step.t0
        step.end = _quiet(timeout_s)


class _Trace:
    """Chromium's performance trace of one timed step (``--trace DIR``): what the browser's main thread did.

    ``with _Trace(browser, page, path):`` records the devtools timeline categories into ``path`` (open it in
    Chrome's Performance panel or https://ui.perfetto.dev); :func:`trace_summary` sums its top events.
    """

    CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"]

    def __init__(self, browser, page, path: Path | None):
        self.browser, self.page, self.path = browser, page, path

    def __enter__(self):
        if self.path is not None:
            self.browser.start_tracing(page=self.page, path=str(self.path), categories=self.CATEGORIES)
        return self

    def __exit__(self, *exc):
        if self.path is not None:
            self.browser.stop_tracing()


def trace_summary(path: Path, top: int = 6) -> str:
    """What the renderer's main thread (``CrRendererMain``) did in a Chromium trace: its busy seconds (the sum of its
    top-level tasks) and the ``top`` kinds of work directly inside them (script, layout, paint, parsing, GC...)."""
    import json
    events = json.loads(Path(path).read_text())
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
            and e.get("args", {}).get("name") == "CrRendererMain"}
    spans = sorted((e["ts"], -e.get("dur", 0), e["name"], (e["pid"], e["tid"])) for e in events
                   if e.get("ph") == "X" and (e["pid"], e["tid"]) in main)
    busy, totals, stack = 0.0, dict[str, float](), list[tuple]()     # stack: (end, thread) of the open events
    for start, neg_dur, name, thread in spans:
        end = start - neg_dur
        while stack and (stack[-1][1] != thread or stack[-1][0] <= start):
            stack.pop()
        if not stack:
            busy += end - start           # a top-level task
        elif len(stack) == 1:
            totals[name] = totals.get(name, 0.0) + (end - start)
        stack.append((end, thread))
    ranked = sorted(totals.items(), key=lambda kv: -kv[1])[:top]
    return f"main thread busy {busy / 1e6:.2f} s: " + "; ".join(f"{n} {v / 1e6:.2f} s" for n, v in ranked)


def _cpu_snapshot() -> dict:
    """{pid: (kind, CPU seconds)} of this process's descendants: ``"server"`` (a Streamlit server, its command line
    names streamlit or ui.serve) or ``"browser"`` (Chromium's processes).  Linux (``/proc``); {} elsewhere.

    CPU seconds, unlike wall seconds, hardly move with what else the machine runs: on a shared machine they
    compare a before and an after that wall clocks cannot.
    """
    procs = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for d in Path("/proc").glob("[0-9]*"):
        try:
            stat = (d / "stat").read_text()
            comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            procs[int(d.name)] = (comm, int(rest[1]), (int(rest[11]) + int(rest[12])) / tick, d)
        except (OSError, ValueError, IndexError):
            continue
    children: dict = {}
    for pid, (_, ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        comm, _, cpu, d = procs[pid]
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmd = ""
        kind = "browser" if "chrom" in comm.lower() or "headless" in comm.lower() else \
            "server" if "streamlit" in cmd or "ui.serve" in cmd else None
        if kind:
            out[pid] = (kind, cpu)
    return out


def _cpu_used(before: dict) -> tuple[float, float]:
    """(server, browser) CPU seconds since the snapshot ``before`` (processes started since count from 0)."""
    used = {"server": 0.0, "browser": 0.0}
    for pid, (kind, cpu) in _cpu_snapshot().items():
        used[kind] += cpu - (before[pid][1] if pid in before else 0.0)
    return used["server"], used["browser"]


class _Step:
    """Times one step: wall seconds (to the browser quiet: :func:`_settle`), seconds to the script's run over and
    the page painted (``settled``), and the CPU seconds the servers and the browser used meanwhile."""

    def __enter__(self):
        self.cpu0, self.t0, self.end, self.settled = _cpu_snapshot(), time.monotonic(), None, None
        return self

    def __exit__(self, *exc):
        self.wall = (self.end or time.monotonic()) - self.t0
        self.settled = self.wall if self.settled is None else self.settled
        self.server, self.browser = _cpu_used(self.cpu0)


def _open(browser, context, url: str, heading: str, timeout_s: float, trace: Path | None = None):
    """Open ``url`` in a new tab of ``context`` (None: a fresh context, an empty HTTP cache); (page, :class:`_Step`)."""
    page = (context or browser.new_context(viewport=VIEWPORT)).new_page()
    page.set_default_timeout(timeout_s * 1000)
    with _Trace(browser, page, trace), _Step() as step:
        page.goto(url)
        page.get_by_role("heading", name=heading).first.wait_for()
        _settle(page, timeout_s, step)
    return page, step


def _navigate(browser, page, link: str, heading: str, timeout_s: float, trace: Path | None = None) -> _Step:
    """A click on the sidebar's link to ``link`` until that page settled (a browse: the same session)."""
    with _Trace(browser, page, trace), _Step() as step:
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=link, exact=True).click()
        page.get_by_role("heading", name=heading).first.wait_for()
        _settle(page, timeout_s, step)
    return step


def _open_levels(browser, page, timeout_s: float, trace: Path | None = None) -> _Step:
    """The click on the coreset page's "Every level side by side" box until its figure is drawn and settled."""
    with _Trace(browser, page, trace), _Step() as step:
        page.get_by_text(LEVELS_BOX).first.click()
        page.locator(".st-key-levels_fig .main-svg").first.wait_for()
        _settle(page, timeout_s, step)
    return step


def publish_one(store_url: str, algorithm: str = "sanitize") -> int:
    """One publication in the store at ``store_url``, made as a script makes one (:mod:`dpcore.store.draw`):
    ``algorithm`` on the embedded taxi sample at ε = 1 (k = 5 for a k-means), drawn, recorded, published."""
    from dpcore import datasets
    from dpcore.store import ReleaseStore
    from dpcore.store.draw import draw, settings
    from dpcore.store.keys import content_digest
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
    params = {"epsilon": 1.0} if algorithm == "sanitize" else {"n_clusters": 5, "epsilon": 1.0}
    store = ReleaseStore(store_url)
    s = settings(ds.name, content_digest(ds.X, None), algorithm, params, bounds=ds.bounds, d=ds.X.shape[1])
    rid, _ = draw(store, s, ds.X, who="benchmark script", columns=ds.columns, description=ds.title)
    store.publish(rid, who="benchmark script")
    return rid


def issue66_rows(browser, env: dict, tmp: Path, timeout_s: float, trace_dir: Path | None) -> list:
    """Issue 66's table: seconds from the click (or the address typed) to the page settled.

    A fresh server (``python -m ui.serve``) and a browse through it as a person makes one: the Explorer first,
    then Private coresets, WaveCluster and Compare by the sidebar's links, then back (second visits); Figure 8's
    levels view opened on the coreset page, then in a second browser (a fresh context: the server's caches warm,
    the browser's empty), then again after a restart of the server (the previews' disk cache warm); the Explorer's
    first visit on another restarted server (its simulations and reference read back from disk).  The public
    gallery on its own server, first visit and reload, with one publication in the store.
    """
    from browser_util import streamlit_server
    tr = (lambda name: None) if trace_dir is None else (lambda name: trace_dir / f"{name}.json")
    rows: list[tuple[str, _Step, float | None]] = []
    with _Step() as start:
        server = streamlit_server("app.py", env=env, log_path=tmp / "browse.log")
        url = server.__enter__()
    try:
        page, step = _open(browser, None, f"{url}/", EXPLORER, timeout_s, tr("explorer_first"))
        rows.append(("server start (python -m ui.serve) to its first answer", start, None))
        rows.append(("Explorer, first visit after the server starts", step, 5.0))
        for link, heading, target in [("Private coresets", CORESETS, 2.5), ("WaveCluster", WAVECLUSTER, 2.5),
                                      ("Compare", COMPARE, None)]:
            step = _navigate(browser, page, link, heading, timeout_s, tr(f"{link.replace(' ', '_')}_first"))
            rows.append((f"{link}, first visit in a browse after the Explorer", step, target))
        for link, heading in [("Explorer", EXPLORER), ("Compare", COMPARE), ("Private coresets", CORESETS)]:
            step = _navigate(browser, page, link, heading, timeout_s, tr(f"{link.replace(' ', '_')}_second"))
            rows.append((f"{link}, second visit", step, 2.5))
        rows.append(("levels view (Figure 8), first opening", _open_levels(browser, page, timeout_s,
                                                                           tr("levels_first")), 10.0))
        page.context.close()
        page, _ = _open(browser, None, f"{url}/Private_coresets", CORESETS, timeout_s)
        rows.append(("levels view, in a second browser (server cache warm)",
                     _open_levels(browser, page, timeout_s, tr("levels_second_browser")), 5.0))
        page.context.close()
    finally:
        server.__exit__(None, None, None)
    with streamlit_server("app.py", env=env, log_path=tmp / "browse.log") as url:
        page, _ = _open(browser, None, f"{url}/Private_coresets", CORESETS, timeout_s)
        rows.append(("levels view, after a server restart (disk cache)",
                     _open_levels(browser, page, timeout_s, tr("levels_after_restart")), 10.0))
        page.context.close()
    # The Explorer on a restarted server: the expected error's simulations and the k-means reference of the public
    # taxi sample are read back from the disk cache (the first visit above computed them).
    with streamlit_server("app.py", env=env, log_path=tmp / "browse.log") as url:
        page, step = _open(browser, None, f"{url}/", EXPLORER, timeout_s, tr("explorer_after_restart"))
        rows.append(("Explorer, first visit after a server restart (disk cache)", step, 5.0))
        page.context.close()
    publish_one(env["DPCORE_STORE"])
    with streamlit_server("gallery.py", env=env, log_path=tmp / "gallery.log") as url:
        page, step = _open(browser, None, f"{url}/", GALLERY, timeout_s, tr("gallery_first"))
        rows.append(("public gallery, first visit (one publication)", step, 4.0))
        with _Trace(browser, page, tr("gallery_reload")), _Step() as step:
            page.reload()
            page.get_by_role("heading", name=GALLERY).first.wait_for()
            _settle(page, timeout_s, step)
        rows.append(("public gallery, reload", step, 2.5))
        page.context.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=("issue66", "pages", "floor"),
                        default=["issue66", "pages", "floor"], help="which tables to measure (default: all)")
    parser.add_argument("--trace", type=Path, default=None, metavar="DIR",
                        help="write Chromium's performance trace of each of issue 66's rows into DIR, and print "
                             "the main thread's top tasks beside each row")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="issue 66's browse N times (fresh servers, store and previews cache each time); its "
                             "table then gives each row's median and every run (a shared or noisy machine)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    sys.path.insert(0, str(REPO / "tests"))
    from browser_util import chromium, streamlit_server
    rows, returning, curve, start_s = [], {}, None, None
    issue66: list[list] = []      # one list of rows per browse (--repeat)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # A fresh store, and a fresh previews cache on disk (ui.preview_cache): the first opening computes.
        env = dict(os.environ, DPCORE_STORE=f"sqlite:///{tmp / 'releases.db'}",
                   DPCORE_PREVIEW_CACHE=str(tmp / "previews"))
        if "issue66" in args.only:
            if args.trace is not None:
                args.trace.mkdir(parents=True, exist_ok=True)
            with chromium() as browser:
                for i in range(max(1, args.repeat)):
                    run = tmp / f"issue66-{i}"
                    run.mkdir()
                    issue66.append(issue66_rows(browser, dict(env, DPCORE_STORE=f"sqlite:///{run / 'releases.db'}",
                                                              DPCORE_PREVIEW_CACHE=str(run / "previews")),
                                                run, 300, args.trace if i == 0 else None))
        if "pages" in args.only:
            env_pages = dict(env, DPCORE_STORE=f"sqlite:///{tmp / 'pages.db'}")
            with chromium() as browser, ExitStack() as stack:
                started = time.monotonic()
                url = stack.enter_context(streamlit_server("app.py", env=env_pages, log_path=tmp / "server.log"))
                start_s = time.monotonic() - started
                # A returning person's browser: one context for every page, each visited once before it is timed.
                person = browser.new_context(viewport=VIEWPORT)
                for path, text in PAGES:
                    cold = _render_time(browser, f"{url}/{path}", text)
                    warm = _render_time(browser, f"{url}/{path}", text)
                    _render_time(browser, f"{url}/{path}", text, context=person)
                    returning[path or "Explorer"] = _render_time(browser, f"{url}/{path}", text, context=person)[2]
                    rows.append((path or "Explorer", cold, warm))
                person.close()
                curve = [_curve_time(browser, url), _curve_time(browser, url)]
        if "floor" in args.only:
            # The floor: the same timing of a page that computes nothing, on its own server (same browser).
            with chromium() as browser, streamlit_server("benchmarks/floor_page.py", env=env,
                                                          log_path=tmp / "floor.log") as url:
                person = browser.new_context(viewport=VIEWPORT)
                for query, name in FLOOR:
                    cold = _render_time(browser, f"{url}/{query}", FLOOR_TITLE)
                    warm = _render_time(browser, f"{url}/{query}", FLOOR_TITLE)
                    _render_time(browser, f"{url}/{query}", FLOOR_TITLE, context=person)
                    returning[name] = _render_time(browser, f"{url}/{query}", FLOOR_TITLE, context=person)[2]
                    rows.append((name, cold, warm))
                person.close()
    load_after = os.getloadavg()
    print(f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in load_before)} before, "
          f"{', '.join(f'{v:.2f}' for v in load_after)} after ({os.cpu_count()} cores)")
    if issue66:
        print(f"{'issue 66: from the click to the page settled, browser quiet':<58} {'wall s':>7} {'settled':>8} "
              f"{'server CPU s':>13} {'browser CPU s':>14}   target (wall)")
        import statistics
        for j, (name, _, target) in enumerate(issue66[0]):
            steps = [run[j][1] for run in issue66]
            wall, settled, server, browser = (statistics.median(getattr(st, a) for st in steps)
                                              for a in ("wall", "settled", "server", "browser"))
            flag = "" if target is None or wall <= target else "   over target"
            each = "" if len(steps) == 1 else "   runs: " + ", ".join(f"{st.wall:.2f}" for st in steps)
            print(f"{name:<58} {wall:7.2f} {settled:8.2f} {server:13.2f} {browser:14.2f}   "
                  f"{'-' if target is None else f'<= {target:g}'}{flag}{each}")
        if len(issue66) > 1:
            print(f"(each figure the median of {len(issue66)} browses, every run's wall seconds at the end of its row)")
        print("(CPU seconds: the Streamlit servers' and Chromium's processes while the step ran; Linux only. They "
              "move far less than wall seconds with the machine's other work.  'settled': the script's run over and "
              "the page painted; 'wall' goes on until the browser is quiet, its maps drawn)")
        if args.trace is not None:
            for f in sorted(args.trace.glob("*.json")):
                print(f"  trace {f.stem}: {trace_summary(f)}")
    if rows:
        print(f"{'page':<18} {'cold: placed / map / rendered (s)':>34} {'warm: placed / map / rendered (s)':>34}   "
              f"returning (s)   targets: cold <= {TARGET_COLD:g} s, warm <= {TARGET_WARM:g} s")
        shown = lambda v: "    -" if v is None else f"{v:5.2f}"  # noqa: E731
        floors = {name for _, name in FLOOR}
        for name, (cp, cm, cold), (wp, wm, warm) in rows:
            flag = ("" if name in floors or cold <= TARGET_COLD and warm <= TARGET_WARM else "   over target")
            print(f"{name:<18} {cp:13.2f} / {shown(cm)} / {cold:6.2f}   {wp:13.2f} / {shown(wm)} / {warm:6.2f}"
                  f"   {returning[name]:13.2f}{flag}")
    if start_s is not None:
        print(f"server start (python -m ui.serve: the library preloaded) to its first answer: {start_s:.2f} s; "
              "'cold' is timed from then")
    if curve is not None:
        (first, whole), (_, cached) = curve
        print(f"curve at Compare's defaults: first ε drawn after {first:.2f} s (target <= 3 s), whole curve "
              f"{whole:.2f} s (target <= 10 s); {cached:.2f} s from the cache in a second session")


if __name__ == "__main__":
    main()
