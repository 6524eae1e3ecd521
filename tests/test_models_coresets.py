"""The Private coresets page's model (issue 65): feasibility before a draw, its words, the budget rules' help."""
import numpy as np
import pytest

from dpcore.algorithms.coreset.plan import min_feasible_epsilon
from dpcore.formatting import fmt_epsilon
from ui.models import coresets as CM
from ui.models.shared import WorkingSet

SLIDER = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0]


def _ws(epsilon: float, k: int = 5) -> WorkingSet:
    return WorkingSet(dataset="nyc_taxi_sample", title="NYC taxi pickups (sample)", columns=("lon", "lat"), geo=True,
                      public=True, algorithm="private_kmeans", k=k, epsilon=epsilon, delta=1e-8)


def test_private_data_is_never_judged_before_its_noisy_size():
    """On private data the size is not public (need None): the page offers the draw, the fit decides."""
    assert CM.feasibility(_ws(0.1), None, SLIDER).ok


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
def test_feasibility_follows_the_papers_line_2_at_the_public_size(epsilon):
    """At the taxi sample's public size: refused below the smallest feasible ε, with that ε's slider value offered."""
    need = min_feasible_epsilon(181_446, 5, 2, 1e-8)
    can = CM.feasibility(_ws(epsilon), need, SLIDER)
    assert can.ok == (epsilon >= need)
    if not can.ok:
        assert can.suggest == min(e for e in SLIDER if e >= need)
        assert fmt_epsilon(epsilon) in can.warning and fmt_epsilon(need) in can.warning
        assert "nothing was drawn or spent" in can.warning


def test_no_slider_value_that_can_run_offers_none():
    can = CM.feasibility(_ws(1.0), 50.0, SLIDER)
    assert not can.ok and can.suggest is None


def test_the_non_private_centres_are_named_only_for_who_sees_raw_figures():
    assert "non-private" in CM.map_caption(True)
    assert "non-private" not in CM.map_caption(False)


def test_the_budget_help_is_true_of_what_a_schedule_fit_spends():
    """'All on the rounds that run' says the whole ε is spent (issue 65 point 3); the fit's ledger agrees."""
    from dpcore.algorithms.coreset.private_kmeans import PrivateKMeans

    assert "spends all of it" in CM.BUDGET_HELP
    rng = np.random.default_rng(0)
    X = np.clip(np.concatenate([rng.normal(-0.5, 0.05, (20_000, 2)), rng.normal(0.5, 0.05, (20_000, 2))]), -1, 1)
    est = PrivateKMeans(n_clusters=2, epsilon=4.0, delta=1e-8, bounds=(-1.0, 1.0), budget="schedule",
                        n_samples=len(X)).fit(X)
    assert est.budget_.total()[0] == pytest.approx(4.0, rel=1e-9)


def test_the_download_is_named_by_its_epsilon_and_release():
    assert CM.coreset_file(_ws(0.5), 12) == f"private_coreset_eps{fmt_epsilon(0.5)}_release12.csv"
