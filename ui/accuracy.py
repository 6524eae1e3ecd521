"""ε from the accuracy you need, and every draw's expected error band (issue 31), in the app.

The library's :func:`dpcore.evaluation.epsilon_for_accuracy` simulates releases.  On a public
look-alike (public bounds, k and a public size) the answer is public and shown to everyone; on the
raw data it is not private and is offered to the data owner only (:func:`ui.identity.may`).  On
data that is already public the data themselves are the look-alike.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.evaluation import ACCURACY_EPSILONS, epsilon_for_accuracy
from dpcore.evaluation.accuracy import quantity

from .charts import accuracy_figure
from .data_picker import unit_params
from .identity import may
from .not_private import NOT_PRIVATE
from .page import set_url

#: The look-alike's public size when the person gives none.
DEFAULT_PUBLIC_N = 10_000


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


def expected_error_caption(ds, fp, algo: str, k: int, eps: float, params: dict, *, where=None) -> None:
    """Under a draw: the error band expected at this ε, in the units of the data (metres on a map)."""
    where = where or st
    if ds.bounds is None or ds.X.shape[1] < 1:
        return
    geo, unit = _unit(ds)
    with where.spinner("Simulating releases for the expected error…"):
        ans = _simulate(ds, fp, algo, k, params, 1.0, on_raw=False, n=DEFAULT_PUBLIC_N, epsilons=(float(eps),))
    if np.isnan(ans.band[0][1]):
        return
    lo, mid, hi = (quantity(v) for v in ans.band[0])
    lookalike = ans.source == "public look-alike"
    on = (ans.source if not lookalike else
          f"a public look-alike of {DEFAULT_PUBLIC_N:,} points (public bounds and k; costs no ε)")
    L = unit_params(ds).get("max_contributions")
    # Issue 56: on a 3,000-row upload this said 104–176 m where the draw was 1–26 km off. The look-alike
    # carries neither the data's shape nor its size, nor a person's L rows: say so beside the figure.
    caveat = (" A rough guide only: the look-alike carries neither this data's shape nor its size"
              + (f", nor the person-level sensitivity (up to L = {L} rows per person, so every noise scale "
                 f"here is up to {L}× larger)" if L else "")
              + ", so real draws can be much further off." if lookalike else "")
    where.caption(f"Expected error at ε = {eps:g}: the private centres sit {lo}–{hi} {unit} from the "
                  f"non-private ones in 80 % of releases (median {mid} {unit}; {ans.n_releases} simulated "
                  f"releases on {on}).{caveat}")


def accuracy_section(ds, fp, algo: str, k: int, params: dict) -> None:
    """Compare's "ε from the accuracy you need": a target in data units, the smallest ε that meets it."""
    st.subheader("ε from the accuracy you need")
    if ds.bounds is None:
        st.info("Enter public bounds first: the simulations start from them.")
        return
    geo, unit = _unit(ds)
    diag = float(np.linalg.norm(np.ravel(ds.bounds[1]) - np.ravel(ds.bounds[0])))
    c1, c2, c3 = st.columns(3)
    if geo:
        target = c1.number_input("Centres within (metres) of where they would be without privacy", 10.0, 50_000.0,
                                 300.0, step=50.0, key="acc_target")
    else:
        share = c1.number_input("Centres within this share of the domain's diagonal", 0.001, 1.0, 0.05,
                                step=0.01, format="%.3f", key="acc_share")
        target = share * diag
    n = int(c2.number_input("Public size of the look-alike (points)", 100, 1_000_000, DEFAULT_PUBLIC_N, step=1000,
                            key="acc_n", help="A public estimate, not the data's exact size (which is private)."))
    on_raw = False
    if may("raw") and not getattr(ds, "public", False):
        on_raw = c3.checkbox(f"Simulate on the raw data ({NOT_PRIVATE})", key="acc_raw",
                             help="More faithful; computed on the data, so shown to the data owner only.")
    if not st.button("Find the smallest ε", key="acc_go"):
        st.caption("Answers with the smallest ε whose simulated releases put the centres within your error in 90 % "
                   "of cases, and the error band at every ε. On a public look-alike it costs no ε.")
        return
    with st.spinner("Simulating releases at each ε…"):
        ans = _simulate(ds, fp, algo, k, params, target, on_raw=on_raw, n=n)
    (st.success if ans.epsilon is not None else st.warning)(ans.sentence())
    if ans.source == "raw data" and not getattr(ds, "public", False):
        st.caption(f"Simulated on the raw data: {NOT_PRIVATE}. Do not share this figure.")
    st.plotly_chart(accuracy_figure(ans), width="stretch", key="acc_fig")
    if ans.epsilon is None:
        return
    if ans.source == "raw data" and not getattr(ds, "public", False):
        # Issue 55: an ε read off the raw data changes with one person (its answer is not private), and a
        # release that carried it as its parameter would publish that choice under a guarantee that does
        # not cover it.  So it is not offered as the release's ε; the look-alike's answer is.
        st.caption("This ε was chosen on the raw data, so it is not offered as the releases' ε: the choice itself "
                   "depends on every person, and the guarantee does not cover it. Untick the raw-data box to get "
                   "the answer from the public look-alike (it costs no ε), or set ε yourself.")
        return
    st.button(f"Use ε = {ans.epsilon:g}", key="acc_use", on_click=_use, args=(ans.epsilon,))


def _use(epsilon: float) -> None:
    """Button callback: the answer becomes the ε of every page (the slider's state and the shared setting)."""
    st.session_state["epsilon"] = float(epsilon)
    set_url(epsilon=float(epsilon))
