"""Streamlit widgets and caches shared by every page.

Pages stay thin: they call these to read inputs, get private results through
:func:`private_release` (drawn once with unpredictable noise, recorded in the
release store before it is shown, and kept until the person asks for a new
draw: a rerun, a page switch, a reload or a restart never draws fresh noise),
non-private references through :func:`baseline`, and draw with :mod:`ui.figures`.
Exact facts about the raw data go in the one :func:`raw_facts` panel.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import json
import math
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import datasets
from dpcore.algorithms.regime import OutOfRegimeError, RegimeWarning
from dpcore.exceptions import BudgetExceededError, InfeasibleBudgetError
from dpcore.explain import PRIVACY_LEVELS, level_for
from dpcore.sources import SCALABLE, SourceError

from .figures import NOT_PRIVATE, ledger_frame

UPLOAD = "Upload a file…"
EPSILON_VALUES = [lv.epsilon for lv in PRIVACY_LEVELS]


# -- page frame -----------------------------------------------------------------
def page_setup(page_file: str) -> None:
    """Call first in every page: makes a page opened by a direct link go through app.py's router.

    Streamlit runs a page of ``pages/`` in its legacy multipage mode when a
    freshly started server is first reached through that page's URL (before
    any session has run ``st.navigation``).  The page then lacks the router's
    frame (wide layout, page titles).  Hand over to ``app.py``, which reopens
    the same page with the same URL state.  Under ``AppTest`` the page is
    the main script and runs as it is.
    """
    if st.session_state.get("_dp_routed"):
        return
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    main = getattr(ctx, "main_script_path", None)
    if main is None or Path(main).resolve() == Path(page_file).resolve():
        return
    st.session_state["_dp_redirect"] = (str(Path(page_file).resolve()), st.query_params.to_dict())
    st.switch_page(str(Path(main).resolve()))


# -- errors -------------------------------------------------------------------
@contextlib.contextmanager
def friendly_errors(what: str = "This step"):
    """Show a sentence, never a traceback, when dpcore rejects input.

    dpcore's ValueError/TypeError messages already say what to fix; anything
    unexpected gets a generic sentence and the details in a collapsed box.
    """
    try:
        yield
    except OutOfRegimeError as exc:
        st.error(f"Refused before using the data beyond its size (outside the paper's regime): {exc}")
        st.stop()
    except InfeasibleBudgetError as exc:
        st.error(f"The privacy budget is too small for this data: {exc}")
        st.stop()
    except (ValueError, TypeError) as exc:
        st.error(f"{what} could not run: {exc}")
        st.stop()
    except BudgetExceededError as exc:
        st.error(f"Refused, to protect privacy: {exc}")
        st.stop()
    except SourceError as exc:      # the engine or database of a large source; the message says which
        st.error(f"{what} could not run where the data lie: {exc}")
        st.stop()
    except (ConnectionError, OSError) as exc:
        st.error(f"{what} could not reach the data: {exc}")
        st.stop()
    except MemoryError:
        st.error(f"{what} ran out of memory: try fewer rows (the row limit in the sidebar) or fewer grid cells.")
        st.stop()


# -- URL state ----------------------------------------------------------------
def url_default(name: str, default, cast=str, valid=None):
    """A widget default taken from the page URL (``?name=value``) when valid, else ``default``.

    ``valid``, when given, is a predicate on the cast value (e.g. a widget's
    min/max): a hand-edited URL outside it falls back to ``default`` instead of
    making the widget raise.
    """
    raw = st.query_params.get(name)
    if raw is None:
        return default
    try:
        value = cast(raw)
    except (TypeError, ValueError, OverflowError):
        return default
    if valid is not None and not valid(value):
        return default
    return value


def set_url(**values) -> None:
    """Write the shareable page state (dataset, algorithm, k, epsilon, ...) into the URL."""
    for key, value in values.items():
        if value is None:
            continue
        if st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


# -- inputs -------------------------------------------------------------------
def epsilon_label(eps: float) -> str:
    return f"ε = {eps:g} · {level_for(eps).name}"


def epsilon_slider(label: str = "Privacy level (ε)", *, key: str = "epsilon", default: float = 1.0,
                   sidebar: bool = True) -> float:
    """Log-scale ε slider that shows named privacy levels; syncs with ``?epsilon=``."""
    start = url_default("epsilon", default, float)
    start = min(EPSILON_VALUES, key=lambda v: abs(math.log(v) - math.log(start if start > 0 else default)))
    where = st.sidebar if sidebar else st
    eps = where.select_slider(label, options=EPSILON_VALUES, value=start, format_func=epsilon_label, key=key,
                              help="Smaller ε = stronger privacy = more noise. ε bounds how much any one "
                                   "person's record can change what is published (odds by at most e^ε).")
    where.caption(level_for(eps).guidance)
    return float(eps)


@st.cache_data(show_spinner="Loading data…", max_entries=8)
def load_dataset(name: str, max_rows: int | None = None):
    """Load a named dataset once per (name, max_rows); returns (Dataset, fingerprint)."""
    ds = datasets.load(name, max_rows=max_rows)
    return ds, _fingerprint(ds.X)


def _fingerprint(X: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(X).view(np.uint8)).hexdigest()[:16]


def dataset_picker(*, key: str = "dataset", default: str | None = None, geo_only: bool = False, sidebar: bool = True,
                   allow_large: bool = False):
    """Choose a dataset (bundled, real files in $DPCORE_DATA, NYC taxi download, or an upload).

    ``allow_large`` also offers the large sources the data owner configured in
    ``dpcore_sources.toml`` (:mod:`dpcore.sources.config`): they are opened where they
    lie and never loaded, so only pages that fit on a :class:`~dpcore.sources.DataSource`
    (the Explorer) offer them.

    Returns
    -------
    (Dataset, fingerprint) or (None, None) when nothing usable is chosen yet.
    """
    where = st.sidebar if sidebar else st
    names = [n for n in datasets.available() if allow_large or not datasets.info(n, metadata=False)["large"]]
    if geo_only:
        names = [n for n in names if datasets.info(n, metadata=False)["geo"]]
    options = names + [UPLOAD]
    preferred = url_default("dataset", default or _default_dataset(names), str)
    index = options.index(preferred) if preferred in options else 0
    choice = where.selectbox("Dataset", options, index=index, key=key, format_func=_dataset_label)
    if choice == UPLOAD:
        return _upload(where, key)
    meta = datasets.info(choice)
    if meta.get("large"):
        return _open_large(where, choice, meta)
    if meta.get("needs_download") and not meta.get("cached"):
        where.info("This dataset is downloaded from NYC Open Data once and then cached on disk.")
        if not where.button("Download now", key=f"{key}_download"):
            return None, None
        bar = st.progress(0.0, text="Downloading…")
        with friendly_errors("The download"):
            datasets.load(choice, progress=lambda f, msg: bar.progress(min(max(f, 0.0), 1.0), text=msg))
        bar.empty()
    with friendly_errors("Loading the dataset"):
        ds, fp = load_dataset(choice)
    return ds, fp


def _dataset_label(name: str) -> str:
    if name == UPLOAD:
        return name
    meta = datasets.info(name, metadata=False)
    return meta["title"] + (" · large source" if meta["large"] else "")


@st.cache_resource(show_spinner="Opening the source…", max_entries=4)
def _large_source(name: str, content: str):
    """One open source per configured entry and content key, shared by every session.

    A resource, not cached data: the source holds an engine connection (DuckDB, Spark,
    PostgreSQL), and its exact row count, once read, is reused by every later fit.
    """
    return datasets.load(name)


def _open_large(where, name: str, meta: dict):
    """A configured large source: what it is (from metadata), opened without loading a row."""
    from dpcore.sources.config import content_key, read_config
    entry = next(e for e in read_config() if e["name"] == name)
    if meta.get("error"):
        st.error(f"The source {name!r} cannot be opened: {meta['error']}. Fix its entry in "
                 "dpcore_sources.toml (DPCORE_SOURCES).")
        st.stop()
    fmt = {"parquet": "Parquet", "csv": "CSV"}.get(meta.get("format"), "database table")
    files = f" ({meta['files']:,} files)" if meta.get("files", 0) > 1 else ""
    where.caption(f"Large source: {fmt}{files} read where it lies by {engine_name(meta.get('engine'))}; "
                  f"columns {', '.join(meta.get('columns') or [])}. Nothing is loaded: each release runs a "
                  "few exact aggregate passes there (counts, a grid histogram, per-centre sums) and adds the "
                  "noise here. Its row count is in the raw data facts panel (data owner only).")
    key = content_key(entry)
    with friendly_errors("Opening the source"):
        ds = _large_source(name, key)
    return ds, f"src-{key}"


def engine_name(engine: str | None) -> str:
    """How people write an engine's name (``"duckdb"`` -> DuckDB)."""
    names = {"duckdb": "DuckDB", "pyspark": "Spark", "postgres": "PostgreSQL", "postgresql": "PostgreSQL"}
    return names.get(str(engine), str(engine or "the engine"))


def is_large(ds) -> bool:
    """True for a configured large source (rows where they lie; fit on ``ds.data_source``)."""
    return getattr(ds, "data_source", None) is not None


def exact_rows(ds) -> int:
    """The exact number of rows (finite coordinates, for a large source): for the raw-facts panel only."""
    if is_large(ds):
        with friendly_errors("Counting the rows"), pass_progress(ds, "Row count"):
            return ds.n
    return int(ds.X.shape[0])


def fit_data(ds):
    """What an estimator's ``fit`` takes for ``ds``: the DataSource of a large source, else the array."""
    return ds.data_source if is_large(ds) else ds.X


#: Results computed on large sources (baseline fits, NICV, densities), kept for the whole server.
_SOURCE_RESULTS: collections.OrderedDict = collections.OrderedDict()
_SOURCE_LOCK = threading.Lock()


def _on_source(ds, what: str, key, compute):
    """``compute()`` once per ``key`` for the server, with a progress bar per pass over the source.

    Not ``st.cache_data``: Streamlit replays the elements a cached function drew, and the
    progress bar lives outside it.  Non-private results only (a reference fit, NICV, a density),
    which a rerun would compute again identically.
    """
    key = (ds.name, *key)
    with _SOURCE_LOCK:
        if key in _SOURCE_RESULTS:
            _SOURCE_RESULTS.move_to_end(key)
            return _SOURCE_RESULTS[key]
    with friendly_errors(what), pass_progress(ds, what):
        value = compute()
    with _SOURCE_LOCK:
        _SOURCE_RESULTS[key] = value
        while len(_SOURCE_RESULTS) > 32:
            _SOURCE_RESULTS.popitem(last=False)
    return value


@contextlib.contextmanager
def pass_progress(ds, what: str):
    """A progress bar for each pass over a large source while ``what`` runs (no-op for arrays).

    The source calls back before each pass (``on_pass``) and, on DuckDB, with the
    engine's own progress within the pass (``on_progress``); the bar names the
    pass and its number.  Removed when the step ends.
    """
    if not is_large(ds):
        yield
        return
    src = ds.data_source
    box = st.empty()
    state = {"n": 0, "label": ""}

    def on_pass(label):
        state["n"] += 1
        state["label"] = label
        box.progress(0.0, text=f"{what}: pass {state['n']} over the data ({label}) in {engine_name(src.engine)}…")

    def on_progress(fraction):
        box.progress(min(max(float(fraction), 0.0), 1.0),
                     text=f"{what}: pass {state['n']} over the data ({state['label']}) in "
                     f"{engine_name(src.engine)}…")

    old = src.on_pass, getattr(src, "on_progress", None)
    src.on_pass, src.on_progress = on_pass, on_progress
    try:
        yield
    finally:
        src.on_pass, src.on_progress = old
        box.empty()


def _default_dataset(names):
    for pref in (datasets.TAXI_SAMPLE_NAME, "s1_like"):
        if pref in names:
            return pref
    return names[0]


def _upload(where, key):
    up = where.file_uploader("CSV or Parquet file", type=["csv", "txt", "parquet", "pq"], key=f"{key}_upload",
                             help="Up to 200 MB. Numeric columns only are clustered.")
    if up is None:
        st.info("Upload a CSV or Parquet file with a header row and numeric columns, e.g. longitude,latitude.")
        return None, None
    with friendly_errors("Reading the file"):
        df = datasets.read_table(up, filename=up.name)
    # dtype.kind, not np.issubdtype: pandas' text columns (StringDtype) are not numpy dtypes.
    numeric = [c for c in df.columns if getattr(df[c].dtype, "kind", "O") in "biuf"]
    if df.attrs.get("note"):
        st.info(df.attrs["note"])
    if len(numeric) == 0:
        st.error("The file has no numeric columns: it needs at least one column of numbers to cluster.")
        st.stop()
    cols = where.multiselect("Columns to cluster", numeric, default=numeric[:2], key=f"{key}_cols")
    if not cols:
        st.info("Choose at least one numeric column.")
        return None, None
    bounds = _bounds_inputs(where, cols, key)
    with friendly_errors("Using the file"):
        ds = datasets.dataset_from_frame(df, cols, bounds=bounds, name=f"upload:{up.name}")
    if ds.n_dropped:
        st.info(f"Rows with a missing or infinite value in {', '.join(ds.columns)} were left out (how many: "
                f"in the raw data facts panel, for the data owner only).")
    return ds, _fingerprint(ds.X) + (_bounds_key(bounds))


def _bounds_key(bounds):
    if bounds is None:
        return ":nobounds"
    return ":" + hashlib.sha1(repr([list(map(float, b)) for b in bounds]).encode()).hexdigest()[:8]


def _bounds_inputs(where, cols, key):
    """Ask for public bounds; without them the release is not private (said loudly)."""
    text = where.text_area(
        "Public bounds, one line per column: lower, upper",
        key=f"{key}_bounds", placeholder="\n".join(f"{c}: lower, upper" for c in cols),
        help="Bounds must be known without looking at the data (e.g. a city's bounding box). "
             "Reading them from the data leaks its extremes.")
    if not text.strip():
        st.warning("No public bounds given: they will be read from the data, which is NOT private for the "
                   "extreme records (anyone who sees the result can learn the data's range). Enter bounds "
                   "known in advance to get the full guarantee.")
        return None
    lows, highs = [], []
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) != len(cols):
        st.error(f"Give exactly one 'lower, upper' line for each of the {len(cols)} chosen columns.")
        st.stop()
    for line in lines[:len(cols)]:
        part = line.split(":", 1)[-1]
        try:
            lo, hi = (float(v) for v in part.replace(";", ",").split(","))
        except ValueError:
            st.error(f"Could not read the bounds line {line!r}: write it as 'lower, upper', e.g. -74.1, -73.9.")
            st.stop()
        lows.append(lo)
        highs.append(hi)
    return np.array(lows), np.array(highs)


def algorithm_picker(*, family: str = "centroids", key: str = "algorithm", default: str = "eugkm",
                     sidebar: bool = True, scalable_only: bool = False) -> str:
    """Choose a private algorithm of one family; shows its one-line summary and paper.

    ``scalable_only`` offers only the algorithms that run on a DataSource
    (:data:`dpcore.sources.SCALABLE`), for large sources.
    """
    where = st.sidebar if sidebar else st
    keys = [k for k, cls in dpcore.ALGORITHMS.items() if cls.family == family and cls.private
            and (not scalable_only or k in SCALABLE)]
    start = url_default("algorithm", default, str)
    algo = where.selectbox("Algorithm", keys, index=keys.index(start) if start in keys else 0, key=key,
                           format_func=lambda k: dpcore.ALGORITHMS[k].display_name or k)
    cls = dpcore.ALGORITHMS[algo]
    where.caption(f"{cls.summary} *Source: {cls.reference}.*")
    if scalable_only:
        where.caption("On a large source only the algorithms that run where the data lie are offered; the "
                      "others need the rows in memory (fit them on a sample: see the README).")
    return algo


def n_clusters_input(ds, *, key: str = "k", max_value: int = 100) -> int:
    """Number of clusters k (sidebar), defaulting to the dataset's literature k; syncs with ``?k=``."""
    start = url_default("k", ds.n_clusters_hint or 5, int, valid=lambda v: 1 <= v <= max_value)
    return int(st.sidebar.number_input("Number of clusters k", min_value=1, max_value=max_value,
                                       value=min(start, max_value), key=key))


def release_controls(*, epsilon_label: str = "Privacy level (ε)", default_algorithm: str = "eugkm",
                     allow_large: bool = False):
    """The sidebar every centroid page shares: dataset, algorithm, k, ε (all in the URL).

    Stops the page with a sentence when no data is chosen yet.  There is no
    seed: private releases draw unpredictable noise once and are kept (see
    :func:`private_release`).  k larger than the number of rows is not an
    error here: the number of rows is private, and the algorithms give an
    empty cluster a centre from its noisy sums.

    ``allow_large`` offers the configured large sources too (see :func:`dataset_picker`).

    Returns
    -------
    (Dataset, fingerprint, algorithm key, k, epsilon)
    """
    ds, fp = dataset_picker(allow_large=allow_large)
    if ds is None:
        st.stop()
    algo = algorithm_picker(default=default_algorithm, scalable_only=is_large(ds))
    k = n_clusters_input(ds)
    eps = epsilon_slider(epsilon_label)
    return ds, fp, algo, k, eps


# -- the release store: a private result is recorded before anyone sees it -----------------------
@st.cache_resource(show_spinner=False)
def _open_store(url: str | None):
    from dpcore.store import ReleaseStore
    return ReleaseStore(url)


def release_store():
    """The persistent release store (``dpcore.store.ReleaseStore``) at ``$DPCORE_STORE`` or its default file.

    One store object per URL for the whole server: every tab, session and
    rerun spends from the same account, and a restart reopens the same file.
    Stops the page with a sentence if the store cannot be opened.
    """
    try:
        return _open_store(os.environ.get("DPCORE_STORE") or None)
    except Exception as exc:  # corrupt, locked, newer schema, unreachable server: the store says which
        st.error(f"The release store could not be opened, so nothing private can be shown or published: {exc}")
        st.stop()


def publishable(ds) -> bool:
    """True when releases of ``ds`` are private (public bounds) and so go through the store."""
    return ds.bounds is not None


def _is_upload(ds) -> bool:
    return str(ds.name).startswith("upload:")


class ReleasedFit:
    """A recorded release seen through the fitted attributes the pages draw.

    Built only from the release dict that the store accepted
    (:func:`dpcore.release.build_release`), so what a page shows after a
    rerun, a reload or a server restart is exactly what was recorded, and
    nothing the release does not hold (the dataset size, clipped rows, the
    per-point labels) can reach a page through it.

    Attributes
    ----------
    release : dict, the recorded release
    release_id : int or None, its id in the store
    draw : int, 1 for the first draw of these settings on this dataset, 2 for the next, ...
    cluster_centers_ : ndarray (k, d)
    synopsis_ : GridSynopsis, CoresetSynopsis, WaveletGridSynopsis or None
    budget_ : BudgetLedger rebuilt from the release's ledger
    bounds_ : Domain, the public bounds
    branch_ : str (Hybrid only)
    coreset_size_ : int (coreset only)
    n_clusters_, n_significant_ : int (grid clusters only)
    """

    def __init__(self, release: dict, release_id: int | None = None, draw: int = 1, key=None):
        from dpcore.privacy.accountant import BudgetLedger
        from dpcore.synopsis import CoresetSynopsis, GridSynopsis, WaveletGridSynopsis
        from dpcore.utils.domain import Domain
        self.release, self.release_id, self.draw, self.key = release, release_id, draw, key
        cls = dpcore.ALGORITHMS[release["algorithm"]["key"]]
        self.display_name = cls.display_name or release["algorithm"]["key"]
        lower = np.asarray(release["bounds"]["lower"], dtype=float)
        upper = np.asarray(release["bounds"]["upper"], dtype=float)
        self.bounds_ = Domain(lower, upper)
        self.n_features_in_ = d = lower.size
        self.cluster_centers_ = np.asarray(release["centroids"], dtype=float).reshape(-1, d)
        p = release["privacy"]
        ledger = BudgetLedger(p["epsilon"], p["delta"])
        for e in release["ledger"]:
            ledger.spend(e["name"], e["epsilon"], e.get("delta") or 0.0, mechanism=e.get("mechanism", ""),
                         sensitivity=e.get("sensitivity"))
        self.budget_ = ledger
        syn = release.get("synopsis")
        self.synopsis_ = None
        if syn is not None and syn["kind"] == "grid":
            self.synopsis_ = GridSynopsis([np.asarray(e, dtype=float) for e in syn["edges"]],
                                          np.asarray(syn["counts"], dtype=float))
        elif syn is not None and syn["kind"] == "coreset":
            self.synopsis_ = CoresetSynopsis(np.asarray(syn["points"], dtype=float).reshape(-1, d),
                                             np.asarray(syn["weights"], dtype=float))
            self.coreset_size_ = int(self.synopsis_.weights.size)
        elif syn is not None and syn["kind"] == "wavelet_grid":
            labels = np.asarray(syn["labels"], dtype=int)
            self.synopsis_ = WaveletGridSynopsis([np.asarray(e, dtype=float) for e in syn["edges"]], labels,
                                                 np.asarray(syn["values"], dtype=float) if "values" in syn else None)
            self.n_clusters_ = int(labels.max() + 1) if labels.size and labels.max() >= 0 else 0
            self.n_significant_ = int((labels >= 0).sum())
        branch = (release.get("private_extras") or {}).get("hybrid_branch")
        if branch:
            self.branch_ = branch

    def predict(self, X) -> np.ndarray:
        """Labels from the released output only: nearest released centre, or the released grid's cluster id.

        Costs no privacy, but the labels are a function of X and as private as X.
        """
        from dpcore.metrics import assign
        X = np.asarray(X, dtype=float)
        syn = self.synopsis_
        if getattr(syn, "kind", None) != "wavelet_grid":
            return assign(X, self.cluster_centers_)
        idx = [np.clip(np.searchsorted(e, X[:, j], side="right") - 1, 0, len(e) - 2)
               for j, e in enumerate(syn.edges)]
        inside = np.all((X >= self.bounds_.lower) & (X <= self.bounds_.upper), axis=1)
        return np.where(inside, syn.labels[tuple(idx)], -1)


def _settings(ds, fingerprint: str, algorithm: str, params: dict):
    """(session key, public parameters as the release records them) of one release setting."""
    cls = dpcore.ALGORITHMS[algorithm]
    skip = ("epsilon", "delta", "bounds", "random_state")
    public = {k: v for k, v in sorted(cls(**params).get_params(deep=False).items()) if k not in skip}
    public = json.loads(json.dumps(public, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
    bounds = None if ds.bounds is None else [np.broadcast_to(np.asarray(b, dtype=float), (ds.X.shape[1],)).tolist()
                                             for b in ds.bounds]
    key = json.dumps([ds.name, fingerprint, algorithm, public, float(params["epsilon"]),
                      float(params.get("delta") or 0.0), bounds])
    return key, public, bounds


@st.cache_resource(show_spinner=False, max_entries=16)
def _stored_releases(_store, url: str, dataset: str, last_id: int) -> list:
    """The store's releases of one dataset, parsed once per (store, dataset, newest release id) for the server."""
    return _store.releases(dataset)


def _recorded(store, ds, algorithm: str, public: dict, params: dict, bounds) -> list:
    """The store's releases of exactly these settings on this dataset, oldest first.

    The history (no release bodies) is read first, so settings never drawn with this algorithm cost one
    light query; the bodies are parsed once per new release, not on every page run.
    """
    eps, delta = float(params["epsilon"]), float(params.get("delta") or 0.0)
    hist = store.history(ds.name)
    if not any(h["algorithm"] == algorithm for h in hist):
        return []
    out = []
    for r in _stored_releases(store, os.environ.get("DPCORE_STORE") or "", ds.name, hist[-1]["id"]):
        rel = r.release
        if (rel["algorithm"]["key"] == algorithm and rel["parameters"] == public
                and rel["privacy"]["epsilon"] == eps and rel["privacy"]["delta"] == delta
                and [rel["bounds"]["lower"], rel["bounds"]["upper"]] == bounds):
            out.append(r)
    return out


#: Draws a session keeps in memory; older ones are found again in the store (unbounded bodies otherwise).
MAX_KEPT = 64


def _kept() -> dict:
    kept = st.session_state.setdefault("_dp_draws", {})
    while len(kept) > MAX_KEPT:   # oldest first (dicts keep insertion order); recorded draws stay in the store
        kept.pop(next(iter(kept)))
    return kept


def request_new_draw(key: str) -> None:
    """Button callback: the next run draws these settings afresh (and spends again)."""
    st.session_state.setdefault("_dp_new_draw", set()).add(key)


def _refuse(why: str) -> None:
    st.error(f"Refused, to protect privacy: {why}")


def _fit_private(ds, algorithm: str, params: dict):
    """One fit with unpredictable noise (random_state=None): never cached, never seeded."""
    kwargs = {k: v for k, v in params.items() if k != "random_state"}
    with friendly_errors(dpcore.ALGORITHMS[algorithm].display_name or algorithm), warnings.catch_warnings():
        # Pages state a missing-bounds leak in words; the Python warning would only reach the log.
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
        warnings.simplefilter("ignore", RegimeWarning)     # said in words by private_release, from regime_
        with pass_progress(ds, "Private release"):
            return dpcore.ALGORITHMS[algorithm](**kwargs, bounds=ds.bounds, random_state=None).fit(fit_data(ds))


def private_releases(ds, fingerprint: str, algorithm: str, epsilons, *, who: str, draw_missing: bool = True,
                     **params):
    """Private releases of one setting at several ε, each its own draw, recorded before any is shown.

    For each ε: the draw kept for exactly these settings (this session, else
    the store's latest for this dataset) or, when there is none or the person
    asked for a new draw, a fresh fit with unpredictable noise
    (``random_state=None``) that is recorded in the release store
    (:meth:`dpcore.store.ReleaseStore.record`, atomic reserve-before-reveal)
    before it is returned.  Results shown together are therefore independent
    draws, and together they cost the sum of their ε (sequential composition).

    Data without public bounds is not private: its fits are kept for this
    session only, never recorded and never offered for download.

    ``draw_missing=False`` only looks: settings with no kept draw give None
    (nothing is fitted or spent), so a page can say what drawing them would cost first.

    Returns
    -------
    list of ReleasedFit (or fitted estimators, for data without public bounds), one per ε;
    or None when the store refused: the refusal is then shown and nothing of the new draws is.
    """
    params = {k: v for k, v in params.items() if k != "random_state"}
    kept, fresh = _kept(), st.session_state.setdefault("_dp_new_draw", set())
    store = release_store() if publishable(ds) else None
    out, todo = [], []
    for e in epsilons:
        p = dict(params, epsilon=float(e))
        key, public, bounds = _settings(ds, fingerprint, algorithm, p)
        hit = None
        if key not in fresh:
            hit = kept.get(key)
            if hit is None and store is not None and not _is_upload(ds):
                recs = _recorded(store, ds, algorithm, public, p, bounds)
                if recs:   # kept across reloads and restarts: the store's latest draw of these settings
                    hit = ReleasedFit(recs[-1].release, recs[-1].id, draw=len(recs), key=key)
                    kept[key] = hit
        out.append(hit)
        if hit is None:
            todo.append((len(out) - 1, key, public, bounds, p))
    if not todo or not draw_missing:
        return out
    if store is not None:
        need_e = math.fsum(p["epsilon"] for *_, p in todo)
        need_d = math.fsum(float(p.get("delta") or 0.0) for *_, p in todo)
        left = store.remaining(ds.name)
        if left is not None and (need_e > left[0] * (1 + 1e-9) + 1e-12 or need_d > left[1] * (1 + 1e-9) + 1e-15):
            # Checked before fitting (with the ε granted, which a release spends at most): no fit, nothing
            # kept, nothing shown.  The store's own check at record time is the one that counts.
            fresh.difference_update(k for _, k, *_ in todo)
            if len(todo) == 1:
                why = store.refusal(ds.name, need_e, need_d) or ""
            else:
                why = (f"these {len(todo)} releases together (sequential composition) would spend ε = {need_e:.4g}"
                       + (f", δ = {need_d:.3g}" if need_d else "") + f", but only ε = {left[0]:.4g}"
                       + (f", δ = {left[1]:.3g}" if need_d else "") + " of the total set for this dataset is left. "
                       "Choose fewer or smaller ε, or raise the total on the Release page.")
            _refuse(why or f"only ε = {left[0]:.4g} of the total set for this dataset is left.")
            return None
    for i, key, _public, _bounds, p in todo:
        est = _fit_private(ds, algorithm, p)
        if store is None:
            fresh.discard(key)
            prev = kept.get(key)
            est.draw, est.key, est.release_id = (getattr(prev, "draw", 0) + 1), key, None
            kept[key] = out[i] = est
            continue
        from dpcore.release import build_release
        with friendly_errors("Building the release"):
            rel = build_release(est, algorithm=algorithm, dataset=ds.name, columns=ds.columns)
        del est   # from here on only the release dict exists: what the store accepts is what is shown
        try:
            # The account is tied to the data's content: another file under the same name is refused.
            store.register_dataset(ds.name, fingerprint=fingerprint.split(":")[0], bounds=ds.bounds,
                                   description=ds.title)
            rid = store.record(ds.name, rel, who=who)
        except BudgetExceededError as exc:
            fresh.difference_update(k for _, k, *_ in todo)   # one click, one attempt
            _refuse(str(exc))
            return None
        except Exception as exc:   # the store's own errors (locked, unreachable, other content, ...) are sentences
            fresh.difference_update(k for _, k, *_ in todo)
            hint = ""
            if is_large(ds) and "another fingerprint" in str(exc):
                hint = (" For a configured source the key is its list of files with their sizes and modification "
                        "times, so the files changed since its first release. If they hold mostly the same people, "
                        "new releases add to the old ones' privacy cost: give the entry a new name in "
                        "dpcore_sources.toml and set that dataset's total on the Release page with this in mind.")
            st.error(f"The release could not be recorded, so it is not shown: {exc}{hint}")
            return None
        fresh.discard(key)
        # The draw before this one was kept (a new draw) or there was none in the session or the store.
        kept[key] = out[i] = ReleasedFit(rel, rid, draw=getattr(kept.get(key), "draw", 0) + 1, key=key)
    return out


def private_release(ds, fingerprint: str, algorithm: str, *, who: str, **params):
    """One private release (see :func:`private_releases`); stops the page after showing a refusal."""
    fits = private_releases(ds, fingerprint, algorithm, [params.pop("epsilon")], who=who, **params)
    if fits is None:
        st.stop()
    regime = getattr(fits[0], "regime_", None)     # the public-input check the estimator ran (dpcore.regime)
    if regime is not None and not regime.ok:
        st.warning(f"Outside the paper's regime for these inputs: {regime.reason}")
    return fits[0]


def private_refit(fit, ds, fingerprint: str, rows, algorithm: str, **params):
    """A second private fit on some rows (e.g. the 90 % training split), with its own fresh noise.

    Used only for utility measures computed on the raw data (not private,
    never shown as a release, never published, so not recorded).  It never
    reuses the release's noise: a refit that shared it would let anyone who
    saw both subtract one from the other.  Kept in the session with the draw
    it belongs to, so a rerun shows the same measures and a new draw gets a
    new refit.
    """
    refits = st.session_state.setdefault("_dp_refits", {})
    key = json.dumps([getattr(fit, "key", None), getattr(fit, "release_id", None), getattr(fit, "draw", 1),
                      fingerprint, np.asarray(rows).size, algorithm])
    if key not in refits:
        sub = rows_subset(ds, rows, "refit")
        sub.bounds = (fit.bounds_.lower, fit.bounds_.upper)
        refits.clear()   # only the current draw's refit is needed
        refits[key] = _fit_private(sub, algorithm, params)
    return refits[key]


def rows_subset(ds, rows, tag: str):
    """Some rows of ``ds`` with the same public bounds and columns (for fits on a split), named ``name:tag``."""
    from types import SimpleNamespace
    return SimpleNamespace(name=f"{ds.name}:{tag}", X=ds.X[rows], bounds=ds.bounds, columns=ds.columns,
                           title=getattr(ds, "title", ""), geo=getattr(ds, "geo", False))


def _baseline_fit(X, algorithm: str, params: tuple, bounds):
    kwargs = {k: v for k, v in params if k != "bounds"}
    return dpcore.ALGORITHMS[algorithm](**kwargs, bounds=bounds).fit(X)


@st.cache_data(show_spinner="Computing the non-private reference…", max_entries=64)
def _fit_baseline(_X: np.ndarray, data_key: str, algorithm: str, params: tuple, _bounds=None):
    return _baseline_fit(_X, algorithm, params, _bounds)


def baseline(ds, fingerprint: str, algorithm: str, **params):
    """A non-private reference fit (k-means, WaveCluster), cached on data, algorithm and parameters.

    Deterministic (k-means with a fixed seed), so caching it shares nothing
    a rerun would not recompute; it is never a release.
    """
    if dpcore.ALGORITHMS[algorithm].private:
        raise ValueError(f"{algorithm} is private: use private_release, which records it before it is shown")
    bounds_key = None if ds.bounds is None else tuple(tuple(np.ravel(b).astype(float)) for b in ds.bounds)
    k, n = params.get("n_clusters"), exact_rows(ds)
    if k is not None and 1 <= n < k:
        # k-means with k above the number of rows puts a centre on every row and leaves the other clusters
        # empty: fit k = n and repeat centres, instead of an error that would state the number of rows.
        import copy
        est = copy.copy(baseline(ds, fingerprint, algorithm, **dict(params, n_clusters=n)))
        est.cluster_centers_ = est.cluster_centers_[np.arange(k) % n]
        return est
    items = tuple(sorted(params.items())) + (("bounds", bounds_key),)
    if is_large(ds):
        return _on_source(ds, "Non-private reference", (fingerprint, "baseline", algorithm, items),
                          lambda: _baseline_fit(ds.data_source, algorithm, items, ds.bounds))
    with friendly_errors(dpcore.ALGORITHMS[algorithm].display_name or algorithm):
        return _fit_baseline(ds.X, f"{ds.name}:{fingerprint}", algorithm, items, _bounds=ds.bounds)


def release(ds, fingerprint: str, algorithm: str, *, who: str = "", **params):
    """A private release (recorded before it is shown) or a non-private baseline, by the algorithm's kind."""
    if dpcore.ALGORITHMS[algorithm].private:
        return private_release(ds, fingerprint, algorithm, who=who, **params)
    return baseline(ds, fingerprint, algorithm, **params)


def compare_panels(ds, fingerprint: str, algorithm: str, epsilons, *, who: str, **params):
    """The releases of one setting at several ε for side-by-side panels, drawn only after the person agrees.

    Each panel is its own draw with fresh, unpredictable noise (a shared
    draw scaled by 1/ε would let ``ε_b·y_b − ε_a·y_a`` cancel it), and seeing
    them together costs the sum of their ε (sequential composition).  Panels
    already drawn (on this page or another, e.g. the Explorer's release at the
    chosen ε) are shown again at no cost; the others are drawn and recorded
    only when the person presses the button that states their cost.

    Returns
    -------
    list of fits, one per ε; or None (nothing drawn yet, or refused).
    """
    epsilons = [float(e) for e in epsilons]
    fits = private_releases(ds, fingerprint, algorithm, epsilons, who=who, draw_missing=False, **params)
    missing = [e for e, f in zip(epsilons, fits) if f is None]
    delta = float(params.get("delta") or 0.0)
    total = math.fsum(epsilons)
    together = (f"Seen together these {len(epsilons)} panels cost ε = {total:.4g}"
                + (f", δ = {delta * len(epsilons):.3g}" if delta else "")
                + " on this dataset (sequential composition: the sum of their ε).")
    if missing:
        new = math.fsum(missing)
        ask = st.empty()   # the question goes away once answered
        with ask.container():
            st.info(together + f" {len(missing)} of them are not drawn yet: drawing them spends ε = {new:.4g} now"
                    + (" and records each in the dataset's account before it is shown." if publishable(ds) else
                       " (kept for this session only: without public bounds they are not private).")
                    + " Panels are previews for choosing ε, not the release you publish.")
            pressed = st.button(f"Draw {len(missing)} panel(s): spend ε = {new:.4g}", key="draw_panels",
                                type="primary")
        if not pressed:
            return None
        ask.empty()
        fits = private_releases(ds, fingerprint, algorithm, epsilons, who=who, **params)
        if fits is None:
            return None
    st.caption(together + " Each panel is its own recorded draw with fresh, unpredictable noise; they are previews "
                          "for choosing ε, not the release you publish.")
    if st.button("New draws of these panels (spends again)", key="redraw_panels"):
        for f in fits:
            request_new_draw(f.key)
        st.rerun()
    return fits


def draw_controls(fit, *, where=None, key: str = "new_draw") -> None:
    """Which draw is shown, where it is recorded, and the "New draw" button (spends again)."""
    where = where or st
    eps = fit.budget_.total()[0]
    if getattr(fit, "release_id", None) is not None:
        where.caption(f"Draw {fit.draw} of these settings on this dataset · release #{fit.release_id} in the "
                      "release store, recorded before it was shown. Reruns, page switches, reloads and restarts "
                      "show this same draw.")
    else:
        where.caption(f"Draw {getattr(fit, 'draw', 1)} of these settings, kept for this session only: "
                      "without public bounds it is not private and is never recorded or published.")
    where.button(f"New draw (fresh noise: spends ε = {eps:.4g} again)", key=key,
                 on_click=request_new_draw, args=(fit.key,),
                 help="Draws these settings again with fresh, unpredictable noise and records it in the "
                      "dataset's account. Drawing until a result looks good is itself a use of the data.")


def publish_buttons(fit, ds, *, stem: str, where=None) -> None:
    """Downloads of a recorded release: its private centres (CSV) and synopsis (JSON).

    A download is a publication: only a release the store has accepted
    (``fit.release_id`` set) is offered, and the files hold exactly what was
    recorded.  Data without public bounds gets a sentence and no download.
    """
    where = where or st
    if getattr(fit, "release_id", None) is None:
        where.info("Nothing to publish: without public bounds this result is not private. Enter bounds known in "
                   "advance in the sidebar.")
        return
    rel = fit.release
    cols = rel["dataset"]["columns"]
    where.download_button("Private centres (CSV)", csv_bytes(pd.DataFrame(rel["centroids"], columns=cols)),
                          file_name=f"{stem}_centres.csv", mime="text/csv", key=f"dl_centres_{fit.release_id}")
    if rel["synopsis"] is not None:
        where.download_button("Private synopsis (JSON)", json.dumps(rel["synopsis"]),
                              file_name=f"{stem}_synopsis.json", mime="application/json",
                              key=f"dl_synopsis_{fit.release_id}")
    where.caption(f"Release #{fit.release_id}, already recorded in this dataset's account: downloading it costs "
                  "nothing more (it is the same output). The Release page has the full release (JSON, CSV, HTML).")


def account_caption(ds, *, where=None) -> None:
    """ "Published so far on this dataset", from the release store."""
    where = where or st
    if not publishable(ds):
        return
    store = release_store()
    e, dl = store.spent(ds.name)
    cap = store.cap(ds.name)
    where.caption(f"Published so far on this dataset: ε = {e:.4g}" + (f", δ = {dl:.3g}" if dl else "")
                  + (f" of the total ε = {cap[0]:.4g} set for it" if cap else " (no total set)")
                  + ". Every private result shown in this app is recorded in the release store first; the "
                    "Release page has the history.")


#: Display names of :meth:`dpcore.store.ReleaseStore.history`'s columns.
HISTORY_COLUMNS = {"id": "release", "time": "time (UTC)", "who": "drawn on", "algorithm": "algorithm",
                   "epsilon": "ε", "delta": "δ", "total_epsilon": "ε total", "total_delta": "δ total",
                   "cap_epsilon": "ε cap", "cap_delta": "δ cap", "simulation": "simulation"}


def account_panel(ds, *, where=None) -> None:
    """The dataset's account from the release store: what was published, the total set, and the history.

    Setting a total below what is already spent is refused by the store with
    a sentence; a total can be raised or lowered down to what is spent, never
    below (what is published cannot be taken back).
    """
    where = where or st
    store = release_store()
    name = ds.name
    where.subheader("Budget account for this data")
    where.warning("Every release of the same data adds up (sequential composition). Every private result shown in "
                  "this app (Explorer, Compare, Release, ...) is recorded here before it is shown.", icon="⚠️")
    spent_e, spent_d = store.spent(name)
    cap = store.cap(name)
    c1, c2 = where.columns(2)
    c1.metric("ε published so far", f"{spent_e:.4g}", f"δ = {spent_d:.3g}" if spent_d else None, delta_color="off")
    if cap:
        left = store.remaining(name)
        c2.metric("ε left", f"{left[0]:.4g}", f"of {cap[0]:.4g}", delta_color="off")
    else:
        c2.metric("Total ε", "none set")
    with where.form("cap_form", border=True):
        st.markdown("**Total budget for this data** (kept in the store; releases beyond it are refused)")
        a, b = st.columns(2)
        total = a.number_input("Total ε", min_value=0.001, max_value=1000.0,
                               value=float(cap[0]) if cap else max(1.0, round(spent_e, 3)), step=0.1, format="%.3f",
                               key="cap_eps")
        total_delta = b.number_input("Total δ", min_value=0.0, max_value=0.1, value=float(cap[1]) if cap else 1e-6,
                                     format="%.1e", key="cap_delta")
        set_it = st.form_submit_button("Set the total")
    if set_it:
        try:
            store.set_cap(name, float(total), float(total_delta))
        except ValueError as exc:
            where.error(f"That total cannot be set: {exc}")
        else:
            st.rerun()
    hist = store.history(name)
    if hist:
        frame = pd.DataFrame(hist)
        if "simulation" in frame and not frame["simulation"].any():
            frame = frame.drop(columns="simulation")
        if "delta" in frame and not frame["delta"].any():   # pure ε-DP releases only: no δ columns
            frame = frame.drop(columns=[c for c in ("delta", "total_delta", "cap_delta") if c in frame])
        if "time" in frame:
            frame["time"] = pd.to_datetime(frame["time"], utc=True).dt.strftime("%Y-%m-%d %H:%M:%S")
        frame = frame.rename(columns=HISTORY_COLUMNS)
        where.markdown(f"**History** ({len(frame)} release(s) recorded on *{ds.title}*)")
        where.dataframe(frame, hide_index=True, width="stretch", key="history")
    else:
        where.caption("No release of this data has been recorded yet.")


@st.cache_data(show_spinner=False, max_entries=64)
def _nicv_cached(_X, data_key: str, centers: np.ndarray, bounds_key, _bounds=None) -> float:
    from dpcore.metrics import nicv
    return float(nicv(_X, centers, _bounds))


def data_nicv(ds, fingerprint: str, centers, bounds) -> float:
    """NICV of ``centers`` on the dataset (``dpcore.metrics.nicv``), cached on data fingerprint, centres and
    bounds: the non-private baseline's figure is computed once, not on every ε change.  Not private."""
    bounds_key = tuple(tuple(map(float, b)) for b in bounds)
    centers = np.asarray(centers, dtype=float)
    if is_large(ds):
        from dpcore.metrics import nicv
        return _on_source(ds, "NICV", (fingerprint, "nicv", centers.tobytes(), centers.shape, bounds_key),
                          lambda: float(nicv(ds.data_source, centers, bounds)))
    return _nicv_cached(ds.X, f"{ds.name}:{fingerprint}", centers, bounds_key, _bounds=bounds)


def exact_density(ds, fingerprint: str, bounds, shape) -> np.ndarray:
    """Exact counts of a large source's rows on a grid over ``bounds`` (the aggregate a grid release
    uses, without noise): the non-private overlay where raw points are too many to draw.  Not private."""
    bounds_key = tuple(tuple(map(float, b)) for b in bounds)
    shape = tuple(int(m) for m in shape)
    return _on_source(ds, "Exact density (not private)", (fingerprint, "density", bounds_key, shape),
                      lambda: ds.data_source.grid_counts(bounds, shape))


def show_ledger(est, *, where=None) -> None:
    """The budget ledger: which step spent what, and the total against the grant."""
    where = where or st
    ledger = est.budget_
    eps, dl = ledger.total()
    where.markdown(f"**Privacy budget spent:** ε = {eps:.4g} of {ledger.epsilon:.4g}"
                   + (f", δ = {dl:.3g} of {ledger.delta:.3g}" if ledger.delta else ""))
    where.dataframe(ledger_frame(ledger), hide_index=True, width="stretch")


def not_private_caption(where=None) -> None:
    (where or st).caption(f"Figures marked as non-private are {NOT_PRIVATE}.")


def csv_bytes(df) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


# -- raw facts: the one place non-private facts about the data are shown ----------------------------
RAW_FACTS = "Raw data facts: for the data owner only, not private"


def raw_facts(ds, *, fit=None, lines=(), where=None):
    """The one panel that shows exact, non-private facts about the data.

    The exact number of rows, rows dropped on reading, rows outside the public
    bounds (clipped) and any check made on the raw data appear here and
    nowhere else: never in a release, an export, an error message or a
    caption next to private results.  ``lines`` are further markdown lines
    from the page.  Returns the expander, so a page can add a figure to it.
    """
    where = where or st
    box = where.expander(RAW_FACTS, expanded=False)
    d = ds.X.shape[1]
    if is_large(ds):
        src = ds.data_source
        with friendly_errors("The raw data facts"), pass_progress(ds, "Raw data facts"):
            n, dropped = src.count(), src.n_dropped()
            outside = src.n_outside((fit.bounds_.lower, fit.bounds_.upper)) if fit is not None else None
        rows = datasets.info(ds.name).get("rows")
        facts = [f"Rows with finite coordinates: **{n:,}** · columns: {d} ({', '.join(map(str, ds.columns))}) · "
                 f"read where they lie by {engine_name(src.engine)}"
                 + (f" · rows in the files' metadata: {rows:,}" if rows is not None else "")]
        if dropped:
            facts.append(f"Rows skipped by every aggregate (a missing, NaN or infinite coordinate): {dropped:,}")
    else:
        n = ds.X.shape[0]
        facts = [f"Rows: **{n:,}** · columns: {d} ({', '.join(map(str, ds.columns))})"]
        if getattr(ds, "n_dropped", 0):
            facts.append(f"Rows left out on reading (missing or infinite values, or outside the public box): "
                         f"{ds.n_dropped:,}")
        outside = None
        if fit is not None:
            lo, hi = fit.bounds_.lower, fit.bounds_.upper
            outside = int(np.count_nonzero(np.any((ds.X < lo) | (ds.X > hi), axis=1)))
    if outside is not None:
        facts.append(f"Rows outside the public bounds, clipped onto them: {outside:,}")
    box.markdown("\n".join(f"- {f}" for f in [*facts, *lines]))
    box.caption("Exact counts and checks computed on the raw data. No noise protects them: keep them out of "
                "anything published.")
    return box


# -- privacy-utility curves ---------------------------------------------------------------------------
class CurveCancelled(Exception):
    """Raised out of the cached curve computation so a cancelled (partial) result is never cached."""

    def __init__(self, curves):
        super().__init__("cancelled")
        self.curves = curves


@st.cache_data(show_spinner=False, max_entries=32)
def _curves_cached(_X, data_key: str, algorithms: tuple, epsilons: tuple, n_seeds: int, n_clusters, params: tuple,
                   max_rows, bounds_key, _bounds=None, _progress=None):
    from dpcore.evaluation import compare_curves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
        curves = compare_curves(_X, _bounds, list(algorithms), epsilons=list(epsilons), n_seeds=n_seeds,
                                n_clusters=n_clusters, params=dict(params), max_rows=max_rows, progress=_progress,
                                random_state=None)
    if not curves or not curves[-1].complete or len(curves) < len(algorithms):
        raise CurveCancelled(curves)
    return curves


def utility_curves(ds, fingerprint: str, algorithms, *, epsilons, n_seeds: int, n_clusters=None, params=None,
                   max_rows=None, progress=None):
    """Privacy-utility curves (``dpcore.evaluation.compare_curves``), cached on data fingerprint,
    algorithms, ε grid, releases per ε, k, parameters and row limit.

    Every release of the curve draws its own unpredictable noise
    (``random_state=None``).  The curve is a utility figure computed on the raw
    data (not private, for the data owner's eyes only); only its summary is
    cached, never a release.

    ``progress(fraction, message)`` may return False to cancel; a cancelled
    computation is not cached. Returns ``(curves, complete)``.
    """
    bounds_key = None if ds.bounds is None else tuple(tuple(map(float, b)) for b in ds.bounds)
    try:
        with friendly_errors("The privacy–utility curve"):
            return _curves_cached(ds.X, f"{ds.name}:{fingerprint}", tuple(algorithms),
                                  tuple(float(e) for e in epsilons), int(n_seeds), n_clusters,
                                  tuple(sorted((params or {}).items())), max_rows, bounds_key,
                                  _bounds=ds.bounds, _progress=progress), True
    except CurveCancelled as exc:
        return exc.curves, False
