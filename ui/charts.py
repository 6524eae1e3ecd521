"""Plotly charts for the app and the gallery: scatter plots, grids of labels, panels, curves, bounds.  No Streamlit.

Colours follow :mod:`ui.maps` (private orange-red discs, non-private dark-blue rings).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import dpcore
from dpcore.formatting import fmt_epsilon, fmt_number

from .ledger_tables import GROUP_STEPS, ledger_frame, ledger_rows, ledger_table  # noqa: F401  (re-exported)
from .maps import CLUSTER_PALETTE, NOT_PRIVATE
from .marks import MAX_MARKS, REST, thin_points


def rest_heatmap(thinned, rgb, *, name: str, zmax: float | None = None) -> go.Heatmap | None:
    """The points a plotly figure does not draw as marks (:func:`ui.marks.thin_points`) as one heatmap: each cell
    shaded by the summed weight of its points (transparent where there is none; full colour at ``zmax``, default
    the largest sum), the sum on hover.  None when every point is a mark."""
    if thinned.complete:
        return None
    ex, ey = thinned.rest_edges
    z = np.where(thinned.rest > 0, thinned.rest, np.nan).T
    r, g, b = rgb
    return go.Heatmap(x=(ex[:-1] + ex[1:]) / 2, y=(ey[:-1] + ey[1:]) / 2, z=z, name=name, showscale=False, meta=REST,
                      colorscale=[[0, f"rgba({r},{g},{b},0.15)"], [1, f"rgba({r},{g},{b},0.75)"]],
                      zmin=0, zmax=float(np.nanmax(z) if zmax is None else zmax), hoverongaps=False,
                      hovertemplate=f"{name}: %{{z:.1f}}<extra></extra>")


def scatter_figure(*, columns, bounds, private_centers=None, baseline_centers=None, synopsis_edges=None,
                   synopsis_counts=None, raw_points=None, title: str | None = None) -> go.Figure:
    """Plotly view of a release on non-geographic data (first two columns).

    The grid synopsis (2-D) is a heatmap on a diverging scale centred at 0;
    raw points (optional) are the grey non-private reference layer.
    """
    fig = go.Figure()
    if synopsis_counts is not None and np.ndim(synopsis_counts) == 2:
        ex, ey = synopsis_edges
        z = np.asarray(synopsis_counts).T
        lim = float(np.quantile(np.abs(z), 0.99)) or 1.0
        fig.add_trace(go.Heatmap(x=(ex[:-1] + ex[1:]) / 2, y=(ey[:-1] + ey[1:]) / 2, z=z, colorscale="RdBu_r",
                                 zmid=0, zmin=-lim, zmax=lim, name="noisy cell counts", opacity=0.75,
                                 colorbar=dict(title="noisy count")))
    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    if raw_points is not None and len(raw_points):
        # At most MAX_MARKS marks (issue 66): the first points in the order given, the others as one grey image.
        centres = sum(len(c) for c in (private_centers, baseline_centers) if c is not None)
        thin = thin_points(np.asarray(raw_points, dtype=float)[:, :2], bounds=(lo[:2], hi[:2]),
                           cap=MAX_MARKS - centres - 2)
        rest = rest_heatmap(thin, (120, 120, 120), name=f"more raw rows per cell ({NOT_PRIVATE})")
        if rest is not None:
            fig.add_trace(rest)
        fig.add_trace(go.Scattergl(x=thin.points[:, 0], y=thin.points[:, 1], mode="markers",
                                   marker=dict(size=3, color="rgba(120,120,120,0.35)"),
                                   name=f"raw data ({NOT_PRIVATE})"))
    if baseline_centers is not None:
        c = np.asarray(baseline_centers)
        fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], mode="markers", name=f"non-private centres ({NOT_PRIVATE})",
                                 marker=dict(size=16, symbol="circle-open", line=dict(width=3),
                                             color="rgb(8,48,107)")))
    if private_centers is not None:
        c = np.asarray(private_centers)
        fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], mode="markers", name="private centres",
                                 marker=dict(size=12, color="rgb(230,85,13)", line=dict(width=1.5, color="black"))))
    fig.update_layout(title=title, xaxis=dict(title=columns[0], range=[lo[0], hi[0]]),
                      yaxis=dict(title=columns[1] if len(columns) > 1 else "", range=[lo[1], hi[1]]),
                      legend=dict(orientation="h", y=-0.15), margin=dict(l=10, r=10, t=40, b=10), height=560)
    return fig


def label_grid_figure(*, edges, labels, columns, title: str | None = None, height: int = 480) -> go.Figure:
    """Plotly image of a 2-D grid of cluster ids (-1 blank): one colour per cluster, hover shows the id."""
    ex, ey = (np.asarray(e, dtype=float) for e in edges)
    lab = np.asarray(labels)
    z = np.where(lab >= 0, lab % len(CLUSTER_PALETTE), np.nan).T.astype(float)
    n = len(CLUSTER_PALETTE)
    scale = []
    for i, c in enumerate(CLUSTER_PALETTE):
        rgb = f"rgb({c[0]},{c[1]},{c[2]})"
        scale += [[i / n, rgb], [(i + 1) / n, rgb]]
    fig = go.Figure(go.Heatmap(x=(ex[:-1] + ex[1:]) / 2, y=(ey[:-1] + ey[1:]) / 2, z=z, zmin=0, zmax=n,
                               colorscale=scale, showscale=False, customdata=lab.T,
                               hovertemplate="cluster %{customdata}<extra></extra>"))
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis=dict(title=columns[0], range=[ex[0], ex[-1]]),
                      yaxis=dict(title=columns[1], range=[ey[0], ey[-1]]),
                      plot_bgcolor="white")
    return fig


# -- choosing epsilon: small multiples, privacy-utility curves, the advisor --------------------
def _signed_log(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.log10(1.0 + np.abs(v))


def _tick_labels(values) -> list[str]:
    """The fewest decimals that tell the ticks apart and put each label within a tenth of their spacing of its
    tick (``:.3g`` wrote "-74, -74" for -74.05 and -73.95, issue 65)."""
    spacing = min((abs(b - a) for a, b in zip(values, values[1:])), default=1.0) or 1.0
    for decimals in range(0, 8):
        text = [f"{v:.{decimals}f}" for v in values]
        if len(set(text)) == len(text) and all(abs(float(t) - v) <= 0.1 * spacing for t, v in zip(text, values)):
            return text
    return [f"{v:g}" for v in values]


def small_multiples_figure(panels, *, bounds, columns, geo: bool = False, baseline_centers=None,
                           height: int = 480) -> go.Figure:
    """The same view of several releases side by side: same axes, same colour scale.

    Parameters
    ----------
    panels : list of dict
        One per release, keys ``title`` (str), ``centers`` (k, 2) and optionally
        ``synopsis_edges`` / ``synopsis_counts`` (2-D grid synopsis).
    bounds : (lower, upper), the public box; every panel shows exactly this box.
    columns : the two column names.
    geo : bool
        Longitude/latitude data: the y axis is scaled by 1 / cos(latitude) so
        distances look right.
    baseline_centers : (k, 2) or None
        Non-private centres, drawn as hollow rings and labelled as not private.

    Notes
    -----
    Grids differ between epsilons (EUGkM's cell count grows with epsilon), so
    cells are coloured by noisy *density* (count per unit of the normalised
    area) on one shared signed-log scale: equal colours mean equal density
    in every panel.
    """
    from plotly.subplots import make_subplots

    lo, hi = (np.asarray(b, dtype=float) for b in bounds)
    n = len(panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[p["title"] for p in panels], horizontal_spacing=0.035,
                        shared_yaxes=True)
    dens = []
    for p in panels:
        if p.get("synopsis_counts") is not None and np.ndim(p["synopsis_counts"]) == 2:
            ex, ey = (np.asarray(e, dtype=float) for e in p["synopsis_edges"])
            area = np.outer(np.diff(ex) / (hi[0] - lo[0]), np.diff(ey) / (hi[1] - lo[1]))
            dens.append(np.asarray(p["synopsis_counts"], dtype=float) / area / 1e4)
        else:
            dens.append(None)
    finite = [np.abs(_signed_log(z)).ravel() for z in dens if z is not None]
    lim = float(np.quantile(np.concatenate(finite), 0.995)) if finite else 1.0
    lim = lim or 1.0
    for i, (p, z) in enumerate(zip(panels, dens), start=1):
        if z is not None:
            ex, ey = (np.asarray(e, dtype=float) for e in p["synopsis_edges"])
            fig.add_trace(go.Heatmap(x=(ex[:-1] + ex[1:]) / 2, y=(ey[:-1] + ey[1:]) / 2, z=_signed_log(z).T,
                                     customdata=np.round(np.asarray(p["synopsis_counts"]).T, 1),
                                     coloraxis="coloraxis", name="noisy counts",
                                     hovertemplate="noisy count %{customdata}<extra></extra>"), row=1, col=i)
        if baseline_centers is not None:
            c = np.asarray(baseline_centers, dtype=float)
            fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], mode="markers", showlegend=(i == 1), legendgroup="base",
                                     name=f"non-private centres ({NOT_PRIVATE})",
                                     marker=dict(size=13, symbol="circle-open", line=dict(width=2.5),
                                                 color="rgb(8,48,107)")), row=1, col=i)
        c = np.asarray(p["centers"], dtype=float)
        fig.add_trace(go.Scatter(x=c[:, 0], y=c[:, 1], mode="markers", showlegend=(i == 1), legendgroup="priv",
                                 name="private centres",
                                 marker=dict(size=10, color="rgb(230,85,13)", line=dict(width=1.5, color="black"))),
                      row=1, col=i)
        # Two ticks inside each panel: ticks at the box's edges ran into the next panel's ("−73.974.1", issue 65).
        inner = [lo[0] + 0.25 * (hi[0] - lo[0]), lo[0] + 0.75 * (hi[0] - lo[0])]
        fig.update_xaxes(range=[lo[0], hi[0]], title_text=columns[0], row=1, col=i, showgrid=False,
                         constrain="domain", tickvals=inner, ticktext=_tick_labels(inner))
        yaxis = dict(range=[lo[1], hi[1]], showgrid=False, row=1, col=i, constrain="domain")
        if geo:
            aspect = 1 / math.cos(math.radians((lo[1] + hi[1]) / 2))
            yaxis.update(scaleanchor=f"x{'' if i == 1 else i}", scaleratio=aspect)
        fig.update_yaxes(**yaxis)
    fig.update_yaxes(title_text=columns[1], row=1, col=1)
    ticks = np.arange(-math.floor(lim), math.floor(lim) + 1)
    fig.update_layout(
        height=height, margin=dict(l=10, r=10, t=80, b=10), plot_bgcolor="white",
        legend=dict(orientation="h", y=-0.15),
        coloraxis=dict(colorscale="RdBu_r", cmin=-lim, cmax=lim, cmid=0,
                       colorbar=dict(title="noisy density", tickvals=ticks,
                                     ticktext=[f"{'-' if t < 0 else ''}{10 ** abs(t) - 1:.0f}" if abs(t) < 4
                                               else f"{'-' if t < 0 else ''}1e{abs(t):.0f}" for t in ticks],
                                     len=0.8, thickness=12)))
    return fig


def algorithm_colour(key: str) -> str:
    """An algorithm's colour on the curve and advisor charts: the one its class declares (``colour``)."""
    cls = dpcore.ALGORITHMS.get(key)
    if cls is None:
        # Here, not at the top: the gallery draws with this module and imports no estimator (issue 66).
        from dpcore.algorithms.base import DPClusterer
        cls = DPClusterer
    return cls.colour


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def _band(fig: go.Figure, x, lo, mid, hi, *, n, colour: str, label: str = "", group: str | None = None) -> None:
    """A median line over its 10-90 % band of simulated releases (x: ε), with a hover that gives both."""
    x, lo, mid, hi, n = (np.asarray(v) for v in (x, lo, mid, hi, n))
    fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", fillcolor=_rgba(colour, 0.2),
                             line=dict(width=0), hoverinfo="skip", mode="lines", legendgroup=group,
                             name=f"{label}10–90 % of releases"))
    fig.add_trace(go.Scatter(x=x, y=mid, mode="lines+markers", legendgroup=group, line=dict(color=colour, width=2.5),
                             marker=dict(size=7), name=f"{label}median", customdata=np.c_[lo, hi, n],
                             hovertemplate="ε = %{x}<br>median %{y:.4g}<br>10–90 %: %{customdata[0]:.4g} – "
                                           "%{customdata[1]:.4g}<br>%{customdata[2]} releases<extra></extra>"))


def log_ticks(lo: float, hi: float, unit: str = "") -> dict:
    """Tick values and full labels for a log axis from ``lo`` to ``hi``: 1, 2, 5 × 10^k, each with its unit.

    Plotly labels a log axis's minor ticks with a bare digit ("2, 1000, 5, 2, 100, 5", issue 65); these read
    "20 m, 50 m, 100 m, …".  Returns ``dict(tickvals=..., ticktext=...)`` for ``update_yaxes``/``update_xaxes``.
    """
    lo, hi = max(float(lo), 1e-12), max(float(hi), float(lo) * 1.0001)
    vals = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in (1, 2, 5)]
    vals = [v for v in vals if lo / 1.0001 <= v <= hi * 1.0001]
    if len(vals) > 9:        # a wide range: decades only
        vals = [v for v in vals if math.isclose(v, 10.0 ** round(math.log10(v)))]
    if len(vals) < 2:        # a narrow range: its two ends
        vals = [lo, hi]
    return dict(tickvals=vals, ticktext=[fmt_number(v) + (f" {unit}" if unit else "") for v in vals])


def epsilon_axis(epsilons) -> dict:
    """An ε axis on a log scale, ticked at the ε values shown with the app's one rounding (:func:`fmt_epsilon`)."""
    ticks = sorted({float(e) for e in epsilons})
    return dict(type="log", tickvals=ticks, ticktext=[fmt_epsilon(t) for t in ticks])


def accuracy_figure(ans) -> go.Figure | None:
    """The centre error of simulated releases against ε (log-log): median, 10-90 % band, the target.

    ``ans``: :class:`dpcore.evaluation.AccuracyAnswer`; its chosen ε, if any, is marked.  Only finite,
    positive bands are drawn, on a y-range set from them and the target; None when there are none.  Both axes
    are ticked with full labels, the y axis in the answer's unit (metres on a map); the target is a labelled
    line in the legend (its annotation used to sit under the legend, issue 65).
    """
    ok = np.isfinite(ans.band).all(axis=1) & (ans.band > 0).all(axis=1)   # refused or zero: nothing on a log axis
    if not ok.any():
        return None        # issue 56: a log axis of NaN and inf read "1, 10^52 … NaN×10^Infinity"; words say it
    fig = go.Figure()
    band = ans.band[ok]
    x = ans.epsilons[ok]
    _band(fig, x, band[:, 0], band[:, 1], band[:, 2], n=np.full(ok.sum(), ans.n_releases), colour="#e6550d")
    fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[ans.target, ans.target], mode="lines",
                             line=dict(color="black", dash="dash", width=1.5), hoverinfo="skip",
                             name=f"your target: {fmt_number(ans.target)} {ans.unit}"))
    if ans.epsilon is not None:
        fig.add_vline(x=ans.epsilon, line_dash="dot", annotation_text=f"smallest ε: {fmt_epsilon(ans.epsilon)}",
                      annotation_position="bottom right")
    fig.update_xaxes(title="ε (log scale)", **epsilon_axis(x))
    ys = np.r_[band.ravel(), ans.target]
    lo, hi = ys.min() / 1.25, ys.max() * 1.25
    fig.update_yaxes(type="log", title=f"centre error ({ans.unit})", range=[math.log10(lo), math.log10(hi)],
                     **log_ticks(lo, hi, ans.unit if ans.unit == "m" else ""))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=1.15),
                      plot_bgcolor="white")
    return fig


def utility_curve_figure(frame: pd.DataFrame, *, measure: str, reference_line: float, chosen_epsilon=None,
                         names: dict | None = None, log_y: bool | None = None, height: int = 440) -> go.Figure:
    """Privacy-utility curves: median and 10-90 % band per algorithm against epsilon (log axis).

    Parameters
    ----------
    frame : DataFrame with columns algorithm, epsilon, median, q10, q90, n
        (:func:`dpcore.evaluation.curves_frame`).
    measure : str, the y-axis title.
    reference_line : float, the non-private reference on the measure's axis.
    chosen_epsilon : float or None, marked with a vertical line.
    names : dict key -> display name.
    log_y : bool or None; default: log for the NICV ratio.
    """
    names = names or {}
    fig = go.Figure()
    for algorithm, g in frame.groupby("algorithm", sort=False):
        g = g.dropna(subset=["median"]).sort_values("epsilon")
        if g.empty:
            continue
        _band(fig, g["epsilon"], g["q10"], g["median"], g["q90"], n=g["n"], colour=algorithm_colour(algorithm),
              label=f"{names.get(algorithm, algorithm)}: ", group=algorithm)
    centre_error = measure.startswith("centre error")
    if not centre_error:       # the centre error of the non-private centres is 0: no line on a log axis
        fig.add_hline(y=reference_line, line=dict(color="rgb(8,48,107)", dash="dash", width=2),
                      annotation_text="non-private k-means" if measure != "UD" else "non-private WaveCluster",
                      annotation_position="top left")
    if chosen_epsilon is not None:
        fig.add_vline(x=float(chosen_epsilon), line=dict(color="black", dash="dot", width=1.5),
                      annotation_text=f"chosen ε = {fmt_epsilon(float(chosen_epsilon))}", annotation_position="top")
    if log_y is None:
        log_y = measure == "NICV ratio" or centre_error
    ticks = sorted(set(frame["epsilon"].astype(float)) | ({float(chosen_epsilon)} if chosen_epsilon else set()))
    yaxis: dict = dict(type="log" if log_y else "linear", gridcolor="#eee")
    vals = frame[["q10", "median", "q90"]].to_numpy(dtype=float)
    vals = vals[np.isfinite(vals)]
    if log_y and vals.size and (vals > 0).all():
        lo_y, hi_y = (vals.min(), vals.max()) if centre_error else (min(vals.min(), reference_line),
                                                                   max(vals.max(), reference_line))
        lo_y, hi_y = lo_y / 1.1, hi_y * 1.15
        unit = "m" if measure.endswith("(m)") else ""
        yaxis.update(range=[math.log10(lo_y), math.log10(hi_y)], **log_ticks(lo_y, hi_y, unit))
    yaxis["title"] = measure + (" (private / non-private; 1 = as good)" if measure == "NICV ratio" else
                                " from the non-private centres (0 = as good)" if centre_error else
                                " (0 = as good as non-private)")
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), plot_bgcolor="white",
                      xaxis=dict(title="privacy budget ε (log scale; left = more private)", gridcolor="#eee",
                                 **epsilon_axis(ticks)),
                      yaxis=yaxis, legend=dict(orientation="h", y=-0.25))
    return fig


def advice_figure(frame: pd.DataFrame, *, chosen_epsilon=None, height: int = 440) -> go.Figure:
    """Su et al. (2016, §6) predicted MSE per centroid against epsilon (log-log), one line per algorithm.

    ``frame``: :func:`dpcore.evaluation.advice_frame`: a line for each registered class that declares a
    formula (its ``mse_<key>`` column, labelled by the class's ``mse_formula``).  A variance (a lower
    bound, EUGkM's) gets a shaded band up to variance + its bias bound (``bias2_<key>``, Ineq. 10).
    """
    f = frame.sort_values("epsilon")
    fig = go.Figure()
    for key, cls in dpcore.ALGORITHMS.items():
        if f"bias2_{key}" in f and f"mse_{key}" in f:
            fig.add_trace(go.Scatter(x=np.r_[f["epsilon"], f["epsilon"][::-1]],
                                     y=np.r_[f[f"mse_{key}"] + f[f"bias2_{key}"], f[f"mse_{key}"][::-1]],
                                     fill="toself", fillcolor=_rgba(cls.colour, 0.12), line=dict(width=0),
                                     mode="lines", hoverinfo="skip", name=f"{_short(cls)}: + bias bound (Ineq. 10)"))
    for key, cls in dpcore.ALGORITHMS.items():
        if f"mse_{key}" not in f:
            continue
        fig.add_trace(go.Scatter(x=f["epsilon"], y=f[f"mse_{key}"], mode="lines+markers",
                                 name=f"{_short(cls)} ({cls.mse_formula})", line=dict(color=cls.colour, width=2)))
    if "trivial_mse" in f:
        fig.add_hline(y=float(f["trivial_mse"].iloc[0]), line=dict(color="black", dash="dash", width=1.5),
                      annotation_text="worse than one centre at the mean on any data (d r²)",
                      annotation_position="top left")
    if chosen_epsilon is not None:
        fig.add_vline(x=float(chosen_epsilon), line=dict(color="black", dash="dot", width=1.5))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=40, b=10), plot_bgcolor="white",
                      xaxis=dict(type="log", title="privacy budget ε (log scale)", gridcolor="#eee",
                                 tickvals=list(f["epsilon"]), ticktext=[f"{e:g}" for e in f["epsilon"]]),
                      yaxis=dict(type="log", title="predicted MSE of a centre", gridcolor="#eee",
                                 exponentformat="power"),
                      legend=dict(orientation="h", y=-0.3))
    return fig


def _short(cls) -> str:
    """A class's display name up to any parenthesis (a legend entry)."""
    return (cls.display_name or cls.key).split(" (")[0]


def privacy_bounds_figure(epsilons, posterior, advantage, *, chosen_epsilon=None, height: int = 340) -> go.Figure:
    """Upper bounds on belief (from a 50 % prior) and attacker's advantage against epsilon (log axis)."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=epsilons, y=posterior, mode="lines", name="belief after the release (from 50 %)",
                             line=dict(color="#d62728", width=2.5)))
    fig.add_trace(go.Scatter(x=epsilons, y=advantage, mode="lines", name="attacker's advantage",
                             line=dict(color="#1f77b4", width=2.5)))
    if chosen_epsilon is not None:
        fig.add_vline(x=float(chosen_epsilon), line=dict(color="black", dash="dot"),
                      annotation_text=f"ε = {float(chosen_epsilon):g}")
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="white",
                      xaxis=dict(type="log", title="ε (log scale)", gridcolor="#eee"),
                      yaxis=dict(title="at most", tickformat=".0%", range=[0, 1.02], gridcolor="#eee"),
                      legend=dict(orientation="h", y=-0.3))
    return fig


def center_images(centers: np.ndarray, *, side: int, zmin: float, zmax: float, scale: int = 4) -> list[np.ndarray]:
    """Centres of image data as grey-level pictures (``st.image``), white at ``zmin``, black at ``zmax``.

    Pictures, not a chart: on the High dimensional page twenty plotly heatmaps took ~0.7 s of the browser's
    first render (issue 56, speed); a centre has no axis to read, only a shape to see.

    Parameters
    ----------
    centers : ndarray (k, side * side), data units
    side : int, pixels per row and column of one image
    zmin, zmax : float, the public pixel range
    scale : int, screen pixels per image pixel (nearest neighbour: the pixels stay visible)

    Returns
    -------
    list of k ndarrays (side * scale, side * scale) uint8
    """
    C = np.clip((np.asarray(centers, dtype=float) - zmin) / max(zmax - zmin, 1e-12), 0.0, 1.0)
    grey = np.round(255 * (1.0 - C)).astype(np.uint8).reshape(-1, side, side)
    return [np.kron(g, np.ones((scale, scale), dtype=np.uint8)) for g in grey]


def center_images_figure(centers: np.ndarray, *, side: int, zmin: float, zmax: float, per_row: int = 10,
                         titles=None) -> go.Figure:
    """Centres of image data drawn as ``side x side`` grey-level pictures, ``per_row`` to a row.

    Parameters
    ----------
    centers : ndarray (k, side * side), data units
    zmin, zmax : the public pixel range (white to black)
    titles : list of str or None, one caption per picture (e.g. a noisy cluster size)
    """
    from plotly.subplots import make_subplots
    k = centers.shape[0]
    cols = max(1, min(per_row, k))
    rows = math.ceil(k / cols)
    fig = make_subplots(rows=rows, cols=cols, horizontal_spacing=0.01, vertical_spacing=0.06 if titles else 0.02,
                        subplot_titles=list(titles) if titles is not None else None)
    for i, c in enumerate(np.asarray(centers, dtype=float)):
        fig.add_trace(go.Heatmap(z=c.reshape(side, side)[::-1], zmin=zmin, zmax=zmax, colorscale="gray_r",
                                 showscale=False, hovertemplate="row %{y}, col %{x}: %{z:.0f}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_xaxes(visible=False, constrain="domain")
    fig.update_yaxes(visible=False, scaleanchor="x", constrain="domain")
    for ax in fig.layout:                                       # every subplot square
        if ax.startswith("yaxis"):
            fig.layout[ax].scaleanchor = "x" + ax[5:]
    fig.update_annotations(font_size=10)
    fig.update_layout(height=110 * rows + (20 * rows if titles else 0) + 10, margin=dict(l=0, r=0, t=20, b=0))
    return fig


def inertia_reference_figure(values: dict, *, reference: float, reference_label: str, height: int = 220
                             ) -> go.Figure:
    """Horizontal bars of k-means inertia (lower is better) with the trivial answer as a dashed line.

    Parameters
    ----------
    values : dict label -> inertia (squared data units)
    reference : float, inertia of the trivial answer (one centre at the mean)
    reference_label : str
    """
    labels, vals = list(values), [float(v) for v in values.values()]
    colours = ["crimson" if v > reference else "#2a6fdb" for v in vals]
    fig = go.Figure(go.Bar(x=vals, y=labels, orientation="h", marker_color=colours,
                           text=[f"{v:.3g}" for v in vals], textposition="auto",
                           hovertemplate="%{y}: inertia %{x:.4g}<extra></extra>"))
    fig.add_vline(x=float(reference), line_dash="dash", line_color="black",
                  annotation_text=reference_label, annotation_position="top left", annotation_yshift=22)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=50, b=10), xaxis_title="inertia (lower is better)",
                      xaxis_range=[0, 1.15 * max(vals + [float(reference)])])
    return fig


def reference_strip_figure(marks: dict, deployments, *, height: int = 400) -> go.Figure:
    """A log-ε axis with real deployments (grey, labelled with their unit) and this data's ε values marked.

    Parameters
    ----------
    marks : dict
        ``{label: epsilon}`` for this data (e.g. this release, the total so far, the cap); None values
        are skipped.
    deployments : sequence of :class:`dpcore.explain.Deployment`
        The reference points (``dpcore.explain.DEPLOYMENTS``; sources in docs/guide/epsilon_scale.rst).
    """
    fig = go.Figure()
    for i, d in enumerate(deployments):
        # Six label heights in turn, alternately above and below: in a page's narrow column at 1280 px the
        # deployments between ε 1.7 and 4 lie within ~40 px of each other, and four heights stacked their
        # labels onto one another (issue 56).  Near labels lean left, far ones right.
        level = (0.55, -0.55, 1.1, -1.1, 1.65, -1.65)[i % 6]
        lx = math.log10(d.epsilon) + (-0.12 if abs(level) < 1 else 0.12)
        fig.add_trace(go.Scatter(   # the leader line: a trace, so that every label (an annotation) covers it
            x=[d.epsilon, 10 ** lx], y=[0, level], mode="lines", line=dict(color="#bbb", width=1),
            hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(
            x=[d.epsilon], y=[0], mode="markers", marker=dict(size=11, color="rgb(120,120,120)", symbol="diamond"),
            hovertext=f"{d.organization}, {d.product}<br>ε = {d.epsilon:g} per {d.unit}"
                      + (f", δ = {d.delta:g}" if d.delta else "") + f" ({d.model} DP)<br>{d.source}",
            hoverinfo="text", showlegend=False))
        fig.add_annotation(x=lx, y=level, showarrow=False, text=f"{d.organization}<br>{d.epsilon:g} / {d.unit}",
                           font=dict(size=10, color="#555"), bgcolor="rgba(255,255,255,0.92)")
    colours = ("rgb(215,48,31)", "rgb(8,48,107)", "rgb(120,120,120)")
    for (label, eps), colour in zip([(k, v) for k, v in marks.items() if v], colours):
        fig.add_vline(x=float(eps), line=dict(color=colour, width=3, dash="solid" if colour != colours[2] else "dash"))
        fig.add_trace(go.Scatter(x=[float(eps)], y=[0], mode="markers", name=f"{label}: ε = {float(eps):.3g}",
                                 marker=dict(size=14, color=colour)))
    fig.update_xaxes(type="log", range=[-2.2, 2.2], title="ε (log scale)", showgrid=True,
                     **log_ticks(10 ** -2.2, 10 ** 2.2))      # full labels, not "0.01, 2, 5, 0.1, …" (issue 65)
    fig.update_yaxes(visible=False, range=[-2.0, 2.0])
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=40), plot_bgcolor="white",
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    return fig


__all__ = ["rest_heatmap", "scatter_figure", "ledger_frame", "ledger_table", "ledger_rows", "GROUP_STEPS",
           "label_grid_figure", "small_multiples_figure",
           "algorithm_colour", "utility_curve_figure", "accuracy_figure", "advice_figure", "privacy_bounds_figure",
           "center_images", "center_images_figure", "inertia_reference_figure", "reference_strip_figure", "log_ticks",
           "epsilon_axis"]
