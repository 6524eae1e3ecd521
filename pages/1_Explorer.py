"""Explorer: one private k-means release on a map or scatter plot, beside non-private k-means."""
import numpy as np
import streamlit as st

from dpcore.evaluation import noise_effect
from dpcore.glossary import help_for
from dpcore.metrics import relative_error
from ui import figures as F
from ui import sanitized as S
from ui import widgets as W

MAP_HEIGHT = 700   # px; the map's zoom fits the public box into this height
DENSITY_CELLS = 200   # per side: the exact-density overlay of a large source whose release has no grid

W.page_setup(__file__)
st.title("Private k-means explorer")
st.caption("One private k-means release at the privacy level chosen in the sidebar, drawn over the non-private "
           "result: how far the private centres (orange) move from the non-private ones (blue rings), and what "
           "the published noisy data look like. Pick data, an algorithm, k and ε in the sidebar.")

ds, fp, algorithm, k, _ = W.release_controls(allow_large=True, epsilon=False)


# Everything from ε on is one fragment (issue 56): an ε move (or a draw) reruns this part only, not the data
# picker and the controls above it.  ε stays in the sidebar (a fragment may write there), shared by every page.
@st.fragment
def release_part():
    eps = W.epsilon_controls(ds, algorithm, k)
    publication = S.input_choice(ds)   # "analyse a publication" (issue 57): post-processing, nothing drawn
    if publication is not None:
        S.analyse_publication(ds, fp, publication, k, height=MAP_HEIGHT)
        st.stop()
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
    st.markdown(f"**{ds.title}** · {W.columns_words(ds)}")
    if ds.bounds is None:
        st.warning("No public bounds: the domain is read from the data, so this release is NOT private for the "
                   "extreme records. Enter public bounds in the sidebar to fix that.")

    est = W.private_release(ds, fp, algorithm, who="Explorer", n_clusters=k, epsilon=eps, **extra)
    bounds = (est.bounds_.lower, est.bounds_.upper)
    syn = est.synopsis_ if getattr(est.synopsis_, "kind", None) == "grid" else None
    raw = ds.X[np.random.default_rng(0).permutation(ds.X.shape[0])[:20_000]] if show_raw and not large else None
    cells, cell_label = (syn.edges, syn.counts) if syn else (None, None), "noisy count"
    if show_raw and large and d == 2:
        # The non-private overlay of a large source: exact counts on the release's grid (or a fine one).
        edges = syn.edges if syn else [np.linspace(bounds[0][j], bounds[1][j], DENSITY_CELLS + 1) for j in range(2)]
        cells = edges, W.exact_density(ds, fp, bounds, [len(e) - 1 for e in edges])
        cell_label = "exact count (not private)"

    view, side = st.columns([2, 1], gap="medium")
    view_slot = view.empty()


    def draw_view(baseline_centers):
        """The map or scatter plot of the release, with the non-private centres once they are known."""
        with view_slot.container():
            if ds.geo and d == 2:
                sizes = F.noisy_cluster_sizes(est.cluster_centers_, est.synopsis_)
                st.pydeck_chart(F.map_deck(bounds=bounds, private_centers=est.cluster_centers_,
                                           baseline_centers=baseline_centers,
                                           synopsis_edges=cells[0], synopsis_counts=cells[1], raw_points=raw,
                                           private_sizes=sizes, height=MAP_HEIGHT, synopsis_label=cell_label),
                                height=MAP_HEIGHT)
                # Say only what the hover shows: a release without a synopsis has no cells and no noisy
                # sizes (zCDP-Lloyd, DPM, or auto choosing one of them).
                hover = ([f"a cell for its {cell_label}"] if cells[1] is not None else []) + [
                    "a private centre for its coordinates" + (" and noisy size" if sizes is not None else "")]
                st.caption("● private centres · "
                           + ("○ non-private centres (not private: for the data owner's eyes only) · "
                              if baseline_centers is not None else "")
                           + "grey outline: the public bounds"
                           + (" · cells: the EXACT density of the data on the same grid: NOT private, for the data "
                              "owner's eyes only" if cell_label != "noisy count"
                              else " · cells: the noisy grid synopsis the algorithm published" if syn else "")
                           + ". Hover " + ", ".join(hover) + ".")
                if cells[1] is not None:
                    st.html(F.count_legend_html(F.count_scale(cells[1]), label=f"{cell_label} per cell",
                                                signed=cell_label == "noisy count"))
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
            base = W.baseline(ds, fp, "kmeans", n_clusters=k, epsilon=None, random_state=0)
        draw_view(base.cluster_centers_)
    if teach:
        truth = np.histogramdd(ds.X, bins=syn.edges)[0] if syn is not None else None   # public data: exact counts
        view.info(noise_effect(est, base.cluster_centers_, true_counts=truth), icon="🎓")

    with side:
        st.subheader("Utility")
        if sees_raw:
            nicv_p = W.data_nicv(ds, fp, est.cluster_centers_, bounds)
            nicv_b = W.data_nicv(ds, fp, base.cluster_centers_, bounds)   # cached: not recomputed when ε changes
            c1 = c2 = st.container()
            # NICV of the baseline is 0 when k reaches the number of distinct points: no relative figure then.
            c1.metric("NICV, private", f"{nicv_p:.4g}",
                      f"{relative_error(nicv_p, nicv_b):+.1%} vs non-private" if nicv_b > 0 else None,
                      delta_color="inverse", help=help_for("NICV"))
            c2.metric("NICV, non-private", f"{nicv_b:.4g}")
            st.caption("NICV (Su et al. 2016, Eq. 1) on the [-1, 1]-normalised domain; lower is better. Both figures "
                       "are computed on the raw data: not private, for the data owner's eyes only.")
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
        W.publish_buttons(est, ds, stem=f"{algorithm}_eps{eps:g}")

    W.raw_facts(ds, fit=est)


release_part()
