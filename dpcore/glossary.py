"""Plain words for the field's terms (issue 31): one place for every help tooltip and the Explain page's glossary.

Each entry is one or two sentences a non-specialist can read, then its source.  The app shows
:func:`help_for` as the tooltip at a term's first use on a page, and the whole table on the
Explain page.  Nothing here depends on data.
"""
from __future__ import annotations

#: term -> plain-words definition (with its source).
GLOSSARY: dict[str, str] = {
    "ε (epsilon)": "How much one unit of the data (a row, or all of one person's rows) can change what is "
                   "published: an observer's odds about that unit change by at most e^ε. Smaller is more private. "
                   "(Dwork & Roth 2014, Def. 2.4.)",
    "δ (delta)": "A small probability with which the ε promise may fail; 0 for pure ε-differential privacy. It "
                 "should be far below one over the number of people. (Dwork & Roth 2014, Def. 2.4.)",
    "privacy unit": "What one ε protects as a whole: one row (one trip, one check-in), or all of one person's rows "
                    "in a person-level release. (Issue 23; Desfontaines' list states every deployment's unit.)",
    "sensitivity": "The most one unit can change a computed figure (a count, a sum); the noise is scaled to it. "
                   "(Dwork & Roth 2014, Def. 3.1.)",
    "NICV": "Spread within clusters, relative to the data's spread: the mean squared distance of points to their "
            "nearest centre on the [-1, 1]-scaled domain. Lower is better. (Su et al. 2016, Eq. 1.)",
    "synopsis": "A noisy summary of the data (e.g. counts on a grid) that is published and then clustered: "
                "everything after it is post-processing and costs no more ε. (Su et al. 2016, §4.)",
    "θ (theta)": "EUGkM's grid-size constant: the grid has about sqrt(N·ε/θ) cells per side, so a larger θ means "
                 "fewer, larger cells (less noise per point, coarser centres). (Su et al. 2016, Eq. 4, θ = 10.)",
    "coreset": "A small weighted set of points that stands in for the data: k-means on it is close to k-means on "
               "all points. The private coreset is built with noise. (Feldman et al. 2009.)",
    "zCDP": "Zero-concentrated differential privacy, a way to add up Gaussian noise over many steps more tightly; "
            "ρ-zCDP converts to (ε, δ)-DP for any δ > 0. (Bun & Steinke 2016, Prop. 1.3.)",
    "DCOM": "For WaveCluster: a classifier is trained on each result's clusters, and DCOM is the share of held-out "
            "points the private and the non-private classifier put in different clusters (after matching the "
            "clusters one to one); 0 is perfect. DC2E counts pairs of points instead. (Chen, Yu & Chirkova 2015, "
            "§6.1.2.)",
    "sequential composition": "Releases of the same data add up: k releases at ε each protect a unit only at k·ε "
                              "in total. (Dwork & Roth 2014, Thm. 3.16.)",
    "differential privacy": "A promise about a published result: whatever anyone concludes from it would have been "
                            "almost as likely had any one unit (a row, or one person's rows) not been in the data; "
                            "ε says how much 'almost' is. (Dwork & Roth 2014, Def. 2.4.)",
    "group privacy": "A row-level release protects one row at ε; a person with m rows in the data is protected only "
                     "at m·ε, since the ε of their rows adds up. A person-level release bounds each person's rows and "
                     "protects the whole person at ε. (Dwork & Roth 2014, Thm. 2.2.)",
    "discrete Laplace": "The noise added to counts: a whole number, as likely positive as negative, whose typical size "
                        "is the sensitivity divided by ε; whole numbers keep the noise exact on a computer. "
                        "(Canonne, Kamath & Steinke 2020.)",
    "budget ledger": "The steps of one release and the ε (and δ) each spent: they add up to the release's ε, and a "
                     "step can never spend more than was granted. (Dwork & Roth 2014, Thm. 3.16; issue 65.)",
    "post-processing": "Anything computed from a published result alone (k-means on a synopsis, a map, a total) costs "
                       "no more ε: it cannot reveal more about anyone than the result itself. (Dwork & Roth 2014, "
                       "Prop. 2.1.)",
    "total": "The most ε all draws of one data set may spend together, set by its owner: every draw counts, published "
             "or not, and a draw that would go over it is refused before it runs. (Dwork & Roth 2014, Thm. 3.16.)",
}


def help_for(*terms: str) -> str:
    """The plain-words definitions of ``terms`` (keys of :data:`GLOSSARY`, or their first word), for a tooltip.

    Raises
    ------
    KeyError
        A term that is not in the glossary (so a tooltip never silently goes missing).
    """
    out = []
    for t in terms:
        key = t if t in GLOSSARY else next((k for k in GLOSSARY if k.split(" ")[0] == t), None)
        if key is None:
            raise KeyError(f"{t!r} is not in dpcore.glossary.GLOSSARY")
        out.append(f"**{key}**: {GLOSSARY[key]}")
    return "\n\n".join(out)
