"""Streamlit widgets and caches shared by every page.

Pages stay thin: they call these to read inputs, call dpcore through
:func:`fit_release` (cached on data, algorithm, parameters, epsilon and seed:
a rerun never silently draws fresh noise) and draw with :mod:`ui.figures`.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import math
import warnings
from pathlib import Path

import numpy as np
import streamlit as st

import dpcore
from dpcore import datasets
from dpcore.exceptions import BudgetExceededError, InfeasibleBudgetError
from dpcore.explain import PRIVACY_LEVELS, level_for

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
    except InfeasibleBudgetError as exc:
        st.error(f"The privacy budget is too small for this data: {exc}")
        st.stop()
    except (ValueError, TypeError) as exc:
        st.error(f"{what} could not run: {exc}")
        st.stop()
    except BudgetExceededError as exc:
        st.error(f"Refused, to protect privacy: {exc}")
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
    """Write the shareable page state (dataset, algorithm, k, epsilon, seed) into the URL."""
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


def seed_input(*, key: str = "seed", sidebar: bool = True) -> int:
    """The release seed: the same data, algorithm, ε and seed always give the same picture."""
    where = st.sidebar if sidebar else st
    return int(where.number_input("Release seed", min_value=0, max_value=2 ** 31 - 1,
                                  value=url_default("seed", 0, int, valid=lambda v: 0 <= v <= 2 ** 31 - 1),
                                  step=1, key=key,
                                  help="Each seed is one possible noisy release. Looking at many seeds "
                                       "on real data is itself a use of the data."))


@st.cache_data(show_spinner="Loading data…", max_entries=8)
def load_dataset(name: str, max_rows: int | None = None):
    """Load a named dataset once per (name, max_rows); returns (Dataset, fingerprint)."""
    ds = datasets.load(name, max_rows=max_rows)
    return ds, _fingerprint(ds.X)


def _fingerprint(X: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(X).view(np.uint8)).hexdigest()[:16]


def dataset_picker(*, key: str = "dataset", default: str | None = None, geo_only: bool = False, sidebar: bool = True):
    """Choose a dataset (bundled, real files in $DPCORE_DATA, NYC taxi download, or an upload).

    Returns
    -------
    (Dataset, fingerprint) or (None, None) when nothing usable is chosen yet.
    """
    where = st.sidebar if sidebar else st
    names = datasets.available()
    if geo_only:
        names = [n for n in names if datasets.info(n).get("geo")]
    options = names + [UPLOAD]
    preferred = url_default("dataset", default or _default_dataset(names), str)
    index = options.index(preferred) if preferred in options else 0
    choice = where.selectbox("Dataset", options, index=index, key=key,
                             format_func=lambda n: n if n == UPLOAD else datasets.info(n).get("title", n))
    if choice == UPLOAD:
        return _upload(where, key)
    meta = datasets.info(choice)
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


def _default_dataset(names):
    for pref in ("nyc_taxi_2009-2015_bq_sample_pickups", "s1_like"):
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
        st.info(f"{ds.n_dropped:,} row(s) with a missing or infinite value in {', '.join(ds.columns)} were left out; "
                f"{ds.n:,} rows are clustered.")
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
    for line, col in zip(lines, cols):
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
                     sidebar: bool = True) -> str:
    """Choose a private algorithm of one family; shows its one-line summary and paper."""
    where = st.sidebar if sidebar else st
    keys = [k for k, cls in dpcore.ALGORITHMS.items() if cls.family == family and cls.private]
    start = url_default("algorithm", default, str)
    algo = where.selectbox("Algorithm", keys, index=keys.index(start) if start in keys else 0, key=key,
                           format_func=lambda k: dpcore.ALGORITHMS[k].display_name or k)
    cls = dpcore.ALGORITHMS[algo]
    where.caption(f"{cls.summary} *Source: {cls.reference}.*")
    return algo


def n_clusters_input(ds, *, key: str = "k", max_value: int = 100) -> int:
    """Number of clusters k (sidebar), defaulting to the dataset's literature k; syncs with ``?k=``."""
    start = url_default("k", ds.n_clusters_hint or 5, int, valid=lambda v: 1 <= v <= max_value)
    return int(st.sidebar.number_input("Number of clusters k", min_value=1, max_value=max_value,
                                       value=min(start, max_value), key=key))


def release_controls(*, epsilon_label: str = "Privacy level (ε)", default_algorithm: str = "eugkm"):
    """The sidebar every centroid page shares: dataset, algorithm, k, ε, seed (all in the URL).

    Stops the page with a sentence when no data is chosen yet or k exceeds the
    number of points.

    Returns
    -------
    (Dataset, fingerprint, algorithm key, k, epsilon, seed)
    """
    ds, fp = dataset_picker()
    if ds is None:
        st.stop()
    algo = algorithm_picker(default=default_algorithm)
    k = n_clusters_input(ds)
    eps = epsilon_slider(epsilon_label)
    seed = seed_input()
    n = ds.X.shape[0]
    if k > n:
        st.error(f"k = {k} is larger than the number of points ({n}): choose at most {n} clusters.")
        st.stop()
    return ds, fp, algo, k, eps, seed


# -- fitting ------------------------------------------------------------------
@st.cache_data(show_spinner="Computing the private release…", max_entries=256)
def fit_release(_X: np.ndarray, data_key: str, algorithm: str, params: tuple, _bounds=None):
    """Fit ``dpcore.ALGORITHMS[algorithm](**params)`` on X, cached on (data_key, algorithm, params).

    ``params`` is a sorted tuple of (name, value) pairs including epsilon,
    random_state and the bounds (as a tuple), so each distinct release is
    computed once and replayed identically afterwards.
    """
    kwargs = {k: v for k, v in params if k != "bounds"}
    return dpcore.ALGORITHMS[algorithm](**kwargs, bounds=_bounds).fit(_X)


def release(ds, fingerprint: str, algorithm: str, **params):
    """Cached private (or baseline) release on a Dataset, with friendly errors on bad input."""
    bounds_key = None if ds.bounds is None else tuple(tuple(map(float, b)) for b in ds.bounds)
    items = tuple(sorted(params.items())) + (("bounds", bounds_key),)
    with friendly_errors(dpcore.ALGORITHMS[algorithm].display_name or algorithm):
        with warnings.catch_warnings():
            # Pages state a missing-bounds leak in words; the Python warning would only reach the log.
            warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
            return fit_release(ds.X, f"{ds.name}:{fingerprint}", algorithm, items, _bounds=ds.bounds)


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


# -- choosing epsilon: session account, cached curves ---------------------------------------
def session_account():
    """The per-dataset privacy budget account of this browser session (``dpcore.session_budget``)."""
    from dpcore.session_budget import SessionBudget
    if "dpcore_session_budget" not in st.session_state:
        st.session_state["dpcore_session_budget"] = SessionBudget()
    return st.session_state["dpcore_session_budget"]


def dataset_key(ds, fingerprint: str) -> str:
    """The account key of a dataset: its name and a fingerprint of its rows (never published)."""
    return f"{ds.name}:{fingerprint}"


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
                                n_clusters=n_clusters, params=dict(params), max_rows=max_rows, progress=_progress)
    if not curves or not curves[-1].complete or len(curves) < len(algorithms):
        raise CurveCancelled(curves)
    return curves


def utility_curves(ds, fingerprint: str, algorithms, *, epsilons, n_seeds: int, n_clusters=None, params=None,
                   max_rows=None, progress=None):
    """Privacy-utility curves (``dpcore.evaluation.compare_curves``), cached on data fingerprint,
    algorithms, ε grid, seeds, k, parameters and row limit.

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
