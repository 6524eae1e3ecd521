"""High-dimensional data: Balcan et al. (2017) with Edler's (2023) corrections, beside k-means++."""
import math

import numpy as np
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from sklearn.decomposition import PCA

from ui import figures as F
from ui import widgets as W

W.page_setup(__file__)
st.title("High-dimensional clustering")
st.caption("Balcan et al. (2017) as corrected by Edler (2023): project to a few dimensions, find dense cubes "
           "privately, pick k centres, map back with noisy means. Shown in a 2-D PCA view; image data also "
           "shows each centre as a picture, private beside non-private.")

ds, fp = W.dataset_picker(default="digits")
if ds is None:
    st.stop()
eps = W.epsilon_slider()
k = int(st.sidebar.slider("Number of clusters (k)", 2, 32, W.url_default("k", 10, int), key="k"))
W.set_url(dataset=ds.name, epsilon=eps, k=k)

n, d = ds.X.shape
st.markdown(f"**{ds.title}** · {d} columns")
est = W.private_release(ds, fp, "balcan", who="High-dimensional", n_clusters=k, epsilon=eps)
base = W.baseline(ds, fp, "kmeans", n_clusters=k, epsilon=None, random_state=0)

# 2-D PCA view (display only: fitted on the data shown on this screen).
rng = np.random.default_rng(0)
show = ds.X[rng.choice(n, size=min(n, 3000), replace=False)]
pca = PCA(2, random_state=0).fit(show)
P, Cp, Cb = pca.transform(show), pca.transform(est.cluster_centers_), pca.transform(base.cluster_centers_)
fig = go.Figure()
fig.add_trace(go.Scattergl(x=P[:, 0], y=P[:, 1], mode="markers", name=f"data sample ({F.NOT_PRIVATE})",
                           marker=dict(size=3, color="lightgray")))
fig.add_trace(go.Scatter(x=Cb[:, 0], y=Cb[:, 1], mode="markers", name=f"non-private centres ({F.NOT_PRIVATE})",
                         marker=dict(size=11, symbol="circle-open", color="black", line=dict(width=2))))
fig.add_trace(go.Scatter(x=Cp[:, 0], y=Cp[:, 1], mode="markers", name=f"private centres ({W.epsilon_label(eps)})",
                         marker=dict(size=11, symbol="x", color="crimson")))
fig.update_layout(xaxis_title="PC 1", yaxis_title="PC 2", height=480, margin=dict(l=10, r=10, t=30, b=10),
                  legend=dict(orientation="h", y=-0.2))
st.plotly_chart(fig, width="stretch")

side = int(round(math.sqrt(d)))
if side * side == d and d >= 16:
    st.subheader("Centres as images")
    lo, hi = (float(np.min(ds.bounds[0])), float(np.max(ds.bounds[1]))) if ds.bounds is not None else (None, None)
    for title, C in [("Private", est.cluster_centers_), (f"Non-private ({F.NOT_PRIVATE})", base.cluster_centers_)]:
        st.markdown(f"**{title}**")
        imgs = C.reshape(-1, side, side)
        f = px.imshow(imgs, facet_col=0, facet_col_wrap=min(k, 10), color_continuous_scale="gray_r",
                      zmin=lo, zmax=hi, height=140 * math.ceil(k / 10) + 20)
        f.update_xaxes(showticklabels=False).update_yaxes(showticklabels=False)
        f.for_each_annotation(lambda a: a.update(text=""))
        f.update_layout(coloraxis_showscale=False, margin=dict(l=0, r=0, t=0, b=0))
        st.plotly_chart(f, width="stretch")

W.show_ledger(est)
W.draw_controls(est)
W.account_caption(ds)
W.not_private_caption()
W.raw_facts(ds, fit=est)
