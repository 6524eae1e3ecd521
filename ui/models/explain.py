"""The Explain page's model (issue 65, point 11): what an ε promises, in numbers and short plain sentences.

Every figure comes from :mod:`dpcore.explain` and is written by :mod:`dpcore.formatting` (an attacker's
advantage below 1 never reads "100.0%").  The advisor's section is short bullets under four headings
(:data:`ADVISOR`), and says which advisor reads only public inputs (the sidebar's) and which uses the true
number of rows (the data owner's, in the raw-facts panel), so that it agrees with "What is not private".
No Streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcore import explain as X
from dpcore.formatting import fmt_epsilon, fmt_odds, fmt_share


@dataclass(frozen=True)
class Metric:
    """One of the three figures at the top: its label (with its context) and the bound."""

    label: str
    value: str


def top_metrics(statements) -> list[Metric]:
    """The first three statements as metrics: the bound as the figure, its context in the label.

    A metric cuts a long value ("62.2% (fro…", issue 56), so "at most 73.1 % (from 50 %)" becomes the label
    "Belief after seeing the release (from 50 %)" and the value "≤ 73.1 %".
    """
    out = []
    for s in statements[:3]:
        value, _, context = s.value.partition(" (")
        out.append(Metric(s.title + (f" ({context}" if context else ""), value.replace("at most ", "≤ ")))
    return out


def levels_rows(*, prior: float = 0.5) -> list[dict]:
    """One row per point of the ε slider: the odds bound, the attacker's advantage, the belief from ``prior``, and
    the deployments near it, each in the one rounding."""
    return [{"ε": ", ".join(fmt_epsilon(e) for e in r["epsilons"]),
             "odds change at most": fmt_odds(max(r["epsilons"])),
             "attacker's advantage at most": fmt_share(r["advantage"]),
             f"belief from {fmt_share(prior)} at most": fmt_share(r["posterior"]),
             "beside real deployments": X.deployments_sentence(max(r["epsilons"]))}
            for r in X.levels_table(prior=prior)]


def several_releases(epsilon: float, n_releases: int) -> str:
    """What ``n_releases`` releases at ``epsilon`` give together (sequential composition), in one sentence."""
    total, _ = X.sequential_total([epsilon] * n_releases)
    return (f"{n_releases} release(s) at ε = {fmt_epsilon(epsilon)} together give ε = **{fmt_epsilon(total)}** "
            f"(sequential composition): odds can change by at most {fmt_odds(total)} and belief from 50 % can "
            f"reach {fmt_share(X.posterior_bound(total))}. Looking at many ε or draws on the real data and picking "
            "one counts too. The Release page keeps this account per data set.")


#: What is computed on the raw data (the data owner's eyes only), as the page's last section says it.
NOT_PRIVATE_TEXT = ("Some figures in this app are computed on the raw data to help the data owner judge a release: "
                    "non-private centres, raw points, NICV, cost and UD figures, the privacy–utility curves and the "
                    "data owner's advisor in the raw-facts panel (it uses the true number of rows; the sidebar's "
                    f"advisor uses a public size). Each is labelled **“{X.NOT_PRIVATE}”**. They are never part of a "
                    "published release.")


def advisor_sections(separation_share: float) -> list[tuple[str, list[str]]]:
    """The advisor and Auto in four short sections of bullets: what it reads, what it cannot know, how it picks,
    what Auto spends.

    Parameters
    ----------
    separation_share : float
        Auto's share of ε (after the noisy count) for its read of the clusters (:func:`dpcore.evaluation.
        auto_separation_share`).
    """
    return [
        ("What the advisor reads: public inputs only, and it spends nothing", [
            "A size (a published total, your own estimate, or a count already released with noise), the number of "
            "columns d, k, ε, δ and how many rows one person may have (L).",
            "From these it predicts each algorithm's k-means cost against non-private k-means, from measurements "
            "shipped with the package (Gaussian mixtures and real public sets, fitted once at each ε). It never "
            "looks at your data, so its advice costs no privacy.",
            "That is the sidebar's advisor. The data owner's advisor in the raw-facts panel of Compare uses the true "
            "number of rows instead: its figures are not private (see “What is not private” below).",
        ]),
        ("What it cannot know", [
            "How separated your clusters are: DPM wins on far-apart clusters, zCDP-Lloyd where they overlap.",
            "Whether your clusters hold about the same number of points: on far-apart clusters of equal sizes DPM "
            "wins by far, on unequal ones much less; where a few heavy clusters stand among many light ones (like "
            "pickups around a few hubs) it loses the light ones and the grid algorithms win.",
            "Points packed tightly around far-apart centres favour DPM more than it predicts (DPM's own 10-d "
            "benchmark, 100,000 points in 64 tight clusters: DPM 1.3× non-private k-means at ε = 1, the advisor's "
            "pick 1.8×): if you know your data are like that, try DPM.",
        ]),
        ("How it picks", [
            "The algorithm predicted best on data like yours, unless on some kind of clusters it could be more than "
            "three times worse than the safest single choice: then that one.",
            "**Auto** where that pick could be more than twice as bad as the best answer and Auto's read of the "
            "clusters is predicted to cut that risk to less than half; **Auto** too where no algorithm holds up.",
            "The measurements run from overlapping clusters (separation c = 1: neighbouring centres about one "
            "cluster radius apart) to far-apart ones (c = 16).",
        ]),
        ("What Auto spends: all of your ε, said before it draws", [
            "About 2 % for a noisy count (nothing if you give a public size).",
            f"{fmt_share(separation_share)} of the rest on two noisy histograms that tell roughly how separated your "
            "clusters are and whether their sizes could be equal; skipped, and given to the candidates, where no "
            "reading could change them.",
            "A share for each candidate algorithm (up to three, named from public inputs and that read; equal "
            "shares, or 2:1 or 3:1 between two where one loses more as ε falls).",
            "5 % of the rest to choose one of them privately by its clipped k-means cost (none with a single "
            "candidate). Only the chosen centres are published; the release's ledger lists every share.",
        ]),
    ]


def advisor_markdown(separation_share: float) -> str:
    """:func:`advisor_sections` as Markdown: a bold heading and its bullets per section."""
    return "\n\n".join(f"**{head}**\n" + "\n".join(f"- {b}" for b in bullets)
                       for head, bullets in advisor_sections(separation_share))
