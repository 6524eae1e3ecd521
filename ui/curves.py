"""Privacy-utility curves in the app: many releases per epsilon, cancellable.

On the data themselves for whoever may see figures computed on them (the data owner; anyone, on
public data).  For everyone else on private data the curve is simulated on points drawn from a
recorded release's synopsis (:func:`curve_lookalike`: the same look-alike the accuracy previews use,
issue 56), at its noisy size and the page's privacy unit; before such a release there is no curve,
and the page says so (:data:`NO_CURVE_YET`).
"""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict

import streamlit as st

import dpcore

from .page import friendly_errors

#: What someone who may not see raw figures reads on private data before any synopsis is recorded.
NO_CURVE_YET = ("No curve yet: on private data, for anyone but the data owner, the curve is simulated on a recorded "
                "release's synopsis (a noisy grid, point set or coreset: the data's shape at its noisy size), and "
                "this data has none. Draw once with EUGkM or Hybrid, or the look-alike for previews offered under a "
                "draw; the curve is then computed from it at no extra cost.")

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


def _compute(X, algorithms: tuple, epsilons: tuple, n_seeds: int, n_clusters, params: tuple, max_rows, measure,
             geo, bounds, progress, on_partial=None, max_contributions=None, privacy_id=None, kmeans=None):
    from dpcore.evaluation import compare_curves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
        return compare_curves(X, bounds, list(algorithms), epsilons=list(epsilons), n_seeds=n_seeds,
                              n_clusters=n_clusters, params=dict(params), max_rows=max_rows, progress=progress,
                              random_state=None, on_partial=on_partial, max_contributions=max_contributions,
                              privacy_id=privacy_id, measure=measure, geo=geo, kmeans=kmeans)


def curve_lookalike(ds):
    """The recorded release whose synopsis a curve on private data is simulated on, or None.

    Among the store's releases of ``ds`` (:func:`ui.releases.recorded_releases`) that hold a grid,
    point or coreset synopsis, have the data's public bounds and protect the page's unit (person
    or row level), one at the page's L first, then a sanitized database, then the one drawn at the
    largest ε (least noise)
    (:func:`dpcore.evaluation.lookalike_source`).  A choice by public fields of
    recorded releases: post-processing.

    Returns
    -------
    dpcore.release.view.ReleasedFit (with its ``release_id``) or None
    """
    from dpcore.evaluation import lookalike_source

    from .data_picker import unit_params
    from .releases import recorded_releases
    if ds.bounds is None:
        return None
    unit = unit_params(ds)
    L = unit.get("max_contributions")
    return lookalike_source(None, recorded_releases(ds), bounds=ds.bounds, person_level=L is not None,
                            max_contributions=L, bounding=unit.get("contribution_bounding"))


def utility_curves(ds, fingerprint: str, algorithms, *, epsilons, n_seeds: int, n_clusters=None, params=None,
                   max_rows=None, progress=None, lookalike=None, on_partial=None, measure=None, geo=False):
    """Privacy-utility curves (``dpcore.evaluation.compare_curves``), cached on data fingerprint,
    algorithms, ε grid, releases per ε, k, parameters and row limit.

    Every release of the curve draws its own unpredictable noise
    (``random_state=None``).  The curve is a utility figure computed on the raw
    data (not private, for the data owner's eyes only); only its summary is
    cached, never a release.

    ``lookalike``: a recorded release holding a synopsis (:func:`curve_lookalike`); the curve is
    then simulated on points drawn from that synopsis at its noisy size
    (:func:`dpcore.evaluation.synopsis_points`) and at the page's privacy unit (persons of L rows),
    for anyone who may not see figures computed on the raw data (issue 56: a public look-alike of
    the bounds and k alone was off by two orders of magnitude).  Post-processing of the release.

    ``progress(fraction, message)`` may return False to cancel; a cancelled
    computation is not cached.  ``on_partial(curves)`` is called as each ε is measured (not on a
    cache hit), so the page can draw the first ε at once.  Returns ``(curves, complete)``.

    ``measure`` and ``geo``: :func:`dpcore.evaluation.compare_curves`'s (Compare passes the centre error, in
    metres on a map: the unit of its expected error and accuracy answer, issue 65).

    On the raw data the curve protects the page's unit as a draw does: at person level
    (:func:`ui.data_picker.unit_params`) every simulated release bounds the data set's real persons
    (its person column) to L rows with the page's bounding, so the ε read from it is per person
    (issue 56: it was row level, and the owner read an ε too small for person-level privacy).
    """
    from .data_picker import unit_params
    bounds_key = None if ds.bounds is None else tuple(tuple(map(float, b)) for b in ds.bounds)
    unit = unit_params(ds)
    L = unit.get("max_contributions")
    params = dict(params or {})
    ids = None
    if L is not None:
        # The page's bounding ("weight" or "sample"), as each algorithm runs it (its draw would), on the real
        # persons; on a look-alike's points, persons of exactly L rows (dpcore.evaluation.curves).
        params["contribution_bounding"] = unit["contribution_bounding"]
        if lookalike is None:
            ids = ds.units
    args = (tuple(algorithms), tuple(float(e) for e in epsilons), int(n_seeds), n_clusters,
            tuple(sorted(params.items())), max_rows, measure, bool(geo))
    if lookalike is not None:
        from dpcore.evaluation.preview import cell_noise_scale, synopsis_points

        # Seeded: the look-alike is post-processing of a recorded release, never a release itself.
        X, _ = synopsis_points(lookalike.synopsis_, (lookalike.bounds_.lower, lookalike.bounds_.upper),
                               noise_scale=cell_noise_scale(lookalike.budget_), random_state=0)
        import hashlib
        import json
        digest = hashlib.blake2b(json.dumps(lookalike.release.get("synopsis"), sort_keys=True, default=str).encode(),
                                 digest_size=16).hexdigest()      # release ids repeat across stores
        what = f"release:{digest}:{L}"
    else:
        X, what = ds.X, f"{ds.name}:{fingerprint}:{L}"
    key = repr((what, bounds_key) + args)
    cache = _curve_cache()
    with cache["lock"]:
        hit = cache["items"].get(key)
        if hit is not None:
            cache["items"].move_to_end(key)
            return hit, True
    # On the data itself, a centre-error curve measures from the page's own k-means of all rows (cached, or on
    # disk for public data), not a second fit of it.
    from dpcore.evaluation import CENTRE_ERROR

    from .releases import kmeans_reference
    kmeans = (kmeans_reference(ds, fingerprint, n_clusters) if lookalike is None and measure == CENTRE_ERROR
              and n_clusters else None)
    with friendly_errors("The privacy–utility curve"):
        curves = _compute(X, *args, ds.bounds, progress, on_partial, max_contributions=L, privacy_id=ids,
                          kmeans=kmeans)
    if not curves or not curves[-1].complete or len(curves) < len(algorithms):
        return curves, False          # cancelled: a partial result is never kept
    with cache["lock"]:
        cache["items"][key] = curves
        while len(cache["items"]) > MAX_CURVES:
            cache["items"].popitem(last=False)
    return curves, True
