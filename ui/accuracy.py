"""ε from the accuracy you need, and every draw's expected error band (issue 31, issue 56), in the app.

On data that is already public the data themselves are simulated on
(:func:`dpcore.evaluation.epsilon_for_accuracy`).  On private data a figure comes only from a draw
already recorded: its released synopsis, noisy size and unit are the look-alike
(:func:`dpcore.evaluation.release_preview`, :func:`dpcore.evaluation.epsilon_for_accuracy_from_release`:
post-processing, no further ε).  Before such a draw no number is shown: a public look-alike (public
bounds, k and a size) was off by two orders of magnitude on a 3,000-row upload (issue 56).  The raw
data stay available to the data owner only, labelled not private (:func:`ui.identity.may`).
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.evaluation import (
    ACCURACY_EPSILONS,
    epsilon_for_accuracy,
    epsilon_for_accuracy_from_release,
    previewable,
    release_preview,
)
from dpcore.evaluation.accuracy import quantity

from .charts import accuracy_figure
from .identity import may
from .not_private import NOT_PRIVATE
from .page import set_url

#: The look-alike's public size when the person gives none.
DEFAULT_PUBLIC_N = 10_000

#: What to do on private data before a recorded draw: the one sentence shown instead of a number.
DRAW_FIRST = ("No accuracy preview yet: on private data it is computed from a recorded draw. Draw once: the preview "
              "is then computed from that release at no extra cost.")

#: Releases whose only output is centres (DPLloyd, zCDP-Lloyd, DPM) carry no picture of the data's shape.
NO_SYNOPSIS = ("No accuracy preview for this draw: its algorithm releases only centres, no synopsis of the data "
               "(noisy grid, point set or coreset) to simulate on. EUGkM or Hybrid releases one.")

#: Simulated releases behind a preview's band, and bootstrap rounds for its own uncertainty.
PREVIEW_RELEASES, PREVIEW_CHECKS = 12, 2


def _unit(ds) -> tuple[bool, str]:
    geo = bool(getattr(ds, "geo", False)) and len(ds.columns) == 2
    return geo, ("m" if geo else "data units")


@st.cache_data(show_spinner=False, max_entries=64)
def _answer(algo: str, target: float, lower: tuple, upper: tuple, k: int, geo: bool, params: tuple,
            n: int | None, key: str, epsilons: tuple, source: str | None, _X=None):
    """Cached simulations: ``key`` names the points (the look-alike's size, or the data's fingerprint)."""
    return epsilon_for_accuracy(algo, target, bounds=(np.asarray(lower), np.asarray(upper)), n_clusters=k,
                                X=_X, n=n, geo=geo, params=dict(params), epsilons=epsilons, source=source)


def _simulate(ds, fp, algo, k, params, target, *, on_raw: bool, n: int, epsilons=ACCURACY_EPSILONS):
    geo, _ = _unit(ds)
    lower, upper = (tuple(np.ravel(b).tolist()) for b in ds.bounds)
    public = bool(getattr(ds, "public", False))
    points = ds.X if (on_raw or public) else None
    key = f"data:{ds.name}:{fp}" if points is not None else f"lookalike:{n}"
    source = "this public data" if public else None
    return _answer(algo, float(target), lower, upper, int(k), geo, tuple(sorted(params.items())),
                   None if points is not None else int(n), key, tuple(epsilons), source, _X=points)


def recorded(fit) -> bool:
    """True for a draw the store recorded (a :class:`~dpcore.release.view.ReleasedFit`), not a preview fit."""
    return fit is not None and isinstance(getattr(fit, "release", None), dict) and not getattr(fit, "preview", False)


def _release_key(fit) -> str:
    return f"{getattr(fit, 'key', None)}:{getattr(fit, 'release_id', None)}:{getattr(fit, 'draw', 1)}"


@st.cache_data(show_spinner=False, max_entries=64)
def _preview(key: str, eps: float, geo: bool, _release=None):
    """Cached :func:`release_preview`: ``key`` names the recorded draw (its settings, id and draw number)."""
    return release_preview(_release, eps, geo=geo, n_releases=PREVIEW_RELEASES,
                           n_checks=PREVIEW_CHECKS)


@st.cache_data(show_spinner=False, max_entries=64)
def _answer_from_release(key: str, target: float, geo: bool, epsilons: tuple, _release=None):
    return epsilon_for_accuracy_from_release(_release, target, geo=geo, epsilons=epsilons)


def expected_error_caption(ds, fp, algo: str, k: int, eps: float, params: dict, *, fit=None, where=None) -> None:
    """Under a draw: the error band expected at this ε, in the units of the data (metres on a map).

    On public data it is simulated on the data; on private data only from ``fit``, a recorded draw
    (post-processing of its release); before one, one sentence says what to do instead of a number.
    """
    where = where or st
    if ds.bounds is None or ds.X.shape[1] < 1:
        return
    geo, unit = _unit(ds)
    if not getattr(ds, "public", False):
        if not recorded(fit):
            where.caption(DRAW_FIRST)
        elif not previewable(fit.release):
            where.caption(NO_SYNOPSIS)
        else:
            try:
                with where.spinner("Running… simulating releases from this draw's synopsis for the expected error"):
                    pv = _preview(_release_key(fit), float(eps), geo, _release=fit)
            except ValueError as err:    # e.g. a noisy size below k: say why there is no figure
                where.caption(f"No expected error for this draw: {err}.")
            else:
                where.caption(pv.sentence())
        return
    with where.spinner("Running… simulating releases for the expected error"):
        ans = _simulate(ds, fp, algo, k, params, 1.0, on_raw=False, n=DEFAULT_PUBLIC_N, epsilons=(float(eps),))
    if np.isnan(ans.band[0][1]):
        return
    lo, mid, hi = (quantity(v) for v in ans.band[0])
    where.caption(f"Expected error at ε = {eps:g}: the private centres sit {lo}–{hi} {unit} from the "
                  f"non-private ones in 80 % of releases (median {mid} {unit}; {ans.n_releases} simulated "
                  f"releases on {ans.source}).")


def _source_fit(fits):
    """The recorded draw an answer on private data is simulated from: the one with the largest ε (least noise)."""
    cands = [f for f in fits if recorded(f) and previewable(f.release)]
    return max(cands, key=lambda f: float(f.release["privacy"]["epsilon"])) if cands else None


def accuracy_section(ds, fp, algo: str, k: int, params: dict, *, fits=()) -> None:
    """Compare's "ε from the accuracy you need": a target in data units, the smallest ε that meets it.

    ``fits``: the draws the page shows.  On private data the answer is simulated from the recorded one
    with the largest ε (:func:`dpcore.evaluation.epsilon_for_accuracy_from_release`); without one no
    answer is given, only what to do.
    """
    st.subheader("ε from the accuracy you need")
    if ds.bounds is None:
        st.info("Enter public bounds first: the simulations start from them.")
        return
    public = bool(getattr(ds, "public", False))
    geo, unit = _unit(ds)
    diag = float(np.linalg.norm(np.ravel(ds.bounds[1]) - np.ravel(ds.bounds[0])))
    c1, c2 = st.columns(2)
    if geo:
        target = c1.number_input("Centres within (metres) of where they would be without privacy", 10.0, 50_000.0,
                                 300.0, step=50.0, key="acc_target")
    else:
        share = c1.number_input("Centres within this share of the domain's diagonal", 0.001, 1.0, 0.05,
                                step=0.01, format="%.3f", key="acc_share")
        target = share * diag
    on_raw = False
    if may("raw") and not public:
        on_raw = c2.checkbox(f"Simulate on the raw data ({NOT_PRIVATE})", key="acc_raw",
                             help="Computed on the data, so shown to the data owner only.")
    source = None if public else _source_fit(fits)
    if not public and not on_raw and source is None:
        st.info(NO_SYNOPSIS if any(recorded(f) for f in fits) else
                "No answer yet: on private data it is simulated from a recorded draw. Draw the panels above (or "
                "once on the Explorer): the answer is then computed from that release at no extra cost.")
        return
    where = ("this public data" if public else "the raw data" if on_raw else
             f"the recorded draw at ε = {float(source.release['privacy']['epsilon']):g} (its synopsis, noisy size "
             "and privacy unit; post-processing, it costs no ε)")
    if not st.button("Find the smallest ε", key="acc_go"):
        st.caption("Answers with the smallest ε whose simulated releases put the centres within your error in 90 % "
                   f"of cases, and the error band at every ε, simulated on {where}.")
        return
    try:
        with st.spinner("Running… simulating releases at each ε"):
            if source is None:
                ans = _simulate(ds, fp, algo, k, params, target, on_raw=on_raw, n=DEFAULT_PUBLIC_N)
            else:
                ans = _answer_from_release(_release_key(source), float(target), geo, tuple(ACCURACY_EPSILONS),
                                           _release=source)
    except ValueError as err:     # e.g. a recorded draw whose noisy size is below k
        st.warning(f"No answer from {where}: {err}.")
        return
    (st.success if ans.epsilon is not None else st.warning)(ans.sentence())
    if source is not None:
        st.caption("Simulated on points drawn from a recorded release, which is itself noisy: read the answer as "
                   "a guide. The Explorer's expected error under that draw states how uncertain such a figure is.")
    if ans.source == "raw data" and not public:
        st.caption(f"Simulated on the raw data: {NOT_PRIVATE}. Do not share this figure.")
    fig = accuracy_figure(ans)
    if fig is not None:
        st.plotly_chart(fig, width="stretch", key="acc_fig")
    if ans.epsilon is None:
        return
    if ans.source == "raw data" and not public:
        # Issue 55: an ε read off the raw data changes with one person (its answer is not private), and a
        # release that carried it as its parameter would publish that choice under a guarantee that does
        # not cover it.  So it is not offered as the release's ε; the recorded draw's answer is.
        st.caption("This ε was chosen on the raw data, so it is not offered as the releases' ε: the choice itself "
                   "depends on every person, and the guarantee does not cover it. Untick the raw-data box to get "
                   "the answer from a recorded draw (it costs no ε), or set ε yourself.")
        return
    st.button(f"Use ε = {ans.epsilon:g}", key="acc_use", on_click=_use, args=(ans.epsilon,))


def _use(epsilon: float) -> None:
    """Button callback: the answer becomes the ε of every page (the slider's state and the shared setting)."""
    st.session_state["epsilon"] = float(epsilon)
    set_url(epsilon=float(epsilon))
