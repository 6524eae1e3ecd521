"""Privacy-utility curves in the app: many releases per epsilon on the data owner's data, cancellable."""
from __future__ import annotations

import warnings

import streamlit as st

import dpcore

from .page import friendly_errors


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
