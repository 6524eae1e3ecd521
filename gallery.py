"""dpcore public gallery: what has been published from private data, and what it cost.

Run with ``python3 -m ui.serve --gallery`` (``streamlit run gallery.py`` with its library preloaded).  It reads
only the release store (``$DPCORE_STORE``, else the default SQLite file, see README): the datasets, their
*publications* (draws their authors chose to publish, issue 31) redrawn from the released values, the guarantee in
words, the account of every draw (published or not: each spent budget) and downloads.  It cannot publish, needs no
account, and never imports the dataset loaders: this process refuses to (see ``ui.gallery_guard``),
so not even a curator page reached by URL can open a data file here.
"""
from __future__ import annotations

import streamlit as st

# First of all: this process refuses every module that reads raw data (ui.gallery_guard.FORBIDDEN).
from ui import gallery_guard

gallery_guard.install()

from dpcore import release as R  # noqa: E402  (after the import guard)
from dpcore.exceptions import StoreError  # noqa: E402
from dpcore.glossary import help_for  # noqa: E402
from dpcore.store import ReleaseStore, default_store_url  # noqa: E402
from ui import gallery_view as G  # noqa: E402
from ui.code_downloads import code_downloads  # noqa: E402
from ui.marks import THINNED_WORDS, is_thinned  # noqa: E402
from ui.models import gallery as GM  # noqa: E402
from ui.models import release as RM  # noqa: E402
from ui.models.shared import totals  # noqa: E402


@st.cache_resource(show_spinner=False)
def _store(url: str) -> ReleaseStore:
    return ReleaseStore(url, create=False)  # a reader: never creates a store


@st.cache_resource(show_spinner=False, max_entries=4)
def _published(url: str, heads: tuple) -> list:
    """The store's publications (:meth:`~dpcore.store.ReleaseStore.published`), read once per state of its hash
    chains (``heads``: the keyed chain heads of a verified store change whenever a table's history does), for every
    visitor: a sanitized database's body is 1.4 MB of JSON, ~0.1 s to parse, on every visit and reload before
    (issue 66).  Shared, so read-only: the page never changes a release."""
    return _store(url).published()


@st.cache_data(show_spinner="Running… k-means on the published points", max_entries=64)
def _synopsis_centres(url: str, release_id: int, k: int, _release: dict):
    """k-means on a publication's points (:func:`ui.gallery_view.synopsis_centres`), once per (store, release, k)
    for the server: a release never changes once recorded, and every visitor sees the same centres anyway
    (issue 66: a reload recomputed them)."""
    return G.synopsis_centres(_release, k)


def gallery() -> None:
    st.title("Published private releases")
    st.markdown(GM.PLAIN)
    st.caption("Everything on this page is differentially private output, a public input, or a hash keyed with the "
               "store's secret (the chain heads), read from the release store; who drew what and when is shown as "
               "recorded. This page has no access to any raw data and cannot publish.")
    url = default_store_url()
    try:
        store = _store(url)
        report = store.verify()
        names = store.datasets()
        # A store whose record was altered is read afresh on every visit (its heads stop at the broken link).
        published = _published(url, tuple(sorted(report.heads.items()))) if report else store.published()
    except StoreError as exc:
        st.info(f"No releases to show. {exc}")
        return
    # Only data sets with a publication, the newest publication's first (issue 56): the gallery opens on it.
    newest: dict = {}
    for s in published:
        newest[s.dataset] = max(newest.get(s.dataset, s.published_at), s.published_at)
    names = sorted((n for n in names if n in newest), key=lambda n: newest[n], reverse=True)
    if not names:
        st.info("Nothing has been published yet.")
        return
    titles = GM.titles(names, {n: (store.dataset_info(n) or {}).get("description") for n in names})
    name = st.sidebar.selectbox("Dataset", names, key="dataset", format_func=titles.get,
                                help="Only data sets with at least one publication, the newest first.")
    rows = store.history(name)
    account = totals(store, name, title=titles[name])

    st.header(titles[name])
    # The publications read above, of this data set (each body parsed once a visit: a sanitized database's is 1.4 MB
    # of JSON, ~0.1 s).
    shown = [s for s in published if s.dataset == name]
    figures = GM.account_figures(account, len(shown), len(rows))
    c1, c2, c3 = st.columns(3)
    c1.metric("Releases published", figures.published, help=figures.published_help)
    c2.metric("ε spent on this data", figures.spent, help=help_for("sequential composition"))
    c3.metric("Total ε allowed", figures.total, help=help_for("total"))
    st.subheader("Budget history: every draw")
    st.caption("Each draw spends its ε, published or not; the guarantee for one unit of this data (one row, or "
               "one person's rows) after all of them is the running total (basic sequential composition, Dwork & "
               "Roth 2014, Thm. 3.16).", help=help_for("sequential composition", "privacy unit"))
    st.dataframe(GM.history_rows(rows), hide_index=True, width="stretch")
    if report:
        st.caption(f"✓ Store integrity: {report.checked} records checked, every hash-chain link intact.")
    else:
        table, rid, why = report.first_broken
        st.error(f"The store's record has been altered: row {rid} of {table} — {why}. Do not rely on this history; "
                 "tell the data owner.")
    with st.expander("Chain heads (write these down to detect a rewritten history later)"):
        st.caption("Each head is keyed with the store's secret: it changes whenever its table's history does, and "
                   "says nothing about the data (docs: threat model).")
        # Plain monospace text, not st.code: st.code loads the browser's syntax highlighter (Prism with every
        # language), 2.6 s of the gallery's 14.6 s of script time in Chromium's profile of a reload (issue 66).
        st.text("\n".join(f"{t}: {h}" for t, h in report.heads.items()) or "—")

    stored = shown
    if not stored:
        st.info(f"No release has been published on this dataset yet ({len(rows)} draw(s) recorded, none published).")
        return
    labels = {s.id: GM.release_label(s.id, s.release["algorithm"]["name"], s.epsilon, s.created) for s in stored}
    rid = st.selectbox("Release", list(reversed(list(labels))), format_func=labels.get, key="release")
    s = next(x for x in stored if x.id == rid)
    rel = s.release
    p = rel["privacy"]
    st.subheader(f"Release #{s.id}: {rel['algorithm']['name']}")
    if s.simulation:
        st.warning("This is a simulation on public data (seeded noise): it is not a private release.")
    st.markdown(GM.release_line(rel, who=s.who, created=s.created, published_by=s.published_by,
                                published_at=s.published_at), help=help_for("differential privacy", "ε"))
    centres = None
    if G.is_point_synopsis(rel):
        # A sanitized database (issue 57): any k from the published points and weights, post-processing only.
        k = st.slider("k: centres computed from the published points", min_value=1, max_value=30,
                      value=min(max(len(rel["centroids"]), 1), 30), key="synopsis_k",
                      help="Weighted k-means on the published points and weights. It reads nothing but this "
                           "publication: no ε is spent and nothing is recorded, whatever k you choose.")
        centres = _synopsis_centres(url, s.id, k, rel)
    kind, fig = G.release_view(rel, centres=centres)
    if kind == "map":
        st.pydeck_chart(fig, height=G.MAP_HEIGHT)
        legend = G.legend_html(rel)    # the colour scale of the cells, from the released counts
        if legend is not None:
            st.html(legend)
        st.caption(("Green discs: the published points (area ∝ weight"
                    + (f"; {THINNED_WORDS}" if is_thinned(fig) else "") + ") · orange discs: k-means on them, "
                    f"k = {len(centres)}, {G.centres_origin(rel, len(centres))}" if centres is not None else
                    "Orange discs: private centres")
                   + (" · cells: noisy counts, blue below 0, red above"
                      if (rel.get("synopsis") or {}).get("kind") == "grid" else "")
                   + ". Drawn from the released values only.")
    else:
        st.plotly_chart(fig, width="stretch")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{R.guarantee_sentence(rel)}.** What this guarantees one {R.protected_unit(rel)} in the data:",
                    help=RM.guarantee_terms(R.guarantee_sentence(rel)))
        for stmt in p["statements"]:
            st.markdown(f"- **{stmt['title']}: {stmt['value']}.** {stmt['sentence']}")
    with right:
        st.markdown("**Private centres**" if centres is None else
                    f"**k-means on the published points, k = {len(centres)}** (post-processing: no spend)")
        st.dataframe(G.centres_table(rel, centres), hide_index=True, width="stretch")
        st.markdown("**This release's budget ledger**", help=help_for("budget ledger"))
        st.dataframe(G.ledger_table(rel), hide_index=True, width="stretch")
    stem = f"release_{s.id}_{rel['algorithm']['key']}"
    # Every file is written when its button is pressed (a callable: Streamlit's deferred download), not on each
    # visit: a sanitized database's JSON, CSV, report and Parquet took ~1 s of the page's first render (issue 66).
    d1, d2, d3 = st.columns(3)
    d1.download_button("Download JSON", lambda: R.to_json(rel), file_name=f"{stem}.json", mime="application/json",
                       key="dl_json")
    d2.download_button("Download CSV", lambda: R.to_csv(rel), file_name=f"{stem}.csv", mime="text/csv", key="dl_csv")
    # The report carries the data's running total (issue 56), as the Release page's does, in one unit.
    total = GM.report_total(account, rel)
    d3.download_button("Download report (HTML)", lambda: R.to_html(rel, account=total), file_name=f"{stem}.html",
                       mime="text/html", key="dl_html")
    code_downloads(rel, release_id=s.id, stem=stem, account=total)
    if G.is_point_synopsis(rel):
        n_points = len(rel["synopsis"]["weights"])
        st.markdown(f"**The published points and weights** ({n_points} points), for any analysis of your own: "
                    "k-means with weights, counts in a rectangle, a density map. Using them spends nothing.")
        p1, p2 = st.columns(2)
        p1.download_button("Download points and weights (CSV)", lambda: G.synopsis_frame(rel).to_csv(index=False),
                           file_name=f"{stem}_points.csv", mime="text/csv", key="dl_points_csv")
        p2.download_button("Download points and weights (Parquet)", lambda: G.parquet_bytes(G.synopsis_frame(rel)),
                           file_name=f"{stem}_points.parquet", mime="application/vnd.apache.parquet",
                           key="dl_points_parquet")


st.set_page_config(page_title="dpcore · published releases", page_icon="🔓", layout="wide")
# One page only: with st.navigation Streamlit does not offer the curator's pages/ beside this file.
st.navigation([st.Page(gallery, title="Published releases")], position="hidden").run()
