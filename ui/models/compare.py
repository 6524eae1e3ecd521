"""Compare's model (issue 65): the same release at several ε side by side, what they cost, and their error.

On data that is already public the panels are *previews* (fresh noise, recorded nowhere, free), shown at once
as the Explorer's preview is: a stakeholder comparing ε = 0.1, 0.5, 1, 2 pays nothing to look.  On private
data each panel is a draw recorded in the data's account, and the page says in one sentence what drawing
them spends before anything is drawn (:func:`panels_model`).  No Streamlit here.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dpcore.explain import NOT_PRIVATE, level_for

from .shared import Cost, DrawButton, Totals, draw_button, fmt_epsilon

#: A panel is a preview (public data, free), a recorded draw, or not drawn yet (private data, before "Draw").
PREVIEW, DRAWN, MISSING = "preview", "drawn", "missing"


@dataclass(frozen=True)
class Panel:
    """One panel: its ε, what it shows and its title (Plotly HTML: bold ε, the odds bound, what it is)."""

    epsilon: float
    kind: str
    title: str


@dataclass(frozen=True)
class PanelsModel:
    """What the side-by-side section shows above and under its figure.

    Attributes
    ----------
    panels : tuple of Panel
    intro : str
        The one sentence above the panels: previews on public data (free), or what drawing spends.
    button : DrawButton or None
        "Draw N panels: spends ε = …" for the panels not drawn yet that fit under the total (private data).
    beyond : str or None
        The panels that cannot be drawn under what is left of the total, named with their cost.
    caption : str
        The sentence under the figure.
    again : DrawButton or None
        "New draws of these N panels (fresh noise: spends … again)" for the recorded panels (private data).
    """

    panels: tuple
    intro: str
    button: DrawButton | None
    beyond: str | None
    caption: str
    again: DrawButton | None = None

    @property
    def shown(self) -> list[Panel]:
        """The panels with something to draw (previews and recorded draws)."""
        return [p for p in self.panels if p.kind != MISSING]


def _sum(costs: list[Cost]) -> Cost:
    """Several draws seen together: their ε and δ add up (sequential composition)."""
    return Cost(math.fsum(c.epsilon for c in costs), math.fsum(c.delta for c in costs),
                math.fsum(c.granted_epsilon for c in costs), math.fsum(c.granted_delta for c in costs),
                all(c.exact for c in costs))


def _fitting(costs: list[Cost], account: Totals) -> int:
    """How many of ``costs``, in order, fit together under what is left of the total."""
    n, e, d = 0, 0.0, 0.0
    for c in costs:
        e, d = e + c.epsilon, d + c.delta
        if not account.fits(Cost(e, d, e, d)):
            break
        n += 1
    return n


def panels_model(title: str, epsilons, kinds, *, chosen: float, cost_of: Callable[[float], Cost], account: Totals,
                 release_ids=(), refusal: str | None = None) -> PanelsModel:
    """The side-by-side panels at ``epsilons``: which are previews, drawn or missing, and what drawing costs.

    Parameters
    ----------
    title : str
        The data set as people read it.
    epsilons : sequence of float, in the order shown
    kinds : sequence of str
        :data:`PREVIEW`, :data:`DRAWN` or :data:`MISSING` per ε.
    chosen : float
        The working set's ε (its panel is marked).
    cost_of : callable (ε) -> Cost
        What a draw at ε records (:func:`ui.models.shared.draw_cost`).
    account : Totals
    release_ids : sequence of int or None, per ε (for the drawn panels' titles)
    refusal : str or None
        Why the acting person may not draw (their role).

    Returns
    -------
    PanelsModel
    """
    eps = [float(e) for e in epsilons]
    ids = list(release_ids) + [None] * (len(eps) - len(list(release_ids)))
    panels = []
    for e, kind, rid in zip(eps, kinds, ids):
        what = {PREVIEW: "preview", DRAWN: f"release #{rid}" if rid is not None else "drawn",
                MISSING: "not drawn"}[kind]
        mark = " ◀ chosen" if math.isclose(e, float(chosen)) else ""
        # Short lines: four to six panels share 1280 px, and longer titles ran into each other (issue 65).
        panels.append(Panel(e, kind, f"<b>ε = {fmt_epsilon(e)}</b>{mark}<br>{level_for(e).name}<br>{what}"))
    missing = [p.epsilon for p in panels if p.kind == MISSING]
    costs = [cost_of(e) for e in missing]
    n_fit = _fitting(costs, account) if account.recorded else len(costs)
    fit_costs = costs[:n_fit]
    previews = all(p.kind == PREVIEW for p in panels)
    together = _sum(costs)
    if previews:
        intro = (f"**Previews, not releases.** *{title}* is public, so every panel is a preview drawn at once with "
                 "fresh noise: recorded nowhere, counted in no account, free to look at and never published. Draw "
                 "a release to publish on the Explorer or the Release page.")
    elif not account.recorded:
        intro = ("Without public bounds these panels are not private: each is kept for this session only, never "
                 "recorded or published.")
    elif missing:
        intro = (f"Drawing the {len(missing)} panel(s) not drawn yet spends {together.words()} on *{title}* "
                 "(sequential composition: the sum of their ε), each recorded in its account before it is shown.")
    else:
        intro = (f"Every panel is a draw recorded in the account of *{title}*; seen together they cost "
                 f"{_sum([cost_of(e) for e in eps]).words()} (the sum of their ε).")
    button = None
    if fit_costs:
        what = f"Draw {len(fit_costs)} panel" + ("s" if len(fit_costs) > 1 else "")
        button = draw_button(_sum(fit_costs), account, what=what, refusal=refusal)
    beyond = None
    if len(fit_costs) < len(costs):
        rest = missing[len(fit_costs):]
        beyond = (f"Only ε = {fmt_epsilon(account.left_epsilon)} of the total set for *{title}* is left, so "
                  f"{len(rest)} panel(s) cannot be drawn: " + ", ".join(f"ε = {fmt_epsilon(e)}" for e in rest)
                  + f" (ε = {fmt_epsilon(math.fsum(rest))} together). "
                  + ("The panels that fit are drawn in the order shown. " if fit_costs else "")
                  + "Choose smaller ε, fewer panels, or ask the data owner to raise the total.")
    again = None
    drawn = [p.epsilon for p in panels if p.kind == DRAWN]
    if drawn and account.recorded and not previews:
        cost = _sum([cost_of(e) for e in drawn])
        b = draw_button(cost, account, new=True, refusal=refusal)
        again = DrawButton(f"New draws of these {len(drawn)} panels (fresh noise: spends {cost.words()} again)", cost,
                           b.enabled, b.why_not, "Each panel drawn again with fresh noise, each recorded: drawing "
                                                 "until the panels look good is itself a use of the data.")
    caption = ("Same axes and one colour scale in every panel: cells are noisy point density (blue = negative "
               "noise). ● private centres. Each panel is its own draw with fresh, unpredictable noise, so no "
               "combination of panels cancels the noise."
               + (" They are previews on public data: not releases." if previews else ""))
    return PanelsModel(tuple(panels), intro, button, beyond, caption, again)


def title_with_nicv(title: str, ratio: float) -> str:
    """A panel's title with its NICV against the non-private centres' (computed on the raw data; the caption
    says so: :func:`nicv_caption`)."""
    return f"{title}<br>NICV {ratio - 1:+.1%}"


def nicv_caption(sees_raw: bool, owner_only: str) -> str:
    """The sentence on the panels' NICV figures: computed on the raw data (not private), or left out."""
    if sees_raw:
        return (" The NICV under each title is the private centres' NICV against the non-private ones' (private / "
                "non-private − 1, Su et al. Eq. 1; 0 % = as good as non-private), computed on the raw data: "
                f"{NOT_PRIVATE}.")
    return " " + owner_only


# -- the privacy-utility curve ------------------------------------------------------------------------------------
def curve_measure(algorithm: str, geo: bool) -> tuple[str, str | None]:
    """The curve's measure for ``algorithm``: its label and the name :func:`dpcore.evaluation.compare_curves` takes.

    An algorithm that releases centres is measured by its centre error, in metres on a map (else data units):
    the unit of the expected error and of "ε from the accuracy you need" on the same page (issue 65, point 10:
    the curve was a NICV ratio beside an accuracy section in metres).  PRIVATE-K-MEAN keeps its relative cost
    error, the grid clusters their UD.

    Returns
    -------
    (label, measure): ``("centre error (m)", "centre error")``, or ``(measure_for(algorithm), None)``.
    """
    from dpcore.evaluation import CENTRE_ERROR, measure_for
    own = measure_for(algorithm)
    if own == "NICV ratio":
        return f"{CENTRE_ERROR} ({'m' if geo else 'data units'})", CENTRE_ERROR
    return own, None


#: The help of Compare's "Rows used": what a sample changes (speed, a little spread) and what it does not.
ROWS_HELP = ("A uniform sample makes the curve faster. Each release on it is simulated with its noise weighing as "
             "much as on all the rows (ε × all rows ÷ sampled rows; Su et al. 2016, §6), so the curve predicts a "
             "release on all of them; a smaller sample only widens the band a little.")


def curve_caption(measure: str, n_seeds: int, rows_used: str, *, lookalike_words: str | None, person_rows: int | None,
                  ) -> str:
    """The sentence under the privacy-utility curve: what was measured, on what, and who may read it."""
    unit = (f", each person's rows bounded to at most {person_rows}, as a draw does" if person_rows else "")
    if lookalike_words is None:
        return (f"Median and 10–90 % band of the {measure} over {n_seeds} releases per ε, each with fresh "
                f"unpredictable noise, on {rows_used}{unit}. Dotted: your chosen ε. Computed on the raw data: "
                f"{NOT_PRIVATE}; never recorded or published.")
    return (f"Median and 10–90 % band of the {measure} over {n_seeds} releases per ε, each with fresh unpredictable "
            f"noise, on {rows_used} of {lookalike_words}. Dotted: your chosen ε. The data owner can see the same "
            "curve on the data itself.")


def private_data_warning(public: bool) -> str | None:
    """The warning at the top of Compare on private data (None on public data, whose panels are free previews)."""
    if public:
        return None
    return ("Looking at many ε on the real data is itself a use of the data: every panel drawn below is a real "
            "release, recorded in this data's account before it is shown. Choose ε on public or synthetic data "
            "where you can.")
