"""A data set's running total in words, from the release store (issue 31): for reports and the command line.

Every draw on the same data adds up (basic sequential composition), so a release is shown with the
data's total so far and what is left of its cap, never alone.  :func:`account_sentence` reads the
store and words it with :func:`dpcore.explain.running_total`, naming the unit the total holds for.
"""
from __future__ import annotations

from ..explain import running_total, unit_words
from ..release.export import protected_unit


def account_sentence(store, dataset: str, release: dict | None = None, *, kind: str = "points") -> str:
    """This release's ε, the data's ε spent so far and what is left of its cap, as one Markdown sentence.

    The total holds per person only when every draw recorded on the data protected whole persons;
    otherwise it is said per row (``kind``'s word: "trip", "record"), with the group-privacy caveat.

    Parameters
    ----------
    store : ReleaseStore
    dataset : str
        The account.
    release : dict or None
        The release shown beside the total (its ``epsilon_spent`` and unit), or None for the totals only.
    kind : {"trips", "check-ins", "images", "points"}
        What a row of the data is (:func:`dpcore.explain.unit_words`), unless a row-level release (this one,
        else the latest recorded) names it.

    Returns
    -------
    str
        Markdown (bold allowed), a function of the recorded ε values and units only.

    Examples
    --------
    >>> from dpcore.store import ReleaseStore
    >>> store = ReleaseStore(":memory:")
    >>> store.set_cap("taxi", 2.0)
    >>> account_sentence(store, "taxi")[:51]
    'ε spent so far on this data: **0** (cap 2, 2 left),'
    """
    spent, _ = store.spent(dataset)
    cap = store.cap(dataset)
    recorded = [r.release for r in store.releases(dataset)]
    person_total = bool(recorded) and all((r.get("privacy_unit") or {}).get("person_level") for r in recorded)
    row = unit_words(None, kind).one
    rows_said = [r for r in ([release] if release is not None else []) + recorded[::-1]
                 if str(r.get("format", "")).startswith("dpcore-release/")
                 and not (r.get("privacy_unit") or {}).get("person_level")]
    if rows_said:
        row = protected_unit(rows_said[0])   # a row-level release names its rows ("trip")
    if release is not None:
        unit = protected_unit(release)
    else:
        unit = protected_unit(recorded[-1]) if person_total else row
    release_eps = None if release is None else float(release["privacy"]["epsilon_spent"])
    return running_total(release_eps, spent, cap[0] if cap else None, unit=unit,
                         total_unit=unit if person_total else row, group_caveat=not person_total)
