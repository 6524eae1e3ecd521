"""The Explorer's model (issue 65): one private release on a map or scatter plot beside non-private k-means.

:func:`explorer_model` turns the working set and what was drawn (the draw's kind of synopsis, whether the
non-private centres and the exact density are shown, the NICV figures the owner may see) into what the page
shows: its headline, the warning for data without bounds, the sentence under the map, the legend's label,
the utility metrics with their caption, and the file name of its downloads.  The draw and its button come
from :mod:`ui.models.shared` (the cost, the account).  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore.explain import NOT_PRIVATE
from dpcore.formatting import fmt_epsilon

from .shared import NO_BOUNDS, WorkingSet

#: What the cells of the map show: the release's noisy grid, or (the owner's, a large source) the exact density.
NOISY, EXACT = "noisy count", "exact count (not private)"


@dataclass(frozen=True)
class Metric:
    """One figure of the utility box: ``st.metric(label, value, delta, help=...)``."""

    label: str
    value: str
    delta: str | None = None
    help: str | None = None


@dataclass(frozen=True)
class ExplorerModel:
    """What the Explorer shows around its release.

    Attributes
    ----------
    headline : str
    warning : str or None
        The one warning for data without public bounds.
    map_caption : str
        The sentence under the map or plot: each layer, and what its hover shows.
    legend : str or None
        The label of the cells' colour legend (None: no cells drawn).
    signed : bool
        The legend is signed (noisy counts can be negative).
    utility : tuple of Metric
        NICV, private and non-private (the owner's or public data's only).
    utility_caption : str
    stem : str
        The file name stem of the downloads.
    """

    headline: str
    warning: str | None
    map_caption: str
    legend: str | None
    signed: bool
    utility: tuple
    utility_caption: str
    stem: str


def map_caption(*, cells: str | None, synopsis: bool, sizes: bool, baseline: bool) -> str:
    """The sentence under the Explorer's map: the layers drawn and what hovering each shows.

    Parameters
    ----------
    cells : :data:`NOISY`, :data:`EXACT` or None
        What the cells show, if any are drawn.
    synopsis : bool
        The release holds a grid synopsis.
    sizes : bool
        The private centres carry noisy cluster sizes (from the synopsis).
    baseline : bool
        The non-private centres are drawn (the owner's or public data's).
    """
    hover = ([f"a cell for its {cells}"] if cells is not None else []) + [
        "a private centre for its coordinates" + (" and noisy size" if sizes else "")]
    layers = ("● private centres · "
              + (f"○ non-private centres ({NOT_PRIVATE}) · " if baseline else "")
              + "grey outline: the public bounds")
    if cells == EXACT:
        layers += f" · cells: the EXACT density of the data on the same grid: {NOT_PRIVATE}"
    elif cells is not None and synopsis:
        layers += " · cells: the noisy grid synopsis the algorithm published"
    return layers + ". Hover " + ", ".join(hover) + "."


def utility_metrics(nicv: tuple[float, float] | None) -> tuple[tuple, str]:
    """The utility box: NICV of the private and the non-private centres on the raw data, or nothing.

    ``nicv``: (private, non-private), computed on the raw data (the owner's or public data's); None otherwise.

    Returns
    -------
    (tuple of Metric, caption)
    """
    from dpcore.glossary import help_for
    from dpcore.metrics import relative_error
    if nicv is None:
        return (), ""
    p, b = (float(v) for v in nicv)
    # NICV of the baseline is 0 when k reaches the number of distinct points: no relative figure then.
    delta = f"{relative_error(p, b):+.1%} vs non-private" if b > 0 else None
    metrics = (Metric("NICV, private", f"{p:.4g}", delta, help_for("NICV")), Metric("NICV, non-private", f"{b:.4g}"))
    caption = ("NICV (Su et al. 2016, Eq. 1) on the [-1, 1]-normalised domain; lower is better. Both figures are "
               f"computed on the raw data: {NOT_PRIVATE}.")
    return metrics, caption


def explorer_model(ws: WorkingSet, *, cells: str | None, synopsis: bool, sizes: bool, baseline: bool,
                   nicv: tuple[float, float] | None) -> ExplorerModel:
    """What the Explorer shows for the working set ``ws`` and its release.

    Parameters
    ----------
    ws : WorkingSet
    cells, synopsis, sizes, baseline : see :func:`map_caption`
    nicv : (float, float) or None, see :func:`utility_metrics`

    Returns
    -------
    ExplorerModel
    """
    utility, caption = utility_metrics(nicv if ws.sees_raw else None)
    return ExplorerModel(
        headline=ws.headline(),
        warning=None if ws.bounded else NO_BOUNDS,
        map_caption=map_caption(cells=cells, synopsis=synopsis, sizes=sizes, baseline=baseline and ws.sees_raw),
        legend=None if cells is None else f"{cells} per cell",
        signed=cells == NOISY,
        utility=utility,
        utility_caption=caption,
        stem=f"{ws.algorithm}_eps{fmt_epsilon(ws.epsilon)}",
    )
