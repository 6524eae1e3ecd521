"""High-dimensional data: zCDP-Lloyd (default) or Balcan et al./Edler, beside k-means++ and the trivial answer."""
import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from sklearn.decomposition import PCA

import dpcore
from dpcore.evaluation import noise_effect
from dpcore.glossary import help_for
from dpcore.metrics import inertia
from ui import figures as F
from ui import widgets as W
from ui.models import highdim as HM

IMAGE_WIDTH = 72   # px per centre picture: ten to a row in the main column at 1280 px (84 px gave nine)

W.page_setup(__file__)
st.title("High-dimensional clustering")
st.caption("k private centres of image-like data (many columns). Each centre is drawn as a picture, private beside "
           "non-private, and its quality is compared with the trivial answer: one centre at the data's mean, "
           "which a private release must beat to be worth publishing.")

ds, fp = W.dataset_picker(default="mnist_sample")
if ds is None:
    st.stop()
# The algorithm chosen on another page stays the working set's (issue 56): when it is not one for many
# columns, this page uses its own choice, says so, and leaves the other pages' algorithm alone.
# The algorithms for many columns: the classes that declare the ``high_dimensional`` tag.
highdim = [key for key, cls in dpcore.ALGORITHMS.items() if cls.high_dimensional and cls.private]
choice = HM.algorithm_choice(W.url_default("algorithm", None, str), highdim,
                             {k: c.display_name for k, c in dpcore.ALGORITHMS.items()})
own = choice.own
algorithm = st.sidebar.selectbox("Algorithm", highdim, index=highdim.index(choice.start),
                                 format_func=lambda a: dpcore.ALGORITHMS[a].display_name,
                                 key="algorithm" if own or choice.note is None else "hd_algorithm")
if choice.note:
    st.sidebar.caption(choice.note)
st.sidebar.caption(f"{dpcore.ALGORITHMS[algorithm].summary} *Source: {dpcore.ALGORITHMS[algorithm].reference}.*",
                   help=help_for("zCDP") if algorithm == "zcdp_lloyd" else None)


# Everything from ε on is one fragment (issue 56), as on the Explorer: an ε, δ or k move (a draw, the PCA box)
# reruns this part only, not the data picker and algorithm above it.  Its sidebar controls stay in the
# sidebar (a fragment may write there once the full run has written to it).
@st.fragment
def release_part():
    eps = W.epsilon_slider(ds=ds)
    DELTA = W.delta_input(1e-6) if dpcore.ALGORITHMS[algorithm].needs_delta else None   # the working set's δ (issue 56)
    W.sidebar_total(ds)
    k = int(st.sidebar.slider("Number of clusters (k)", 2, 32, W.url_default("k", 10, int, valid=lambda v: 2 <= v <= 32), key="k"))
    W.set_url(dataset=ds.name, algorithm=algorithm if own else None, epsilon=eps, k=k, delta=DELTA)

    X = ds.X
    n, d = X.shape
    extra = {"delta": DELTA} if dpcore.ALGORITHMS[algorithm].needs_delta else {}
    ws = W.working_set(ds, algorithm=algorithm, k=k, epsilon=eps, delta=DELTA if extra else None)
    st.markdown(HM.headline(ws))
    est = W.private_release(ds, fp, algorithm, who="High-dimensional", n_clusters=k, epsilon=eps, **extra)
    sees_raw = W.sees_raw(ds)   # the inertia figure, the non-private centres and the data's PCA use the raw data
    # One k-means++ start, not ten: on 15,000 × 784 the ten starts took over a minute on first view (issue 56),
    # and the reference is for comparison only (on the MNIST sample at k = 10 its inertia is within 0.1 % of ten starts').
    base = W.baseline(ds, fp, "kmeans", n_clusters=k, epsilon=None, random_state=0, n_init=1) if sees_raw else None

    if sees_raw:
        # Utility against the trivial answer (computed on the raw data: not private).
        mean_inertia = inertia(X, X.mean(axis=0, keepdims=True))
        private_inertia = inertia(X, est.cluster_centers_)
        warning = HM.worse_than_mean(ws, private_inertia, mean_inertia)
        if warning:
            st.warning(warning)
        own_label, base_label, ref_label = HM.inertia_labels(ws, dpcore.ALGORITHMS[algorithm].display_name,
                                                             mean_inertia)
        st.plotly_chart(F.inertia_reference_figure({own_label: private_inertia, base_label: base.inertia_},
                                                   reference=mean_inertia, reference_label=ref_label),
                        width="stretch")
        if W.teach_toggle(ds):   # public data only
            st.info(noise_effect(est, base.cluster_centers_), icon="🎓")
    else:
        st.caption(W.OWNER_ONLY)

    side = int(round(math.sqrt(d)))
    if side * side == d and d >= 16:
        lo, hi = (float(np.min(ds.bounds[0])), float(np.max(ds.bounds[1]))) if ds.bounds is not None else (None, None)
        st.subheader("Centres as images")
        counts = getattr(est, "noisy_counts_", None)
        st.markdown("**Private**" + (" (noisy cluster sizes under each)" if counts is not None else ""))
        st.image(F.center_images(est.cluster_centers_, side=side, zmin=lo, zmax=hi),
                 caption=None if counts is None else [f"{c:,.0f}" for c in counts], width=IMAGE_WIDTH)
        if sees_raw:
            st.markdown(f"**Non-private k-means++** ({F.NOT_PRIVATE})")
            st.image(F.center_images(base.cluster_centers_, side=side, zmin=lo, zmax=hi), width=IMAGE_WIDTH)

    pca_box = st.expander("2-D PCA view of the data and the centres" if sees_raw else "2-D PCA view of the private centres",
                          key="pca_open", on_change="rerun")
    # Fitted and drawn when opened (issue 56, speed): the PCA took ~0.5 s of every run, its WebGL plot more.
    if pca_box.open:
        with pca_box:
            # Display only.  The owner's PCA is fitted on a sample of the data shown on this screen; anyone else's
            # on the private centres themselves (post-processing of the release).
            rng = np.random.default_rng(0)
            show = X[rng.choice(n, size=min(n, 3000), replace=False)] if sees_raw else est.cluster_centers_
            pca = PCA(2, random_state=0).fit(show)
            Cp = pca.transform(est.cluster_centers_)
            fig = go.Figure()
            if sees_raw:
                P, Cb = pca.transform(show), pca.transform(base.cluster_centers_)
                fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name=f"data sample ({F.NOT_PRIVATE})",
                                           marker=dict(size=3, color="lightgray")))
                fig.add_trace(go.Scatter(x=Cb[:, 0], y=Cb[:, 1], mode="markers", name=f"non-private centres ({F.NOT_PRIVATE})",
                                         marker=dict(size=11, symbol="circle-open", color="black", line=dict(width=2))))
            fig.add_trace(go.Scatter(x=Cp[:, 0], y=Cp[:, 1], mode="markers", name=f"private centres ({W.epsilon_label(eps)})",
                                     marker=dict(size=11, symbol="x", color="crimson")))
            fig.update_layout(xaxis_title="PC 1", yaxis_title="PC 2", height=420, margin=dict(l=10, r=10, t=30, b=10),
                              legend=dict(orientation="h", y=-0.2))
            st.plotly_chart(fig, width="stretch")

    W.show_ledger(est)
    W.draw_controls(est, ds)
    W.account_caption(ds, fit=est)
    if sees_raw:
        W.not_private_caption()
    W.raw_facts(ds, fit=est)


release_part()
