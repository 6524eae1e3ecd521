"""Privacy-utility curves in the app: many releases per epsilon on the data owner's data, cancellable."""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict

import streamlit as st

import dpcore

from .page import friendly_errors

# -- privacy-utility curves ---------------------------------------------------------------------------
#: Curves kept for the server (all sessions), newest last.
MAX_CURVES = 32


@st.cache_resource(show_spinner=False)
def _curve_cache() -> dict:
    """One cache of finished curves for the whole server, with its lock.

    Not ``st.cache_data`` around the computation: Streamlit replays the elements a cached function
    drew, and the progress bar lives outside it, so a second session asking for the same curve got
    ``CacheReplayClosureError`` (issue 31).  This factory draws nothing; the cache holds summaries
    (utility figures), never a release.
    """
    return {"lock": threading.Lock(), "items": OrderedDict()}


def _compute(X, algorithms: tuple, epsilons: tuple, n_seeds: int, n_clusters, params: tuple, max_rows, bounds,
             progress, on_partial=None):
    from dpcore.evaluation import compare_curves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
        return compare_curves(X, bounds, list(algorithms), epsilons=list(epsilons), n_seeds=n_seeds,
                              n_clusters=n_clusters, params=dict(params), max_rows=max_rows, progress=progress,
                              random_state=None, on_partial=on_partial)


def utility_curves(ds, fingerprint: str, algorithms, *, epsilons, n_seeds: int, n_clusters=None, params=None,
                   max_rows=None, progress=None, lookalike_n: int | None = None, on_partial=None):
    """Privacy-utility curves (``dpcore.evaluation.compare_curves``), cached on data fingerprint,
    algorithms, ε grid, releases per ε, k, parameters and row limit.

    Every release of the curve draws its own unpredictable noise
    (``random_state=None``).  The curve is a utility figure computed on the raw
    data (not private, for the data owner's eyes only); only its summary is
    cached, never a release.

    ``lookalike_n``: compute on a public look-alike of this many points instead
    (:func:`dpcore.evaluation.accuracy.lookalike`: the public bounds and k only), for anyone who
    may not see figures computed on the raw data (issue 31).  Needs public bounds.

    ``progress(fraction, message)`` may return False to cancel; a cancelled
    computation is not cached.  ``on_partial(curves)`` is called as each ε is measured (not on a
    cache hit), so the page can draw the first ε at once.  Returns ``(curves, complete)``.
    """
    bounds_key = None if ds.bounds is None else tuple(tuple(map(float, b)) for b in ds.bounds)
    args = (tuple(algorithms), tuple(float(e) for e in epsilons), int(n_seeds), n_clusters,
            tuple(sorted((params or {}).items())), max_rows)
    if lookalike_n is not None:
        from dpcore.evaluation.accuracy import lookalike
        X = lookalike(ds.bounds, int(lookalike_n), int(n_clusters or 5), random_state=0)
        what = f"lookalike:{lookalike_n}"
    else:
        X, what = ds.X, f"{ds.name}:{fingerprint}"
    key = repr((what, bounds_key) + args)
    cache = _curve_cache()
    with cache["lock"]:
        hit = cache["items"].get(key)
        if hit is not None:
            cache["items"].move_to_end(key)
            return hit, True
    with friendly_errors("The privacy–utility curve"):
        curves = _compute(X, *args, ds.bounds, progress, on_partial)
    if not curves or not curves[-1].complete or len(curves) < len(algorithms):
        return curves, False          # cancelled: a partial result is never kept
    with cache["lock"]:
        cache["items"][key] = curves
        while len(cache["items"]) > MAX_CURVES:
            cache["items"].popitem(last=False)
    return curves, True
