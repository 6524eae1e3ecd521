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

import numpy as np
import streamlit as st

import dpcore
from dpcore import datasets
from dpcore.exceptions import BudgetExceededError, InfeasibleBudgetError
from dpcore.explain import PRIVACY_LEVELS, level_for

from .figures import NOT_PRIVATE, ledger_frame

UPLOAD = "Upload a file…"
EPSILON_VALUES = [lv.epsilon for lv in PRIVACY_LEVELS]


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
def url_default(name: str, default, cast=str):
    """A widget default taken from the page URL (``?name=value``) when valid, else ``default``."""
    raw = st.query_params.get(name)
    if raw is None:
        return default
    try:
        return cast(raw)
    except (TypeError, ValueError):
        return default


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
                                  value=url_default("seed", 0, int), step=1, key=key,
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
    numeric = [c for c in df.columns if np.issubdtype(df[c].dtype, np.number)]
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
