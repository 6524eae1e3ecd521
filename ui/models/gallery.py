"""The public gallery's model (issue 65): what was published from private data, in words anyone reads.

Everything here reads the release store's rows and recorded releases only (the gallery never imports the
data loaders).  A data set is named by its title (the store's description), never by its key
(``nyc_taxi_sample``, ``upload:checkins_private.csv``); a person by :func:`~ui.models.shared.person_words`
(never ``root@vm (local mode) · publish``); every ε in the one rounding; no ``None``.  No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore.explain import running_total
from dpcore.formatting import fmt_delta, fmt_epsilon

from .shared import Totals, dataset_title, page_words, person_words

#: The one plain-language line at the top of the gallery.
PLAIN = ("**In plain words:** each release below shows where the people or events in a data set cluster, with noise "
         "added so that no single person or record can be picked out. The numbers say how strong that protection "
         "is and how much of each data set's privacy budget every draw used, published or not.")


def titles(names, descriptions: dict) -> dict:
    """The gallery's data set choices: store key -> the title people read (unique; a key's own words otherwise).

    Parameters
    ----------
    names : iterable of str
        The store's data set names.
    descriptions : dict
        Name -> the store's description (the title recorded with the first draw), or None.
    """
    out: dict = {}
    for n in names:
        t = dataset_title(n, descriptions.get(n))
        out[n] = t if t not in out.values() else f"{t} ({n})"
    return out


@dataclass(frozen=True)
class AccountFigures:
    """The three figures over a data set's history: releases published, ε spent, the total."""

    published: str
    spent: str
    total: str
    published_help: str


def account_figures(account: Totals, n_published: int, n_draws: int) -> AccountFigures:
    """The gallery's account figures in the one rounding, never ``None`` ("no total set")."""
    return AccountFigures(
        published=str(n_published), spent=fmt_epsilon(account.spent_epsilon),
        total=fmt_epsilon(account.cap_epsilon) if account.cap_epsilon is not None else "no total set",
        published_help=(f"Of {n_draws} draw(s) recorded: every draw is a use of the data and spent its ε; only the "
                        "ones their authors published are shown below."))


def history_rows(rows: list[dict]) -> list[dict]:
    """:meth:`dpcore.store.ReleaseStore.history` rows as the gallery's table shows them, the ε columns first.

    Returns
    -------
    list of dict with keys ``release``, ``ε``, ``ε so far``, ``total ε``, ``δ``, ``algorithm``, ``drawn by``,
    ``page``, ``drawn (UTC)`` (and ``simulation`` when any row is one).
    """
    sim = any(r.get("simulation") for r in rows)
    out = []
    for r in rows:
        t = r.get("time")
        row = {"release": r["id"], "ε": fmt_epsilon(r["epsilon"]), "ε so far": fmt_epsilon(r["total_epsilon"]),
               "total ε": fmt_epsilon(r.get("cap_epsilon"), none="none"), "δ": fmt_delta(r.get("delta") or 0.0),
               "algorithm": r["algorithm"], "drawn by": person_words(r.get("who")), "page": page_words(r.get("who")),
               "drawn (UTC)": (t.strftime("%Y-%m-%d %H:%M:%S") if hasattr(t, "strftime") else str(t or "")[:19]
                               .replace("T", " "))}
        if sim:
            row["simulation"] = "yes (not private)" if r.get("simulation") else ""
        out.append(row)
    return out


def release_label(release_id: int, algorithm_name: str, epsilon: float, created) -> str:
    """A release in the gallery's list: ``"#12 · EUGkM · ε = 1 · 2026-01-02 10:00 UTC"``."""
    return f"#{release_id} · {algorithm_name} · ε = {fmt_epsilon(epsilon)} · {created:%Y-%m-%d %H:%M} UTC"


def release_line(release: dict, *, who: str | None, created, published_by: str | None, published_at) -> str:
    """The line under a release's title: its guarantee, who drew it and when, who published it, its source."""
    p = release["privacy"]
    return (f"**{p['guarantee']}** ({p['level']}) · drawn {created:%Y-%m-%d %H:%M} UTC"
            + (f" by {person_words(who)}" if who else "")
            + f" · published {published_at:%Y-%m-%d %H:%M} UTC"
            + (f" by {person_words(published_by)}" if published_by else "")
            + f" · source: {release['algorithm']['reference']}")


def report_total(account: Totals, release: dict) -> str:
    """The data set's running total for the release's report (the report's words, one unit).

    The total holds per row: in the row's own word ("trip") when this release is row level, as its guarantee
    says; a person-level release's row word is not recorded, so "record".
    """
    from dpcore.explain import unit_words
    from dpcore.release import protected_unit
    row_level = not (release.get("privacy_unit") or {}).get("person_level")
    return running_total(None, account.spent_epsilon, account.cap_epsilon,
                         unit=protected_unit(release) if row_level else unit_words(None).one)
