"""The Release page's model (issue 65): a recorded draw as published files, in words a stakeholder reads.

:func:`plain_line` is the one plain-language line at the top of the page (and, for a published release, of
the gallery): what publishing does and what it keeps hidden.  :func:`release_model` gives the rest: the
heading with the odds bound, the guarantee with a tooltip for each term it uses (from
:mod:`dpcore.glossary`), what is released besides the centres, and the downloads' file name (the data set's
title, never a store key such as ``upload:checkins_private.csv``).  No Streamlit here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from dpcore.explain import level_for
from dpcore.formatting import fmt_epsilon, fmt_odds
from dpcore.glossary import help_for

#: What a release's synopsis is, by kind, in words (the page's "Also released" line; the JSON names the kind).
SYNOPSIS_WORDS = {
    "grid": "a noisy grid synopsis: a noisy count of points per cell",
    "coreset": "a private coreset: weighted points k-means ran on",
    "wavelet_grid": "its grid of cells, each labelled with its cluster",
    "points": "a sanitized database: weighted points anyone can analyse at no cost",
}


def plain_line(title: str, unit: str, epsilon: float | None = None) -> str:
    """One sentence in plain words: what publishing a release of ``title`` shows, and what it keeps hidden.

    Parameters
    ----------
    title : str
        The data set as people read it.
    unit : str
        What one ε protects ("trip", "user", ...).
    epsilon : float or None
        The release's ε, for the odds it promises; None for the gallery's general line.

    Returns
    -------
    str (Markdown)
    """
    odds = (f": an observer's odds about any one {unit} change by at most {fmt_odds(epsilon)}"
            if epsilon is not None else "")
    return (f"**In plain words:** a release shows where the data of *{title}* cluster, with noise added so that no "
            f"single {unit} can be picked out{odds}. Every draw is counted against this data's privacy budget, "
            "published or not.")


@dataclass(frozen=True)
class ReleaseModel:
    """What the Release page shows around a recorded draw.

    Attributes
    ----------
    plain : str
        The plain-language line (Markdown).
    heading : str
    guarantee : str
        The guarantee with its unit (Markdown).
    guarantee_help : str
        The glossary's words for each term the guarantee uses (a tooltip).
    synopsis : str or None
        "Also released: …", or None when only centres are released.
    stem : str
        The downloads' file name stem.
    """

    plain: str
    heading: str
    guarantee: str
    guarantee_help: str
    synopsis: str | None
    stem: str


def slug(text: str) -> str:
    """A file-name-safe form of a title: ``"NYC taxi 2009–15 (built in)"`` -> ``"nyc-taxi-2009-15-built-in"``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "data"


def guarantee_terms(guarantee: str) -> str:
    """The glossary's words for the terms a guarantee sentence uses (differential privacy, ε, δ, the unit, group
    privacy), for its tooltip."""
    terms = ["differential privacy", "ε", "privacy unit"]
    if "δ" in guarantee or ", " in guarantee.split("-differential")[0]:
        terms.append("δ")
    if "group privacy" in guarantee:
        terms.append("group privacy")
    return help_for(*terms)


def release_model(release: dict, *, title: str, algorithm_name: str, k: int | None, release_id: int) -> ReleaseModel:
    """The Release page's words for the recorded ``release`` (a ``dpcore-release/2`` dict).

    Parameters
    ----------
    release : dict
    title : str
        The data set as people read it.
    algorithm_name : str
    k : int or None
    release_id : int

    Returns
    -------
    ReleaseModel
    """
    from dpcore.release import guarantee_sentence, protected_unit
    eps = float(release["privacy"]["epsilon"])
    unit = protected_unit(release)
    guarantee = guarantee_sentence(release)
    kind = (release.get("synopsis") or {}).get("kind")
    head = f"{algorithm_name}" + (f" · k = {k}" if k else "") + f" · ε = {fmt_epsilon(eps)} ({level_for(eps).name})"
    return ReleaseModel(
        plain=plain_line(title, unit, eps),
        heading=head,
        guarantee=f"**Guarantee:** {guarantee}, in *{title}*.",
        guarantee_help=guarantee_terms(guarantee),
        synopsis=None if kind is None else f"Also released: {SYNOPSIS_WORDS.get(kind, kind)}, in full in the JSON "
                                           "and CSV files.",
        stem=f"{slug(title)}_{release['algorithm']['key']}" + (f"_k{k}" if k else "")
             + f"_eps{fmt_epsilon(eps)}_release{release_id}",
    )
