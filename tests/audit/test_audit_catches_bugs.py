"""The audit must be able to fail: each deliberately broken variant below is caught.

Every variant is built inside this file (a NoiseSource subclass, or a monkeypatch of one
dpcore function for the duration of one test); dpcore itself is never modified.  For the
estimator variants the correct estimator is audited on the same neighbours first and
must pass, so the failure is the bug's doing and not the case's.

Variants (the bugs that have happened in published DP clustering code):
- sensitivity off by a factor (Laplace with sensitivity / 3; the exponential mechanism
  without its factor 2 on non-monotonic scores; a Gaussian with sigma for half the
  sensitivity);
- a budget split that sums to 1.5 epsilon (Balcan et al.'s MATLAB ``clustering.m``, found
  by Edler 2023, §4.3);
- noise scaled by the true instead of the noisy count (Balcan et al.'s ``recover.m``,
  found by Chaturvedi et al.; Edler 2023, §4.3);
- a ledger that is bypassed (a grid size read from the true N without paying for it;
  counts noised with the raw generator outside the ledger; a ``sub`` child ledger not
  tied to its reservation; ``parallel`` used on parts that overlap).
"""
from __future__ import annotations

import numpy as np
import pytest

import dpcore
from dpcore.algorithms import parameters as size_door  # every fit reads its size through it
from dpcore.algorithms._blocks import lloyd as lloyd_block  # DPLloyd's iterations (noisy_lloyd)
from dpcore.exceptions import BudgetExceededError
from dpcore.metrics import assign
from dpcore.privacy.mechanisms import NoiseSource

from .dp_audit import (
    EstimatorCase,
    MechanismCase,
    ReleaseRecorder,
    corner_data,
    estimator_cases,
    mechanism_cases,
    parallel_sampler,
    run_estimator_case,
    run_mechanism_case,
)

EPS = 1.0


def _case(name, cases):
    return next(c for c in cases if c.name.startswith(name))


def _assert_caught(report):
    print(report)
    assert not report.passed, f"the audit missed a deliberately broken variant:\n{report}"
    assert report.epsilon_lb > report.epsilon


def _assert_clean(report):
    print(report)
    assert report.passed, f"the correct implementation was flagged on the bug's neighbours:\n{report}"


# ---------------------------------------------------------------------------------------
# Broken mechanisms (NoiseSource subclasses)
# ---------------------------------------------------------------------------------------


class LaplaceSensitivityThird(NoiseSource):
    """Laplace noise scaled for a third of the real sensitivity."""

    def laplace(self, values, *, sensitivity, epsilon, name):
        return super().laplace(values, sensitivity=sensitivity / 3, epsilon=epsilon, name=name)


class ExponentialWithoutFactorTwo(NoiseSource):
    """Treats every score vector as monotonic: drops the 2 of exp(eps q / (2 Delta))."""

    def exponential(self, scores, *, sensitivity, epsilon, name, monotonic=False, log_base_measure=None):
        return super().exponential(scores, sensitivity=sensitivity, epsilon=epsilon, name=name, monotonic=True,
                                   log_base_measure=log_base_measure)


class GaussianHalfSensitivity(NoiseSource):
    def gaussian(self, values, *, sensitivity, epsilon, delta, name):
        return super().gaussian(values, sensitivity=sensitivity / 2, epsilon=epsilon, delta=delta, name=name)


@pytest.mark.parametrize("cls, case_name", [
    (LaplaceSensitivityThird, "laplace: scalar"),
    (LaplaceSensitivityThird, "laplace: histogram"),
    (ExponentialWithoutFactorTwo, "exponential: one score up, all others down"),
    (GaussianHalfSensitivity, "gaussian"),
], ids=["laplace-sens/3-scalar", "laplace-sens/3-histogram", "exponential-no-factor-2", "gaussian-sens/2"])
def test_broken_mechanism_is_caught(cls, case_name):
    case = _case(case_name, mechanism_cases(cls, EPS))
    _assert_caught(run_mechanism_case(case, n_runs=min(case.n_runs, 12_000)))


class SubBypassingChildLedger(NoiseSource):
    """``sub`` charges the reservation but hands out a child ledger granted the *parent's*
    whole budget, so the inner steps are not held to the reservation."""

    def sub(self, name, epsilon, delta=0.0):
        self._spend(name, epsilon, delta, "composite", None)
        from dpcore.privacy.accountant import BudgetLedger
        return NoiseSource(self.rng, BudgetLedger(2 * epsilon, delta), prefix=f"{self.prefix}{name} / ")


def test_sub_with_bypassed_child_ledger_is_caught():
    """The composite case draws epsilon/2, then "what is left" inside the reservation; a
    child ledger not tied to the reservation leaves 1.5 epsilon for the second draw."""
    case = _case("sub:", mechanism_cases(SubBypassingChildLedger, EPS))
    _assert_caught(run_mechanism_case(case, n_runs=20_000))


def test_parallel_over_overlapping_parts_is_caught():
    """``parallel`` charges once because the caller promises disjoint parts; a record that
    lands in both parts (overlapping blocks, a point assigned to two clusters) breaks it."""
    case = MechanismCase("parallel: record counted in both parts", parallel_sampler(EPS),
                         np.array([3.0, 3.0]), np.array([4.0, 4.0]), EPS)
    _assert_caught(run_mechanism_case(case, n_runs=20_000))


# ---------------------------------------------------------------------------------------
# Broken estimators (monkeypatched for one test only)
# ---------------------------------------------------------------------------------------


def test_dplloyd_with_laplace_sensitivity_third_is_caught(monkeypatch):
    original = NoiseSource.laplace

    def laplace_third(self, values, *, sensitivity, epsilon, name):
        return original(self, values, sensitivity=sensitivity / 3, epsilon=epsilon, name=name)

    monkeypatch.setattr(NoiseSource, "laplace", laplace_third)
    case = estimator_cases("dplloyd", epsilon=EPS)[0]
    _assert_caught(run_estimator_case(case, n_runs=2000))


class DPLloydSplitOneAndAHalf(dpcore.ALGORITHMS["dplloyd"]):
    """One DPLloyd iteration whose shares are 3/4 epsilon for the counts and 3/4 epsilon
    for the sums.  ``ledger_checks_sum=False`` grants the ledger 1.5 epsilon: the MATLAB
    situation, where nothing held the shares to the total."""

    ledger_checks_sum = True
    accepts_source = False   # its fit works on the rows in memory: _begin_fit returns them clipped

    def fit(self, X, y=None):
        X, noise, _ = self._begin_fit(X)
        if not self.ledger_checks_sum:
            noise.ledger.epsilon *= 1.5
        Z = self.bounds_.normalize(X)
        centers = lloyd_block.noisy_lloyd_step(Z, np.zeros((1, X.shape[1])), noise,
                                                  epsilon=1.5 * float(self.epsilon), count_share=0.5)
        self.cluster_centers_ = self.bounds_.denormalize(centers)
        return self


class DPLloydSplitUnchecked(DPLloydSplitOneAndAHalf):
    ledger_checks_sum = False


def _dplloyd_one_iteration(cls=None):
    base = estimator_cases("dplloyd", epsilon=EPS)[0]
    cls = cls or dpcore.ALGORITHMS["dplloyd"]
    return EstimatorCase(base.name, lambda random_state: cls(1, epsilon=EPS, bounds=(-1, 1), n_iter=1,
                                                             init=np.zeros((1, 1)), random_state=random_state),
                         base.D, base.D_prime, EPS)


def test_budget_split_summing_to_one_and_a_half_epsilon_is_caught():
    X = corner_data(20, 1)
    # First line of defence: the real ledger refuses the second share before drawing it.
    with pytest.raises(BudgetExceededError):
        DPLloydSplitOneAndAHalf(1, epsilon=EPS, bounds=(-1, 1), random_state=0).fit(X)
    # Second line: with a ledger that does not check the sum, the audit sees 1.5 epsilon.
    _assert_caught(run_estimator_case(_dplloyd_one_iteration(DPLloydSplitUnchecked), n_runs=3000))


def _recover_true_count_step(Z, centers, noise, *, epsilon, count_share=None, r=1.0, label="iteration", domain=None):
    """Balcan et al.'s ``recover.m``: the mean's Laplace scale uses the true cluster size."""
    Z = getattr(getattr(Z, "source", Z), "X", Z)  # the rows of an ArraySource (or of the one a CellSource reads)
    Z = Z if domain is None else domain.normalize(Z)
    k, d = centers.shape
    labels = assign(Z, centers)
    counts = np.bincount(labels, minlength=k).astype(float)
    sums = np.stack([np.bincount(labels, weights=Z[:, i], minlength=k) for i in range(d)], axis=1)
    new = centers.copy()
    for j in np.flatnonzero(counts > 0):
        # "sensitivity" 2 r d / n of the mean with the TRUE n: the noise level itself leaks n.
        new[j] = noise.laplace(sums[j] / counts[j], sensitivity=2 * r * d / counts[j], epsilon=epsilon,
                               name=f"{label}: cluster {j} mean")
    return np.clip(new, -r, r)


def _same_point_case(eps=0.5):
    """One record vs two records at the same place: the mean is unchanged, only n moves.

    A small epsilon puts the scale leak where the samples are: with scales 4 and 2
    (normalised units) the event |mean| > 8 has probabilities e^-2 and e^-4, a ratio of
    e^2 against the e^0.5 allowed.
    """
    D = np.zeros((1, 1))
    return EstimatorCase("dplloyd k=1 on 1 vs 2 identical records",
                         lambda random_state: dpcore.ALGORITHMS["dplloyd"](
                             1, epsilon=eps, bounds=(-1, 1), n_iter=1, init=np.zeros((1, 1)),
                             random_state=random_state),
                         D, np.zeros((2, 1)), eps)


@pytest.mark.heavy
def test_noise_scaled_by_true_count_is_caught(monkeypatch):
    case = _same_point_case()
    _assert_clean(run_estimator_case(case, n_runs=3000))
    monkeypatch.setattr(lloyd_block, "noisy_lloyd_step", _recover_true_count_step)
    _assert_caught(run_estimator_case(case, n_runs=3000))


def _true_size(n_true, n_public, share, epsilon, noise, **_):
    """Ledger bypassed: the dataset size for Eq. 4 is read from the data, unpaid."""
    return float(n_true), epsilon


def test_grid_size_from_true_n_is_caught(monkeypatch):
    case = estimator_cases("eugkm", epsilon=EPS)[0]
    monkeypatch.setattr(size_door, "public_or_noisy_size", _true_size)
    report = run_estimator_case(case, n_runs=600)
    _assert_caught(report)
    assert any("cells" in (r.event.feature if r.event else "") for r in report.directions)


@pytest.mark.heavy
def test_gkm3k_blocks_from_true_n_are_caught_at_the_ci_size(monkeypatch):
    """GkM-3K with its block count read from the true size, unpaid (20 rows make 3 blocks, 21 make 4):
    the leak the estimators' audit must catch at its CI size (``ci_runs``), which issue 58 halved
    for the GUPT and exponential-mechanism estimators (see :class:`~dpcore.algorithms.traits.PrivacyCase`)."""
    monkeypatch.setattr(size_door, "public_or_noisy_size", _true_size)
    case = estimator_cases("gkm3k", epsilon=EPS)[0]
    report = run_estimator_case(case, n_runs=case.ci_runs)
    _assert_caught(report)
    assert any("n_blocks" in (r.event.feature if r.event else "") for r in report.directions)


def _counts_outside_ledger_step(Z, centers, noise, *, epsilon, count_share=None, r=1.0, label="iteration", domain=None):
    """Counts noised with the raw generator (no ledger entry); sums take the full budget."""
    Z = getattr(getattr(Z, "source", Z), "X", Z)  # the rows of an ArraySource (or of the one a CellSource reads)
    Z = Z if domain is None else domain.normalize(Z)
    k, d = centers.shape
    labels = assign(Z, centers)
    counts = np.bincount(labels, minlength=k).astype(float)
    sums = np.stack([np.bincount(labels, weights=Z[:, i], minlength=k) for i in range(d)], axis=1)
    n_counts = counts + noise.rng.laplace(0.0, 1.0 / epsilon, size=k)
    n_sums = noise.laplace(sums, sensitivity=d * r, epsilon=epsilon, name=f"{label}: cluster sums")
    new = centers.copy()
    ok = n_counts >= 1.0
    new[ok] = n_sums[ok] / n_counts[ok, None]
    return np.clip(new, -r, r)


@pytest.mark.heavy
def test_counts_noised_outside_the_ledger_are_caught(monkeypatch):
    monkeypatch.setattr(lloyd_block, "noisy_lloyd_step", _counts_outside_ledger_step)
    case = _dplloyd_one_iteration()
    with ReleaseRecorder() as rec:
        est = case.make(random_state=0).fit(case.D)
    # The ledger is satisfied (it saw epsilon for the sums only) and records no count release...
    assert est.budget_.total()[0] == pytest.approx(EPS)
    assert [name for name, _ in rec.releases] == ["iteration 1: cluster sums"]
    # ...but the released centre carries both, and the audit of the output sees 2 epsilon.
    _assert_caught(run_estimator_case(case, n_runs=6000))


# ---------------------------------------------------------------------------------------
# Structural leaks (the exact audit of tests/audit/test_structural_audit.py)
# ---------------------------------------------------------------------------------------


class CoresetWithEarlyBreak(dpcore.ALGORITHMS["coreset"]):
    """The bug of issue #19: the round loop reserves round i+1, then stops when no point is left,
    so coreset_size_ and the ledger publish when the data ran out (i.e. n)."""

    def _run_rounds(self, cs, plan, noise):
        from dpcore.algorithms.coreset.small_ball import good_center, good_radius
        centers, weights, radii = [], [], []
        for i, w_i in enumerate(plan.weights):
            sub = noise.sub(f"round {i + 1}: SMALL-BALL", plan.eps_round, plan.delta_round)
            if cs.cells.shape[0] == 0:
                break
            r = good_radius(cs, int(w_i + plan.slack), plan, sub)
            c = good_center(cs, r, plan, sub, box_factor=float(self.box_factor))
            cs.remove_nearest(c, w_i)
            centers.append(c)
            weights.append(float(w_i))
            radii.append(r)
        return centers, weights, radii


def test_structural_audit_catches_the_coresets_early_break():
    from .test_structural_audit import BOUNDS, assert_same_structure, coreset_boundary_pairs

    def make(cls):
        return lambda seed: cls(2, epsilon=20.0, delta=1e-6, bounds=BOUNDS, n_samples=20000, random_state=seed)

    c, X, Xp = coreset_boundary_pairs(rounds=(1,))[0]
    assert_same_structure("coreset", make(dpcore.ALGORITHMS["coreset"]), X, Xp)  # the fixed estimator passes
    with pytest.raises(AssertionError, match="coreset_size_|ledger"):
        assert_same_structure("coreset", make(CoresetWithEarlyBreak), X, Xp)


class PrivTHRWithTrainingLabels(dpcore.ALGORITHMS["privthr"]):
    """A private estimator that keeps labels_ of the training rows (length n)."""

    def fit(self, X, y=None):
        super().fit(X)
        self.labels_ = self.predict(X)
        return self


def test_structural_audit_catches_training_labels_of_length_n():
    from .test_structural_audit import BOUNDS, assert_same_structure
    X = np.random.default_rng(0).uniform(-1, 1, (10, 2))
    Xp = np.vstack([X, [[0.5, 0.5]]])
    with pytest.raises(AssertionError, match="labels_"):
        assert_same_structure("privthr", lambda seed: PrivTHRWithTrainingLabels(
            epsilon=1.0, bounds=BOUNDS, num_grid=8, random_state=seed), X, Xp)


def test_structural_audit_catches_an_exception_that_depends_on_n(monkeypatch):
    """Validation that refuses k > n on private data (the old check_n_clusters) is caught."""
    from dpcore.algorithms import base as base_module
    from dpcore.utils.validation import check_n_clusters

    from .test_structural_audit import BOUNDS, assert_same_structure

    X = np.random.default_rng(1).uniform(-1, 1, (2, 2))
    Xp = np.vstack([X, [[0.1, 0.1]]])

    def begin_fit(self, X_, **kw):
        check_n_clusters(self.n_clusters, len(X_))  # the removed, data-dependent check
        return orig(self, X_, **kw)

    orig = base_module.DPClusterer._begin_fit
    monkeypatch.setattr(base_module.DPClusterer, "_begin_fit", begin_fit)
    with pytest.raises(AssertionError, match="outcome"):
        assert_same_structure("dplloyd", lambda seed: dpcore.ALGORITHMS["dplloyd"](
            3, epsilon=1.0, bounds=BOUNDS, random_state=seed), X, Xp)


def test_structural_audit_catches_a_grid_size_from_the_true_n(monkeypatch):
    """The same bug as test_grid_size_from_true_n_is_caught, found exactly (no sampling): EUGkM's
    grid side read from len(X) differs between neighbours at a size boundary."""
    from .test_structural_audit import BOUNDS, assert_same_structure

    def make(seed):
        return dpcore.ALGORITHMS["eugkm"](1, epsilon=1.0, bounds=BOUNDS, n_init=1, random_state=seed)

    D = corner_data(22, 2)
    Dp = np.vstack([D, [[-1.0, -1.0]]])
    assert_same_structure("eugkm", make, D, Dp)  # the correct estimator passes on the same pair
    monkeypatch.setattr(size_door, "public_or_noisy_size", _true_size)
    with pytest.raises(AssertionError, match="cells_per_dim_|synopsis"):
        assert_same_structure("eugkm", make, D, Dp)


class DPLloydPublishingATrueMean(dpcore.ALGORITHMS["dplloyd"]):
    """Same structure as DPLloyd, but the first centre is the raw mean of the rows (no noise)."""

    def fit(self, X, y=None):
        super().fit(X)
        X = np.asarray(X, dtype=float)
        if len(X):
            self.cluster_centers_[0] = X.mean(axis=0)
        return self


def test_value_audit_catches_a_value_that_bypasses_the_noise_module():
    from .test_structural_audit import BOUNDS, assert_same_structure, assert_same_values
    X = np.random.default_rng(2).uniform(-1, 1, (6, 2))
    Xp = np.vstack([X, [[0.9, 0.9]]])

    def make(seed):
        return DPLloydPublishingATrueMean(2, epsilon=1.0, bounds=BOUNDS, random_state=seed)

    assert_same_structure("dplloyd", make, X, Xp)  # its structure is fine...
    with pytest.raises(AssertionError, match="centroids"):
        assert_same_values("dplloyd", make, X, Xp)  # ...its values are not
