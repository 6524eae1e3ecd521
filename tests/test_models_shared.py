"""The quantities every page shows, each from one function (issue 65): what a draw costs, the account, the
buttons that spend, the expected error, and the names people read.  No Streamlit: the models are called directly."""
from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore.exceptions import BudgetExceededError
from dpcore.formatting import fmt_epsilon
from dpcore.store import ReleaseStore
from ui.models import shared as M


# -- what a draw costs: the estimator's plan, never the ε asked for -------------------------------------------
@pytest.mark.parametrize("algorithm, params", [
    ("eugkm", dict(epsilon=1.0, n_clusters=3)),
    ("dplloyd", dict(epsilon=0.5, n_clusters=3)),
    ("privthr", dict(epsilon=1.0, num_grid=16)),
    ("sanitize", dict(epsilon=0.5)),
])
def test_the_cost_is_what_a_fit_records(algorithm, params):
    from dpcore.algorithms.registry import releasable
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(0.5, 0.15, size=(3000, 2)), 0, 1)
    cost = M.draw_cost(algorithm, params, 2)
    est = releasable(algorithm)(**params, bounds=(0, 1), random_state=1).fit(X)
    assert cost.exact
    assert cost.epsilon == pytest.approx(est.budget_.total()[0], rel=1e-12)
    assert cost.delta == pytest.approx(est.budget_.total()[1], abs=1e-18)


def test_the_coreset_on_the_rounds_that_run_spends_all_it_was_granted():
    """Issue 65, point 3: the button said ε = 1 and the store charged 0.9608; 'All on the rounds that run'."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(50_000, 1))
    params = dict(epsilon=2.0, n_clusters=2, delta=1e-8, budget="schedule")
    cost = M.draw_cost("coreset", params, 1, size=X.shape[0])
    est = dpcore.ALGORITHMS["coreset"](**params, bounds=(0, 1), random_state=3).fit(X)
    assert cost.exact and cost.words() == f"ε = {fmt_epsilon(2.0)}, δ = 1e-8"
    assert est.budget_.total()[0] == pytest.approx(2.0, rel=1e-12)


def test_a_spend_known_only_after_the_noisy_size_is_a_bound():
    cost = M.draw_cost("coreset", dict(epsilon=2.0, n_clusters=5, delta=1e-8, budget="paper"), 2, size=181_446)
    assert not cost.exact and cost.words().startswith("at most ε = 2")
    assert cost.estimate is not None and cost.estimate < 2.0
    assert M.draw_cost("kmeans", dict(n_clusters=3), 2).epsilon == 0.0


# -- the account and the buttons that spend ------------------------------------------------------------------
def _store_with_total(spent: float, total: float) -> ReleaseStore:
    from dpcore.release import build_release
    store = ReleaseStore(":memory:")
    store.register_dataset("d", bounds=None, description="Some data (test)")
    store.set_cap("d", total, 1e-6)
    if spent:
        X = np.random.default_rng(0).uniform(0, 1, size=(500, 2))
        est = dpcore.ALGORITHMS["eugkm"](n_clusters=2, epsilon=spent, bounds=(0, 1)).fit(X)
        store.record("d", build_release(est, algorithm="eugkm", dataset="d", columns=["x", "y"]))
    return store


def test_the_account_agrees_with_the_store_and_rounds_once():
    store = _store_with_total(2.961, 4.0)
    acc = M.totals(store, "d", title="Some data (test)")
    assert acc.spent_epsilon == pytest.approx(store.spent("d")[0])
    assert acc.left_epsilon == pytest.approx(store.remaining("d")[0])
    # Issue 65, point 6: "1.039" in one place and "1.04 left" in another, "2.96" and "2.961".
    assert acc.words() == f"ε spent so far: {fmt_epsilon(2.961)} (total {fmt_epsilon(4.0)}, {fmt_epsilon(1.039)} left)"


@pytest.mark.parametrize("eps", [0.5, 1.039, 1.04, 2.0])
def test_a_button_says_before_it_is_pressed_what_the_store_would_refuse(eps):
    store = _store_with_total(2.961, 4.0)
    acc = M.totals(store, "d", title="Some data (test)")
    button = M.draw_button(M.draw_cost("eugkm", dict(epsilon=eps, n_clusters=2), 2), acc, new=True)
    refused = store.refusal("d", eps) is not None
    assert button.enabled is not refused
    assert (button.why_not is None) is not refused
    if refused:
        assert "Some data (test)" in button.why_not and fmt_epsilon(acc.left_epsilon) in button.why_not
        assert "'d'" not in button.why_not      # the title, never the store's key
        from dpcore.release import build_release
        est = dpcore.ALGORITHMS["eugkm"](n_clusters=2, epsilon=eps, bounds=(0, 1)).fit(
            np.random.default_rng(1).uniform(0, 1, size=(200, 2)))
        with pytest.raises(BudgetExceededError):
            store.record("d", build_release(est, algorithm="eugkm", dataset="d", columns=["x", "y"]))
    assert button.label == f"New draw (fresh noise: spends ε = {fmt_epsilon(eps)} again)"


def test_a_role_refusal_disables_the_button_with_its_sentence():
    acc = M.Totals("d", "Some data")
    button = M.draw_button(M.draw_cost("eugkm", dict(epsilon=1.0, n_clusters=2), 2), acc, refusal="a viewer here")
    assert not button.enabled and button.why_not == "a viewer here"


# -- the expected error: one cached simulation per setting and ε, shared by every page -----------------------
def _setting(**kw):
    rng = np.random.default_rng(0)
    centres = rng.uniform(-73.99, -73.90, size=(3, 1)), rng.uniform(40.70, 40.80, size=(3, 1))
    X = np.c_[centres[0][rng.integers(0, 3, 1500)] + rng.normal(0, 0.004, (1500, 1)),
              centres[1][rng.integers(0, 3, 1500)] + rng.normal(0, 0.004, (1500, 1))]
    s = M.ErrorSetting(data="data:test-geo:fp", algorithm="eugkm", n_clusters=3, params=(), lower=(-74.0, 40.68),
                       upper=(-73.88, 40.82), geo=True, **{"source": "this public data", **kw})
    return s, (lambda: (X, None, None))        # no reference given: k-means of all rows, as the pages draw


def test_the_band_is_simulated_once_with_enough_releases_and_reads_in_metres():
    setting, points = _setting()
    calls = []
    band = M.expected_error(setting, 1.0, lambda: calls.append(1) or points())
    again = M.expected_error(setting, 1.0, lambda: calls.append(1) or points())
    assert band == again and len(calls) == 1          # one simulation per setting and ε, for every page
    assert band.n_releases >= M.EXPECTED_ERROR_RELEASES >= 50
    assert band.unit == "m" and band.low <= band.median <= band.high
    assert band.sentence().count(" m") >= 2           # a unit on every figure


def test_the_accuracy_answer_shows_the_same_band_as_the_expected_error():
    """Issue 65, point 5: the Explorer said 23.9–108 m at ε = 5, Compare 32.6–123 (no unit)."""
    setting, points = _setting()
    answer = M.accuracy_answer(setting, 300.0, points, epsilons=(0.5, 1.0))
    for i, eps in enumerate(answer.epsilons):
        band = M.expected_error(setting, float(eps), points)
        assert tuple(answer.band[i]) == pytest.approx((band.low, band.median, band.high))
    assert answer.unit == "m" and answer.n_releases == M.EXPECTED_ERROR_RELEASES


def test_sessions_asking_for_one_band_at_once_share_one_simulation():
    """A class opening the Explorer together: the second session waits for the first's simulation, not a second."""
    import threading
    import time

    from ui.models.expected_error import _LRU
    cache, calls, out = _LRU(4), [], []

    def make():
        calls.append(1)
        time.sleep(0.3)
        return len(calls)
    threads = [threading.Thread(target=lambda: out.append(cache.get("k", make))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1] and out == [1, 1, 1, 1]

    def fails():
        calls.append(1)
        time.sleep(0.2)
        raise RuntimeError("stopped")
    errors, values = [], []

    def first():
        try:
            cache.get("j", fails)
        except RuntimeError as exc:
            errors.append(exc)
    t = threading.Thread(target=first)
    t.start()
    time.sleep(0.05)
    values.append(cache.get("j", lambda: "computed by the waiter"))   # the first stopped: the waiter computes
    t.join()
    assert len(errors) == 1 and values == ["computed by the waiter"]


def test_a_band_on_public_data_is_kept_on_disk_and_one_on_raw_data_is_not(tmp_path, monkeypatch):
    """A restarted server reads the public data's simulation back (issue 66: the Explorer's first visit simulated
    50 releases); an owner's raw data are simulated again, never written."""
    from ui.models import expected_error as E

    def restarted():
        E._ERRORS.clear()
        E._POINTS.clear()

    def never():
        raise AssertionError("simulated again")
    setting, points = _setting(public=True)
    band = M.expected_error(setting, 0.7, points)
    assert list((tmp_path / "previews").rglob("*.json"))
    restarted()
    assert M.expected_error(setting, 0.7, never) == band                      # read back, nothing simulated
    monkeypatch.setenv("DPCORE_PREVIEW_CACHE", str(tmp_path / "other"))
    raw, points = _setting(source="raw data")
    M.expected_error(raw, 0.7, points)
    restarted()
    assert not list((tmp_path / "other").rglob("*.json"))
    with pytest.raises(AssertionError, match="simulated again"):
        M.expected_error(raw, 0.7, never)


# -- names people read ----------------------------------------------------------------------------------------
def test_a_data_set_reads_by_its_title_never_by_its_key():
    assert M.dataset_title("nyc_taxi_sample", "NYC taxi 2009–15 (built in)") == "NYC taxi 2009–15 (built in)"
    assert M.dataset_title("upload:checkins_private.csv") == "checkins_private.csv (uploaded)"
    assert M.dataset_title("upload by ana@x.org:a.csv") == "a.csv (uploaded by ana@x.org)"
    assert "_" not in M.dataset_title("nyc_taxi_sample")


def test_a_publisher_reads_as_a_person():
    assert M.person_words("root@vm (local mode) · publish") == "root on vm (local mode)"
    assert M.person_words("ana@example.org · Explorer") == "ana@example.org"
    assert M.page_words("ana@example.org · Explorer") == "Explorer"
    assert M.person_words(None) == "unknown"
