"""Private results in the app: drawn once, recorded before they are shown, kept until a new draw.

Pages call :func:`private_release` / :func:`private_releases`: a draw kept for exactly these
settings (this session, else the store) is shown again; otherwise a fresh draw goes through the
library's reserve-before-reveal step (:mod:`dpcore.store.draw`: fit with unpredictable noise,
build, record) and only the recorded release is drawn (:class:`dpcore.release.view.ReleasedFit`).
Non-private references come from :func:`baseline`.
"""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import streamlit as st

import dpcore
from dpcore.algorithms.regime import RegimeWarning
from dpcore.algorithms.registry import bounding_for, releasable
from dpcore.exceptions import BudgetExceededError
from dpcore.release.view import ReleasedFit
from dpcore.store import draw as D
from dpcore.store.keys import former_digests

from .controls import refresh_sidebar_total
from .data_picker import _on_source, exact_rows, fit_data, is_large, pass_progress, privacy_id, unit_params
from .identity import draw_refusal
from .identity import who as identity_who
from .models.shared import Cost, totals
from .page import friendly_errors
from .preview_cache import KEPT_ON_DISK, kept_fit
from .store import release_store


def publishable(ds) -> bool:
    """True when releases of ``ds`` are private (public bounds) and so go through the store."""
    return ds.bounds is not None


def _settings(ds, fingerprint: str, algorithm: str, params: dict) -> D.Settings:
    """The library's name for one release setting on ``ds`` (:func:`dpcore.store.draw.settings`)."""
    return D.settings(ds.name, fingerprint, algorithm, params, bounds=ds.bounds, d=ds.X.shape[1])


def draw_params(ds, algorithm: str, params: dict) -> dict:
    """The parameters a draw of ``algorithm`` on ``ds`` runs with: the page's, no seed, and the privacy unit's
    (person level on data with a person column, issue 23)."""
    out = {k: v for k, v in params.items() if k != "random_state"}
    if releasable(algorithm).private:
        unit = unit_params(ds, algorithm)     # person level on data with a person column (issue 23)
        if unit and out.get("contribution_bounding"):
            # A bounding asked for (a look-alike bounded as the draw it previews), where this algorithm can run it.
            unit["contribution_bounding"] = bounding_for(algorithm, out["contribution_bounding"])
        out.update(unit)
    return out


def draw_key(ds, fingerprint: str, algorithm: str, params: dict) -> str:
    """The key a draw of these settings is kept (and asked for again, :func:`request_new_draw`) under."""
    return _settings(ds, fingerprint, algorithm, draw_params(ds, algorithm, params)).key


@st.cache_resource(show_spinner=False, max_entries=16)
def _stored_releases(_store, url: str, dataset: str, last_id: int) -> list:
    """The store's releases of one dataset, parsed once per (store, dataset, newest release id) for the server."""
    return _store.releases(dataset)


def person_level_everywhere(ds) -> bool:
    """True when every draw recorded on ``ds`` protected whole persons, so the total holds per person."""
    store = release_store()
    hist = store.history(ds.name)
    if not hist:
        return False
    rels = _stored_releases(store, os.environ.get("DPCORE_STORE") or "", ds.name, hist[-1]["id"])
    return all((r.release.get("privacy_unit") or {}).get("person_level") for r in rels)


def recorded_person_unit(ds) -> str | None:
    """What every draw recorded on ``ds`` protected ("user", ...) when all were person level, else None.

    A page that shows the data's total without a draw of its own (Compare) names the same unit as the
    page that drew (the Explorer): one unit name per data set on every page (issue 56).
    """
    if not person_level_everywhere(ds):
        return None
    from dpcore.release import protected_unit
    store = release_store()
    hist = store.history(ds.name)
    rels = _stored_releases(store, os.environ.get("DPCORE_STORE") or "", ds.name, hist[-1]["id"])
    return protected_unit(rels[-1].release)


def recorded_releases(ds) -> list:
    """The store's recorded releases of ``ds`` (StoredRelease, oldest first), parsed once per new release.

    [] for data without public bounds (never recorded) or with no release yet.  A dataset name in the
    store is tied to one content fingerprint, so these are all releases of the same data.
    """
    if not publishable(ds):
        return []
    store = release_store()
    hist = store.history(ds.name)
    if not hist:
        return []
    return _stored_releases(store, os.environ.get("DPCORE_STORE") or "", ds.name, hist[-1]["id"])


def _recorded(store, s: D.Settings) -> list:
    """The store's draws of exactly these settings, oldest first; release bodies parsed once per new release."""
    url = os.environ.get("DPCORE_STORE") or ""
    return D.recorded_draws(store, s, releases_of=lambda name, last: _stored_releases(store, url, name, last))


#: Draws a session keeps in memory; older ones are found again in the store (unbounded bodies otherwise).
MAX_KEPT = 64


def _kept() -> dict:
    kept = st.session_state.setdefault("_dp_draws", {})
    while len(kept) > MAX_KEPT:   # oldest first (dicts keep insertion order); recorded draws stay in the store
        kept.pop(next(iter(kept)))
    return kept


def request_new_draw(key: str) -> None:
    """Button callback ("New draw"): the next run draws these settings afresh (and spends again)."""
    _pressed()[key] = True


def request_draw(key: str) -> None:
    """Button callback (the first "Draw"): the next run draws these settings unless a draw of them exists.

    Another session may record a draw of the same settings between this press and the next run; the
    press then shows that draw and spends nothing (issue 24: sessions drawing one setting at once cost
    one draw).  Only "New draw" (:func:`request_new_draw`) records a draw beside an existing one.
    """
    _pressed().setdefault(key, False)


def _pressed() -> dict:
    """The draws asked for by a press in this session: settings key -> True for "New draw", False for "Draw"."""
    return st.session_state.setdefault("_dp_new_draw", {})


def _forget(fresh: dict, keys) -> None:
    for k in keys:
        fresh.pop(k, None)


def _refuse(why: str) -> None:
    st.error(f"Refused, to protect privacy: {why}")


def _fit_private(ds, algorithm: str, params: dict, *, account=None):
    """One fit with unpredictable noise (random_state=None): never cached, never seeded.

    ``account = (store, settings, who)``: a fit that refuses after spending (the coreset's noisy count,
    then "infeasible") has that spend recorded before the refusal is shown (issue 24).
    """
    s = _settings(ds, "", algorithm, params)
    pid = privacy_id(ds, params)
    with friendly_errors(releasable(algorithm).display_name or algorithm), warnings.catch_warnings():
        # Pages state a missing-bounds leak in words; the Python warning would only reach the log.
        warnings.simplefilter("ignore", dpcore.PrivacyLeakWarning)
        warnings.simplefilter("ignore", RegimeWarning)     # said in words by private_release, from regime_
        with pass_progress(ds, "Private release", private=True):
            try:
                return D.fit_private(s, fit_data(ds), bounds=ds.bounds, privacy_id=pid)
            except Exception as exc:
                if account is not None:
                    store, sett, who = account
                    D.record_refusal(store, sett, exc, who=who, description=getattr(ds, "title", ""),
                                     former=former_digests(ds.X, ds.units))   # an account made before issue 68
                raise


def private_releases(ds, fingerprint: str, algorithm: str, epsilons, *, who: str, draw_missing: bool = True,
                     what_fits: bool = False, **params):
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

    ``what_fits=True`` (Compare's panels under a cap, issue 31): when not all missing draws fit in
    what is left, draw them in the order given while they fit, keep those, and leave None for the
    rest (the page names them and their cost) instead of refusing the whole set.

    Returns
    -------
    list of ReleasedFit (or fitted estimators, for data without public bounds), one per ε;
    or None when the store refused: the refusal is then shown and nothing of the new draws is.  A
    refused *new* draw of settings drawn before leaves that last draw in the list (issue 65, point 8:
    the release and its downloads stayed off screen until the page was left); None only when a refused
    setting had no draw before.
    """
    params = draw_params(ds, algorithm, params)
    kept, fresh = _kept(), _pressed()
    store = release_store() if publishable(ds) else None
    out, todo, previous, keys = [], [], {}, []
    for e in epsilons:
        p = dict(params, epsilon=float(e))
        sett = _settings(ds, fingerprint, algorithm, p)
        key = sett.key
        keys.append(key)
        hit = kept.get(key)
        if hit is None and store is not None:
            recs = _recorded(store, sett)
            if recs:   # kept across reloads and restarts: the store's latest draw of these settings
                hit = ReleasedFit(recs[-1].release, recs[-1].id, draw=len(recs), key=key)
                kept[key] = hit
        if fresh.get(key):     # "New draw" pressed: drawn again; the last draw stays on screen if it is refused
            previous[key], hit = hit, None
        elif key in fresh and hit is not None:   # "Draw" pressed, and a draw of these settings exists: shown, free
            fresh.pop(key)
        out.append(hit)
        if hit is None:
            todo.append((len(out) - 1, key, sett, p))
    if draw_missing == "asked":     # only the settings whose "New draw" was pressed: a click, never a page open
        todo = [t for t in todo if t[1] in fresh]
    if not draw_missing:           # only looking: a draw asked for again is still the one on screen
        return [previous.get(k) if f is None else f for k, f in zip(keys, out)]
    if not todo:
        return out

    def refused():
        """After a refusal: the draws pressed again stay on screen (issue 65, point 8); None when one has none."""
        _forget(fresh, [k for _, k, *_ in todo])
        for i, k, *_ in todo:
            out[i] = previous.get(k)
        return out if all(out[i] is not None for i, *_ in todo) else None

    why = draw_refusal(store, ds.name) if store is not None else None
    if why is not None:    # the role, asked before any fit: a refused draw never touches the data
        st.warning(f"Not drawn: {why}")
        return refused()
    if store is not None:
        need_e = math.fsum(p["epsilon"] for *_, p in todo)
        need_d = math.fsum(float(p.get("delta") or 0.0) for *_, p in todo)
        left = store.remaining(ds.name)
        if what_fits and left is not None:
            fits_in = _fitting(todo, left)    # in the order given, while they fit; the rest stay None
            _forget(fresh, [k for _, k, *_ in todo[len(fits_in):]])
            todo = fits_in
            if not todo:
                return out
            need_e = math.fsum(p["epsilon"] for *_, p in todo)
            need_d = math.fsum(float(p.get("delta") or 0.0) for *_, p in todo)
        account = totals(store, ds.name, title=getattr(ds, "title", None))
        asked = Cost(need_e, need_d, need_e, need_d)
        if not account.fits(asked):
            # Checked before fitting (with the ε granted, which a release spends at most): no fit, nothing
            # new kept or shown.  The store's own check at record time is the one that counts.
            what = "This draw" if len(todo) == 1 else f"These {len(todo)} draws together (sequential composition)"
            _refuse(account.why_not(asked, what=what) or "")
            return refused()
    former = () if store is None else former_digests(ds.X, ds.units)    # finds an account made before issue 68
    for i, key, sett, p in todo:
        with st.spinner(f"Running… drawing a private release at ε = {p['epsilon']:g}"):
            est = _fit_private(ds, algorithm, p, account=None if store is None else (store, sett, identity_who(who)))
        if store is None:
            fresh.pop(key, None)
            prev = kept.get(key)
            est.draw, est.key, est.release_id = (getattr(prev, "draw", 0) + 1), key, None
            kept[key] = out[i] = est
            continue
        try:
            # Reserve before reveal (dpcore.store.draw): build, register, record; only the dict comes back.
            # record_draw: a draw another session recorded meanwhile for these settings comes back instead
            # (this fit is dropped unseen and uncharged); "New draw" always records its own.
            rid, rel = D.record_fit(store, sett, est, who=identity_who(who), columns=ds.columns,
                                    description=ds.title, kind=getattr(ds, "kind", "points"),
                                    new_draw=fresh.get(key, False), former=former)
        except BudgetExceededError as exc:
            if what_fits:     # another session spent meanwhile: keep what was drawn, the rest stay None
                _forget(fresh, [k for _, k, *_ in todo])   # one click, one attempt
                return out
            _refuse(str(exc))
            return refused()
        except Exception as exc:   # the store's own errors (locked, unreachable, other content, ...) are sentences
            _forget(fresh, [k for _, k, *_ in todo])
            hint = ""
            if is_large(ds) and "another fingerprint" in str(exc):
                hint = (" For a configured source the key is its list of files with their sizes and modification "
                        "times, so the files changed since its first release. If they hold mostly the same people, "
                        "new releases add to the old ones' privacy cost: give the entry a new name in "
                        "dpcore_sources.toml and set that dataset's total on the Release page with this in mind.")
            st.error(f"The release could not be recorded, so it is not shown: {exc}{hint}")
            return refused()
        del est   # from here on only the release dict exists: what the store accepted is what is shown
        fresh.pop(key, None)
        refresh_sidebar_total()
        # The draw before this one was kept (a new draw) or there was none in the session or the store.
        kept[key] = out[i] = ReleasedFit(rel, rid, draw=getattr(kept.get(key), "draw", 0) + 1, key=key)
    return out


def _fitting(todo: list, left: tuple[float, float]) -> list:
    """The leading items of ``todo`` whose ε and δ together fit in ``left`` (the order shown is kept)."""
    kept, e, d = [], 0.0, 0.0
    for item in todo:
        p = item[-1]
        e2, d2 = e + p["epsilon"], d + float(p.get("delta") or 0.0)
        if e2 > left[0] * (1 + 1e-9) + 1e-12 or d2 > left[1] * (1 + 1e-9) + 1e-15:
            break
        kept.append(item)
        e, d = e2, d2
    return kept


def is_public(ds) -> bool:
    """True for data that is already public (embedded samples, teaching sets): a page may draw on opening."""
    return bool(getattr(ds, "public", False))


#: Previews a session keeps (public data only; each is a fit, not a release).
MAX_PREVIEWS = 8


def public_preview(ds, fingerprint: str, algorithm: str, params: dict):
    """A preview of one setting on public data: a private fit never recorded, never counted, never published.

    The app's one preview mechanism (issue 56): every page that shows a level before a draw on public
    data calls this, whatever it fits (a registry algorithm, or ``"sanitize"`` for the sanitized
    database).  Drawn once per setting for the server with fresh, unpredictable noise, never seeded (a
    rerun, a reload or another session shows the same preview: the data are public), with the same
    privacy unit as a recorded draw would use.  Only for data that is already public
    (:func:`is_public`): a fit of anything else is a use of the data and goes through the store; a
    preview on private data is :func:`ui.accuracy.expected_error_caption`'s, from a recorded draw.

    Returns
    -------
    The fitted estimator, with ``preview = True``, ``release_id = None``, ``draw = 0`` and ``key`` set.
    """
    if not is_public(ds):
        raise ValueError("a preview that is not recorded is only for public data")
    p = {k: v for k, v in params.items() if k != "random_state"}
    if releasable(algorithm).private:
        p.update(unit_params(ds, algorithm))
    key = _settings(ds, fingerprint, algorithm, p).key
    return _shared_preview(key, ds, algorithm, p)


@st.cache_resource(show_spinner="Running… a preview on the public data", max_entries=MAX_PREVIEWS * 4)
def _shared_preview(key: str, _ds, algorithm: str, _params: dict):
    """One preview per setting for the server: the data are public, so sharing the noise of a preview
    reveals nothing, and a second session (or a reload) opens at once instead of fitting again.  The kinds of
    Figure 8's levels view are also kept on disk, as the release the fit would publish (:func:`kept_fit`)."""
    if algorithm in KEPT_ON_DISK and is_public(_ds):
        est = kept_fit(key, lambda: _fit_private(_ds, algorithm, _params), algorithm=algorithm, dataset=_ds.name,
                       columns=_ds.columns, kind=getattr(_ds, "kind", "points"))
    else:
        est = _fit_private(_ds, algorithm, _params)
    est.preview, est.release_id, est.draw, est.key = True, None, 0, key
    return est


def private_refit(fit, ds, fingerprint: str, rows, algorithm: str, **params):
    """A second private fit on some rows (e.g. the 90 % training split), with its own fresh noise.

    Used only for utility measures computed on the raw data (not private,
    never shown as a release, never published, so not recorded).  It never
    reuses the release's noise: a refit that shared it would let anyone who
    saw both subtract one from the other.  Kept in the session with the draw
    it belongs to, so a rerun shows the same measures and a new draw gets a
    new refit.

    At the release's unit (issue 55): on data with a person column the refit bounds each person's
    rows as the release does (the same L), so what a caption says of both fits holds per person.
    """
    params = {**params, **unit_params(ds, algorithm)}      # person level when the release is
    refits = st.session_state.setdefault("_dp_refits", {})
    key = json.dumps([getattr(fit, "key", None), getattr(fit, "release_id", None), getattr(fit, "draw", 1),
                      fingerprint, np.asarray(rows).size, algorithm, sorted(map(str, params.items()))])
    if key not in refits:
        sub = rows_subset(ds, rows, "refit")
        sub.bounds = (fit.bounds_.lower, fit.bounds_.upper)
        refits.clear()   # only the current draw's refit is needed
        refits[key] = _fit_private(sub, algorithm, params)
    return refits[key]


def unit_phrase(ds) -> str:
    """The unit an ε of the current settings is for, in words: "per person (each counted as at most L rows)" or
    "per row" (true of both boundings: L sampled rows, or every row weighted to at most L together)."""
    L = unit_params(ds).get("max_contributions")
    return "per row" if L is None else f"per person (each counted as at most {L} rows)"


def rows_subset(ds, rows, tag: str):
    """Some rows of ``ds`` with the same public bounds and columns (for fits on a split), named ``name:tag``."""
    from types import SimpleNamespace
    units = getattr(ds, "units", None)
    return SimpleNamespace(name=f"{ds.name}:{tag}", X=ds.X[rows], bounds=ds.bounds, columns=ds.columns,
                           title=getattr(ds, "title", ""), geo=getattr(ds, "geo", False),
                           units=None if units is None else np.asarray(units)[rows],
                           unit_column=getattr(ds, "unit_column", None))


def _baseline_fit(X, algorithm: str, params: tuple, bounds):
    kwargs = {k: v for k, v in params if k != "bounds"}
    return dpcore.ALGORITHMS[algorithm](**kwargs, bounds=bounds).fit(X)


@st.cache_data(show_spinner="Running… the non-private reference (k-means on the raw data)", max_entries=64)
def _fit_baseline(_X: np.ndarray, data_key: str, algorithm: str, params: tuple, _bounds=None, public: bool = False):
    if public and algorithm == "kmeans":
        return _kept_reference(_X, data_key, params, _bounds)
    return _baseline_fit(_X, algorithm, params, _bounds)


def _kept_reference(X, data_key: str, params: tuple, bounds):
    """The non-private k-means of public data read back from disk (:mod:`ui.preview_cache`), else fitted now and
    kept, so that a restarted server does not fit it again (issue 66: ~1.5 s of the Explorer's first visit on the
    taxi sample).  Kept: its centres, inertia and iterations, what the pages read of a reference (not its labels,
    one per row).  Keyed by the data's digest, the parameters and the scikit-learn and numpy versions (the code
    version names dpcore's).  Public data only: the reference of an owner's raw data stays in memory."""
    import sklearn

    from . import preview_cache
    key = f"reference|kmeans|{data_key}|{params!r}|sklearn {sklearn.__version__}|numpy {np.__version__}"
    est = dpcore.ALGORITHMS["kmeans"](**{k: v for k, v in params if k != "bounds"}, bounds=bounds)

    def decode(entry):
        est.cluster_centers_ = np.asarray(entry["cluster_centers"], dtype=float)
        est.inertia_, est.n_iter_ = float(entry["inertia"]), int(entry["n_iter"])
        return est

    return preview_cache.kept(key, lambda: est.fit(X), decode=decode, encode=lambda fitted: {
        "cluster_centers": fitted.cluster_centers_.tolist(), "inertia": float(fitted.inertia_),
        "n_iter": int(fitted.n_iter_)})


def _reference_items(ds, params: dict) -> tuple:
    """A reference's cache key: its parameters, sorted, and the data's public bounds."""
    bounds_key = None if ds.bounds is None else tuple(tuple(np.ravel(b).astype(float)) for b in ds.bounds)
    return tuple(sorted(params.items())) + (("bounds", bounds_key),)


#: The parameters of the k-means reference the pages draw (blue rings) and measure errors from, beside k.
REFERENCE_PARAMS = {"epsilon": None, "random_state": 0}


def reference_centres(ds, fingerprint: str, n_clusters: int) -> np.ndarray:
    """The non-private k-means centres the pages draw beside a release (:func:`baseline` with
    :data:`REFERENCE_PARAMS`), which the expected-error simulations measure their errors from: one reference.

    Public data's is read from (or kept on) disk outside Streamlit's caches (``ui.serve`` calls this before the
    server runs); any other's is :func:`baseline`'s.  Not private: the raw data's, for those who see raw figures.

    Returns
    -------
    ndarray (n_clusters, d), data units
    """
    params = {"n_clusters": int(n_clusters), **REFERENCE_PARAMS}
    if getattr(ds, "public", False) and not is_large(ds) and exact_rows(ds) >= int(n_clusters):
        kept = _kept_reference(ds.X, f"{ds.name}:{fingerprint}", _reference_items(ds, params), ds.bounds)
        return kept.cluster_centers_
    return kmeans_reference(ds, fingerprint, n_clusters).cluster_centers_


def kmeans_reference(ds, fingerprint: str, n_clusters: int):
    """The non-private k-means every page draws beside a release (blue rings): :func:`baseline` with
    :data:`REFERENCE_PARAMS` (10 starts, ``random_state=0``), the reference the expected errors are measured from
    (:func:`reference_centres`).  Not private.

    Returns
    -------
    fitted ``dpcore`` KMeans (``cluster_centers_``, ``inertia_``, ``n_iter_``)
    """
    return baseline(ds, fingerprint, "kmeans", n_clusters=int(n_clusters), **REFERENCE_PARAMS)


def baseline(ds, fingerprint: str, algorithm: str, **params):
    """A non-private reference fit (k-means, WaveCluster), cached on data, algorithm and parameters.

    Deterministic (k-means with a fixed seed), so caching it shares nothing
    a rerun would not recompute; it is never a release.  The k-means reference of public data is also kept on
    disk (:func:`_kept_reference`): a restarted server reads it back.
    """
    if dpcore.ALGORITHMS[algorithm].private:
        raise ValueError(f"{algorithm} is private: use private_release, which records it before it is shown")
    k, n = params.get("n_clusters"), exact_rows(ds)
    if k is not None and 1 <= n < k:
        # k-means with k above the number of rows puts a centre on every row and leaves the other clusters
        # empty: fit k = n and repeat centres, instead of an error that would state the number of rows.
        import copy
        est = copy.copy(baseline(ds, fingerprint, algorithm, **dict(params, n_clusters=n)))
        est.cluster_centers_ = est.cluster_centers_[np.arange(k) % n]
        return est
    items = _reference_items(ds, params)
    if is_large(ds):
        return _on_source(ds, "Non-private reference", (fingerprint, "baseline", algorithm, items),
                          lambda: _baseline_fit(ds.data_source, algorithm, items, ds.bounds))
    with friendly_errors(dpcore.ALGORITHMS[algorithm].display_name or algorithm):
        return _fit_baseline(ds.X, f"{ds.name}:{fingerprint}", algorithm, items, _bounds=ds.bounds,
                             public=bool(getattr(ds, "public", False)))
