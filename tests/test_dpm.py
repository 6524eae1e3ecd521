"""DPM (Liebenow et al. 2024): utility on blobs, ledger sums, reproducibility, meeting k, errors."""
import numpy as np
import pytest
from sklearn.datasets import make_blobs

import dpcore
from dpcore.metrics import inertia


@pytest.fixture(scope="module")
def blobs16():
    X, _ = make_blobs(8_000, n_features=5, centers=16, center_box=(-100, 100), random_state=3)
    ref = dpcore.ALGORITHMS["kmeans"](16, bounds=(-100, 100), random_state=0).fit(X)
    return X, inertia(X, ref.cluster_centers_)


def _fit(X, **kw):
    kw = {"epsilon": 2.0, "delta": 1e-6, "bounds": (-100, 100), "random_state": 0, **kw}
    return dpcore.ALGORITHMS["dpm"](16, **kw).fit(X)


def test_registered_with_its_source():
    cls = dpcore.ALGORITHMS["dpm"]
    assert "Liebenow" in cls.reference and cls.needs_delta


def test_utility_close_to_non_private_on_separated_blobs(blobs16):
    X, base = blobs16
    ratios = [inertia(X, _fit(X, random_state=s).cluster_centers_) / base for s in range(3)]
    assert np.median(ratios) < 3.0
    # far better than the trivial one-centre answer
    assert max(ratios) < inertia(X, X.mean(axis=0, keepdims=True)) / base / 5


@pytest.mark.parametrize("n_samples", [None, 8_000])
def test_ledger_sums_to_the_grant(blobs16, n_samples):
    X, _ = blobs16
    est = _fit(X, epsilon=0.7, n_samples=n_samples)
    eps, delta = est.budget_.total()
    assert eps == pytest.approx(0.7, rel=1e-9) and delta == pytest.approx(1e-6, rel=1e-9)
    names = [e.name for e in est.budget_]
    assert ("level 0: dataset size" in names) == (n_samples is None)
    # every level is charged whatever the data: the ledger's shape is public
    depth = int(np.ceil(np.log2(16))) + 6
    assert sum("cut choices" in nm for nm in names) == depth


def test_ledger_shape_does_not_depend_on_the_data(blobs16):
    X, _ = blobs16
    a, b = _fit(X), _fit(X[:-1])
    assert [(e.name, e.epsilon, e.delta) for e in a.budget_] == [(e.name, e.epsilon, e.delta) for e in b.budget_]


def test_meets_the_requested_k_and_seeds_reproduce(blobs16):
    X, _ = blobs16
    for k in (3, 40):
        est = dpcore.ALGORITHMS["dpm"](k, epsilon=1.0, delta=1e-6, bounds=(-100, 100), random_state=1).fit(X)
        assert est.cluster_centers_.shape == (k, 5)
        assert est.leaf_centers_.shape == (est.n_leaves_, 5)
    a, b = _fit(X, random_state=5), _fit(X, random_state=5)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_bad_parameters_are_explained(blobs16):
    X, _ = blobs16
    with pytest.raises(ValueError, match="n_bins"):
        _fit(X, n_bins=1)
    with pytest.raises(ValueError, match="budget_shares"):
        _fit(X, budget_shares=(1, 1))
    with pytest.raises(ValueError, match="delta"):
        _fit(X, delta=0.0)


def test_a_node_narrower_than_one_interval_can_still_be_cut():
    """Deep in the tree a node's box may hold no interval centre; the cut is then drawn among all
    candidates (one child empty) instead of failing the fit."""
    from dpcore.algorithms.highdim.dpm import DPM
    from dpcore.privacy.accountant import BudgetLedger
    from dpcore.privacy.mechanisms import NoiseSource

    nb, d = 8, 2
    lo, width = np.zeros(d), np.full(d, 1.0 / nb)
    X = np.full((5, d), 0.30)
    B = np.minimum((X / width).astype(int), nb - 1)
    src = NoiseSource(np.random.default_rng(0), BudgetLedger(1.0))
    nlo, nhi = np.full(d, 0.26), np.full(d, 0.30)        # inside one interval, no centre strictly inside
    axis, pos = DPM._choose_cut(X, B, np.arange(5), 5.0, 0.2, nb, lo, width, src, 1.0, nlo, nhi)
    assert 0 <= axis < d and 0.0 < pos < 1.0
