"""Private coresets (Feldman et al. 2017, §6 / Figure 8): the coreset, private and non-private centres on a map."""
import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st

import dpcore
from dpcore import datasets
from dpcore.algorithms.coreset.plan import min_feasible_epsilon, plan_coreset
from dpcore.evaluation import noise_effect
from dpcore.glossary import help_for
from ui import figures as F
from ui import sanitized as S
from ui import widgets as W
from ui.models import coresets as CM

MAP_HEIGHT = 700   # px; the map's zoom fits the public box into this height

W.page_setup(__file__)
st.title("Private coresets")
st.caption("PRIVATE-K-MEAN (Feldman, Xiang, Zhu, Rus 2017): a few weighted points, each the private centre of "
           "a small ball of data, are published instead of the data; k-means then runs on them. Stronger "
           "privacy means fewer coreset points, and fewer of them in sparse areas.")

ds, fp = W.dataset_picker(geo_only=True, default=datasets.TAXI_SAMPLE_NAME)
if ds is None:
    st.stop()
k = int(st.sidebar.number_input("Number of clusters k", min_value=1, max_value=50,
                                value=W.url_default("k", 5, int, valid=lambda v: 1 <= v <= 50), key="k"))


# Everything from ε on is one fragment (issue 56): an ε move (or a draw) reruns this part only, not the data
# picker above it.  Its sidebar controls stay in the sidebar (a fragment may write there).
@st.fragment
def coreset_part():
    eps = W.epsilon_slider(default=2.0, ds=ds)
    DELTA = W.delta_input(1e-8)   # the working set's δ (issue 56)
    W.sidebar_total(ds)
    budget = st.sidebar.selectbox("Budget per round", list(CM.BUDGETS), format_func=CM.BUDGETS.get, key="budget",
                                  help=CM.BUDGET_HELP)
    constants = st.sidebar.selectbox("Constants (Δ, t_min)", list(CM.CONSTANTS), format_func=CM.CONSTANTS.get,
                                     key="constants", help=CM.CONSTANTS_HELP)
    W.set_url(dataset=ds.name, k=k, epsilon=eps, delta=DELTA)
    coreset = dict(n_clusters=k, delta=DELTA, budget=budget, constants=constants)
    # Both draws asked for with a press are made first, before this page shows any total, so that every total on
    # it includes them (issue 65, point 4: the sidebar said 1 while the coreset's panel said 0).
    W.draw_requested(ds, fp, "coreset", eps, who="Private coresets", **coreset)
    W.draw_requested(ds, fp, S.ALGORITHM, eps, who=S.WHO)

    n, d = ds.X.shape
    ws = W.working_set(ds, algorithm="coreset", k=k, epsilon=eps, delta=DELTA)
    st.markdown(CM.headline(ws), help=help_for("δ", "coreset"))
    if ds.bounds is None:
        st.warning(W.NO_BOUNDS)

    sees_raw = W.sees_raw(ds)   # the non-private centres and the error figures are computed on the raw data
    # Feldman et al.'s Figure 8 (issue 57): every level side by side, above the draws but filled after them, so that
    # a draw made below in this run shows at its level at once.
    levels_slot = st.container()
    st.subheader(f"PRIVATE-K-MEAN's coreset at ε = {W.fmt_epsilon(eps)}")
    # Public data: its size is public too, so whether PRIVATE-K-MEAN can run at the ε chosen for every page is
    # known before any draw. The page never changes ε silently: it says so and offers the smallest ε that works.
    need = (min_feasible_epsilon(n, k, d, DELTA, n_share=dpcore.ALGORITHMS["coreset"]().n_share, budget=budget,
                                 constants=constants) if W.is_public(ds) else None)
    can = CM.feasibility(ws, need, W.EPSILON_VALUES)
    feasible = can.ok
    if not can.ok:
        st.warning(can.warning)
        if can.suggest is not None:
            st.button(f"Use ε = {W.fmt_epsilon(can.suggest)}", key="use_feasible_epsilon", type="primary",
                      on_click=lambda: st.session_state.update(epsilon=can.suggest))

    # draw_on_click rather than private_release: a coreset not drawn yet (or refused) must not stop the page, so that
    # the sanitized database below stays offered.
    fits = W.draw_on_click(ds, fp, "coreset", eps, who="Private coresets", **coreset) if feasible else None
    est = fits[0] if fits else None
    if est is not None:
        regime = getattr(est, "regime_", None)
        if regime is not None and not regime.ok:
            st.warning(f"Outside the paper's regime for these inputs: {regime.reason}")
        base_centers = W.kmeans_reference(ds, fp, k).cluster_centers_ if sees_raw else None
        syn = est.synopsis_
        bounds = (est.bounds_.lower, est.bounds_.upper)

        view, side = st.columns([2, 1], gap="medium")
        with view:
            if ds.geo and d == 2:
                st.pydeck_chart(F.map_deck(bounds=bounds, private_centers=est.cluster_centers_,
                                           baseline_centers=base_centers, coreset_points=syn.points,
                                           coreset_weights=syn.weights,
                                           private_sizes=F.noisy_cluster_sizes(est.cluster_centers_, syn),
                                           height=MAP_HEIGHT),
                                height=MAP_HEIGHT)
                st.caption(CM.map_caption(sees_raw))
            else:
                st.plotly_chart(F.scatter_figure(columns=ds.columns[:2], bounds=(bounds[0][:2], bounds[1][:2]),
                                                 private_centers=est.cluster_centers_[:, :2],
                                                 baseline_centers=None if base_centers is None else base_centers[:, :2]),
                                width="stretch")
        if not sees_raw:
            view.caption(W.OWNER_ONLY)
        elif W.teach_toggle(ds):     # public data only: compares with the non-private centres
            view.info(noise_effect(est, base_centers, geo=ws.geo), icon="🎓")
        with side:
            st.metric("Coreset size", f"{est.coreset_size_} points", help="One point per SMALL-BALL round.")
            W.show_ledger(est)
            W.draw_controls(est, ds)
            W.account_caption(ds, fit=est)
            if est.release_id is not None:   # a recorded release: downloading it is publishing what was recorded
                st.download_button("Download the coreset (CSV)",
                                   W.csv_bytes(pd.DataFrame(np.c_[syn.points, syn.weights],
                                                            columns=[*ds.columns, "weight"])),
                                   file_name=CM.coreset_file(ws, est.release_id), mime="text/csv", key="dl_coreset")

    # Beside the coreset, the sanitized database at the same ε (issue 57): its own Draw, never on opening; then the
    # levels above, now that this run's draws are made.
    if ds.bounds is not None:
        public_box = tuple(np.broadcast_to(np.asarray(b, dtype=float), (d,)) for b in ds.bounds)
        S.section(ds, fp, eps, k, bounds=public_box, sees_raw=sees_raw, height=MAP_HEIGHT)
        # On demand (issue 56, speed): eight fits and eight panels of points took most of the page's first render
        # (~3 s of fits on a cold server, ~10 s of drawing in the browser); the expander computes them when opened.
        levels = levels_slot.expander("Every level side by side: the points at ε = "
                                      + ", ".join(f"{e:g}" for e in S.LEVELS) + " (Feldman et al. 2017, Figure 8)",
                                      key="levels_open", on_change="rerun")
        if levels.open:
            with levels:
                S.levels_section(ds, fp, k, dict(delta=DELTA, budget=budget, constants=constants), bounds=public_box,
                                 sees_raw=sees_raw)
    elif est is not None:
        S.section(ds, fp, eps, k, bounds=(est.bounds_.lower, est.bounds_.upper), sees_raw=sees_raw, height=MAP_HEIGHT)

    if est is None:
        st.stop()     # the raw facts below describe a coreset draw
    # Planning from the true number of rows: a raw fact, so it lives in the raw-facts panel (the owner's only).
    if sees_raw:
        levels = W.EPSILON_VALUES
        sizes = [plan_coreset(n, k, d, e * 0.98, DELTA, budget=budget, constants=constants).n_rounds for e in levels]
        need = min_feasible_epsilon(n, k, d, DELTA, n_share=0.02, budget=budget, constants=constants)
        facts = W.raw_facts(ds, fit=est, lines=[
            f"Coreset size planned at each privacy level from the true number of rows (below; the release itself plans "
            f"from a noisy count). Below ε ≈ {need:.3g} no round can run with k = {k} (Table 2 of the paper)."])
        if facts.open:     # a chart in a closed panel would still load and draw plotly on the first screen
            fig = px.line(pd.DataFrame({"ε": levels, "coreset points": sizes}), x="ε", y="coreset points",
                          markers=True, log_x=True, title="Planned coreset size (true number of rows: not private)")
            fig.add_vline(x=eps, line_dash="dot")
            facts.plotly_chart(fig, width="stretch")


coreset_part()
