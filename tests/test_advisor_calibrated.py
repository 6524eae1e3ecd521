"""Advice that holds (issue 25): a calibrated advisor over every algorithm, warnings where a key is no
better than the trivial answer, refusals only where it is clearly worse, and private selection."""
import inspect
import math
import warnings

import numpy as np
import pytest

import dpcore
from dpcore import evaluation as E
from dpcore.advisor import model as C
from dpcore.advisor import plan as P
from dpcore.advisor.plan import advisor_plan, advisor_ranking, candidate_filter
from dpcore.advisor.separation_read import SEPARATION_SHARE
from dpcore.advisor.verdict import calibrated_verdict
from dpcore.algorithms.auto_kmeans import SCORE_BITS, AutoKMeans, clipped_cost_score, release_probabilities
from dpcore.algorithms.regime import OutOfRegimeError, public_inputs
from dpcore.algorithms.registry import assess
from dpcore.metrics import inertia


def test_every_class_declared_calibrated_is_in_the_table_and_nothing_else():
    """Calibration is opt-in per class (issue 58): the keys the table must hold are those whose class
    declares ``calibrated = True`` on itself (``benchmarks.advisor_calibration --add KEY`` measures one);
    the advisor ranks exactly the table's keys, and only centre-releasing private estimators are on its
    cost scale."""
    cal = C.calibration()
    declared = {k for k, cls in dpcore.ALGORITHMS.items() if vars(cls).get("calibrated", False)}
    assert declared and set(cal.key) == declared == set(C.calibrated_keys())
    assert all(dpcore.ALGORITHMS[k].private and dpcore.ALGORITHMS[k].family == "centroids" for k in declared)
    # the design spans what the issue asks for
    syn = cal[cal.source == "synthetic"]
    assert syn.n.min() <= 1e3 and syn.n.max() >= 1e6 and syn.d.min() == 2 and syn.d.max() >= 100
    assert syn.k.min() <= 3 and syn.k.max() >= 100 and set(C.EPSILONS) <= set(cal.epsilon)
    assert set(syn.separation) == set(C.SEPARATIONS) == {1.0, 2.0, 4.0, 8.0, 16.0}
    assert (cal.source != "synthetic").any()

    def cells(t, *cols):
        return set(map(tuple, t[["source", "n", "d", "k", *cols]].drop_duplicates().to_numpy()))
    # the separation-8 column (--eight): every mixture the table holds at c = 4, at c = 8, at the
    # grid's epsilons and 0.5
    mix = cal[cal.separation.notna()]
    assert cells(mix[mix.separation == 8.0]) == cells(mix[mix.separation == 4.0])
    assert set(mix[mix.separation == 8.0].epsilon) == set(C.EPSILONS) | {0.5}
    # the one column between the grid's epsilons (--between): every equal-sized data set and the
    # unequal-sized mixture of the same (n, d, k, separation), both at epsilon 0.5
    between = cal[~cal.epsilon.isin(C.EPSILONS) & (cal.separation != 8.0)]
    assert set(between.epsilon) == {0.5}
    equal = cal[(cal.source == C.EQUAL_SOURCE) & (cal.separation != 8.0)]
    assert cells(between[between.source == C.EQUAL_SOURCE], "separation") == cells(equal, "separation")
    assert {c[1:] for c in cells(between[between.source == "synthetic"], "separation")} == {
        c[1:] for c in cells(equal, "separation")}


def test_an_uncalibrated_key_is_valid_and_the_advice_says_so(monkeypatch):
    """A registered class that does not opt in (a subclass under a new key: the attribute is read on
    the class itself) fits, is not ranked, and a warning about it says it is not calibrated."""
    from dpcore.advisor.plan import ALGORITHMS
    from dpcore.advisor.verdict import with_advice
    from dpcore.algorithms.regime import Regime
    toy = type("ToyLloyd", (dpcore.ALGORITHMS["dplloyd"],), {"key": "toy_lloyd", "__module__": __name__})
    monkeypatch.setitem(ALGORITHMS, "toy_lloyd", toy)
    assert "toy_lloyd" not in C.calibrated_keys()
    shape = dict(n=10_000, d=10, k=64, epsilon=1.0, delta=0.0)
    warned = with_advice(Regime("toy_lloyd", "warn", "the paper's rule warns."), **shape)
    assert warned.status == "warn" and warned.better is None and "Not calibrated" in warned.reason
    assert warned.figures["calibrated"] is False
    # the same rule's verdict for the calibrated key is checked against its measurements instead
    assert "Not calibrated" not in with_advice(Regime("dplloyd", "warn", "the paper's rule warns."), **shape).reason
    ok = Regime("toy_lloyd", "ok", "inside.")
    assert with_advice(ok, **shape) == ok
    assert "toy_lloyd" not in {p.key for p in advisor_ranking(10_000, 10, 64, 1.0, with_pick=False)[0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = toy(3, epsilon=1.0, bounds=(-1, 1), n_samples=2_000).fit(_mixture(2_000))
    assert est.cluster_centers_.shape == (3, 2) and est.budget_.total()[0] == pytest.approx(1.0)


def _mixture(n):
    from dpcore.advisor.separation_read import mixture
    return mixture(n, 2, 3, 4.0, seed=0)


def test_advice_reads_public_inputs_only():
    """advise() and the predictions take no data: only n (public or noisy), d, k, epsilon, delta."""
    for fn in (C.predict, C.predict_trivial, P.selection_plan, advisor_ranking, advisor_plan):
        params = set(inspect.signature(fn).parameters)
        # separation, sizes and hypotheses are hypotheses to weigh (public choices, or named by an
        # already released statistic), not data
        assert params <= {"n", "d", "k", "epsilon", "delta", "keys", "exclude", "separation", "sizes", "with_pick",
                          "max_candidates", "selection_share", "allowed", "pool", "hypotheses"}, fn
    a1, a2 = E.advise(50_000, 10, 20, 1.0), E.advise(50_000, 10, 20, 1.0)
    assert a1 == a2
    assert a1.best in {p.key for p in a1.ranking} | {C.TRIVIAL, "auto"}
    assert a1.best == advisor_plan(50_000, 10, 20, 1.0, 1e-6)[0]
    assert all(p.low <= p.ratio <= p.high for p in a1.ranking)
    regrets = [p.regret for p in a1.ranking]
    assert regrets == sorted(regrets)
    with pytest.raises(ValueError):
        C.predict(0, 2, 3, 1.0)
    with pytest.raises(ValueError):
        C.predict(100, 2, 3, -1.0)


def test_the_hypotheses_searched_together_predict_as_each_searched_alone():
    """The plans weigh all ten hypotheses from one neighbour search (the gaps added per hypothesis);
    each must be exactly the prediction of its own search, with and without a fold left out."""
    fold = C._group_ids(C.calibration())[0]
    for n, d, k, eps in [(100_000, 10, 64, 1.0), (20.7, 2, 2, 0.3), (3_000, 8, 4, 0.05), (10**6, 100, 100, 5.0)]:
        x = C.features(n, d, k, eps)[0]
        for key in ("dpm", "zcdp_lloyd", "coreset", C.TRIVIAL):
            for exclude in (None, fold):
                together = C._by_hypothesis(key, x, exclude)
                assert list(together) == list(C.HYPOTHESES)
                for h in C.HYPOTHESES:
                    alone = C._predict(key, x, exclude, *h)
                    assert (together[h].ratio, together[h].regret, together[h].available) == \
                        (alone.ratio, alone.regret, alone.available), (key, n, d, k, eps, exclude, h)


def test_more_budget_is_never_predicted_worse():
    """Every algorithm's prediction is non-increasing in epsilon (the model's monotone step), under
    every separation hypothesis too, where it is available (a fit may time out at a larger epsilon:
    EUGkM's grid grows with it)."""
    for n, d, k in ((1_000, 2, 3), (10_000, 10, 10), (100_000, 50, 30), (1_000_000, 2, 100)):
        for sep in (None,) + C.SEPARATIONS:
            ratios = {e: {p.key: p.ratio for p in C.predict(n, d, k, e, separation=sep)}
                      for e in (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)}
            for key in C.calibrated_keys():
                seq = [r for r in (ratios[e][key] for e in sorted(ratios)) if math.isfinite(r)]
                assert all(b <= a * (1 + 1e-12) for a, b in zip(seq, seq[1:])), (n, d, k, sep, key, seq)


def test_leave_one_out_picks_hold_on_the_real_sets():
    """The model, fitted without each calibration data set, picks well on it.

    Every real set and the first mixture of each separation (60 cells).  The issue's floor over the
    mixtures is a benchmark (issue 58: a sixteenth of them took 150 s of CI): ``python -m
    benchmarks.advisor_calibration --loo --every 16`` prints the figures this test held on 206 cells
    (82.0 % / 90.3 %, the advisor 82.0 % / 91.7 %) and whether each line of the floor is met; without
    ``--every``, the docs' table (1,698 cells).  Here: the real sets 33 and 36 of 36, each predicted
    from the others and the mixtures (the same 36 cells as the sixteenth)."""
    from benchmarks.advisor_loo import issue_floor, leave_one_out, loo_summary
    from dpcore.advisor.plan import runnable
    with pytest.raises(ValueError, match="every"):
        leave_one_out(every=0)
    loo = leave_one_out(allowed=runnable, every=10**6, advisor=True)
    assert set(loo.separation) == {0.0, *C.SEPARATIONS}      # one mixture per separation, every real set
    real = loo_summary(loo[loo.separation == 0.0])     # leave_one_out marks a real set's separation 0
    assert real["cells"] == 36 and real["pick_within_1_25"] >= 0.8 and real["pick_within_2"] >= 0.9
    a_real = loo_summary(loo[loo.separation == 0.0], "advisor_measured")
    assert a_real["pick_within_2"] >= 0.9
    floor = {what: met for what, _, _, met in issue_floor(loo)}
    assert floor["first pick within 1.25x, real sets"] and floor["first pick within 2x, real sets"]
    cells = loo.drop_duplicates(["source", "n", "d", "k", "separation", "epsilon"])
    same = cells[(cells.advisor_pick == cells.first_pick) & (cells.first_pick != "auto")]
    assert len(same) > 0.5 * len(cells) and np.allclose(same.advisor_measured, same.pick_measured, equal_nan=True)


def test_rows_the_table_does_not_hold_are_judged_by_the_whole_table():
    """``leave_one_out(table=)`` (``--held``: a column measured apart, before it joins the table) leaves
    nothing out: a data set passed that way is predicted as :func:`predict` predicts it, where leave-one-out
    predicts it without its own rows."""
    from benchmarks.advisor_loo import leave_one_out
    cal = C.calibration()
    one = cal[(cal.source == "synthetic_skewed") & (cal.n == 10_000) & (cal.d == 2) & (cal.k == 10)
              & (cal.separation == 16.0)]
    held = leave_one_out(table=one)
    assert len(held) == len(one)
    row = held[(held.key == "dpm") & (held.epsilon == 5.0)].iloc[0]
    args = (10_000, 2, 10, 5.0)
    assert row.predicted == pytest.approx(C.predict(*args, keys=("dpm",))[0].ratio)
    left_out = C.predict(*args, keys=("dpm",), exclude=C._group_ids(one)[0])[0].ratio
    assert row.predicted != pytest.approx(left_out)


def test_refusals_only_where_the_calibration_measured_worse_than_trivial():
    """Every utility refusal left stands where the algorithm measured clearly worse than the trivial answer."""
    cal = C.calibration()
    ran = cal[(cal.status == "ok") & (cal.ratio < cal.trivial_ratio)]
    # A verdict reads public inputs only (key, n, d, k, epsilon): one per distinct input (2,271 for the
    # table's 15,757 rows) judges every row, each row still counted.  with_advice never turns a rule's
    # "ok" or "warn" into "refuse", so only inputs whose paper rule refuses on utility alone (the cheap
    # class rule, asked first) can end refused; the calibrated verdict (assess's status, without the pick
    # it plans for its words) judges those.
    inputs = ["key", "n", "d", "k", "epsilon"]

    def paper_rule(r):
        n, d, k, eps = public_inputs(r.n, r.d, r.k, r.epsilon)
        return dpcore.ALGORITHMS[r.key].regime(n=n, d=d, k=k, epsilon=eps, delta=C.DELTA)

    def advised(r, rule):
        # The advice's status: what assess returns, without the pick it plans for its words (issue 58).
        n, d, k, eps = public_inputs(r.n, r.d, r.k, r.epsilon)
        return calibrated_verdict(rule, n=n, d=d, k=k, epsilon=eps, delta=C.DELTA)
    distinct = list(ran.drop_duplicates(inputs).itertuples())
    rules = [paper_rule(r) for r in distinct]
    refused = {(r.key, r.n, r.d, r.k, r.epsilon) for r, rule in zip(distinct, rules)
               if rule.status == "refuse" and rule.utility_only
               and (v := advised(r, rule)).status == "refuse" and v.utility_only}
    # ... which the advice itself must keep: on every 20th input whose rule does not refuse, no refusal appears.
    others = [(r, rule) for r, rule in zip(distinct, rules) if rule.status != "refuse"][::20]
    assert len(others) >= 50 and not [r for r, rule in others if advised(r, rule).status == "refuse"]
    # assess gives the same verdicts (it adds the pick's words): checked on a few of each kind
    sample = [(r, rule) for r, rule in zip(distinct, rules) if rule.status == "refuse" and rule.utility_only][:3]
    for r, rule in sample + others[:3]:
        said = assess(r.key, n=r.n, d=r.d, k=r.k, epsilon=r.epsilon, delta=C.DELTA)
        assert said.status == advised(r, rule).status and said.reason.startswith(advised(r, rule).reason)
    wrong = [(r.key, r.n, r.d, r.k, r.epsilon, r.ratio, r.trivial_ratio) for r in ran.itertuples()
             if (r.key, r.n, r.d, r.k, r.epsilon) in refused]
    assert len(wrong) <= 0.02 * len(ran), wrong[:10]


def test_a_key_worse_than_trivial_warns_and_names_the_advisors_pick():
    """Fixture: 2,000 points in 10-d, k = 30 at epsilon = 0.05, where GkM's noisy subsample centres
    are predicted (and measured here) worse than one centre at the DP mean."""
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(2_000, n_features=10, centers=30, center_box=(-0.8, 0.8), cluster_std=0.05,
                      random_state=0)
    X = np.clip(X, -1, 1)
    preds, triv, pick = advisor_ranking(2_000, 10, 30, 0.05)
    worse = [p.key for p in C.predict(2_000, 10, 30, 0.05) if p.available and p.ratio > triv.ratio]
    assert worse, "the fixture must have a key predicted worse than the trivial answer"
    key = worse[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = dpcore.ALGORITHMS[key](30, epsilon=0.05, bounds=(-1, 1), n_samples=2_000, random_state=0) \
            if "n_samples" in dpcore.ALGORITHMS[key]().get_params() else \
            dpcore.ALGORITHMS[key](30, epsilon=0.05, bounds=(-1, 1), random_state=0)
        try:
            est.fit(X)
        except OutOfRegimeError as exc:       # a clearly-worse prediction may keep a paper refusal
            assert repr(pick) in exc.regime.advised().reason
            return
    # the fit's check gives the paper's verdict (it does not plan, issue 58); the advice on it warns
    # and names the pick, as assess and the app's release page say it
    advised = est.regime_.advised()
    assert advised.status == "warn", advised
    assert f"({pick!r})" in advised.reason or "publish one centre at a DP mean" in advised.reason, advised.reason
    assert advised.better == pick
    # and the prediction holds on these data: the key measures worse than the DP mean
    mean = dpcore.ALGORITHMS["zcdp_lloyd"](1, epsilon=0.05, bounds=(-1, 1), random_state=0).fit(X)
    assert inertia(X, est.cluster_centers_) > 0.8 * inertia(X, mean.cluster_centers_)


def test_a_key_that_fails_on_one_kind_of_clusters_warns_and_says_which():
    """DPM on overlapping clusters in 20-d (c = 1): worse than one centre at the DP mean.  Predictions pooled
    over separations put it far below the trivial answer (far-apart mixtures, where the trivial answer is
    very poor, dominate) and were silent; the comparison under each separation warns, naming it."""
    from benchmarks.advisor_calibration import mixture
    X = mixture(30_000, 20, 6, 1.0, seed=7)
    pooled = C.predict(30_000, 20, 6, 1.0, keys=("dpm",))[0].ratio / C.predict_trivial(30_000, 20, 6, 1.0).ratio
    factor, where = C.trivial_factor("dpm", 30_000, 20, 6, 1.0)
    assert pooled < C.WARN_SHARE < factor and where[0] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = dpcore.ALGORITHMS["dpm"](6, epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=0).fit(X)
    advised = est.regime_.advised()     # the advice on the fit's verdict (the fit itself does not plan)
    assert advised.status == "warn" and "overlapping" in advised.reason
    assert advised.figures["trivial_factor"] > C.WARN_SHARE
    mean = dpcore.ALGORITHMS["zcdp_lloyd"](1, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(X)
    assert inertia(X, est.cluster_centers_) > inertia(X, mean.cluster_centers_)


def test_every_warning_and_refusal_names_the_advisors_first_pick():
    for key in C.calibrated_keys():
        for n, d, k, e in ((1_000, 2, 10, 0.05), (100_000, 11, 5, 0.5), (100_000, 16, 26, 1.0),
                           (5_000, 10, 64, 1.0)):
            v = assess(key, n=n, d=d, k=k, epsilon=e, delta=C.DELTA)
            if v.status == "ok":
                continue
            _, _, pick = advisor_ranking(n, d, k, e, C.DELTA)
            assert v.better == pick
            assert f"({pick!r})" in v.reason or "DP mean" in v.reason or "ranks it first" in v.reason


# -- private selection -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def blobs10():
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(20_000, n_features=10, centers=8, center_box=(-0.7, 0.7), cluster_std=0.05, random_state=1)
    return np.clip(X, -1, 1)


def test_auto_ledger_states_the_whole_selection():
    """Inputs where the plan takes two candidates (DPM for far-apart clusters, a Lloyd for overlapping)."""
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(30_000, n_features=8, centers=12, center_box=(-0.8, 0.8), cluster_std=0.05,
                      random_state=3)
    X = np.clip(X, -1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the public plan's mechanics: the separation read off (tests/test_separation_read.py has it on)
        est = AutoKMeans(12, epsilon=2.0, delta=1e-6, bounds=(-1, 1), separation_share=0, random_state=0).fit(X)
    assert len(est.candidates_) >= 2
    names = [e.name for e in est.budget_]
    assert names[0] == "dataset size"
    assert [n for n in names if n.startswith("candidate")] == [f"candidate {i + 1}: {c['key']}"
                                                             for i, c in enumerate(est.candidates_)]
    assert names[-1].startswith("selection")
    eps, delta = est.budget_.total()
    assert eps == pytest.approx(2.0) and delta <= 1e-6 * (1 + 1e-9)
    assert sum(c["epsilon"] for c in est.candidates_) == pytest.approx(2.0 * 0.98 * (1 - C.SELECTION_SHARE))
    # the chosen candidate spent within its share, and the release is its centres
    share = est.candidates_[[c["key"] for c in est.candidates_].index(est.chosen_)]["epsilon"]
    assert 0 < est.selected_budget_.total()[0] <= share * (1 + 1e-9)
    # the candidates are the plan for the released noisy size: public inputs only
    plan = P.selection_plan(est.n_samples_estimate_, 8, 12, 2.0 * 0.98, allowed=candidate_filter(
        est.n_samples_estimate_, 8, 12, 1e-6))
    assert [c["key"] for c in est.candidates_] == list(plan.keys)
    assert [c["epsilon"] for c in est.candidates_] == pytest.approx(list(plan.budgets()))


def test_auto_can_split_the_budget_unequally_and_the_ledger_says_so():
    """6-d, 24 clusters, eps 2: DPM needs the larger share (it degrades faster as eps falls) and gets it."""
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(60_000, n_features=6, centers=24, center_box=(-0.8, 0.8), cluster_std=0.03, random_state=4)
    X = np.clip(X, -1, 1)
    plan = P.selection_plan(60_000, 6, 24, 2.0, allowed=candidate_filter(60_000, 6, 24, 1e-6))
    budgets = dict(zip(plan.keys, plan.budgets()))
    assert len(budgets) == 2 and budgets["dpm"] > 1.9 * min(budgets.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AutoKMeans(24, epsilon=2.0, delta=1e-6, bounds=(-1, 1), n_samples=60_000, separation_share=0,
                         random_state=0).fit(X)
    entries = {e.name: e.epsilon for e in est.budget_}
    assert entries == pytest.approx({**{f"candidate {i + 1}: {key}": budgets[key] for i, key in enumerate(plan.keys)},
                                     next(n for n in entries if n.startswith("selection")): 2 * C.SELECTION_SHARE})
    assert est.budget_.total()[0] == pytest.approx(2.0)
    # the release is an order of magnitude better than the trivial answer (one centre at a DP mean):
    # the selection found a useful candidate (a simulation seed: the outcome is fixed)
    mean = dpcore.ALGORITHMS["zcdp_lloyd"](1, epsilon=2.0, bounds=(-1, 1), random_state=0).fit(X)
    assert inertia(X, est.cluster_centers_) < 0.1 * inertia(X, mean.cluster_centers_)


def test_the_advice_names_the_plan_auto_runs():
    """Where the advisor says auto, it names the keys and shares auto's own plan gives (after the noisy
    size's share); where auto would run one key, the advice is that key (8-d, k = 12, eps 0.5 named
    two candidates while auto ran zCDP-Lloyd alone)."""
    from dpcore.advisor.plan import worst_with_read
    from dpcore.algorithms.auto_kmeans import auto_plan
    seen = set()
    for n, d, k, e in ((30_000, 8, 12, 0.5), (30_000, 8, 12, 1.0), (100_000, 10, 64, 1.0), (100_000, 10, 64, 2.0),
                       (30_000, 8, 12, 2.0), (50_000, 3, 20, 1.0), (20_000, 16, 26, 1.0), (2_000, 2, 5, 0.5)):
        adv = E.advise(n, d, k, e, delta=1e-6)
        run = AutoKMeans(k, epsilon=e, delta=1e-6, bounds=(-1, 1)).plan(n, d, e * 0.98 * (1 - SEPARATION_SHARE))
        if adv.best == "auto":
            assert tuple(key for key, _, _, _ in run) == adv.plan.keys
            assert [eps_c for _, eps_c, _, _ in run] == pytest.approx(list(adv.plan.budgets()))
            # One key before the read only where the read is what the advice buys (READ_GUARD): its plan's
            # worst case is then auto's predicted with the read.
            assert len(run) >= 2 or adv.plan.worst == pytest.approx(worst_with_read(n, d, k, e * 0.98, 1e-6))
        elif len(run) == 1:
            assert auto_plan(n, d, k, e * 0.98 * (1 - SEPARATION_SHARE), 1e-6).keys == (run[0][0],)
        seen.add(adv.best == "auto")
    assert seen == {True, False}
    assert E.advise(30_000, 8, 12, 0.5, delta=1e-6).best == "zcdp_lloyd"


def test_the_calibration_measures_equal_and_unequal_cluster_sizes():
    """Whether the clusters have equal sizes is not public, and on far-apart clusters it parts DPM from
    the Lloyd-type algorithms (DPM's own benchmark has equal sizes; the grid's mixtures had Dirichlet(2)
    weights only, and the advisor never gave DPM most of the budget on it).  The calibration measures
    both size laws at every separation, the model weighs each (separation, sizes) pair as a hypothesis,
    and on an equal-sized far-apart mixture DPM measures far better than zCDP-Lloyd, as the
    equal-sized prediction says, and the advisor's plan holds it."""
    from benchmarks.advisor_calibration import mixture
    cal = C.calibration()
    assert set(cal[cal.source == C.EQUAL_SOURCE].separation) == set(C.SEPARATIONS)
    assert set(C.HYPOTHESES) == {(c, z) for c in C.SEPARATIONS for z in C.SIZES}
    args = (100_000, 10, 64, 1.0)
    dpm = {z: C.predict(*args, keys=("dpm",), separation=16.0, sizes=z)[0].ratio for z in (*C.SIZES, None)}
    assert dpm["equal"] < dpm[None] < dpm["unequal"] and dpm["equal"] < dpm["unequal"] / 3
    with pytest.raises(ValueError, match="sizes"):
        C.predict(*args, separation=16.0, sizes="balanced")
    with pytest.raises(ValueError, match="sizes"):     # not read as "unequal"
        C.predict_trivial(*args, separation=16.0, sizes="Equal")
    X = mixture(100_000, 10, 64, 16.0, seed=77, equal=True)
    cost = {}
    for key in ("dpm", "zcdp_lloyd"):
        est = dpcore.ALGORITHMS[key](64, epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cost[key] = inertia(X, est.fit(X).cluster_centers_)
    assert cost["dpm"] < cost["zcdp_lloyd"] / 3
    assert "dpm" in advisor_plan(*args, 1e-6)[1].keys


def test_skewed_sizes_are_a_hypothesis_and_the_plan_hedges_against_dpm_on_them():
    """Skew (Dirichlet(0.5) sizes, the ``--skewed`` column) reverses DPM's lead on far-apart clusters: at
    10^4 rows in 2-d with 10 clusters, c = 16 and eps 5 it measured 1.01x with Dirichlet(2) sizes and
    33.8x with skewed ones, as on Fränti's Unbalance (DPM alone, auto's plan there before the column,
    5.35x).  The skewed hypothesis predicts it, and the advice there hedges with a grid key that holds."""
    cal = C.calibration()
    skewed = cal[cal.source == "synthetic_skewed"]
    assert set(skewed.separation) == set(C.SEPARATIONS) and set(skewed.d) == {2, 5, 10} and len(skewed) == 5400

    def measured(source):
        at = ((cal.source == source) & (cal.n == 10_000) & (cal.d == 2) & (cal.k == 10) & (cal.separation == 16.0)
              & (cal.epsilon == 5.0) & (cal.key == "dpm"))
        return float(cal[at].ratio.iloc[0])

    assert measured("synthetic_skewed") > 10 * measured("synthetic")
    args = (10_000, 2, 10, 5.0)
    dpm = {z: C.predict(*args, keys=("dpm",), separation=16.0, sizes=z)[0].ratio for z in C.SIZES}
    assert dpm["skewed"] > 5 * max(dpm["unequal"], dpm["equal"])
    pick, plan = advisor_plan(*args, 1e-6)
    assert plan.keys != ("dpm",) and {"eugkm", "hybrid"} & set(plan.keys)
    assert plan.by_hypothesis[16.0, "skewed"] < 3


def test_selection_plan_is_no_worse_in_the_worst_case_than_any_single_key():
    """The plan is the minimax choice over the separations: no single key's worst case beats it."""
    for n, d, k, e in ((100_000, 10, 64, 2.0), (30_000, 20, 6, 1.0), (10_000, 11, 5, 1.0), (1_000, 2, 30, 0.05)):
        plan = P.selection_plan(n, d, k, e)
        assert 1 <= len(plan.keys) <= 3 and plan.worst == max(plan.by_hypothesis.values())
        singles = [P.worst_factor(key, n, d, k, e) for key in C.calibrated_keys()]
        assert plan.worst <= min(singles) * (1 + 1e-12), (n, d, k, e)
        if len(plan.keys) > 1:    # a larger set must pay for its split by more than 10 %
            assert plan.worst * 1.1 < min(singles)
            assert sum(plan.budgets()) == pytest.approx(e * (1 - C.SELECTION_SHARE)) and plan.epsilon == max(plan.budgets())
            shares = tuple(b / (e * (1 - C.SELECTION_SHARE)) for b in plan.budgets())
            assert any(np.allclose(sorted(shares), sorted(s)) for s in C.SPLITS.get(len(shares), ((1 / 3,) * 3,)))
    # DPM's tight-cluster strength is in the plan on DPM's own kind of data (10-d, 64 clusters, eps 2)
    assert "dpm" in P.selection_plan(100_000, 10, 64, 2.0).keys


def test_a_single_pick_never_bets_far_beyond_the_safest_single_key(monkeypatch):
    """GUARD: where one key will do, the regret pick gives way to the minimax single key when its worst
    case over the hypotheses is more than GUARD times that key's.  On synth_10d's inputs at epsilon 0.5
    (after auto's 2 % for the size) the regret pick is zCDP-Lloyd (262x non-private measured there) and
    the guard picks DPM (2.3x)."""
    pool = C.calibrated_keys() + (C.TRIVIAL,)
    for n, d, k, e in ((100_000, 10, 64, 0.49), (100_000, 2, 100, 1.0), (5_000, 5, 10, 0.5), (1_000, 2, 3, 1.0),
                       (20_000, 16, 26, 1.0), (100_000, 5, 64, 0.5)):
        for auto in (True, False):
            pick, plan = P.first_pick(n, d, k, e, auto=auto)
            if pick == "auto":
                continue
            assert plan.keys == (pick,)
            safest = P.selection_plan(n, d, k, e, max_candidates=1, pool=pool)
            assert not math.isfinite(plan.worst) or plan.worst <= C.GUARD * safest.worst * (1 + 1e-12), (n, d, k, e)
    assert P.first_pick(100_000, 10, 64, 0.49)[0] == "dpm"
    assert E.advise(100_000, 10, 64, 0.5, delta=1e-6).best == "dpm"
    monkeypatch.setattr(P, "GUARD", math.inf)      # the guard decides it: without it, the regret pick
    assert P.first_pick(100_000, 10, 64, 0.49, auto=False)[0] == "zcdp_lloyd"


def test_the_advisor_recommends_auto_where_the_separation_decides():
    adv = E.advise(30_000, 8, 12, 2.0, delta=1e-6)
    assert adv.best == "auto" and len(adv.plan.keys) >= 2
    assert "auto" in adv.reason and all(E.advice_name(q) in adv.reason for q in adv.plan.keys)
    one = E.advise(20_000, 16, 26, 1.0, delta=1e-6)
    assert one.best == one.plan.keys[0] and len(one.plan.keys) == 1


def test_a_split_is_judged_at_a_margin_below_its_shares(monkeypatch):
    # synth_10d's shape at epsilon 1: judged at their shares, zCDP-Lloyd and DPM split 1:3, which left
    # DPM below its budget cliff (1.76x non-private against 1.32x alone); judged at SPLIT_MARGIN of
    # their shares, DPM runs alone on the whole epsilon.
    plan = P.selection_plan(100_000, 10, 64, 0.98)
    assert plan.keys == ("dpm",) and plan.budgets() == (0.98,)
    for n, d, k in (30_000, 8, 12), (60_000, 6, 24):
        split = P.selection_plan(n, d, k, 1.98)
        assert len(split.keys) == 2 and sum(split.budgets()) == pytest.approx(1.98 * (1 - C.SELECTION_SHARE))
        every = [C._by_hypothesis(q, C.features(n, d, k, 1.98)[0]) for q in C.calibrated_keys() + (C.TRIVIAL,)]
        for h, factor in split.by_hypothesis.items():    # each hypothesis's factor: the best member at the margin
            member = min(C._by_hypothesis(q, C.features(n, d, k, e * C.SPLIT_MARGIN)[0])[h].ratio
                         for q, e in zip(split.keys, split.budgets()))
            assert factor == pytest.approx(member / min(p[h].ratio for p in every))
    monkeypatch.setattr(P, "SPLIT_MARGIN", 1.0)
    total = 0.98 * (1 - C.SELECTION_SHARE)
    old = P.selection_plan(100_000, 10, 64, 0.98)
    assert old.keys == ("zcdp_lloyd", "dpm") and old.budgets() == pytest.approx((total / 4, 3 * total / 4))


def test_auto_with_public_size_and_one_candidate_spends_nothing_on_either(blobs10):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AutoKMeans(8, epsilon=1.0, bounds=(-1, 1), n_samples=20_000, n_candidates=1, separation_share=0,
                         random_state=0).fit(blobs10)
    assert [e.name for e in est.budget_] == [f"candidate 1: {est.chosen_}"]
    assert est.candidates_[0]["epsilon"] == pytest.approx(1.0)


def test_auto_without_delta_runs_only_pure_epsilon_candidates(blobs10):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AutoKMeans(8, epsilon=1.0, delta=0.0, bounds=(-1, 1), random_state=0).fit(blobs10)
    assert all(not dpcore.ALGORITHMS[c["key"]].needs_delta for c in est.candidates_)
    assert est.budget_.total()[1] == 0.0


def test_auto_seeds_reproduce_and_selection_prefers_the_cheaper_cost(blobs10):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = AutoKMeans(8, epsilon=2.0, bounds=(-1, 1), random_state=3).fit(blobs10)
        b = AutoKMeans(8, epsilon=2.0, bounds=(-1, 1), random_state=3).fit(blobs10)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.chosen_ == b.chosen_


def test_the_score_is_an_exact_integer_with_sensitivity_one_lattice_step_per_row():
    rng = np.random.default_rng(0)
    lo, hi = np.array([-1.0, 0.0]), np.array([1.0, 5.0])
    X = rng.uniform(lo, hi, (500, 2))
    Cs = rng.uniform(lo, hi, (4, 2))
    for k in (1, 4, 50):
        s = clipped_cost_score(X, Cs, lo, hi, k)
        assert isinstance(s, int) and 0 <= s <= 500 * (1 << SCORE_BITS)
        # adding any row raises it by at most one lattice step, never lowers it
        for x in (lo, hi, rng.uniform(lo, hi, 2)):
            s2 = clipped_cost_score(np.vstack([X, x]), Cs, lo, hi, k)
            assert 0 <= s2 - s <= (1 << SCORE_BITS)
        # a far centre outside the box is clipped onto it first
        assert clipped_cost_score(X, Cs + 100, lo, hi, k) <= 500 * (1 << SCORE_BITS)
    with pytest.raises(ValueError):
        clipped_cost_score(X, Cs, lo, hi, 0)


def test_the_score_caps_at_one_cell_so_tight_clusters_stay_resolvable():
    """The cap is the diagonal of one of k cells tiling the box: each row counts k^(2/d) times more
    than under the box's diagonal (a gap the selection's noise can see), a row beyond it one unit."""
    rng = np.random.default_rng(1)
    lo, hi = np.zeros(3), np.ones(3)
    centres = rng.uniform(0.1, 0.9, (20, 3))
    X = np.clip(centres[rng.integers(0, 20, 20_000)] + 0.01 * rng.standard_normal((20_000, 3)), 0, 1)
    off = centres + 0.02                                     # a slightly worse candidate
    box = clipped_cost_score(X, off, lo, hi, 1) - clipped_cost_score(X, centres, lo, hi, 1)
    cell = clipped_cost_score(X, off, lo, hi, 20) - clipped_cost_score(X, centres, lo, hi, 20)
    assert cell == pytest.approx(20 ** (2 / 3) * box, rel=1e-3) and box > 0
    # one row beyond every centre's cell is a single lattice unit, as the box's far corner is for k = 1
    far = np.vstack([X, [[0.0, 0.0, 0.0]]])
    corner = np.array([[1.0, 1.0, 1.0]])
    assert (clipped_cost_score(far, corner, lo, hi, 20) - clipped_cost_score(X, corner, lo, hi, 20)
            == 1 << SCORE_BITS)


def test_release_probabilities_are_the_law_of_permute_and_flip():
    from dpcore.privacy.accountant import BudgetLedger
    from dpcore.privacy.mechanisms import NoiseSource
    sens = float(1 << SCORE_BITS)
    scores = np.array([0.0, -1.5, -0.4, -3.0]) * sens
    law = release_probabilities(scores, 1.0)
    assert law.sum() == pytest.approx(1.0) and law.argmax() == 0
    draws = 20_000
    # One ledger per draw, one generator for all: the same draws as one ledger holding all 20,000 spends,
    # without that ledger's exact total (a sum over every entry) recomputed at each spend.
    rng = np.random.default_rng(5)
    freq = np.bincount([NoiseSource(rng, BudgetLedger(1.0)).permute_and_flip(
        scores, sensitivity=sens, epsilon=1.0, monotonic=True, name="s") for _ in range(draws)], minlength=4) / draws
    np.testing.assert_allclose(freq, law, atol=0.015)
    with pytest.raises(ValueError):
        release_probabilities(np.zeros(9), 1.0)


def test_the_cell_cap_lets_auto_find_the_good_candidate_on_tight_clusters():
    """3-d, 20 tight clusters, eps 1: DPM (about 1.0x non-private) beside the Hybrid (about 2.5x).
    At auto's selection share, capped at the box's diagonal, the selection would release the Hybrid
    with probability 22 % for these fits (19 % over ten seeds: benchmarks/advisor_selection.py; the
    whole cost is tens of rows' worth); capped at one of k cells, 0.13 %."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(50_000, n_features=3, centers=20, center_box=(-0.8, 0.8), cluster_std=0.03, random_state=4)
    X = np.clip(X, -1, 1)
    lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    auto = AutoKMeans(20, epsilon=1.0, delta=1e-6, bounds=(-1, 1), n_samples=50_000)
    # auto's plan here (DPM 2/3, the Hybrid 1/3), fixed rather than read from the advisor: the test is
    # about the score's cap, and plans move with the calibration
    share = 1.0 - C.SELECTION_SHARE
    plan = [("hybrid", share / 3, 0.0), ("dpm", 2 * share / 3, 5e-7)]
    centres, cost = [], []
    for j, (key, eps_c, delta_c) in enumerate(plan):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = auto.candidate(key, eps_c, delta_c, 50_000.0, (-1, 1), 7 + j).fit(X).cluster_centers_
        centres.append(fitted)
        cost.append(inertia(X, fitted))
    cost = np.array(cost)
    poor = cost > 1.25 * cost.min()
    assert poor.any()                                  # the candidates differ: one is the poor one
    chance = {cap: release_probabilities([-clipped_cost_score(X, c, lo, hi, cap) for c in centres],
                                          C.SELECTION_SHARE)[poor].sum()
              for cap in (1, 20)}
    assert chance[1] > 0.1 and chance[20] < 0.005, chance


def test_auto_rejects_bad_parameters_before_spending(blobs10):
    for kw in (dict(n_candidates=0), dict(n_candidates=1.5), dict(selection_share=1.0), dict(selection_share=0)):
        est = AutoKMeans(8, epsilon=1.0, bounds=(-1, 1), **kw)
        with pytest.raises(ValueError):
            est.fit(blobs10)


def test_auto_regime_states_the_plan_fit_runs_for_its_parameters(blobs10):
    """The regime verdict (shown before a fit) names the candidates fit() will run, for the estimator's own
    n_share, n_candidates, selection_share and public n_samples, not for fixed defaults."""
    for kw in (dict(), dict(n_candidates=1), dict(n_share=0.2, selection_share=0.3), dict(n_samples=20_000)):
        est = AutoKMeans(8, epsilon=1.0, delta=1e-6, bounds=(-1, 1), random_state=0, **kw)
        n = kw.get("n_samples", 20_000)
        params = {key: v for key, v in est.get_params().items() if key not in ("n_clusters", "epsilon", "delta")}
        verdict = AutoKMeans.regime(n=n, d=2, k=8, epsilon=1.0, delta=1e-6, **params)
        share = 0.0 if "n_samples" in kw else est.n_share
        assert list(verdict.figures["candidates"]) == [key for key, *_ in est.plan(n, 2, 1.0 * (1 - share))]
    big = AutoKMeans.regime(n=100_000, d=10, k=64, epsilon=2.0, delta=1e-6, n_share=0.5, n_candidates=1)
    assert len(big.figures["candidates"]) == 1


def test_auto_with_one_candidate_runs_the_advisors_single_pick():
    """Where no set of keys is worth its split, auto runs the key the advisor names (lowest regret),
    on the whole budget, not the minimax single key (8-d, k = 12, eps = 1 held out: DPM 4.8x there)."""
    from dpcore.algorithms.auto_kmeans import auto_plan
    differs = 0
    for n, d, k, e in ((30_000, 8, 12, 0.98), (30_000, 8, 6, 0.49), (10_000, 11, 6, 1.0), (5_000, 5, 10, 0.98),
                       (3_000, 8, 4, 0.98)):
        plan = auto_plan(n, d, k, e, 1e-6)
        minimax = P.selection_plan(n, d, k, e, allowed=candidate_filter(n, d, k, 1e-6))
        if len(plan.keys) > 1:
            assert plan.keys == minimax.keys
            continue
        differs += plan.keys != minimax.keys
        pick, single = P.first_pick(n, d, k, e, allowed=candidate_filter(n, d, k, 1e-6), auto=False)
        assert plan.keys == (pick,) and plan.epsilon == pytest.approx(e)
        est = AutoKMeans(k, epsilon=e, delta=1e-6, bounds=(-1, 1), n_samples=n)
        assert [c[0] for c in est.plan(n, d, e)] == [pick]
    assert differs        # on the two small sets the rules part (EUGkM / Hybrid by regret, Hybrid / zCDP-Lloyd by minimax)


def test_the_calibration_table_records_how_each_data_set_was_drawn():
    """Every row names its mixture's seed and its fits' random_state, and they reproduce the stored
    ratio: what ``--refit`` relies on (a 10^3-row set of the grid and a 10^5-row one of ``--mid``, and
    the same cells of ``--equal`` and the 10^5-row one of ``--skewed``)."""
    import multiprocessing as mp

    from benchmarks.advisor_calibration import _fit, _reference, draw, table_data_sets
    cal = C.calibration()
    mixtures = cal.separation.notna()
    assert cal.fit_seed.notna().all() and cal[mixtures].seed.notna().all() and cal[~mixtures].seed.isna().all()
    sets = table_data_sets(cal)
    seeds = [s[5] for s in sets if s[5] is not None]
    assert len(set(seeds)) == len(seeds)                 # no two mixtures share a draw
    pick = [s for s in sets if s[1:5] in ((1_000, 2, 3, 1.0), (100_000, 5, 10, 2.0))]
    assert len(pick) == 5                                # unequal and equal sizes, and skewed at 10^5 rows
    for source, n, d, k, sep, seed, fit_seed in pick:
        X = draw(source, n, d, k, sep, seed)
        row = cal[(cal.source == source) & (cal.n == n) & (cal.d == d) & (cal.k == k) & (cal.separation == sep)
                  & (cal.key == "zcdp_lloyd") & (cal.epsilon == 1.0)].iloc[0]
        a, b = mp.get_context("fork").Pipe(duplex=False)
        p = mp.get_context("fork").Process(target=_fit, args=("zcdp_lloyd", X, k, 1.0, fit_seed, b))
        p.start()
        cost = a.recv()[0]
        p.join()
        assert cost / _reference(X, k) == pytest.approx(row.ratio, rel=1e-3)


def test_the_columns_jobs_are_the_data_sets_the_table_records():
    """``--twenty-five`` and ``--skewed`` would draw again exactly the data sets (source, shape, separation,
    seed, random_state) the table holds for them: adding a size law did not move an earlier column's seeds."""
    from benchmarks.advisor_calibration import skewed_jobs, twenty_five_jobs
    cal = C.calibration()
    for jobs, rows in ((twenty_five_jobs(), cal[cal.d == 25]), (skewed_jobs(), cal[cal.source == "synthetic_skewed"])):
        sets = rows.drop_duplicates(["source", "n", "d", "k", "separation"])
        recorded = {(r.source, (int(r.n), int(r.d), int(r.k)), r.separation, int(r.seed), int(r.fit_seed))
                    for r in sets.itertuples()}
        assert len(jobs) == len(recorded) == 90 and set(jobs) == recorded


def test_predictions_do_not_depend_on_the_calibration_tables_row_order():
    """The separations of one (n, d, k) share their coordinates: a tied group is taken whole, not by
    row order (which changed with every supplement appended to the table)."""
    inputs = [(100_000, 10, 64, 1.0), (30_000, 8, 12, 0.98), (1_000, 2, 30, 0.05), (50_000, 3, 20, 0.5)]

    def snapshot():
        out = []
        for a in inputs:
            out.append({p.key: (p.ratio, p.regret) for p in C.predict(*a)})
            out.append({h: C.predict(*a, separation=h)[0].key for h in C.SEPARATIONS})
        return out
    before = snapshot()
    shuffled = C.calibration().sample(frac=1.0, random_state=0).reset_index(drop=True)
    original = C.calibration
    C._tables.cache_clear()
    C.calibration = lambda: shuffled
    try:
        after = snapshot()
    finally:
        C.calibration = original
        C._tables.cache_clear()
    for b, a in zip(before[::2], after[::2]):
        assert b.keys() == a.keys()
        for key in b:
            assert a[key] == pytest.approx(b[key], rel=1e-9), key
    assert before[1::2] == after[1::2]


def test_the_advice_words_name_the_calibrated_range_and_do_not_contradict_the_pick():
    """The predicted worst case is over the calibrated separations (c = 1 to 16), not "whatever the
    separation": data packed tighter (DPM's own benchmark, c = 46) lie beyond them.  Where Su et al.'s
    formula pick refuses, their fallback is told in the rule's own words, not beside the calibrated
    pick ("ranks zCDP-Lloyd first ... So dplloyd instead")."""
    lo, hi = min(C.SEPARATIONS), max(C.SEPARATIONS)
    adv = E.advise(100_000, 10, 64, 0.5, delta=1e-6)
    words = f"at every separation calibrated, from overlapping (c = {lo:g}) to far apart (c = {hi:g})"
    assert words in adv.reason and "whatever" not in adv.reason
    formulas = adv.reason.split("Su et al.'s formulas alone:", 1)[1]
    assert "The advisor ranks" not in formulas and "fall back to" in formulas
    verdict = assess("dpm", n=20_000, d=16, k=26, epsilon=1.0, delta=1e-6)     # DPM warns, names a single key
    assert verdict.status == "warn" and verdict.better == "zcdp_lloyd" and words in verdict.reason


def test_held_out_verdicts_under_the_current_model():
    """``benchmarks.advisor_heldout --verdicts``: the current model's verdicts on the stored held-out
    medians (data the calibration never used), from public inputs.  No utility refusal where the
    algorithm measured under the trivial answer, and no silent fit more than 5 % worse than it (the
    one silent cell today, Balcan on the 20-d c = 1 mixture at eps 1, is 1.66x against 1.63x)."""
    from benchmarks.advisor_auto import HELD, truth
    from benchmarks.advisor_heldout import recheck, stored_medians
    cells, silent, wrong = recheck()
    names = {name for name, *_ in stored_medians()}
    assert len(names) == len(HELD) + 1        # every held-out set and synth_10d, each with its truth
    assert {truth(name)[1] for name in names if name.endswith(" equal")} == {"equal"}
    assert {truth(name)[1] for name in names if not name.endswith(" equal")} == {"unequal", "equal"}   # synth_10d
    assert cells >= 300 and wrong == []
    assert all(ratio <= 1.05 * trivial for *_, ratio, trivial in silent), silent


def test_the_separation_statistic_tells_far_apart_from_overlapping_clusters():
    """benchmarks/advisor_separation.py's statistic (a Laplace histogram's top-k share, epsilon 0.05):
    far-apart clusters put their mass in about k cells, overlapping ones spread it; its noise is fresh
    for each generator and reproduces for the same one."""
    from benchmarks.advisor_calibration import mixture
    from benchmarks.advisor_separation import top_k_share
    n, d, k = 10_000, 10, 30
    far = [top_k_share(mixture(n, d, k, 16.0, s), k, 0.05, np.random.default_rng(s)) for s in range(3)]
    near = [top_k_share(mixture(n, d, k, 1.0, s), k, 0.05, np.random.default_rng(s)) for s in range(3)]
    assert all(0.0 <= v <= 1.0 for v in far + near)
    assert min(far) > max(near) + 0.1, (far, near)
    X = mixture(n, d, k, 4.0, 7)
    a, b, c = (top_k_share(X, k, 0.05, np.random.default_rng(s)) for s in (1, 1, 2))
    assert a == b and a != c


def test_a_plan_over_fewer_hypotheses_weighs_only_those():
    """``selection_plan(..., hypotheses=)``: the default is every hypothesis; a subset's plan reports
    only its own and its worst case is no larger than the worst case over all (minimax over less)."""
    args = (100_000, 10, 64, 1.0)
    assert P.selection_plan(*args, hypotheses=C.HYPOTHESES) == P.selection_plan(*args)
    whole = P.selection_plan(*args, max_candidates=1)
    far = tuple(h for h in C.HYPOTHESES if h[0] >= 8)
    plan = P.selection_plan(*args, max_candidates=1, hypotheses=far)
    assert set(plan.by_hypothesis) == set(far)
    assert plan.worst <= whole.worst * (1 + C.WORST_TIE)
    assert plan.keys == ("dpm",)      # far apart in 10-d with 64 clusters: DPM's regime
    for bad in ((), ((3.0, "equal"),)):
        with pytest.raises(ValueError, match="subset of HYPOTHESES"):
            P.selection_plan(*args, hypotheses=bad)


def test_plausible_hypotheses_and_measured_factors_of_the_separation_benchmark():
    from benchmarks.advisor_separation import factor, plausible
    assert {h[0] for h in plausible(16.0, 2)} == {4.0, 8.0, 16.0} and len(plausible(16.0, 2)) == 3 * len(C.SIZES)
    assert {h[0] for h in plausible(2.0, 1)} == {1.0, 2.0, 4.0}
    ratios = {"dpm": 3.0, "zcdp_lloyd": 1.5, "coreset": math.nan}
    assert factor("dpm", ratios, 2.0) == 2.0 and factor(C.TRIVIAL, ratios, 2.0) == pytest.approx(4 / 3)
    assert factor("coreset", ratios, 2.0) == math.inf and factor("balcan", ratios, 2.0) == math.inf


def test_importing_the_calibration_benchmark_after_numba_threads_started_breaks_nothing():
    """The benchmark sets one numba thread per fit process when it is imported; a test worker that
    had loaded numba failed every later numba compile once its pool started (62, then 64 tests of
    two CI runs: "Cannot set NUMBA_NUM_THREADS ... once the threads have been launched")."""
    import subprocess
    import sys
    from pathlib import Path
    kernel = ("import numpy as np, numba\n"
              "@numba.njit(parallel=True)\n"
              "def f(x):\n"
              "    s = 0.0\n"
              "    for i in numba.prange(x.size):\n"
              "        s += x[i]\n"
              "    return s\n")
    cached = ("import numpy as np, numba\n"
              "from dpcore.sources import _kernels as K\n"
              "import benchmarks.advisor_calibration\n"
              "K._outside(np.zeros((10, 2)), np.zeros(2) - 1, np.ones(2), 2)\n")
    # Imported after the pool started; imported before it, when a kernel cached on disk then starts
    # it on the configuration read before the import (run twice: the first run fills the cache).
    orders = [kernel + "f(np.ones(100))\nimport benchmarks.advisor_calibration\n", cached, cached]
    root = Path(__file__).resolve().parents[1]
    for script in orders:
        done = subprocess.run([sys.executable, "-c", script + "print(numba.njit(lambda x: x + 1)(1))\n"], cwd=root,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr[-500:]
