"""Compare: the same release at several privacy levels, the privacy-utility curve, and the Su et al. advisor."""
import numpy as np
import pandas as pd
import streamlit as st

import dpcore
from dpcore import evaluation as E
from dpcore.explain import NOT_PRIVATE
from ui import figures as F
from ui import sanitized as S
from ui import widgets as W
from ui.advice import ranking_frame, short_name
from ui.models import compare as CM
from ui.models.shared import fmt_epsilon

W.page_setup(__file__)
st.title("Compare privacy levels")
st.caption("The same data, algorithm and k at several ε side by side, then how utility moves with ε over many "
           "releases. Use it to choose ε with your eyes open.")

# The input before the algorithm (issue 65): analysing a publication reads only k, so the algorithm and ε go.
ds, fp, algorithm, k, publication = W.analysis_controls(allow_large=True)


def _stop():
    st.session_state["curve"] = False
    st.session_state["curve_stopped"] = True


# Everything from ε on is one fragment (issue 56), as on the Explorer: an ε move, a panel's level, the curve's
# controls (or a draw) rerun this part only, not the data picker and algorithm above it.  ε stays in the
# sidebar (a fragment may write there once the full run has written to it).
@st.fragment
def compare_part():
    if publication is not None:     # "analyse a publication" (issue 57): post-processing, nothing drawn
        S.analyse_publication(ds, fp, publication, k)
        return
    eps = W.epsilon_controls(ds, algorithm, k, label="Chosen privacy level (ε)")
    teach = W.teach_toggle(ds)
    d = ds.X.shape[1]
    large = W.is_large(ds)
    public = W.is_public(ds)
    ws = W.working_set(ds, algorithm=algorithm, k=k, epsilon=eps)
    st.markdown(ws.headline())
    if ds.bounds is None:
        st.warning(W.NO_BOUNDS)
    warning = CM.private_data_warning(public)
    if warning:
        st.warning(warning, icon="⚠️")
    delta = {"delta": W.delta_input(1e-8)} if dpcore.ALGORITHMS[algorithm].needs_delta else {}   # the working set's δ
    W.set_url(**delta)

    # -- small multiples ---------------------------------------------------------------------------
    st.subheader("Side by side")
    # The panels and the curve share one default grid (issue 31): the curve's ε values, plus the chosen ε here.
    default_multiples = sorted({*E.DEFAULT_EPSILONS, eps})[:6]
    multiples = st.multiselect("Privacy levels to compare (3 to 6)", W.EPSILON_VALUES, default=default_multiples,
                               format_func=W.epsilon_label, key="multiples")
    sees_raw = W.sees_raw(ds)   # the non-private centres, the NICV figures and a curve on the data use the raw data
    show_base = sees_raw and st.checkbox(f"Show the non-private centres ({NOT_PRIVATE})", value=True, key="show_base")
    W.set_url(dataset=ds.name, algorithm=algorithm, k=k, epsilon=eps)
    drawn = []      # (ε, fit) of the panels shown: previews on public data, recorded draws on private data
    if not 3 <= len(multiples) <= 6:
        st.info("Choose between 3 and 6 privacy levels to see them side by side.")
    else:
        multiples = sorted(multiples)
        fits, model = W.compare_panels(ds, fp, algorithm, multiples, chosen=eps, who="Compare", n_clusters=k,
                                       **delta)
        (st.info if model.button is not None or public else st.caption)(model.intro)
        if model.beyond:
            st.warning(model.beyond)
        if model.button is not None:
            W.show_button(model.button, key="draw_panels", on_click=W.ask_for_panels, primary=True)
        drawn = [(p.epsilon, f) for p, f in zip(model.panels, fits) if f is not None]
        if model.again is not None:
            keys = [f.key for p, f in zip(model.panels, fits) if p.kind == CM.DRAWN]
            W.show_button(model.again, key="redraw_panels", on_click=W.redraw_panels, args=(keys,))
    if drawn:
        base = W.kmeans_reference(ds, fp, k) if sees_raw else None
        titles = {p.epsilon: p.title for p in model.panels}
        panels, rows = [], []
        for e, est in drawn:
            bounds = (est.bounds_.lower, est.bounds_.upper)
            syn = est.synopsis_ if getattr(est.synopsis_, "kind", None) == "grid" and d == 2 else None
            row = {"ε": fmt_epsilon(e), "ε spent": fmt_epsilon(est.budget_.total()[0])}
            title = titles[e]
            if sees_raw:
                ratio = (W.data_nicv(ds, fp, est.cluster_centers_, bounds)
                         / W.data_nicv(ds, fp, base.cluster_centers_, bounds))
                title = CM.title_with_nicv(title, ratio)
                row["NICV ratio (1 = non-private)"] = round(ratio, 4)
            panels.append({"title": title,
                           "centers": est.cluster_centers_[:, :2] if d >= 2 else np.c_[est.cluster_centers_, 0 * est.cluster_centers_],
                           "synopsis_edges": syn.edges if syn else None, "synopsis_counts": syn.counts if syn else None})
            rows.append(row)
        if d >= 2:
            view_bounds = (bounds[0][:2], bounds[1][:2])
            st.plotly_chart(F.small_multiples_figure(panels, bounds=view_bounds, columns=ds.columns[:2], geo=ds.geo,
                                                     baseline_centers=base.cluster_centers_[:, :2] if show_base else None),
                            width="stretch", key="multiples_fig")
            if d > 2:
                st.caption(f"Showing the first two of {d} columns.")
        else:
            st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption(model.caption + CM.nicv_caption(sees_raw, W.OWNER_ONLY))
        if sees_raw and teach:   # public data only: each panel against the non-private centres
            st.info("\n".join(f"- {E.noise_effect(f, base.cluster_centers_, geo=ws.geo)}" for _, f in drawn), icon="🎓")
        if not public:
            W.account_caption(ds)

    # -- privacy-utility curve -----------------------------------------------------------------------
    st.subheader("Privacy–utility curve")
    geo = bool(ds.geo) and d == 2
    label, measure = CM.curve_measure(algorithm, geo)
    same_measure = [a for a, c in dpcore.ALGORITHMS.items()
                    if c.private and c.family == dpcore.ALGORITHMS[algorithm].family
                    and CM.curve_measure(a, geo)[0] == label]
    c1, c2, c3, c4 = st.columns([3, 3, 1, 2])
    algorithms = c1.multiselect("Algorithms", same_measure, default=[algorithm], key="curve_algos",
                                format_func=lambda a: dpcore.ALGORITHMS[a].display_name or a)
    grid = c2.multiselect("ε values", W.EPSILON_VALUES, default=list(E.DEFAULT_EPSILONS), key="curve_eps",
                          format_func=fmt_epsilon)
    n_seeds = int(c3.number_input("Releases per ε", min_value=20, max_value=200, value=E.DEFAULT_SEEDS, key="curve_seeds"))
    # The same options whatever the data's size (offering only sizes below n would reveal n).
    row_opts = [None, 5_000, 20_000, 50_000]
    max_rows = c4.selectbox("Rows used", row_opts, index=2,
                            key="curve_rows", format_func=lambda r: "all rows" if r is None else f"a sample of ≤ {r:,}",
                            help=CM.ROWS_HELP)

    on = st.toggle("Compute the curve", value=W.url_default("curve", 0, int) == 1 and not large, key="curve",
                   disabled=large, help=f"{n_seeds} releases at each ε for each algorithm, each with fresh unpredictable "
                                        "noise; the curve is cached.")
    if large:
        # Hundreds of fits, each a few passes over every row where they lie: not an interactive step.
        on = False
        st.info("On a large source the curve is not computed here: it needs hundreds of releases, each a few passes "
                "over all the rows where they lie. The panels above are releases of the whole source; for a curve, "
                "load a sample of it (e.g. DuckDB's USING SAMPLE) as a file and pick that file.")
    W.set_url(curve=int(on))
    curves, complete = [], False
    if st.session_state.pop("curve_stopped", False):
        st.info("Stopped. Nothing was kept; switch the curve on again to restart.")
    # Anyone who may not see figures computed on the raw data gets the curve on a recorded synopsis (issue 56).
    lookalike = None if sees_raw else W.curve_lookalike(ds)
    names = {a: dpcore.ALGORITHMS[a].display_name or a for a in algorithms}
    curve_slot = st.empty()     # each ε is drawn here as soon as it is measured, then the whole curve

    def _curve_figure(curves):
        return F.utility_curve_figure(E.curves_frame(curves), measure=label, reference_line=curves[0].reference_line,
                                      chosen_epsilon=eps, names=names)

    if on and not sees_raw and lookalike is None:
        st.info(W.NO_CURVE_YET)
    elif on and algorithms and grid:
        stop_slot = st.empty()
        stop_slot.button("Stop", key="curve_stop_btn", on_click=_stop, help="Stop the computation now.")
        bar = st.progress(0.0, text="Fitting releases…")
        curves, complete = W.utility_curves(ds, fp, algorithms, epsilons=sorted(grid), n_seeds=n_seeds, n_clusters=k,
                                            params=delta, max_rows=max_rows, lookalike=lookalike, measure=measure,
                                            geo=geo,
                                            progress=lambda f, msg: bar.progress(min(f, 1.0), text=msg) and None,
                                            on_partial=lambda c: curve_slot.plotly_chart(_curve_figure(c), width="stretch"))
        bar.empty()
        stop_slot.empty()
    elif on:
        st.info("Choose at least one algorithm and one ε value.")

    if curves:
        frame = E.curves_frame(curves)
        curve_slot.plotly_chart(_curve_figure(curves), width="stretch", key="curve_fig")
        rows_used = "all rows" if max_rows is None else f"a uniform sample of at most {max_rows:,} rows"
        st.caption(CM.curve_caption(label, n_seeds, rows_used,
                                    lookalike_words=None if lookalike is None else W.lookalike_words(
                                        lookalike, W.unit_params(ds).get("max_contributions")),
                                    person_rows=W.unit_params(ds).get("max_contributions")))
        for c in curves:
            for e_fail, msg in c.failures.items():
                st.caption(f"{names[c.algorithm]} could not run at ε = {fmt_epsilon(e_fail)}: {msg}")
        with st.expander("Numbers"):
            st.dataframe(frame.round(4), hide_index=True)
    elif not on and not large:   # on a large source the sentence above says why it is off
        st.info("Switch on “Compute the curve” to fit many releases at each ε (cached afterwards).")

    # -- ε from the accuracy people need (issue 31, 56): simulated from a recorded draw on private data ---------
    if not large:
        W.accuracy_section(ds, fp, algorithm, k, delta, fits=[f for _, f in drawn])

    # -- raw facts, with the Su et al. advisor: it needs the true dataset size, so it is a raw fact too --------
    if sees_raw:
        n = W.exact_rows(ds)   # the advisor's input: exact, so it stays inside the raw-facts panel
        recorded = [f for _, f in drawn if getattr(f, "release_id", None) is not None]
        facts = W.raw_facts(ds, fit=recorded[0] if recorded else None, lines=[
            f"**What the advisor says** from the true N = {n:,}, d = {d}, k = {k}: the calibrated ranking of every "
            "centre-releasing algorithm (measured cost ratios to non-private k-means), and Su et al.'s formulas "
            "(2016, §6: Eqs. 7, 12, 13 and Inequality 15) beside it. Its figures are functions of the exact N: "
            "not private (the sidebar's advisor uses a public size)."])
        if facts.open:     # the advisor's figure and tables are built only once its panel is opened
            with facts:
                if dpcore.ALGORITHMS[algorithm].family != "centroids":
                    st.caption("The advisor covers the algorithms that release k-means centres: "
                               + ", ".join(c.display_name for c in dpcore.ALGORITHMS.values()
                                           if c.private and c.family == "centroids") + ".")
                else:
                    # Person level: every sensitivity is L times one row's, so the advice is at ε / L (issue 23).
                    adv = E.advise(n, d, k, eps, max_contributions=W.unit_params(ds).get("max_contributions") or 1)
                    st.metric(f"Predicted best at ε = {fmt_epsilon(eps)}", short_name(adv.best))
                    st.caption(adv.reason)
                    st.dataframe(ranking_frame(adv).drop(columns="key"), hide_index=True)
                    for key, reg in adv.regime.items():
                        if not reg.ok:   # the same public-input check the estimator runs before it spends
                            st.caption(f"{dpcore.ALGORITHMS[key].display_name} is outside its paper's regime here: {reg.reason}")
                    pred = E.advice_frame(n, d, k, sorted(set(grid) | {eps}) if grid else [eps])
                    st.plotly_chart(F.advice_figure(pred, chosen_epsilon=eps, height=380), width="stretch", key="advice_fig")
                    table = pred[["epsilon", "predicted_best"]].copy()
                    table["predicted_best"] = table["predicted_best"].map(E.advice_name)
                    if curves and len({c.algorithm for c in curves}) >= 2:
                        meas = E.measured_best(curves)
                        table = table.merge(meas, on="epsilon", how="left")
                        table["measured_best"] = table["measured_best"].map(
                            lambda a: dpcore.ALGORITHMS[a].display_name if isinstance(a, str) else "–")
                    elif curves:
                        st.caption("Add a second algorithm to the curve to check the prediction against measurement.")
                    st.dataframe(table, hide_index=True)


compare_part()
