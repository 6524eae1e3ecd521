"""L chosen privately (issue 55): the DP quantile of rows per person, its spend recorded before L is shown.

The number of rows per person is a figure of the raw data: an L read off its percentiles (the owner's
raw-facts panel) changes with one person and is published with every release that uses it.  This
control chooses L with :func:`dpcore.privacy.units.choose_max_contributions` (an ε-DP quantile,
Smith 2011 as in Amin et al. 2019), charges its ε to the data's account in the release store
(:meth:`dpcore.store.ReleaseStore.record_refusal`: a spend with no publishable result), and only then
puts L in the L box.
"""
from __future__ import annotations

import streamlit as st

from .identity import draw_refusal, who
from .store import release_store

#: The share of persons whose rows all fit under L: the library's default quantile.
QUANTILE = 0.9
#: Public upper end of the range L is chosen in (a person contributing more is bounded anyway).
UPPER = 1000


def private_l_control(ds, where) -> None:
    """The "Choose L privately" control under the L box: an ε input, a button, and what was chosen."""
    with where.expander("Choose L privately"):
        eps = float(st.number_input("ε for choosing L", min_value=0.01, max_value=1.0, value=0.1, step=0.05,
                                    key="l_epsilon", help="Spent once, on this data's account, like a draw."))
        st.button(f"Choose L: spends ε = {eps:g}", key="choose_l", on_click=_choose, args=(ds, eps))
        said = st.session_state.get("_l_chosen")
        st.caption(said or f"L becomes a private estimate of the {QUANTILE:.0%} quantile of rows per person "
                   f"(between 1 and {UPPER}), and its ε is recorded in the data's account before L is shown.")


def _choose(ds, epsilon: float) -> None:
    """Button callback (before the L box is drawn again): check, choose, record, then set L."""
    from dpcore.exceptions import BudgetExceededError, StoreError
    from dpcore.privacy.units import choose_max_contributions
    from dpcore.release import build_refusal
    from dpcore.store.keys import content_digest, former_digests
    store = release_store()
    why = draw_refusal(store, ds.name) or store.refusal(ds.name, epsilon)
    if why is not None:
        st.session_state["_l_chosen"] = f"L was not chosen: {why}"
        return
    chosen = choose_max_contributions(ds.units, epsilon=epsilon, quantile=QUANTILE, upper=UPPER)
    L = int(chosen.max_contributions)
    record = build_refusal(chosen.budget, algorithm="choose_max_contributions", dataset=ds.name,
                           guarantee=f"spent ε = {epsilon:g} choosing L privately (a parameter, no release)",
                           reason=f"L = {L} rows per person, chosen privately (ε = {epsilon:g}, the "
                                  f"{QUANTILE:.0%} quantile of rows per person)")
    try:
        store.register_dataset(ds.name, fingerprint=content_digest(ds.X, ds.units), bounds=ds.bounds,
                               description=getattr(ds, "title", ""), former=former_digests(ds.X, ds.units))
        store.record_refusal(ds.name, record, who=who("Choose L"))
    except (BudgetExceededError, StoreError, ValueError, PermissionError) as exc:
        st.session_state["_l_chosen"] = f"L was not chosen: {exc}"
        return
    st.session_state["max_contributions"] = L          # recorded first, then shown (reserve before reveal)
    st.session_state["_l_chosen"] = (f"L = {L}: chosen privately with ε = {epsilon:g}, recorded in this data's "
                                     "account.")
