"""The High-dimensional page's model (issue 65)."""
from ui.models import highdim as HM
from ui.models.shared import WorkingSet

WS = WorkingSet("mnist_sample", "MNIST digits (sample)", tuple(f"p{i}" for i in range(784)), algorithm="zcdp_lloyd",
                k=10, epsilon=1.0, delta=1e-6, public=True, sees_raw=True)


def test_another_pages_algorithm_stays_theirs_and_is_said_so():
    names = {"eugkm": "EUGkM", "zcdp_lloyd": "zCDP-Lloyd", "dpm": "DPM"}
    c = HM.algorithm_choice("eugkm", ["zcdp_lloyd", "dpm"], names)
    assert (c.start, c.own) == ("zcdp_lloyd", False) and "EUGkM, chosen on another page" in c.note
    c = HM.algorithm_choice("dpm", ["zcdp_lloyd", "dpm"], names)
    assert (c.start, c.own, c.note) == ("dpm", True, None)


def test_the_headline_and_the_warning_against_the_trivial_answer():
    assert HM.headline(WS) == "**MNIST digits (sample)** · 784 columns · (ε = 1, δ = 1e-6)-DP"
    assert HM.worse_than_mean(WS, 1.0, 2.0) is None
    assert "Do not publish them" in HM.worse_than_mean(WS, 3.0, 2.0)
    assert "not private" in HM.inertia_labels(WS, "zCDP-Lloyd", 2.0)[1]
