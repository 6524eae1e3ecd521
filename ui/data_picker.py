"""Which data: the dataset picker, uploads, public bounds, large configured sources and their progress."""
from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import os
import threading

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import datasets
from dpcore.algorithms.registry import DEFAULT_BOUNDING, bounding_for, releasable
from dpcore.sources.progress import PassProgress, engine_name, watching

from .page import UPLOAD, forget_kept, friendly_errors, kept_widget, url_default
from .store import release_store

NO_UNIT = "none: each row is its own unit"
#: Characters of a data set's name the sidebar's select box shows whole (Streamlit's 300 px sidebar).
LABEL_FITS = 30
#: After a configured large source's title in the list (short: the title and it must fit LABEL_FITS).
LARGE_MARK = " · large"


@st.cache_data(show_spinner="Running… loading the data", max_entries=8)
def load_dataset(name: str, max_rows: int | None = None):
    """Load a named dataset once per (name, max_rows); returns (Dataset, fingerprint)."""
    ds = datasets.load(name, max_rows=max_rows)
    return ds, _fingerprint(ds)


def _fingerprint(ds) -> str:
    """The data's content digest: the parsed rows of the used columns and their units, sorted (issue 55).

    The same people give the same digest whether listed or uploaded, in any encoding, line endings or
    row order.  It stays in this server's memory (cache keys, the settings of a draw); the store keeps
    only its HMAC under the store's secret (:func:`dpcore.store.keys.content_digest`).
    """
    from dpcore.store.keys import content_digest
    return content_digest(ds.X, getattr(ds, "units", None))


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
    listed = _catalogue()
    names = [n for n, meta in listed.items() if allow_large or not meta["large"]]
    if geo_only:
        names = [n for n in names if listed[n]["geo"]]
    options = names + [UPLOAD]
    if geo_only:
        _offer_map_data(where, key, names)
    preferred = url_default("dataset", default or _default_dataset(names), str, valid=lambda v: v in options)
    index = options.index(preferred) if preferred in options else 0
    choice = where.selectbox("Dataset", options, index=index, key=key,
                             format_func=lambda n: _dataset_label(n, listed))
    _about(where, choice, listed)
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
    unit_controls(ds, where=where)
    return ds, fp


#: Rows per person kept by default in a person-level release: the utility table of issue 23
#: (docs/guide/privacy_unit.rst: on Gowalla, sampling 5 check-ins per user kept EUGkM within a few % of
#: non-private at ε = 1, while large L let the noise grow with it).
DEFAULT_MAX_CONTRIBUTIONS = 5
#: How a person's rows are bounded, as the one-line select box shows it whole (≤ LABEL_FITS characters);
#: the first is the default (:data:`dpcore.algorithms.registry.DEFAULT_BOUNDING`, issue 68: weighting kept
#: the sanitized synopsis' cost error lower on Gowalla at the same L and ε).
BOUNDINGS = {"weight": "Weigh all rows to L per person",
             "sample": "Sample L rows per person"}


def _person_label(ds) -> str:
    return f"each person ({ds.unit_column or 'person'}): all their rows together"


def unit_controls(ds, *, where=None) -> dict:
    """Who is protected: each person (all their rows, at most L) or each row; draws the sidebar controls.

    Data with a person column (Gowalla's ``user_id``, an upload's chosen column) default to person level.

    Returns
    -------
    dict of estimator parameters (see :func:`unit_params`).
    """
    if getattr(ds, "units", None) is None:
        return {}
    where = where or st.sidebar
    person = _person_label(ds)
    modes = [person, "each row on its own"]
    mode = kept_widget(where.radio, "Protect", options=modes, key="unit_mode", valid=lambda v: v in modes,
                       help="A person with many rows is protected by a row-level release only at m·ε for m rows "
                            "(group privacy). Person level bounds each person's rows first, so ε is per person.")
    if mode != person:
        return {}
    L = int(kept_widget(where.number_input, "At most L rows per person", min_value=1, max_value=10_000,
                        initial={"value": DEFAULT_MAX_CONTRIBUTIONS}, key="max_contributions",
                        help="Public: choose it without looking at the data. Every noise scale grows with "
                             "L; rows beyond L per person are down-weighted (weighting) or left out (sampling)."))
    from .private_choice import private_l_control  # issue 55: L from a recorded DP quantile, not the raw figures
    private_l_control(ds, where)
    how = kept_widget(where.selectbox, "Bounding", options=list(BOUNDINGS), format_func=BOUNDINGS.get,
                      key="contribution_bounding",
                      help="Weighting keeps every row, each weighted min(1, L/m) for a person with m rows "
                           "(Amin et al. 2019): a person's rows weigh at most L together. Sampling keeps at most L "
                           "rows of each person (chosen by a secret keyed hash) and leaves out the rest. Both "
                           "have the same noise; weighting uses every row. Algorithms whose steps are not sums "
                           "over rows sample whatever is chosen here (the algorithm's caption says so).")
    return {"max_contributions": L, "contribution_bounding": how}


def unit_params(ds, algorithm: str | None = None) -> dict:
    """The privacy-unit parameters chosen for ``ds`` (from the controls' state; person level by default).

    ``algorithm``: the release kind they are for; an algorithm that cannot weight rows gets sampling
    (:func:`dpcore.algorithms.registry.bounding_for`), so its draw runs and says what it did.

    Returns
    -------
    dict: ``{"max_contributions": L, "contribution_bounding": "weight" | "sample"}`` for a person-level
    release, ``{}`` for a row-level one (always for data without a person column).
    """
    if getattr(ds, "units", None) is None:
        return {}
    state = st.session_state
    if state.get("unit_mode", _person_label(ds)) != _person_label(ds):
        return {}
    how = state.get("contribution_bounding", DEFAULT_BOUNDING)
    return {"max_contributions": int(state.get("max_contributions", DEFAULT_MAX_CONTRIBUTIONS)),
            "contribution_bounding": how if algorithm is None else bounding_for(algorithm, how)}


def bounding_note(ds, algorithm: str) -> str | None:
    """A sentence when ``algorithm`` bounds ``ds``'s persons otherwise than chosen (it can only sample), else None.

    Returns
    -------
    str or None
    """
    chosen = unit_params(ds).get("contribution_bounding")
    if chosen is None or bounding_for(algorithm, chosen) == chosen:
        return None
    cls = releasable(algorithm)
    return (f"{cls.display_name or algorithm} samples at most L rows per person instead (it cannot weight rows: "
            f"{cls.weighting_refusal}).")


def privacy_id(ds, params: dict):
    """The ``privacy_id`` a fit of ``ds`` with these parameters takes: the rows' units, or None (row level)."""
    if params.get("max_contributions") is None:
        return None
    if is_large(ds):
        return ds.unit_column
    return pd.Series(ds.units, name=ds.unit_column or "person")   # named: the release says whose rows


def _dataset_label(name: str, listed: dict | None = None) -> str:
    """The data set's name as the select box lists it: its catalogue title, marked when it is a large source."""
    if name == UPLOAD:
        return name
    meta = (listed if listed is not None else _catalogue()).get(name) or datasets.info(name, metadata=False)
    return meta["title"] + (LARGE_MARK if meta["large"] else "")


def _about(where, name: str, listed: dict) -> None:
    """The caption under the select box: what the chosen data is and where it comes from (its catalogue summary).

    Titles are short so that the one-line box shows them whole (issue 56); the summary says the rest.  A title
    the box cuts all the same (a configured source's own long title) leads the caption in full.
    """
    if name == UPLOAD:
        return
    label = _dataset_label(name, listed)
    meta = listed.get(name) or datasets.info(name, metadata=False)
    words = [label] if len(label) > LABEL_FITS else []
    if meta.get("summary"):
        words.append(meta["summary"])
    if words:
        where.caption(" ".join(words))


def _catalogue() -> dict[str, dict]:
    """Every data set :func:`dpcore.datasets.available` names, with its title and whether it is large or geo.

    Read once per change of the data folder or the sources file, for every session: each ``info`` call lists
    the data folder again, and the picker made ~100 of them in every run of every page (0.07 s idle, up to
    0.7 s on a loaded machine; issue 56, speed).  File names and titles are public; no row is read.
    """
    from dpcore.sources.config import config_path

    def stamp(path) -> int | None:
        try:
            return os.stat(path).st_mtime_ns if path else None
        except OSError:
            return None
    folder, config = os.environ.get("DPCORE_DATA"), config_path()
    return _catalogue_for(folder, stamp(folder), str(config) if config else None, stamp(config))


@st.cache_resource(show_spinner=False, max_entries=8)
def _catalogue_for(folder, folder_stamp, config, config_stamp) -> dict[str, dict]:
    # The arguments are the cache key only: the folder's and the sources file's change times.  A resource, not
    # data: the picker reads it once per option label, and cache_data would unpickle it on every read.
    return {n: {f: meta[f] for f in ("title", "summary", "large", "geo")}
            for n in datasets.available() for meta in [datasets.info(n, metadata=False)]}


@st.cache_resource(show_spinner="Running… opening the source", max_entries=4)
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


def columns_words(ds, *, most: int = 8) -> str:
    """``"2 columns: longitude, latitude"`` (:func:`ui.models.shared.columns_words`: the pages' one form)."""
    from .models.shared import columns_words as words
    return words(ds.columns, most)


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


_SOURCE_LOCK = threading.Lock()
#: Results computed on large sources (baseline fits, NICV, densities), kept for the whole server.
_SOURCE_RESULTS: collections.OrderedDict = collections.OrderedDict()


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
def pass_progress(ds, what: str, *, private: bool = False):
    """A progress bar for each pass over a large source while ``what`` runs (no-op for arrays).

    The source calls back before each pass (``on_pass``) and, on DuckDB, with the
    engine's own progress within the pass (``on_progress``); the bar names the
    pass and its number.  Removed when the step ends.

    ``private=True`` (a private fit): only a spinner that names the engine.  How many passes a
    private fit makes can depend on its noisy size (DPLloyd's iterations), and the bar is seen
    before the release is recorded, even when the store then refuses it: so nothing but public
    facts is shown while it runs (issue 29).
    """
    if not is_large(ds):
        yield
        return
    src = ds.data_source
    if private:
        with st.spinner(f"Running… {what}: computing where the data lie, in {engine_name(src.engine)}"):
            yield
        return
    box = st.empty()
    bar = PassProgress(what, src.engine, lambda fraction, text: box.progress(fraction, text=text))
    try:
        with watching(src, bar):
            yield
    finally:
        box.empty()


def _offer_map_data(where, key: str, names: list) -> None:
    """A page that takes map data only, opened with other data chosen: say so, keep the choice, offer map data.

    The data set chosen on another page is the person's working set (issue 56): this page never
    switches it by itself (and so never draws on data nobody chose).  It names the data set, says what
    the page needs, and offers the nearest thing it can do, a map data set, on a click.
    """
    wanted = url_default("dataset", None, str)
    if wanted is None or wanted in names or wanted == UPLOAD or wanted not in datasets.available():
        return
    title = datasets.info(wanted, metadata=False)["title"]
    st.info(f"This page draws on a map, so it takes map data (two columns: longitude, latitude). Your data set, "
            f"*{title}*, is not map data: it stays chosen on every other page, and nothing was drawn here.")
    pick = names[0] if names else None
    if pick is not None and st.button(f"Use {_dataset_label(pick)} here (it becomes your data set)",
                                      key=f"{key}_use_map_data"):
        from .page import set_url
        set_url(dataset=pick)
        st.rerun()
    st.stop()


def _default_dataset(names):
    for pref in (datasets.TAXI_SAMPLE_NAME, "s1_like"):
        if pref in names:
            return pref
    return names[0]


class _KeptFile(io.BytesIO):
    """An upload kept in the session: its bytes and file name, read like Streamlit's UploadedFile."""

    def __init__(self, name: str, data: bytes):
        super().__init__(data)
        self.name = name


#: The upload's own settings, kept with it across pages (ui.page.kept_widget) and forgotten with it.
_UPLOAD_SETTINGS = ("cols", "bounds", "unit")


def _kept_upload(where, key):
    """The file uploaded in this session: a new upload replaces it, "Remove" forgets it (issue 56).

    Streamlit's file uploader forgets its file on a page without it; the session keeps the bytes and the
    name (never in a URL or on disk) so the upload, its columns, bounds and person column are the data
    set on every page until the person removes it.
    """
    up = where.file_uploader("CSV or Parquet file", type=["csv", "txt", "parquet", "pq"], key=f"{key}_upload",
                             help="Up to 200 MB. Numeric columns only are clustered.")
    kept = st.session_state.get("_dp_upload")
    if up is not None:
        data = up.getvalue()
        if kept is None or kept != (up.name, hashlib.sha256(data).hexdigest()):
            if kept is not None:     # another file: the previous file's columns and bounds do not apply
                forget_kept(*(f"{key}_{s}" for s in _UPLOAD_SETTINGS))
            st.session_state["_dp_upload"] = (up.name, hashlib.sha256(data).hexdigest())
            st.session_state["_dp_upload_bytes"] = data
        return _KeptFile(up.name, data)
    if kept is None:
        return None
    where.caption(f"Using your upload “{kept[0]}” (kept for this session, on every page).")
    if where.button("Remove the upload", key=f"{key}_forget_upload"):
        for k in ("_dp_upload", "_dp_upload_bytes"):
            st.session_state.pop(k, None)
        forget_kept(*(f"{key}_{s}" for s in _UPLOAD_SETTINGS))
        st.rerun()
    return _KeptFile(kept[0], st.session_state["_dp_upload_bytes"])


def _upload(where, key):
    up = _kept_upload(where, key)
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
    # Longitude/latitude by name and range, never an id-like column (issue 56); the owner can change both.
    suggested = datasets.suggest_columns(df)
    cols = kept_widget(where.multiselect, "Columns to cluster", options=numeric,
                       initial={"default": suggested["columns"]}, key=f"{key}_cols",
                       valid=lambda v: set(v) <= set(numeric))
    if any(datasets.is_id_like(c) for c in cols):
        where.warning("An identifier column is chosen for clustering: its numbers name people or rows, they do not "
                      "measure anything, so clusters of them mean nothing. Use it as the person column instead.")
    if not cols:
        st.info("Choose at least one numeric column.")
        return None, None
    bounds = _bounds_inputs(where, cols, key)
    others = [c for c in df.columns if c not in cols]
    unit_col = kept_widget(where.selectbox, "Person column (privacy unit)", options=[NO_UNIT] + others,
                           key=f"{key}_unit", valid=lambda v: v in [NO_UNIT] + others,
                           help="If several rows can belong to one person (their trips, visits, check-ins), "
                                "choose the column that says whose each row is: releases then protect each "
                                "person's rows together, not one row at a time.")
    if unit_col == NO_UNIT and suggested["person"] is not None and suggested["person"] in others:
        where.caption(f"Suggestion: “{suggested['person']}” looks like an identifier. If each of its values is one "
                      "person, choose it as the person column: releases then protect each person's rows together.")
    with friendly_errors("Using the file"):
        ds = datasets.dataset_from_frame(df, cols, bounds=bounds, name=f"upload:{up.name}",
                                         unit_column=None if unit_col == NO_UNIT else unit_col)
    content = _fingerprint(ds)
    ds.name = _upload_account(up.name, content, ds)
    unit_controls(ds, where=where)
    # Rows left out on reading are counted in the raw-facts panel only (a notice here, shown only when a row
    # was dropped, would say so beside private results).
    return ds, content + _bounds_key(bounds)


#: What an upload is named in the store when the person uploading is not an owner (issue 55).
ANALYST_UPLOAD = "upload by {who}:{file}"


def _upload_account(filename: str, content: str, ds=None) -> str:
    """The dataset name (the account) of an upload: one account per people, asked of the store by owners only.

    ``content`` is the parsed rows' digest (:func:`_fingerprint`), so the same rows in another encoding,
    with other line endings or in another order reach the same account.  The data owner (and local
    mode) is told when the store already holds these rows under another name, and that account and
    total apply.  Anyone else is never compared with the store (issue 55): "is this registered?"
    answered to an analyst, or a draw that works on known rows and not on others, tells neighbouring
    data sets apart at ε = 0.  So an analyst's upload is named in the analyst's own namespace, which
    no owner registered: it behaves the same whatever its rows (looked at, simulated on, never drawn
    on: drawing needs data an owner registered).  ``ds`` (the parsed upload) gives the former digests
    of its rows (:func:`dpcore.store.keys.former_digests`), asked only when the current one is not
    registered: an account made before issue 68 (person data, keyed by the ids' names) is found again.
    """
    from .identity import may
    store = release_store()
    if not may("register"):
        return ANALYST_UPLOAD.format(who=getattr(store, "actor", None) or "someone", file=filename)
    name = f"upload:{filename}"
    known = store.dataset_for_fingerprint(content)
    if known is None and ds is not None:     # an account made before issue 68 holds a former digest
        from dpcore.store.keys import former_digests
        known = store.dataset_for_fingerprint(content, former=former_digests(ds.X, ds.units))
    if known is not None and known != name:
        st.info(f"These rows are already registered as “{known.removeprefix('upload:')}”: its privacy "
                "account and total apply to this upload too (the same people, in any file and under any ids, are "
                "one account).")
        name = known
    return name


def _bounds_key(bounds):
    # Public bounds, not data: part of the cache keys, cut off before the store sees the fingerprint.
    if bounds is None:
        return ":nobounds"
    return ":" + hashlib.sha1(repr([list(map(float, b)) for b in bounds]).encode()).hexdigest()[:8]


def _bounds_inputs(where, cols, key):
    """Ask for public bounds; without them the release is not private (said loudly)."""
    text = kept_widget(
        where.text_area, "Public bounds, one line per column: lower, upper",
        key=f"{key}_bounds", placeholder="\n".join(f"{c}: lower, upper" for c in cols),
        help="Bounds must be known without looking at the data (e.g. a city's bounding box). "
             "Reading them from the data leaks its extremes.")
    if not text.strip():
        # One sentence here, by the box; the page's one warning says what it means (issue 65: two warnings stood
        # one above the other).
        where.caption("No bounds yet: enter the range each column can take, known without looking at the data.")
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
