"""ε from the accuracy you need, and every draw's expected error band (issue 31, issue 56), in the app.

On data that is already public the data themselves are simulated on
(:func:`dpcore.evaluation.epsilon_for_accuracy`).  On private data a figure comes only from a draw
already recorded: its released synopsis, noisy size and unit are the look-alike
(:func:`dpcore.evaluation.release_preview`, :func:`dpcore.evaluation.epsilon_for_accuracy_from_release`:
post-processing, no further ε).  A draw that releases only centres (DPLloyd, zCDP-Lloyd, DPM, ...) is
previewed on the synopsis of another recorded release of the same data
(:func:`dpcore.evaluation.lookalike_source`: with the same bounds and unit, the same L first, then a
sanitized database, then the largest ε); when there is none, the page offers a *look-alike for previews* on a click: a
sanitized database of the data at :data:`LOOKALIKE_SHARE` of the draw's ε, recorded in the account as a
release of its own.
Before a recorded draw no number is shown: a public look-alike (public bounds, k and a size) was off
by two orders of magnitude on a 3,000-row upload (issue 56).  The raw data stay available to the data
owner only, labelled not private (:func:`ui.identity.may`).
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.algorithms.registry import releasable
from dpcore.evaluation import ACCURACY_EPSILONS, epsilon_for_accuracy_from_release, lookalike_source

from .charts import accuracy_figure
from .identity import may
from .models.shared import ErrorSetting, accuracy_answer, expected_error, fmt_epsilon, preview_answer, preview_band
from .not_private import NOT_PRIVATE
from .page import set_url

#: What to do on private data before a recorded draw: the one sentence shown instead of a number.
DRAW_FIRST = ("No accuracy preview yet: on private data it is computed from a recorded draw. Draw once: the preview "
              "is then computed from that release at no extra cost.")

#: Releases whose only output is centres (DPLloyd, zCDP-Lloyd, DPM) carry no picture of the data's shape.
NO_SYNOPSIS = ("No accuracy preview yet: this algorithm releases only centres, and no recorded release of this data "
               "holds a synopsis to simulate on. The button below draws a look-alike for previews: a sanitized "
               "database of this data at {share:.0%} of this draw's ε (ε = {eps:g}), recorded in its account as a "
               "release of its own. Every later preview on this data is computed from it at no further cost. A "
               "recorded EUGkM or Hybrid draw serves too, as a rough guide: previews on a grid are not checked "
               "against real draws.")

#: The share of a centres-only draw's ε its look-alike for previews (a sanitized database) is drawn at, on a
#: click.  Checked in tests/test_preview.py: the previews of DPLloyd, zCDP-Lloyd, DPM and the other centres-only
#: algorithms whose classes declare ``preview_checked`` (dpcore.evaluation.preview.checked_keys), on a
#: sanitized database at ε/10, cover 77–100 % of real draws on taxi, Gowalla (person level) and an upload
#: (benchmarks/results/preview_coverage.txt).
LOOKALIKE_SHARE = 0.1

#: What the look-alike for previews is: the sanitized point synopsis (dpcore.algorithms.sanitize, PrivTree).
LOOKALIKE_ALGORITHM = "sanitize"

def _unit(ds) -> tuple[bool, str]:
    geo = bool(getattr(ds, "geo", False)) and len(ds.columns) == 2
    return geo, ("m" if geo else "data units")


def error_setting(ds, fp: str, algorithm: str, k: int, params: dict):
    """The expected-error setting of a page's draw on data it may simulate on (public data, the owner's raw data),
    and the rows to simulate on (called only when the shared cache does not hold the simulation).

    At the page's unit, as a draw (:func:`ui.data_picker.unit_params`: at person level the data set's real
    persons, bounded to L rows each; issue 56).  The parameters are the estimator's full set
    (``get_params``), so the Explorer (which passes its algorithm settings) and Compare (which passes none)
    name one setting and share one simulation (issue 65, point 5).

    Returns
    -------
    (ErrorSetting, callable () -> (X, privacy_id or None, reference centres))
        The reference is the one the pages draw beside a release (:func:`ui.releases.reference_centres`).
    """
    from .data_picker import unit_params
    from .releases import reference_centres
    geo, _ = _unit(ds)
    unit = unit_params(ds, algorithm)
    cls = releasable(algorithm)
    p = {name: v for name, v in cls(**{**params, **unit}).get_params(deep=False).items()
         if name not in ("n_clusters", "epsilon", "bounds", "random_state")}
    d = ds.X.shape[1]
    lower, upper = (tuple(np.broadcast_to(np.asarray(b, dtype=float), (d,)).tolist()) for b in ds.bounds)
    public = bool(getattr(ds, "public", False))
    setting = ErrorSetting(f"data:{ds.name}:{fp}", algorithm, int(k), tuple(sorted(p.items())), lower, upper, geo,
                           "this public data" if public else "raw data", public=public)
    return setting, (lambda: (ds.X, ds.units if unit else None, reference_centres(ds, fp, k)))


def recorded(fit) -> bool:
    """True for a draw the store recorded (a :class:`~dpcore.release.view.ReleasedFit`), not a preview fit."""
    return fit is not None and isinstance(getattr(fit, "release", None), dict) and not getattr(fit, "preview", False)


def _release_key(fit, shape=None) -> str:
    """Names a recorded draw (its settings, id and draw number) and the release its look-alike comes from."""
    return (f"{getattr(fit, 'key', None)}:{getattr(fit, 'release_id', None)}:{getattr(fit, 'draw', 1)}"
            f"|{getattr(shape, 'release_id', None)}")


@st.cache_data(show_spinner=False, max_entries=64)
def _answer_from_release(key: str, target: float, geo: bool, epsilons: tuple, setting: tuple, _release=None):
    """Cached :func:`epsilon_for_accuracy_from_release` for a setting not drawn yet, on the data's recorded synopsis."""
    algorithm, k, params = setting
    return epsilon_for_accuracy_from_release(_release, target, algorithm=algorithm, n_clusters=k,
                                             params=dict(params) or None, geo=geo, epsilons=epsilons)


def lookalike_for(ds, fit):
    """The recorded release whose synopsis previews the recorded draw ``fit`` (None if there is none).

    Its own synopsis, else the recorded release of the same data (the store's) that holds one, with
    the same bounds and unit: the same L first, then a sanitized database, then the largest ε
    (:func:`dpcore.evaluation.lookalike_source`).
    """
    from .releases import recorded_releases
    return lookalike_source(fit, recorded_releases(ds))


def lookalike_offer(ds, fp: str, fit, *, where=None, key: str = "lookalike") -> None:
    """No synopsis of this data yet to preview a centres-only draw on: say so and offer the look-alike draw.

    The look-alike for previews is a sanitized database (:data:`LOOKALIKE_ALGORITHM`) at
    :data:`LOOKALIKE_SHARE` of the draw's ε and at the page's privacy unit (bounded as the draw), drawn only when the
    button is pressed, and recorded in the data's account before anything is computed from it
    (:func:`ui.releases.private_releases`: the cap, the role and reserve-before-reveal apply).
    """
    from .draws import button_for
    from .releases import private_releases
    where = where or st
    eps = float(fmt_epsilon(LOOKALIKE_SHARE * float(fit.release['privacy']['epsilon'])))
    where.caption(NO_SYNOPSIS.format(share=LOOKALIKE_SHARE, eps=eps).replace("%", " %"))
    # The button's cost and whether it fits under the total, from the draw's model (issue 65).
    button = button_for(ds, LOOKALIKE_ALGORITHM, {"epsilon": eps}, what="Draw a look-alike for previews")
    if where.button(button.label, key=key, disabled=not button.enabled,
                    help="A sanitized database of this data (PrivTree), recorded in its account as a release of its "
                         "own. Only its noisy synopsis is used for previews: post-processing, no further ε."):
        # Bounded as the draw it previews (weighted or sampled persons: lookalike_source prefers the same).
        how = (fit.release.get("privacy_unit") or {}).get("bounding")
        private_releases(ds, fp, LOOKALIKE_ALGORITHM, [eps], who="Look-alike for previews",
                         **({"contribution_bounding": how} if how else {}))
        st.rerun()
    if not button.enabled and button.why_not:
        where.caption(f"Cannot be drawn now: {button.why_not}")


def lookalike_words(shape, max_contributions: int | None) -> str:
    """Where a curve on a recorded release's synopsis was simulated, in words (the page's caption)."""
    kind = "sanitized database" if shape.release["algorithm"]["key"] == "sanitize" else "release"
    who = f", persons of at most {max_contributions} rows" if max_contributions else ""
    return (f"points drawn from the synopsis of release #{shape.release_id} (a recorded {kind} of this data at "
            f"ε = {fmt_epsilon(shape.release['privacy']['epsilon'])}), at its noisy size{who}; post-processing, it "
            "costs no ε")


def expected_error_caption(ds, fp, algorithm: str, k: int, eps: float, params: dict, *, fit=None, where=None) -> None:
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
            return
        shape = lookalike_for(ds, fit)
        if shape is None:
            lookalike_offer(ds, fp, fit, where=where, key="lookalike_explorer")
            return
        try:
            with where.spinner("Running… simulating releases from a recorded synopsis for the expected error"):
                pv = preview_band(fit, shape if shape.release is not fit.release else fit, float(eps), geo=geo)
        except ValueError as err:    # e.g. a noisy size below k: say why there is no figure
            where.caption(f"No expected error for this draw: {err}.")
        else:
            where.caption(pv.sentence())
        return
    setting, points = error_setting(ds, fp, algorithm, k, params)
    with where.spinner("Running… simulating releases for the expected error"):
        band = expected_error(setting, float(eps), points)     # the one simulation Compare's chart shows too
    where.caption(band.sentence())


def _source_fit(ds, fits):
    """The recorded draw an answer on private data is simulated from, and its look-alike release.

    The draw: the recorded one with the largest ε (least noise).  Its look-alike: :func:`lookalike_for`
    (its own synopsis, else another recorded release of the same data).  Without a recorded draw among
    ``fits``: ``(None, look-alike)``, the largest-ε recorded synopsis of the data at the page's bounds
    and unit (the page's setting is simulated on it), or ``(None, None)`` when there is none.
    ``(draw, None)`` when the draw has no synopsis and none of the data is recorded yet.
    """
    cands = [f for f in fits if recorded(f)]
    if not cands:
        from .curves import curve_lookalike
        return None, curve_lookalike(ds)
    fit = max(cands, key=lambda f: float(f.release["privacy"]["epsilon"]))
    return fit, lookalike_for(ds, fit)


def accuracy_section(ds, fp, algorithm: str, k: int, params: dict, *, fits=()) -> None:
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
        on_raw = c2.checkbox("Simulate on the raw data (not private)", key="acc_raw",   # whole in a column at 1280 px
                             help=f"Computed on the data ({NOT_PRIVATE}), so shown to the data owner only.")
    source, shape = (None, None) if public or on_raw else _source_fit(ds, fits)
    if not public and not on_raw and shape is None:
        if source is None:
            st.info("No answer yet: on private data it is simulated from a recorded draw. Draw the panels above (or "
                    "once on the Explorer): the answer is then computed from that release at no extra cost.")
        else:
            lookalike_offer(ds, fp, source, key="lookalike_compare")
        return
    private = not public and not on_raw
    own = private and source is not None and shape.release is source.release
    setting = source if source is not None else shape       # whose privacy unit the simulations take
    punit = (setting.release.get("privacy_unit") or {}) if private else {}
    where = ("this public data" if public else "the raw data" if on_raw else
             lookalike_words(shape, punit.get("max_contributions") if punit.get("person_level") else None)
             + (f", for the setting of the recorded draw at ε = {fmt_epsilon(source.release['privacy']['epsilon'])}"
                if source is not None else
                f", for this page's setting ({releasable(algorithm).display_name or algorithm}, k = {k}; none of its "
                "draws is recorded yet)"))
    if not st.button("Find the smallest ε", key="acc_go"):
        st.caption("Answers with the smallest ε whose simulated releases put the centres within your error in 90 % "
                   f"of cases, and the error band at every ε, simulated on {where}.")
        return
    try:
        with st.spinner("Running… simulating releases at each ε"):
            if not private:     # public data, or the owner's raw data: the simulations under every draw
                setting, points = error_setting(ds, fp, algorithm, k, params)
                ans = accuracy_answer(setting, float(target), points, epsilons=tuple(ACCURACY_EPSILONS))
            elif source is None:     # the page's setting on the data's recorded synopsis
                ans = _answer_from_release(_release_key(shape), float(target), geo, tuple(ACCURACY_EPSILONS),
                                           (algorithm, int(k), tuple(sorted(params.items()))), _release=shape)
            else:                    # the previews under the recorded draw, at every ε
                ans = preview_answer(source, source if own else shape, float(target), geo=geo,
                                     epsilons=tuple(ACCURACY_EPSILONS))
    except ValueError as err:     # e.g. a recorded draw whose noisy size is below k
        st.warning(f"No answer from {where}: {err}.")
        return
    (st.success if ans.epsilon is not None else st.warning)(ans.sentence())
    if private:
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
    st.button(f"Use ε = {fmt_epsilon(ans.epsilon)}", key="acc_use", on_click=_use, args=(ans.epsilon,))


def _use(epsilon: float) -> None:
    """Button callback: the answer becomes the ε of every page (the slider's state and the shared setting)."""
    st.session_state["epsilon"] = float(epsilon)
    set_url(epsilon=float(epsilon))
