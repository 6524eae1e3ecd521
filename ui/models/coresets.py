"""The Private coresets page's model (issue 65): PRIVATE-K-MEAN's coreset and the sanitized database at one ε.

What the page says around its two draws: the options of the budget rule (with help that is true of what the
fit spends), whether PRIVATE-K-MEAN can run at this ε on public data (its size is public) and the smallest ε
that can, the coreset's caption and its download's name.  Both draws' buttons and the data's account come
from :mod:`ui.models.shared`; the page resolves both draws before it shows any total, so every total on it
agrees (issue 65, point 4).  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore.explain import NOT_PRIVATE
from dpcore.formatting import fmt_delta, fmt_epsilon

from .shared import WorkingSet

#: The budget rules, short enough for the sidebar's one-line select box (longer ones were cut, issue 56).
BUDGETS = {"schedule": "All on the rounds that run", "paper": "Paper's rule (Alg. 1 line 1)"}
#: Their help: true of what a fit spends (issue 65, point 3: 0.0392 of ε = 1 was never spent under "schedule").
BUDGET_HELP = ("All on the rounds that run: ε is divided among the SMALL-BALL rounds that actually run, so a draw "
               "spends all of it (the same guarantee; a draw that runs no round stops after its noisy size and "
               "spends only that). Paper's rule: ε' = 3ε / (8k ln n) per round, as in Alg. 1 line 1, provisioned "
               "for the worst case: most of ε is left unspent, and how much is known only after the noisy size is "
               "drawn.")
CONSTANTS = {"proved": "Proved constants", "paper_experiments": "Paper's constants: no proof"}
CONSTANTS_HELP = ("Proved constants: every round's guarantee holds. The paper's own experiments used Δ = 8 (§4, "
                  "footnote 3), which lets smaller ε run but carries no utility proof. Privacy is the same either way.")


@dataclass(frozen=True)
class Feasibility:
    """Whether PRIVATE-K-MEAN can run at the working set's ε (known before a draw on public data only).

    Attributes
    ----------
    ok : bool
    warning : str or None
        Why it cannot, and that nothing was drawn.
    suggest : float or None
        The smallest ε of the slider that can run (a "Use ε = …" button), None when none can.
    """

    ok: bool
    warning: str | None = None
    suggest: float | None = None


def feasibility(ws: WorkingSet, need: float | None, slider_values) -> Feasibility:
    """PRIVATE-K-MEAN's feasibility at ``ws.epsilon`` (Feldman et al. 2017, Alg. 1 line 2).

    Parameters
    ----------
    ws : WorkingSet
    need : float or None
        The smallest feasible ε at the data's public size (:func:`dpcore.algorithms.coreset.plan.
        min_feasible_epsilon`); None when the size is not public (private data: the fit decides from its noisy
        size, after spending it).
    slider_values : iterable of float

    Returns
    -------
    Feasibility
    """
    if need is None or float(ws.epsilon) >= need:
        return Feasibility(True)
    higher = [e for e in slider_values if e >= need]
    eps = fmt_epsilon(ws.epsilon)
    return Feasibility(False, f"PRIVATE-K-MEAN cannot run at ε = {eps} on this data with k = {ws.k}: it needs ε of "
                              f"about {fmt_epsilon(need)} or more (Feldman et al. 2017, Alg. 1 line 2). ε stays {eps} "
                              "on every page; nothing was drawn or spent. Choose a larger ε here, or fewer clusters.",
                       higher[0] if higher else None)


def headline(ws: WorkingSet) -> str:
    """The line over the coreset: the data set's title and δ."""
    return f"**{ws.title}** · δ = {fmt_delta(ws.delta)}"


def map_caption(sees_raw: bool) -> str:
    """The sentence under the coreset's map."""
    return ("green discs: the private coreset, the only thing computed from the data (area ∝ weight) · "
            "● private centres, k-means on the coreset · "
            + (f"○ non-private centres ({NOT_PRIVATE}) · " if sees_raw else "")
            + "grey outline: the public bounds. Hover a disc for its weight, a private centre for its "
              "coordinates and noisy size.")


def coreset_file(ws: WorkingSet, release_id: int) -> str:
    """The coreset download's file name."""
    return f"private_coreset_eps{fmt_epsilon(ws.epsilon)}_release{release_id}.csv"
