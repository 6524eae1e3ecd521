"""Every estimator's declared budget plan is what its fit spends, at the size it keeps (issue 58).

``est.budget_plan(d, n)`` turns the budget-share parameters (``<step>_share``, ``budget_shares``) into
``{step: (epsilon, delta)}``; a fit's ledger, grouped by step (:func:`~dpcore.algorithms.base.ledger_by_step`),
must match it to 1e-12 and spend exactly the (epsilon, delta) given.  Parametrised over the registry
(and the Sanitizer), so a new algorithm is covered as soon as it is registered; each is fitted with its
audit case's fast parameters, with its defaults, and with a public ``n_samples`` where it takes one.
The size a plan reads is the fitted ``n_samples_estimate_`` (the public ``n_samples`` or the noisy size
the fit released), one name for every estimator.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import dpcore
from dpcore.algorithms.parameters import UNSPENT, ledger_by_step
from dpcore.algorithms.sanitize import Sanitizer
from tests.audit.dp_audit import ReleaseRecorder

CLASSES = {**dpcore.ALGORITHMS, "sanitize": Sanitizer}
PRIVATE = sorted(k for k, c in CLASSES.items() if c.private)
RNG = np.random.default_rng(3)
X = np.clip(np.vstack([RNG.normal(0.3, 0.05, (300, 2)), RNG.normal(0.7, 0.05, (300, 2))]), 0, 1)
VARIANTS = ("audit case", "defaults", "public size")
#: The ledger entry of a bought size ends so (DPM's is "level 0: dataset size").
SIZE = "dataset size"


def _params(cls, variant: str) -> dict | None:
    sig = inspect.signature(cls).parameters
    kw: dict = dict(bounds=(0, 1), random_state=7)
    if "n_clusters" in sig:
        kw["n_clusters"] = cls.audit.n_clusters
    if cls.needs_delta:
        kw["delta"] = 1e-6
    # The defaults, except the budget of the audit case where a tiny sample needs a larger one.
    kw.update(cls.audit.exact_sums if variant != "defaults"
              else {k: v for k, v in cls.audit.exact_sums.items() if k in ("epsilon", "delta")})
    if variant == "public size":
        if "n_samples" not in sig:
            return None
        kw["n_samples"] = float(len(X))
    return kw


def _fit(cls, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**kw).fit(X)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("key", PRIVATE)
def test_the_ledger_follows_the_plan(key, variant):
    cls = CLASSES[key]
    kw = _params(cls, variant)
    if kw is None:
        pytest.skip(f"{cls.__name__} takes no public n_samples")
    est = _fit(cls, kw)
    released = {"hypotheses": est.separation_["hypotheses"]} if getattr(est, "separation_", None) else {}
    # The size the fit planned with (public or released: test_every_fit_keeps_the_size_it_planned_with).
    plan = est.budget_plan(X.shape[1], est.n_samples_estimate_, **released)
    spent = ledger_by_step(plan, est.budget_)
    assert set(spent) <= set(plan), f"ledger steps outside the plan: {sorted(set(spent) - set(plan))}"
    for step, (eps, delta) in plan.items():
        got = spent.get(step, (0.0, 0.0))
        if step.startswith(UNSPENT):   # budget the fit leaves unused by design: nothing may be spent on it
            assert got == (0.0, 0.0) and eps >= 0 and delta >= 0, (step, got)
            continue
        assert got[0] == pytest.approx(eps, abs=1e-12), (step, got, (eps, delta))
        assert got[1] == pytest.approx(delta, abs=1e-12 * max(delta, 1e-300) + 1e-18), (step, got, (eps, delta))
    eps_plan = sum(e for e, _ in plan.values())
    delta_plan = sum(d for _, d in plan.values())
    assert eps_plan == pytest.approx(float(est.epsilon), abs=1e-12)
    unspent = [v for s, v in plan.items() if s.startswith(UNSPENT)]
    assert est.budget_.total()[0] == pytest.approx(float(est.epsilon) - sum(e for e, _ in unspent), abs=1e-12)
    if cls.needs_delta:
        assert delta_plan == pytest.approx(float(est.delta), rel=1e-12)
        assert est.budget_.total()[1] == pytest.approx(float(est.delta) - sum(d for _, d in unspent), rel=1e-9)


def _plan_reads_the_size(est) -> bool:
    """Whether the estimator's budget plan depends on n (it asks for one when no public size is set)."""
    probe = est.__class__(**{**est.get_params(), "n_samples": None}) if "n_samples" in est.get_params() else est
    try:
        probe.budget_plan(X.shape[1])
    except ValueError as err:
        if "depends on the dataset size" not in str(err):
            raise
        return True
    return False


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("key", PRIVATE)
def test_every_fit_keeps_the_size_it_planned_with(key, variant):
    """``n_samples_estimate_``: the public ``n_samples``, else exactly the value a release drew (the
    ``"dataset size"`` entry's when one was bought), on that entry's lattice and inside its noise's tail."""
    cls = CLASSES[key]
    kw = _params(cls, variant)
    if kw is None:
        pytest.skip(f"{cls.__name__} takes no public n_samples")
    with ReleaseRecorder(("laplace", "gaussian", "gaussian_zcdp")) as recorder:
        est = _fit(cls, kw)
    size = est.n_samples_estimate_
    bought = [e for e in est.budget_ if e.name.endswith(SIZE)]
    drawn = [float(v) for name, v in recorder.releases if name.endswith(SIZE)]
    assert len(bought) == len(drawn) <= 1
    if _plan_reads_the_size(est):
        assert size is not None, f"{cls.__name__}'s plan depends on n, but its fit keeps no size"
    if size is None:
        assert not bought, "a size bought and not kept"
        return
    assert isinstance(size, float) and size >= 1.0
    documented = [c for c in cls.__mro__ if "n_samples_estimate_ :" in (vars(c).get("__doc__") or "")]
    assert documented, f"{cls.__name__} does not document n_samples_estimate_"
    if kw.get("n_samples") is not None:
        assert size == kw["n_samples"] and not bought, "a public size is free and is the one planned with"
        return
    # Released, never read from the rows: the value drawn, clamped at 1.
    assert any(size == max(float(x), 1.0) for _, v in recorder.releases for x in np.ravel(v)), size
    if bought:
        entry = bought[0]
        assert size == max(drawn[0], 1.0)
        step = entry.sampler["granularity"]
        assert size == 1.0 or size / step == round(size / step)
        # A discrete Laplace of scale t exceeds 40 t with probability below 2 e^-40.
        assert abs(size - len(X)) <= 40 * entry.sampler["value"] * step or size == 1.0


def test_a_refit_without_a_size_keeps_none():
    """A fit that plans with no size (a fixed number of iterations) leaves no stale size behind."""
    est = _fit(CLASSES["dplloyd"], dict(n_clusters=2, epsilon=1.0, bounds=(0, 1), random_state=0))
    assert est.n_samples_estimate_ is not None and any(e.name == SIZE for e in est.budget_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(n_iter=3).fit(X)
    assert est.n_samples_estimate_ is None and not any(SIZE in e.name for e in est.budget_)


def test_a_public_size_read_only_by_the_check_is_kept():
    """PGkM with a fixed number of rounds plans with no size, but its regime check reads a public one."""
    kw = dict(n_clusters=2, epsilon=1.0, bounds=(0, 1), n_rounds=3, random_state=0)
    assert _fit(CLASSES["pgkm"], kw).n_samples_estimate_ is None
    est = _fit(CLASSES["pgkm"], {**kw, "n_samples": 600.0})
    assert est.n_samples_estimate_ == 600.0 and not any(SIZE in e.name for e in est.budget_)


@pytest.mark.parametrize("key", sorted(k for k, c in CLASSES.items() if not c.private))
def test_a_baseline_plans_no_budget(key):
    assert CLASSES[key]().budget_plan(2, 100.0) == {}


def test_a_share_moves_the_plan_and_the_ledger_together():
    """The plan is read from the share parameters, not from a fit: a different share moves both."""
    est = dpcore.ALGORITHMS["eugkm"](n_clusters=2, epsilon=1.0, bounds=(0, 1), n_share=0.1, n_init=1,
                                     random_state=0)
    assert est.budget_plan(2) == {"dataset size": (0.1, 0.0), "grid cell counts": (0.9, 0.0)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    spent = ledger_by_step(est.budget_plan(2), est.budget_)
    assert spent["dataset size"][0] == pytest.approx(0.1) and spent["grid cell counts"][0] == pytest.approx(0.9)


def test_a_plan_that_depends_on_the_size_asks_for_it():
    est = dpcore.ALGORITHMS["hybrid"](n_clusters=2, bounds=(0, 1))
    with pytest.raises(ValueError, match="depends on the dataset size: pass n"):
        est.budget_plan(2)
    assert set(est.budget_plan(2, 1e6)) == {"dataset size", "grid cell counts", "DPLloyd refinement"}
    assert set(est.budget_plan(2, 50.0)) == {"dataset size", "grid cell counts"}


def test_the_coresets_schedule_budget_leaves_nothing_unspent():
    """budget="schedule" divides epsilon by the rounds that run (same guarantee): no unspent step."""
    est = CLASSES["coreset"](n_clusters=2, epsilon=20.0, delta=1e-6, bounds=(0, 1), n_init=1, budget="schedule",
                             random_state=0)
    est = _fit(CLASSES["coreset"], est.get_params())
    plan = est.budget_plan(2, est.n_samples_estimate_)
    assert not [s for s in plan if s.startswith(UNSPENT)]
    spent = ledger_by_step(plan, est.budget_)
    assert set(spent) == set(plan)
    for step, (eps, delta) in plan.items():
        assert spent[step][0] == pytest.approx(eps, abs=1e-12) and spent[step][1] == pytest.approx(delta, rel=1e-9)
    assert est.budget_.total()[0] == pytest.approx(20.0, abs=1e-12)


def test_no_plan_of_invalid_shares():
    from sklearn.utils._param_validation import InvalidParameterError
    with pytest.raises(InvalidParameterError, match="n_share"):
        dpcore.ALGORITHMS["eugkm"](n_clusters=2, bounds=(0, 1), n_share=1.2).budget_plan(2)
    with pytest.raises(InvalidParameterError, match="budget_shares"):
        dpcore.ALGORITHMS["balcan"](n_clusters=2, bounds=(0, 1), budget_shares=(1, 1)).budget_plan(2)
