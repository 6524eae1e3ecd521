"""The High-dimensional page's model (issue 65): k private centres of image-like data, against the trivial answer.

The algorithm this page uses (one of the classes tagged ``high_dimensional``, even when the working set's is
another page's), the headline with the guarantee, the warning when the private centres fit worse than one
centre at the mean, and the labels of the inertia figure.  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore.explain import NOT_PRIVATE
from dpcore.formatting import fmt_delta, fmt_epsilon

from .shared import WorkingSet

#: The page's own default when the working set's algorithm is not one for many columns.
DEFAULT = "zcdp_lloyd"


@dataclass(frozen=True)
class AlgorithmChoice:
    """Which algorithm the page offers first, and whether it is the working set's (then its choice is shared)."""

    start: str
    own: bool
    note: str | None


def algorithm_choice(chosen: str | None, offered: list[str], names: dict) -> AlgorithmChoice:
    """The page's algorithm from the working set's ``chosen`` one.

    An algorithm for many columns chosen on another page is this page's too (the shared setting); any other
    stays the other pages' and this page uses its own default, saying so.
    """
    own = chosen in offered
    start = chosen if own else DEFAULT if DEFAULT in offered else offered[0]
    note = None
    if chosen is not None and not own:
        name = names.get(chosen) or chosen
        note = (f"{name}, chosen on another page, is not one of this page's algorithms for many columns: this page "
                f"uses the one above, and the other pages keep {name}.")
    return AlgorithmChoice(start, own, note)


def headline(ws: WorkingSet) -> str:
    """The line over the centres: the title, the number of columns and the guarantee."""
    dp = (f"(ε = {fmt_epsilon(ws.epsilon)}, δ = {fmt_delta(ws.delta)})-DP" if ws.delta
          else f"ε = {fmt_epsilon(ws.epsilon)}-DP")
    return f"**{ws.title}** · {ws.d} columns · {dp}"


def worse_than_mean(ws: WorkingSet, private_inertia: float, mean_inertia: float) -> str | None:
    """The warning when the private centres fit the data worse than one centre at the mean (raw data: owner only)."""
    if private_inertia <= mean_inertia:
        return None
    return (f"At ε = {fmt_epsilon(ws.epsilon)} these {ws.k} private centres fit the data worse than one centre at "
            f"the mean (inertia {private_inertia:.3g} against {mean_inertia:.3g}). Do not publish them: publish a DP "
            "mean instead (it costs almost nothing at this size), or raise ε"
            + (", or choose zCDP-Lloyd." if ws.algorithm != DEFAULT else "."))


def inertia_labels(ws: WorkingSet, name: str, mean_inertia: float) -> tuple[str, str, str]:
    """The inertia figure's bars and reference line: private, non-private (not private), the trivial answer."""
    return (f"private ({name}, ε = {fmt_epsilon(ws.epsilon)})", f"non-private k-means++ ({NOT_PRIVATE})",
            f"trivial answer: one centre at the mean ({mean_inertia:.3g})")
