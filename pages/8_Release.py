"""Release: the chosen private result as published files, and the dataset's account in the release store."""
import pandas as pd
import streamlit as st

import dpcore
from dpcore import release as R
from dpcore.evaluation import noise_effect
from ui import figures as F
from ui import widgets as W
from ui.code_downloads import code_downloads
from ui.marks import THINNED_WORDS, is_thinned
from ui.models import release as RM

W.page_setup(__file__)
st.title("Publish a release")
st.caption("Download the chosen private result. Only private output and public inputs leave this page: no input row, "
           "no non-private centres, no figure computed on the raw data. Every release is recorded in the release "
           "store before anyone sees it, so a reload, another tab or a restart keeps the account.")

ds, fp, algorithm, k, _ = W.release_controls(allow_large=True, epsilon=False)
teach = W.teach_toggle(ds)   # "Explain as I go" on every page that draws (issue 56): public data only


# Everything from ε on is one fragment (issue 56), as on the Explorer: an ε move (a draw, a publication) reruns
# this part only, not the data picker and algorithm above it.
@st.fragment
def release_part():
    eps = W.epsilon_controls(ds, algorithm, k)
    W.set_url(dataset=ds.name, algorithm=algorithm, k=k, epsilon=eps)
    plain = st.empty()      # the plain-language line (issue 65), at the top; with the odds once a draw is shown
    plain.markdown(RM.plain_line(ds.title, W.unit_word(ds)))
    if not W.publishable(ds):
        st.error("This data has no public bounds, so no release of it is private (the range would be read from the data). "
                 "Enter bounds known in advance in the sidebar to publish.")
        st.stop()

    left, right = st.columns([3, 2], gap="large")
    with left:   # drawn (and recorded) first, so the account beside it includes it
        delta = {"delta": W.delta_input(1e-8)} if dpcore.ALGORITHMS[algorithm].needs_delta else {}   # the working set's δ
        W.set_url(**delta)
        fits = W.draw_on_click(ds, fp, algorithm, eps, who="Release page", preview=False, n_clusters=k, **delta)
    with right:  # shown even after a refusal, so the data owner can set or raise the total
        W.account_panel(ds, fingerprint=fp)
    if fits is None:   # refused with no earlier draw (the refusal is shown), or not drawn yet (the button is)
        st.stop()
    fit = fits[0]       # after a refused new draw, the last draw: it stays on screen with its downloads
    rel = fit.release
    model = RM.release_model(rel, title=ds.title, algorithm_name=dpcore.ALGORITHMS[algorithm].display_name, k=k,
                             release_id=fit.release_id)
    plain.markdown(model.plain)
    with left:
        st.subheader(model.heading)
        st.markdown(model.guarantee, help=model.guarantee_help)
        total = W.account_caption(ds, fit=fit, strip=True)
        shown, d = F.published_view_kwargs(fit), len(ds.columns)
        if ds.geo and d == 2:
            deck = F.map_deck(bounds=(fit.bounds_.lower, fit.bounds_.upper), height=520, **shown)
            st.pydeck_chart(deck, height=520)
            # A legend on every map (issue 56): the cells' colour scale, from the released counts only.
            if shown.get("synopsis_counts") is not None:
                st.html(F.count_legend_html(F.count_scale(shown["synopsis_counts"])))
            st.caption("● private centres · grey outline: the public bounds"
                       + (" · cells: the noisy grid synopsis (blue: negative noise)" if "synopsis_counts" in shown else
                          " · green discs: the published points (area ∝ weight"
                          + (f"; {THINNED_WORDS}" if is_thinned(deck) else "") + ")" if "coreset_points" in shown else "")
                       + ".")
        elif d >= 2:
            st.plotly_chart(F.scatter_figure(columns=ds.columns[:2], bounds=(fit.bounds_.lower[:2], fit.bounds_.upper[:2]),
                                             private_centers=fit.cluster_centers_[:, :2],
                                             synopsis_edges=shown.get("synopsis_edges"),
                                             synopsis_counts=shown.get("synopsis_counts")), width="stretch")
        st.caption("Exactly what this release publishes, nothing computed on the raw data: the private centres"
                   + (" and the noisy synopsis" if fit.synopsis_ is not None else "") + ".")
        if teach and W.sees_raw(ds):   # compares with the non-private centres: public data only, not published
            base = W.kmeans_reference(ds, fp, k)
            st.info(noise_effect(fit, base.cluster_centers_, geo=bool(ds.geo) and len(ds.columns) == 2) + " (Teaching only: not part of the release.)", icon="🎓")
        st.markdown("**Private centres**")
        st.dataframe(pd.DataFrame(rel["centroids"], columns=ds.columns), width="stretch")
        if model.synopsis:
            st.caption(model.synopsis)
        W.show_ledger(fit)
        W.draw_controls(fit, ds)
        st.subheader("Download")
        stem = model.stem
        st.caption(f"Release #{fit.release_id} as recorded in the store: downloading it again costs nothing more.")
        st.download_button("Download JSON", R.to_json(rel), file_name=f"{stem}.json", mime="application/json",
                           key="dl_json")
        st.download_button("Download CSV", R.to_csv(rel), file_name=f"{stem}.csv", mime="text/csv", key="dl_csv")
        st.download_button("Download the one-page report (HTML)", R.to_html(rel, account=total), file_name=f"{stem}.html",
                           mime="text/html", key="dl_html")
        code_downloads(rel, release_id=fit.release_id, stem=stem, account=total,
                       data_path=ds.name.removeprefix("upload:"))

    # The row check and the raw facts compare with the raw data: the data owner's (or public data) only.
    if W.sees_raw(ds):
        if W.is_large(ds):
            # The algorithms that scale release noisy averages and noisy counts, never a row; the row check
            # would need a join of the released points with every row where they lie.
            check = ("Not checked on a large source: the algorithms that run on it publish noisy averages and noisy "
                     "counts, never an input row.")
        else:
            hits = R.find_input_rows(rel, ds.X)
            check = (f"{len(hits)} input row(s) coincide exactly with a released point. This can happen by chance; check "
                     "before publishing." if len(hits) else
                     "Checked: no input row appears in this release (as a centre or coreset point).")
        W.raw_facts(ds, fit=fit, lines=[check])


release_part()
