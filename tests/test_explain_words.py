"""The words people choose ε from (issue 56): the attacker's success probability and the running total."""
from __future__ import annotations

import math

import pytest

from dpcore.explain import cap_words, epsilon_statements, running_total
from dpcore.formatting import fmt_epsilon, fmt_share


@pytest.mark.parametrize("eps", [0.1, 1.0, 2.0])
def test_the_advantage_sentence_states_the_success_probability_of_a_balanced_membership_test(eps):
    """For ε-DP an attacker who must tell "in" from "out" at even odds is right with probability ≤ e^ε/(1+e^ε)."""
    st = {s.title: s for s in epsilon_statements(eps)}["Attacker's advantage"]
    success = math.exp(eps) / (1 + math.exp(eps))
    assert f"guesses right with probability at most {fmt_share(success)}" in st.sentence
    assert "more often than by guessing" not in st.sentence       # the old, wrong reading of TPR − FPR
    assert f"by at most {fmt_share(2 * success - 1)}" in st.sentence      # TPR − FPR = 2·success − 1


def test_an_advantage_bound_below_one_never_reads_one_hundred_percent():
    """Issue 65: "attacker's advantage at most 100.0%" at ε = 10, where the bound is 0.99991."""
    st = {s.title: s for s in epsilon_statements(10.0)}["Attacker's advantage"]
    assert "100" not in st.value and st.value == "at most 99.99 %"


def test_the_total_reads_as_spent_so_far_with_what_is_left_of_the_cap():
    assert cap_words(1.0, 1.0) == "total 1, nothing left"
    assert cap_words(0.5, 2.0) == "total 2, 1.5 left"
    assert cap_words(0.5, None) == "no total set"
    assert cap_words(2.961, 4.0) == f"total 4, {fmt_epsilon(1.039)} left"      # one rounding (issue 65, point 6)
    text = running_total(None, 1.0, 1.0, unit="trip")
    assert text.startswith(f"ε spent so far on this data: **1** ({cap_words(1.0, 1.0)}), every draw counted")
    assert "nothing stops" in running_total(0.5, 0.5, None, unit="trip")


def test_a_large_epsilon_is_warned_with_the_deployments_units():
    from dpcore.explain import large_epsilon_warning
    assert large_epsilon_warning(4.0) is None
    text = large_epsilon_warning(10.0, "user")
    assert "per user-day, local DP" in text and "per person, central DP" in text and "central DP per user" in text
