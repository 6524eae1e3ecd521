"""The WaveCluster page's model (issue 65): the grid settings the widgets show and the figures under the maps.

The grid's two settings (cells per side, density threshold) have per-data-set defaults.  :func:`grid_settings`
decides the values the page computes with *and* the values its sliders show, so the two never differ (issue 65,
point 1: after switching to "Three spirals" the result used 56 / 30 while the sliders still showed 100 / 50, and
the next slider move snapped the grid back to 100).  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore.explain import NOT_PRIVATE
from dpcore.formatting import fmt_epsilon

from .shared import WorkingSet

#: (num_grid, density %) by data set: the paper's 50 / 10 % suit its synthetic sets; on the taxi pickups they call
#: most of the city one cluster, 100 cells / 50 % separates Manhattan, Brooklyn and Queens.  On the three spirals
#: (6,000 points) 56 cells / 30 % keeps the three arms apart, non-private (adjusted Rand index 0.95 against the
#: arms) and at ε = 1 (0.88-0.93 in 8 draws, with a few small noise clusters besides); these are public settings
#: of a public teaching set, chosen from the generator, not read from private rows.
GRID_DEFAULT = {"nyc_taxi_sample": (100, 50), "spirals": (56, 30)}
#: Every other data set: Chen, Yu & Chirkova (2015)'s own settings.
PAPER_DEFAULT = (50, 10)
#: The sliders' ranges (num_grid in steps of 2).
GRID_RANGE, DENSITY_RANGE = (8, 400), (0, 95)


@dataclass(frozen=True)
class GridSettings:
    """The grid settings of a run: what is computed and what the two sliders show.

    Attributes
    ----------
    num_grid : int
    density : int
        The density threshold in percent.
    set_widgets : bool
        The sliders are set to these values before they are drawn (their state would show others).
    changed : bool
        The data set changed since the last run: these are its defaults, and the URL's old values go.
    """

    num_grid: int
    density: int
    set_widgets: bool = False
    changed: bool = False


def grid_defaults(dataset: str) -> tuple[int, int]:
    """The data set's default (num_grid, density %)."""
    return GRID_DEFAULT.get(dataset, PAPER_DEFAULT)


def _valid(grid, density) -> bool:
    try:
        g, d = int(grid), int(density)
    except (TypeError, ValueError):
        return False
    return GRID_RANGE[0] <= g <= GRID_RANGE[1] and g % 2 == 0 and DENSITY_RANGE[0] <= d <= DENSITY_RANGE[1]


def grid_settings(dataset: str, *, last_dataset: str | None, shown: tuple | None, url: tuple | None) -> GridSettings:
    """The grid settings of this run, from the data set, the values the sliders hold and the URL.

    Parameters
    ----------
    dataset : str
        The data set chosen now.
    last_dataset : str or None
        The data set of the page's previous run in this session (None: the page's first run).
    shown : (num_grid, density) or None
        The values the sliders hold (their session state), None before they exist.
    url : (num_grid, density) or None
        The values in the page's URL (a shared link), None where absent.

    Returns
    -------
    GridSettings
        Another data set than last run: its defaults (``changed``).  Else the sliders' values; before the
        sliders exist the URL's (a direct link), else the defaults.  Values outside the sliders' ranges are
        never used.  Whenever the values are not the sliders' own, ``set_widgets``.
    """
    default = grid_defaults(dataset)
    if last_dataset is not None and last_dataset != dataset:
        return GridSettings(*default, set_widgets=True, changed=True)
    if shown is not None and _valid(*shown):
        return GridSettings(int(shown[0]), int(shown[1]))
    if url is not None and _valid(*url):
        return GridSettings(int(url[0]), int(url[1]), set_widgets=True)
    return GridSettings(*default, set_widgets=True)


@dataclass(frozen=True)
class Measure:
    """One row of the closeness table: the measure, its value, the best value."""

    name: str
    value: float
    best: float


def measures_caption(ws: WorkingSet, unit_phrase: str) -> str:
    """The sentence under the closeness measures (UD, DCOM, DC2E, F-measure): what they compare, and the refit."""
    eps = fmt_epsilon(ws.epsilon)
    both = fmt_epsilon(2 * float(ws.epsilon or 0.0))
    return ("UD: share of dense cells that differ, clusters matched one to one. DCOM / DC2E: how often "
            "classifiers trained on each result disagree on held-out points (single points / pairs). "
            f"All compare with the non-private result, so they are {NOT_PRIVATE}. DCOM and DC2E use a "
            f"second private fit on 90 % of the rows with its own fresh noise (ε = {eps} {unit_phrase}); "
            f"it is never shown or published. Were both fits seen together they would cost ε = {both} "
            f"{unit_phrase} (sequential composition).")


def teach_sentence(epsilon: float, private: tuple[int, int], baseline: tuple[int, int]) -> str:
    """"Explain as I go" on public data: what the noise did to the dense cells and clusters.

    ``private`` and ``baseline``: (dense cells, clusters) of the private and the non-private result.
    """
    return (f"At ε = {fmt_epsilon(epsilon)} the noisy grid kept {private[0]} dense cells in {private[1]} "
            f"cluster(s); without noise the same settings keep {baseline[0]} dense cells in {baseline[1]} "
            "cluster(s). Noise adds dense cells in empty areas and removes some at the edges of the clusters, "
            "which cuts or joins clusters.")


def private_title(name: str, epsilon: float, level: str) -> str:
    """The private map's title: the algorithm and the ε with its odds bound."""
    return f"Private · {name}, ε = {fmt_epsilon(epsilon)} · {level}"
