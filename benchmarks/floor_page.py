"""The floor of "rendered" in :mod:`benchmarks.browser_pages`: a Streamlit page that computes nothing.

``streamlit run benchmarks/floor_page.py``; ``?charts=1`` adds one plotly chart and one pydeck map (the
app's inline basemap, a few hundred points), the two kinds of element the app's pages draw; ``?charts=chart``
and ``?charts=map`` one of them, ``?charts=grid`` a ten-row ``st.dataframe``.  Timed by the
same code as the app's pages, it says how much of a page's "warm" figure any Streamlit page costs in this
browser (Streamlit's element code loaded and drawn, software WebGL), whatever the page computes.
"""
import numpy as np
import plotly.graph_objects as go
import pydeck as pdk
import streamlit as st

from ui.maps import BASEMAP

st.title("Floor page")
st.write("A page that computes nothing.")
kinds = {"1": ("chart", "map"), "chart": ("chart",), "map": ("map",), "grid": ("grid",)}.get(
    st.query_params.get("charts", ""), ())
rng = np.random.default_rng(0)   # display only: a fixed picture, not data
xy = rng.normal(size=(300, 2))
if "chart" in kinds:
    st.plotly_chart(go.Figure(go.Scatter(x=xy[:, 0], y=xy[:, 1], mode="markers")), width="stretch")
if "grid" in kinds:      # st.dataframe: the data grid's element code, as a ledger table loads it
    st.dataframe({"step": [f"step {i}" for i in range(10)], "ε": np.round(rng.uniform(size=10), 3)}, hide_index=True)
if "map" in kinds:
    pts = [{"lon": -73.95 + 0.05 * a, "lat": 40.75 + 0.05 * b} for a, b in xy.tolist()]
    st.pydeck_chart(pdk.Deck(layers=[pdk.Layer("ScatterplotLayer", pts, get_position=["lon", "lat"], get_radius=200,
                                               get_fill_color=[200, 30, 30, 160])],
                             initial_view_state=pdk.ViewState(longitude=-73.95, latitude=40.75, zoom=9),
                             map_provider="carto", map_style=BASEMAP, height=500), height=500)
