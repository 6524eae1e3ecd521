"""Explain: what a privacy level promises one unit (a row, or one person's rows), in numbers and plain words."""
import numpy as np
import pandas as pd
import streamlit as st

from dpcore import explain as X
from dpcore.glossary import GLOSSARY, help_for
from ui import figures as F
from ui import widgets as W
from ui.advice import explain_markdown
from ui.models import explain as XM
from ui.models.shared import fmt_epsilon

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
for col, m in zip(cols, XM.top_metrics(statements)):
    col.metric(m.label, m.value)
for s in statements:
    st.markdown(f"**{s.title}: {s.value}.** {s.sentence}  \n<small>Formula: `{s.formula}`</small>",
                unsafe_allow_html=True)
lv = X.level_for(eps)
st.info(f"**ε = {fmt_epsilon(eps)}, {lv.name}**: {lv.guidance}")
st.subheader("This ε beside real deployments")
W.reference_strip({"the ε chosen here": eps})

st.subheader("Each ε on the slider, in numbers")
table = pd.DataFrame(XM.levels_rows())
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
    st.markdown(XM.several_releases(eps, n_rel), help=help_for("sequential composition"))


several_releases(eps)

st.subheader("What is not private")
st.markdown(XM.NOT_PRIVATE_TEXT)
