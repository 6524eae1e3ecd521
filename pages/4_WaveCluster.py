"""WaveCluster: private grid clusters of any shape beside the non-private result (Chen, Yu & Chirkova 2015)."""
import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import datasets
from dpcore.explain import level_for
from dpcore.glossary import help_for
from dpcore.metrics.wavecluster import classification_measures, f_measure, train_test_indices, ud
from ui import figures as F
from ui import widgets as W
from ui.models import wavecluster as WM

WAVELETS = ["haar", "bior2.2", "bior1.3", "db2", "sym4", "coif1"]
MAX_COLUMNS = 3   # a grid of num_grid^d cells: beyond 3 columns it no longer fits in memory nor shows anything

MAP_HEIGHT, MAP_WIDTH = 560, 420   # px; each map's zoom fits the public box into this (narrowest) size

W.page_setup(__file__)
st.title("WaveCluster: clusters of any shape")
st.caption("Two maps of dense areas: the data box is cut into grid cells, a wavelet transform smooths the cell "
           "counts, the densest cells are kept and touching dense cells form one cluster (one colour each). "
           "Left: a private release at the chosen ε. Right: the same settings without privacy.")

ds, fp = W.dataset_picker(default=datasets.TAXI_SAMPLE_NAME)
if ds is None:
    st.stop()
if ds.X.shape[1] > MAX_COLUMNS:
    # Say what this page needs and offer what can be done, instead of a grid of num_grid^784 cells (issue 56).
    st.info(f"WaveCluster cuts the data box into a grid, so it needs at most {MAX_COLUMNS} columns; *{ds.title}* "
            f"has {ds.X.shape[1]}. Nothing was drawn. Its clusters are shown on the High dimensional page "
            "(centres as images), or choose a data set with 2 columns here.")
    if st.session_state.get("_dp_routed"):     # the router's page list exists (not when run on its own)
        st.page_link("pages/5_High_dimensional.py", label="Open High dimensional with this data", icon="➡️")
    st.stop()
algorithm = W.algorithm_picker(family="grid clusters", default="privthr", ds=ds)
# Everything from ε on is one fragment (issue 56), as on the Explorer: an ε, grid or wavelet move (or a draw)
# reruns this part only, not the data picker and algorithm above it.  Its sidebar controls stay in the
# sidebar (a fragment may write there once the full run has written to it).
@st.fragment
def grid_part():
    eps = W.epsilon_slider(ds=ds)
    W.sidebar_total(ds)
    side = st.sidebar
    # The grid settings the result is computed with are the ones the sliders show (issue 65, point 1): the model
    # decides both, and a data set's defaults are written into the sliders before they are drawn.
    state, qp = st.session_state, st.query_params
    default = WM.grid_defaults(ds.name)
    url = ((qp.get("num_grid", default[0]), qp.get("density", default[1]))
           if "num_grid" in qp or "density" in qp else None)
    g = WM.grid_settings(ds.name, last_dataset=state.get("_wc_grid_for"),
                         shown=(state["num_grid"], state["density"]) if "num_grid" in state and "density" in state
                         else None, url=url)
    state["_wc_grid_for"] = ds.name
    if g.changed:       # another data set: its own defaults, not the last one's URL values
        for key in ("num_grid", "density"):
            if key in qp:
                del qp[key]
    if g.set_widgets:
        state["num_grid"], state["density"] = g.num_grid, g.density
    num_grid = int(side.slider("Grid cells per side (num_grid)", *WM.GRID_RANGE, step=2, key="num_grid",
                               help="The data box is cut into num_grid × num_grid cells. More cells: "
                                    "finer shapes, but fewer points per cell, so noise matters more."))
    density = int(side.slider("Density threshold (%)", *WM.DENSITY_RANGE, key="density",
                              help="This share of the non-empty transformed cells is called noise; the rest are "
                                   "dense."))
    wavelet = side.selectbox("Wavelet", WAVELETS, key="wavelet",
                             help="Haar is the paper's choice. Other wavelets spread one cell over several "
                                  "transformed values, so the private threshold steps need more noise.")
    grid = dict(num_grid=num_grid, density_threshold=density / 100, wavelet=wavelet)   # the non-private one's too
    with side:
        params = dict(grid, **W.algorithm_settings(algorithm))   # + the controls its class declares (its budget split)
    W.set_url(dataset=ds.name, algorithm=algorithm, epsilon=eps, num_grid=num_grid, density=density)

    n, d = ds.X.shape
    ws = W.working_set(ds, algorithm=algorithm, epsilon=eps)
    st.markdown(ws.headline())
    if ds.bounds is None:
        st.warning(W.NO_BOUNDS)

    est = W.private_release(ds, fp, algorithm, who="WaveCluster", epsilon=eps, **params)
    sees_raw = W.sees_raw(ds)   # the non-private grid and the measures compare with the raw data
    base = (W.baseline(ds, fp, "wavecluster", epsilon=None, **grid)
            if sees_raw else None)
    name = dpcore.ALGORITHMS[algorithm].display_name

    view, measures = st.container(), st.container()   # maps first, full width; the measures under them
    with view:
        if d != 2:
            st.info(f"The grid view draws two columns; this data has {d}. The measures below still apply.")
        else:
            left, right = st.columns(2)
            sides = [("private", left, est, WM.private_title(name, eps, level_for(eps).name))]
            if sees_raw:
                sides.append(("baseline", right, base, f"Non-private ({F.NOT_PRIVATE})"))
            else:
                right.caption(W.OWNER_ONLY)
            # Keys: the two sides can draw identical grids (same labels), which Streamlit would take for one element.
            for side, col, e, title in sides:
                with col:
                    st.markdown(f"**{title}**")
                    syn = e.synopsis_
                    if ds.geo:
                        st.pydeck_chart(F.map_deck(bounds=(e.bounds_.lower, e.bounds_.upper), synopsis_edges=syn.edges,
                                                   synopsis_counts=syn.values, cell_labels=syn.labels,
                                                   height=MAP_HEIGHT, width=MAP_WIDTH), height=MAP_HEIGHT,
                                        key=f"map-{side}")
                    else:
                        st.plotly_chart(F.label_grid_figure(edges=syn.edges, labels=syn.labels, columns=ds.columns[:2],
                                                            height=420), width="stretch", key=f"grid-{side}")
            st.caption("Each colour is one cluster of dense cells (colours repeat after ten clusters); "
                       "blank cells are noise. Colours are not matched between the two sides.")


    def show_measures():
        """How close the private result is to the non-private one: every figure compares with the raw data."""
        st.subheader("How close is the private result?")
        c1, c2, c3 = st.columns([1, 1, 2], gap="medium")
        c1.metric("Clusters, private", est.n_clusters_)
        c2.metric("Clusters, non-private", base.n_clusters_)
        c1.metric("Dense cells, private", est.n_significant_)
        c2.metric("Dense cells, non-private", base.n_significant_)
        # Held-out points for the classifier measures (the paper's 90 / 10 split); seed 0, not private randomness.
        tr, te = train_test_indices(n, np.random.default_rng(0))
        with W.friendly_errors("The measures"):
            # The refit on 90 % of the rows draws its own fresh noise (never the release's): kept, not shown.
            est_tr = W.private_refit(est, ds, fp, tr, algorithm, epsilon=eps, **params)
            base_tr = W.baseline(W.rows_subset(ds, tr, "train90"), fp, "wavecluster", epsilon=None, **grid)
            cm = classification_measures(ds.X[te], base_tr, est_tr)
            table = pd.DataFrame({
                "measure": ["UD", "DCOM", "DC2E", "F-measure"],
                "value": [ud(base.synopsis_.labels, est.synopsis_.labels), cm["DCOM"], cm["DC2E"],
                          f_measure(base.labels_, est.predict(ds.X))],
                "best": [0, 0, 0, 1],
            })
        c3.dataframe(table.round(3), hide_index=True, width="stretch",
                     column_config={"measure": st.column_config.TextColumn("measure", help=help_for("DCOM"))})
        c3.caption(WM.measures_caption(ws, W.unit_phrase(ds)))


    with measures:
        if sees_raw and W.teach_toggle(ds):   # public data only: compares with the non-private grid
            st.info(WM.teach_sentence(eps, (est.n_significant_, est.n_clusters_),
                                      (base.n_significant_, base.n_clusters_)), icon="🎓")
        if sees_raw:
            show_measures()
        else:
            c1, c2 = st.columns(2)
            c1.metric("Clusters, private", est.n_clusters_)
            c2.metric("Dense cells, private", est.n_significant_)
        st.subheader("Privacy budget")
        W.show_ledger(est)
        W.draw_controls(est, ds)
        W.account_caption(ds, fit=est)

    W.raw_facts(ds, fit=est)


grid_part()
