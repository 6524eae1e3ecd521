"""Compare's model (issue 65, point 7): free previews on public data; on private data one sentence and a button that
state what drawing the panels spends, and which panels cannot fit under the total, before anything is drawn."""
import pytest

from dpcore.formatting import fmt_epsilon
from ui.models import compare as CM
from ui.models.shared import Cost, Totals

EPS = [0.1, 0.5, 1.0, 2.0]


def cost(e):
    return Cost(e, 0.0, e, 0.0)


def test_on_public_data_every_panel_is_a_free_preview():
    m = CM.panels_model("NYC taxi", EPS, [CM.PREVIEW] * 4, chosen=1.0, cost_of=cost, account=Totals("t", "NYC taxi"))
    assert m.button is None and m.beyond is None and m.again is None
    assert "Previews, not releases" in m.intro and "NYC taxi" in m.intro
    assert all("preview" in p.title for p in m.panels) and len(m.shown) == 4
    assert "◀ chosen" in m.panels[2].title and "◀ chosen" not in m.panels[1].title


def test_on_private_data_the_button_states_the_sum_of_the_panels_not_drawn():
    acc = Totals("u", "Check-ins (upload)", spent_epsilon=0.5)
    kinds = [CM.MISSING, CM.MISSING, CM.DRAWN, CM.MISSING]
    m = CM.panels_model("Check-ins (upload)", EPS, kinds, chosen=1.0, cost_of=cost, account=acc,
                        release_ids=[None, None, 7, None])
    need = 0.1 + 0.5 + 2.0
    assert m.button is not None and m.button.enabled
    assert m.button.label == f"Draw 3 panels: spends ε = {fmt_epsilon(need)}"
    assert f"spends ε = {fmt_epsilon(need)}" in m.intro         # said in one sentence before anything is drawn
    assert "release #7" in m.panels[2].title
    assert m.again is not None and m.again.label.startswith("New draws of these 1 panels")


def test_under_a_total_the_panels_that_fit_are_offered_and_the_rest_named():
    acc = Totals("u", "Check-ins (upload)", spent_epsilon=1.0, cap_epsilon=1.7, cap_delta=0.0)
    m = CM.panels_model("Check-ins (upload)", EPS, [CM.MISSING] * 4, chosen=1.0, cost_of=cost, account=acc)
    assert m.button.label == f"Draw 2 panels: spends ε = {fmt_epsilon(0.6)}"      # 0.1 + 0.5 fit in 0.7
    assert m.beyond is not None and "ε = 1" in m.beyond and "ε = 2" in m.beyond
    assert fmt_epsilon(acc.left_epsilon) in m.beyond


def test_a_role_that_may_not_draw_disables_the_button_with_its_reason():
    m = CM.panels_model("D", EPS, [CM.MISSING] * 4, chosen=1.0, cost_of=cost, account=Totals("d", "D"),
                        refusal="a viewer here")
    assert not m.button.enabled and m.button.why_not == "a viewer here"


@pytest.mark.parametrize("algorithm, geo, label", [("eugkm", True, "centre error (m)"),
                                                    ("dplloyd", False, "centre error (data units)")])
def test_the_curve_is_in_the_unit_of_the_accuracy_section(algorithm, geo, label):
    from dpcore.evaluation import CENTRE_ERROR
    assert CM.curve_measure(algorithm, geo) == (label, CENTRE_ERROR)
    assert CM.private_data_warning(True) is None and CM.private_data_warning(False)
