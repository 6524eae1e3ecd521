"""Explain: what a privacy level promises one unit (a row, or one person's rows), in numbers and plain words."""
import numpy as np
import pandas as pd
import streamlit as st

from dpcore import explain as X
from dpcore.glossary import GLOSSARY
from ui import figures as F
from ui import widgets as W
from ui.advice import explain_markdown

W.page_setup(__file__)
st.title("What does ε mean for the people in the data?")
st.caption("Differential privacy promises every *unit* of the data the same thing: whatever is published would have "
           "been almost as likely without it. ε says how much “almost” is. The unit is what a release protects "
           "as a whole: one row (one trip, one check-in), or, in a person-level release, all of one person's rows. "
           "A row-level release protects a person with m rows only at m·ε.")

eps = W.epsilon_slider("Privacy level (ε)", sidebar=False)
c1, c2 = st.columns(2)
with c1:   # the working set's δ (issue 56), 0 until someone chooses one
    delta = W.delta_input(0.0, label="δ (only for (ε, δ) algorithms such as the private coreset)", sidebar=False,
                          allow_zero=True)
prior = c2.slider("Someone's belief before the release (%)", 1, 99, 50, key="prior") / 100
W.set_url(epsilon=eps, delta=delta or None)

statements = X.epsilon_statements(eps, delta, prior=prior)
cols = st.columns(3)
for col, s in zip(cols, statements[:3]):
    # A metric cuts a long value ("62.2% (fro…", issue 56): the bound as the figure, its context in the label.
    value, _, context = s.value.partition(" (")
    col.metric(s.title + (f" ({context}" if context else ""), value.replace("at most ", "≤ "))
for s in statements:
    st.markdown(f"**{s.title}: {s.value}.** {s.sentence}  \n<small>Formula: `{s.formula}`</small>",
                unsafe_allow_html=True)
lv = X.level_for(eps)
st.info(f"**ε = {eps:g}, {lv.name}**: {lv.guidance}")
st.subheader("This ε beside real deployments")
W.reference_strip({"the ε chosen here": eps})

st.subheader("Each ε on the slider, in numbers")
table = pd.DataFrame([{"ε": ", ".join(f"{e:g}" for e in r["epsilons"]), "odds change at most": r["name"].removeprefix("odds "),
                       "attacker's advantage at most": f"{r['advantage']:.1%}",
                       "belief from 50 % at most": f"{r['posterior']:.1%}",
                       "beside real deployments": X.deployments_sentence(max(r["epsilons"]))}
                      for r in X.levels_table()])
st.table(table.set_index("ε"))   # a static table wraps its text; a data frame cut the deployments column (issue 56)
st.caption("Each row is one point of the slider. Above ε = 5 an attacker's advantage can exceed 98 % and odds can "
           "change more than 148-fold; the deployments column places each ε beside published uses and their units.")

st.subheader("Choosing an algorithm: the advisor and Auto")
st.markdown(explain_markdown())

st.subheader("Glossary")
st.caption("The same plain words appear as ⓘ tooltips where a term is first used on a page.")
# Text that wraps: a table's cells cut every definition to its first words (issue 56).
st.markdown("\n".join(f"- **{term}**: {words}" for term, words in GLOSSARY.items()))

st.subheader("How belief can move")
grid = np.geomspace(0.01, 10, 121)
st.plotly_chart(F.privacy_bounds_figure(grid, [X.posterior_bound(e, 0.5) for e in grid],
                                        [X.attacker_advantage_bound(e) for e in grid], chosen_epsilon=eps),
                width="stretch", key="bounds_fig")
st.caption("Both lines are upper bounds that hold for every unit and every conclusion drawn from one release.")

st.subheader("Several releases add up")


@st.fragment
def several_releases(eps: float) -> None:
    """A fragment (issue 56): changing the number of releases redraws this sentence only, not the page's figures."""
    n_rel = int(st.number_input("Releases of the same data at this ε", 1, 50, 3, key="n_releases"))
    tot, _ = X.sequential_total([eps] * n_rel)
    st.markdown(f"{n_rel} release(s) at ε = {eps:g} together give ε = **{tot:g}** (sequential composition): odds "
                f"can change by at most {X.odds_ratio_bound(tot):.3g}× and belief from 50 % can reach "
                f"{X.posterior_bound(tot):.1%}. Looking at many ε or draws on the real data and picking one counts "
                "too. The Release page keeps this account per dataset.")


several_releases(eps)

st.subheader("What is not private")
st.markdown(f"Some figures in this app are computed on the raw data to help the data owner judge a release: "
            f"non-private centres, raw points, NICV, cost and UD figures, the privacy–utility curves and the "
            f"advisor's use of the true number of rows. Each is labelled **“{X.NOT_PRIVATE}”**. They are never "
            "part of a published release.")
