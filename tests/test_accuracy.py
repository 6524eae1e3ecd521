"""ε from the accuracy people need (issue 31): simulated releases on a public look-alike, an answer in data units."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.evaluation import centre_error, epsilon_for_accuracy, lookalike

BOUNDS = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))     # the taxi box, degrees
PAGES = Path(__file__).resolve().parents[1] / "pages"


def test_centre_error_is_in_metres_on_a_map_and_matches_centres_one_to_one():
    ref = np.array([[-74.0, 40.8], [-73.95, 40.75]])
    moved = ref[::-1] + [0.0, 0.001]                 # the same centres in the other order, 0.001° further north
    assert centre_error(moved, ref, geo=True, bounds=BOUNDS) == pytest.approx(111.2, rel=0.01)
    assert centre_error(moved, ref) == pytest.approx(0.001)


def test_the_lookalike_is_made_of_public_inputs_only():
    a, b = lookalike(BOUNDS, 5000, 5, random_state=3), lookalike(BOUNDS, 5000, 5, random_state=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (5000, 2) and (a >= BOUNDS[0]).all() and (a <= BOUNDS[1]).all()
    with pytest.raises(ValueError, match="n >= 1"):
        lookalike(BOUNDS, 0, 5)


def test_the_answer_is_the_smallest_epsilon_that_meets_the_target_in_90_percent_of_releases():
    ans = epsilon_for_accuracy("eugkm", 100.0, bounds=BOUNDS, n_clusters=5, n=10_000, geo=True, n_releases=20,
                               random_state=7)
    assert ans.unit == "m" and ans.source == "public look-alike"
    assert ans.epsilon is not None
    i = int(np.flatnonzero(ans.epsilons == ans.epsilon)[0])
    assert ans.within[i] >= 0.9 and (i == 0 or ans.within[i - 1] < 0.9)     # the smallest that meets it
    assert np.all(np.diff(ans.band[:, 1]) < 0)            # the median error falls as ε grows
    assert ans.band[i, 2] <= 100.0 * 1.5                   # the 90 % quantile is about the target
    assert f"ε = {ans.epsilon:g} is the smallest ε tried" in ans.sentence()
    none = epsilon_for_accuracy("eugkm", 0.01, bounds=BOUNDS, n_clusters=5, n=2000, geo=True, n_releases=4,
                                random_state=7, epsilons=(0.1, 1.0))
    assert none.epsilon is None and none.sentence().startswith("No ε up to 1 puts")
    with pytest.raises(ValueError, match="positive"):
        epsilon_for_accuracy("eugkm", -1, bounds=BOUNDS, n_clusters=5, n=100)
    with pytest.raises(ValueError, match="public size"):
        epsilon_for_accuracy("eugkm", 1, bounds=BOUNDS, n_clusters=5)


def test_a_simulation_on_a_sample_gives_the_error_of_a_release_on_all_rows(shared_data):
    """The bands, the ε-for-accuracy answers and Compare's answer simulate on a sample of at most 20,000 rows; at
    ε itself a release on the sample is far noisier than the real draw on all N rows (the Explorer's band on the
    taxi sample said 141-1,526 m at ε = 1 where draws sit 50-128 m from the non-private centres).  At ε·N/n
    (Su et al. 2016, §6: the error depends on N and ε through Nε) its errors are those of a draw on all rows."""
    from dpcore import datasets
    from dpcore.evaluation.accuracy import sample_rows, simulate_errors, simulated_epsilon
    assert simulated_epsilon(1.0, 181_446, 20_000) == pytest.approx(9.0723)
    assert simulated_epsilon(0.5, 900, 20_000) == 0.5 == simulated_epsilon(0.5, 900, 900)
    import dpcore
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)              # 181,446 rows, public
    X, bounds = np.asarray(ds.X, float), tuple(np.asarray(b, float) for b in ds.bounds)
    ref = dpcore.ALGORITHMS["kmeans"](n_clusters=5, random_state=0, bounds=ds.bounds).fit(X).cluster_centers_
    kw = dict(bounds=bounds, n_clusters=5, reference=ref, geo=True, n_releases=24)
    full = np.median(simulate_errors("eugkm", 1.0, X=X, random_state=1, **kw))
    Xs, _ = sample_rows(X)
    scaled = np.median(simulate_errors("eugkm", 1.0, X=Xs, n_rows=len(X), random_state=2, **kw))
    unscaled = np.median(simulate_errors("eugkm", 1.0, X=Xs, random_state=2, **kw))
    assert abs(np.log(scaled / full)) < np.log(1.5), (full, scaled)      # within 1.5x of all rows' error
    assert unscaled > 2 * full, (full, unscaled)                          # what the bands said before


def test_a_sample_simulates_no_release_that_all_rows_would_refuse():
    """A refusal need not follow Nε: PRIVATE-K-MEAN at ε = 1 on the taxi sample's 181,446 rows needs more than t_min
    points before its first round and refuses, while a 20,000-row sample at ε·N/n = 9.07 would run; PrivGene refuses
    the distance terms of all rows.  The simulation then gives no figure (NaN), as the draw gives none."""
    from dpcore import datasets
    from dpcore.evaluation.accuracy import refused_on_all_rows, sample_rows, simulate_errors
    ds = datasets.load(datasets.TAXI_SAMPLE_NAME)
    X, bounds = np.asarray(ds.X, float), tuple(np.asarray(b, float) for b in ds.bounds)
    Xs, _ = sample_rows(X)
    kw = dict(bounds=bounds, n_clusters=5, reference=X[:5], geo=True, n_releases=3, n_rows=len(X))
    assert refused_on_all_rows("coreset", 1.0, n_rows=len(X), d=2, n_clusters=5, params={"delta": 1e-8})
    assert refused_on_all_rows("pgkm", 1.0, n_rows=len(X), d=2, n_clusters=5) is not None
    assert refused_on_all_rows("eugkm", 1.0, n_rows=len(X), d=2, n_clusters=5) is None
    assert np.isnan(simulate_errors("coreset", 1.0, X=Xs, params={"delta": 1e-8}, **kw)).all()
    assert np.isfinite(simulate_errors("eugkm", 1.0, X=Xs, **kw)).all()


def test_compare_answers_with_an_epsilon_and_a_button_that_makes_it_every_pages_epsilon():
    at = AppTest.from_file(str(PAGES / "6_Compare.py"), default_timeout=300)
    at.query_params["dataset"] = "s1_like"
    at.query_params["algorithm"] = "eugkm"
    at.query_params["k"] = "15"
    at.run()
    at.number_input(key="acc_share").set_value(0.02)
    at.button(key="acc_go").click()
    at.run()
    assert not at.exception
    (said,) = [s.value for s in at.success if "smallest ε tried" in s.value]
    eps = float(said.split("ε = ")[1].split(" ")[0])
    at.button(key="acc_use").click()
    at.run()
    assert float(at.query_params["epsilon"]) == eps and at.select_slider(key="epsilon").value == eps
