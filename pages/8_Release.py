"""Release: publish the chosen result (JSON, CSV, one-page HTML) and keep the session's budget account."""
import pandas as pd
import streamlit as st

import dpcore
from dpcore import release as R
from dpcore.exceptions import BudgetExceededError
from dpcore.explain import level_for
from ui import widgets as W

W.page_setup(__file__)
st.title("Publish a release")
st.caption("Download the chosen private result. Only private output and public inputs leave this page: no input row, "
           "no non-private centres, no figure computed on the raw data.")

ds, fp, algo, k, eps, seed = W.release_controls()
W.set_url(dataset=ds.name, algorithm=algo, k=k, epsilon=eps, seed=seed)
n, d = ds.X.shape
if ds.bounds is None:
    st.error("This data has no public bounds, so no release of it is private (the range would be read from the data). "
             "Enter bounds known in advance in the sidebar to publish.")
    st.stop()

delta = {"delta": 1e-8} if dpcore.ALGORITHMS[algo].needs_delta else {}
est = W.release(ds, fp, algo, n_clusters=k, epsilon=eps, random_state=seed, **delta)
with W.friendly_errors("Building the release"):
    rel = R.build_release(est, algorithm=algo, dataset=ds.name, columns=ds.columns, simulation=est.simulation_)
account = W.session_account()
key = W.dataset_key(ds, fp)
release_id = (key, algo, k, eps, seed, tuple(sorted(delta.items())))
published = st.session_state.setdefault("dpcore_published", {})

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(f"{dpcore.ALGORITHMS[algo].display_name} · k = {k} · ε = {eps:g} ({level_for(eps).name}) · seed {seed}")
    st.markdown(f"**Guarantee:** {rel['privacy']['guarantee']} for every person in *{ds.title}*.")
    st.markdown("**Private centres**")
    st.dataframe(pd.DataFrame(rel["centroids"], columns=ds.columns), width="stretch")
    syn = rel["synopsis"]
    if syn is not None:
        st.caption(f"Also released: the private synopsis ({syn['kind']}), in full in the JSON and CSV files.")
    W.show_ledger(est)
    hits = R.find_input_rows(rel, ds.X)
    if len(hits):
        st.warning(f"{len(hits)} input row(s) coincide exactly with a released point. This can happen by chance; "
                   "check before publishing. (Check on the raw data: not private, for the data owner's eyes only.)")
    else:
        st.caption(f"Checked: none of the {n:,} input rows appears in this release "
                   "(check on the raw data: not private, for the data owner's eyes only).")

with right:
    st.subheader("Budget account for this data")
    st.warning("Every release of the same data adds up (sequential composition). Looking at many ε or seeds on "
               "the real data and keeping the best is itself a use of the data: record what you publish here.",
               icon="⚠️")
    use_cap = st.checkbox("Set a total budget that further releases may not exceed", key="use_cap",
                          value=account.cap(key) is not None)
    if use_cap:
        cap_now = account.cap(key)
        total = st.number_input("Total ε for this data", min_value=0.001, max_value=100.0,
                                value=float(cap_now[0]) if cap_now else 1.0, step=0.1, format="%.3f", key="cap_eps")
        total_delta = st.number_input("Total δ", min_value=0.0, max_value=0.1,
                                      value=float(cap_now[1]) if cap_now else 1e-6, format="%.1e", key="cap_delta")
        if cap_now is None or (cap_now[0], cap_now[1]) != (total, total_delta):
            try:
                account.set_cap(key, total, total_delta)
            except ValueError as exc:
                st.error(f"That total cannot be set: {exc}")
    elif account.cap(key) is not None:
        account.set_cap(key, None)
    spent_eps, spent_delta = account.spent(key)
    cap = account.cap(key)
    c1, c2 = st.columns(2)
    c1.metric("ε published so far", f"{spent_eps:.4g}")
    if cap:
        c2.metric("ε left", f"{account.remaining(key)[0]:.4g}", f"of {cap[0]:.4g}", delta_color="off")
    records = account.records(key)
    if records:
        st.dataframe(pd.DataFrame(records)[["label", "epsilon", "delta"]], hide_index=True, width="stretch")

    st.subheader("Publish")
    already = release_id in published
    if already:
        st.success("This exact release is recorded in the account; downloading it again costs nothing more "
                   "(it is the same output).")
    else:
        why = account.refusal(key, rel["privacy"]["epsilon_spent"], rel["privacy"]["delta_spent"])
        if why:
            st.error(f"Refused: {why}")
        if st.button(f"Record and publish (spends ε = {rel['privacy']['epsilon_spent']:.4g})", key="publish",
                     type="primary", disabled=why is not None):
            try:
                account.charge_release(key, rel)
            except BudgetExceededError as exc:
                st.error(f"Refused: {exc}")
            else:
                published[release_id] = True
                st.rerun()
    if release_id in published:
        stem = f"{ds.name}_{algo}_k{k}_eps{eps:g}_seed{seed}"
        st.download_button("Download JSON", R.to_json(rel), file_name=f"{stem}.json", mime="application/json",
                           key="dl_json")
        st.download_button("Download CSV", R.to_csv(rel), file_name=f"{stem}.csv", mime="text/csv", key="dl_csv")
        st.download_button("Download the one-page report (HTML)", R.to_html(rel), file_name=f"{stem}.html",
                           mime="text/html", key="dl_html")
