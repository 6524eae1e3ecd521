"""Explorer: one private k-means release on a map or scatter plot, beside non-private k-means."""
import numpy as np
import streamlit as st

from dpcore.evaluation import noise_effect
from ui import figures as F
from ui import sanitized as S
from ui import widgets as W
from ui.models import explorer as M

MAP_HEIGHT = 700   # px; the map's zoom fits the public box into this height
DENSITY_CELLS = 200   # per side: the exact-density overlay of a large source whose release has no grid

W.page_setup(__file__)
st.title("Private k-means explorer")
st.caption("One private k-means release at the privacy level chosen in the sidebar, drawn over the non-private "
           "result: how far the private centres (orange) move from the non-private ones (blue rings), and what "
           "the published noisy data look like. Pick data, an algorithm, k and ε in the sidebar.")

# The input before the algorithm (issue 65): analysing a publication reads only k, so the algorithm and ε go.
ds, fp, algorithm, k, publication = W.analysis_controls(allow_large=True)


# Everything from ε on is one fragment (issue 56): an ε move (or a draw) reruns this part only, not the data
# picker and the controls above it.  ε stays in the sidebar (a fragment may write there), shared by every page.
@st.fragment
def release_part():
    if publication is not None:   # "analyse a publication" (issue 57): post-processing, nothing drawn
        S.analyse_publication(ds, fp, publication, k, height=MAP_HEIGHT)
        return
    eps = W.epsilon_controls(ds, algorithm, k)
    large = W.is_large(ds)   # rows where they lie (DuckDB, Spark, a database): never drawn, never loaded
    sees_raw = W.sees_raw(ds)   # the data owner, or public data: the non-private comparison may be shown
    extra = {}
    with st.sidebar.expander("Algorithm settings"):
        extra.update(W.algorithm_settings(algorithm))   # the controls the algorithm's class declares
        if not sees_raw:
            show_raw = False
        elif large:
            show_raw = st.checkbox("Show the exact density instead of the noisy grid (not private)", value=False,
                                   key="show_raw", help="Too many rows to draw: the same grid aggregate the release "
                                                        "uses, without noise. For the data owner's eyes only.")
        else:
            show_raw = st.checkbox("Show the raw points (not private)", value=False, key="show_raw")
    # Teaching mode (issue 31), on data that is already public only: the true points beneath the centres and
    # one sentence on what the noise did.  Both compare with the raw data, which is fine only for public data.
    teach = W.teach_toggle(ds)
    show_raw = show_raw or teach
    W.set_url(dataset=ds.name, algorithm=algorithm, k=k, epsilon=eps)

    d = ds.X.shape[1]
    ws = W.working_set(ds, algorithm=algorithm, k=k, epsilon=eps)
    st.markdown(ws.headline())
    if not ws.bounded:
        st.warning(W.NO_BOUNDS)

    est = W.private_release(ds, fp, algorithm, who="Explorer", n_clusters=k, epsilon=eps, **extra)
    bounds = (est.bounds_.lower, est.bounds_.upper)
    syn = est.synopsis_ if getattr(est.synopsis_, "kind", None) == "grid" else None
    raw = ds.X[np.random.default_rng(0).permutation(ds.X.shape[0])[:20_000]] if show_raw and not large else None
    cells, cell_label = (syn.edges, syn.counts) if syn else (None, None), M.NOISY
    if show_raw and large and d == 2:
        # The non-private overlay of a large source: exact counts on the release's grid (or a fine one).
        edges = syn.edges if syn else [np.linspace(bounds[0][j], bounds[1][j], DENSITY_CELLS + 1) for j in range(2)]
        cells = edges, W.exact_density(ds, fp, bounds, [len(e) - 1 for e in edges])
        cell_label = M.EXACT

    view, side = st.columns([2, 1], gap="medium")
    view_slot = view.empty()


    def draw_view(baseline_centers):
        """The map or scatter plot of the release, with the non-private centres once they are known."""
        with view_slot.container():
            if ds.geo and d == 2:
                sizes = F.noisy_cluster_sizes(est.cluster_centers_, est.synopsis_)
                model = M.explorer_model(ws, cells=None if cells[1] is None else cell_label, synopsis=syn is not None,
                                         sizes=sizes is not None, baseline=baseline_centers is not None, nicv=None)
                st.pydeck_chart(F.map_deck(bounds=bounds, private_centers=est.cluster_centers_,
                                           baseline_centers=baseline_centers,
                                           synopsis_edges=cells[0], synopsis_counts=cells[1], raw_points=raw,
                                           private_sizes=sizes, height=MAP_HEIGHT, synopsis_label=cell_label),
                                height=MAP_HEIGHT)
                st.caption(model.map_caption)
                if model.legend is not None:
                    st.html(F.count_legend_html(F.count_scale(cells[1]), label=model.legend, signed=model.signed))
                return
            if d > 2:
                st.caption(f"Showing the first two of {d} columns; the High-dimensional page shows a PCA view.")
            # A single column is drawn as a strip along y = 0.
            two = (lambda a: a[:, :2]) if d > 1 else (lambda a: np.c_[a, np.zeros(len(a))])
            view_bounds = bounds if d > 1 else (np.r_[bounds[0], -1.0], np.r_[bounds[1], 1.0])
            st.plotly_chart(F.scatter_figure(columns=ds.columns[:2] if d > 1 else [ds.columns[0], ""], bounds=view_bounds,
                                             private_centers=two(est.cluster_centers_),
                                             baseline_centers=None if baseline_centers is None else two(baseline_centers),
                                             synopsis_edges=syn.edges if syn and d == 2 else None,
                                             synopsis_counts=syn.counts if syn and d == 2 else None,
                                             raw_points=two(raw) if raw is not None else None),
                            width="stretch")


    if large or not sees_raw:
        draw_view(None)   # on a large source the release is shown while the reference's passes run
    if sees_raw:
        with side:        # (their progress bars appear where the utility figures will be)
            base = W.kmeans_reference(ds, fp, k)
        draw_view(base.cluster_centers_)
    if teach:
        truth = np.histogramdd(ds.X, bins=syn.edges)[0] if syn is not None else None   # public data: exact counts
        view.info(noise_effect(est, base.cluster_centers_, true_counts=truth, geo=ws.geo), icon="🎓")

    nicv = None
    if sees_raw:       # computed on the raw data (cached): the owner's or public data's only
        nicv = (W.data_nicv(ds, fp, est.cluster_centers_, bounds), W.data_nicv(ds, fp, base.cluster_centers_, bounds))
    model = M.explorer_model(ws, cells=None, synopsis=syn is not None, sizes=False, baseline=sees_raw, nicv=nicv)
    with side:
        st.subheader("Utility")
        if model.utility:
            for m in model.utility:
                st.metric(m.label, m.value, m.delta, delta_color="inverse", help=m.help)
            st.caption(model.utility_caption)
        else:
            st.caption(W.OWNER_ONLY)
        if not large:
            W.expected_error_caption(ds, fp, algorithm, k, eps, extra, fit=est)
        if hasattr(est, "branch_"):
            st.info(f"Hybrid branch: {getattr(est, 'branch_reason_', est.branch_)}")
        st.subheader("Privacy budget")
        W.show_ledger(est)
        W.draw_controls(est, ds)
        W.account_caption(ds, fit=est)
        st.subheader("Publish")
        W.publish_buttons(est, ds, stem=model.stem)

    W.raw_facts(ds, fit=est)


release_part()
