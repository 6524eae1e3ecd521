"""The ε reference strip (issue 56): deployment labels legible in a page's narrow column."""
import math

from dpcore.explain import DEPLOYMENTS
from ui.charts import reference_strip_figure


def test_no_two_deployment_labels_share_a_slot_and_no_leader_line_is_drawn_over_a_label():
    fig = reference_strip_figure({"this release": 1.0}, DEPLOYMENTS)
    labels = [(a.x, a.y) for a in fig.layout.annotations if "/" in (a.text or "")]
    assert len(labels) == len(DEPLOYMENTS)
    # At 1280×720 the Release page's column is ~420 px for 4.4 decades: a label (~70 px) spans ~0.75 decade.
    # Labels closer than that stand at different heights, half a unit (~45 px at the figure's height) apart.
    for i, (x1, y1) in enumerate(labels):
        for x2, y2 in labels[i + 1:]:
            if abs(x1 - x2) < 0.75:
                assert abs(y1 - y2) >= 0.5, (x1, y1, x2, y2)
    # Leader lines are traces (drawn under every annotation), not annotation arrows (drawn over earlier labels).
    assert not any(a.showarrow for a in fig.layout.annotations)
    leaders = [t for t in fig.data if t.mode == "lines"]
    assert len(leaders) == len(DEPLOYMENTS)
    for t, d in zip(leaders, DEPLOYMENTS):
        assert t.x[0] == d.epsilon and t.y[0] == 0
        assert any(math.isclose(math.log10(t.x[1]), x) and t.y[1] == y for x, y in labels)
