"""WaveCluster and DP WaveCluster (Chen, Yu & Chirkova 2015): paper figures, privacy accounting,
sensitivities, reproducibility, utility against the non-private result, measures, error paths."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import dpcore
from dpcore import BudgetExceededError, PrivacyLeakWarning
from dpcore.algorithms.wavecluster.private import PrivBasic, PrivQT, PrivTHR, PrivTHREM
from dpcore.algorithms.wavecluster.transform import (
    approximation_influence,
    quantize,
    threshold_rank,
    wavelet_approximation,
)
from dpcore.algorithms.wavecluster.wavecluster import WaveCluster
from dpcore.metrics.wavecluster import classification_measures, dc2e, dcom, f_measure, train_test_indices, ud

PRIVATE = [PrivBasic, PrivQT, PrivTHR, PrivTHREM]
# The paper's spiral setting, recovered from its own numbers (k = 144, |Z| = 241; §6.2).
SPIRAL = dict(num_grid=40, density_threshold=0.1)


@pytest.fixture(scope="module")
def spiral(shared_data):
    df = pd.read_csv(shared_data / "privwavecluster_spiral_30k.csv.gz")
    X = df[["x", "y"]].to_numpy(dtype=float)
    # The paper quantises the data's box; here it is passed as the public bounds.
    return X, (X.min(axis=0), X.max(axis=0))


@pytest.fixture(scope="module")
def spiral_true(spiral):
    X, b = spiral
    return WaveCluster(bounds=b, **SPIRAL).fit(X)


# --- the non-private algorithm reproduces the paper's spiral figures ----------------------------
def test_wavecluster_spiral_matches_paper(spiral, spiral_true):
    wc = spiral_true
    assert wc.threshold_rank_ == 144                     # "the true k is 144" (§6.2)
    assert int((wc.synopsis_.values <= 0).sum()) == 241   # "|Z| is 241 in DS2"
    assert wc.n_clusters_ == 3                            # three spirals
    assert wc.budget_.total() == (0.0, 0.0) and len(wc.budget_) == 0
    assert wc.cluster_centers_.shape == (3, 2)
    assert (wc.labels_ >= 0).mean() > 0.9                # most points are in a cluster, not noise


def test_wavecluster_clusters_follow_reference_labels(shared_data, spiral, spiral_true):
    df = pd.read_csv(shared_data / "privwavecluster_spiral_30k.csv.gz")
    lab = spiral_true.labels_
    keep = lab >= 0
    table = pd.crosstab(df.label.to_numpy()[keep], lab[keep]).to_numpy()
    # Every found cluster is dominated (> 99 %) by one reference spiral, and they are distinct spirals.
    purity = table.max(axis=0) / table.sum(axis=0)
    assert (purity > 0.99).all()
    assert len(set(table.argmax(axis=0))) == 3


# --- private variants: utility vs the non-private result at epsilon = 1 --------------------------
def _runs(cls, X, b, n=10, **kw):
    return [cls(epsilon=1.0, bounds=b, random_state=s, **SPIRAL, **kw).fit(X) for s in range(n)]


def test_privthr_and_privthr_em_recover_the_clusters_privqt_does_not(spiral, spiral_true):
    X, b = spiral
    k_true = spiral_true.n_clusters_
    hits = {cls.__name__: sum(e.n_clusters_ == k_true for e in _runs(cls, X, b)) for cls in (PrivQT, PrivTHR, PrivTHREM)}
    assert hits["PrivTHR"] >= 8, hits
    assert hits["PrivTHREM"] >= 8, hits
    assert hits["PrivQT"] <= hits["PrivTHR"] - 3 and hits["PrivQT"] <= hits["PrivTHREM"] - 3, hits


def test_private_threshold_rank_close_to_true_k(spiral, spiral_true):
    X, b = spiral
    k = spiral_true.threshold_rank_
    err = {cls.__name__: np.mean([abs(e.threshold_rank_ - k) for e in _runs(cls, X, b, n=6)])
           for cls in (PrivQT, PrivTHR, PrivTHREM)}
    # Chen et al. §6.2: PrivTHR / PrivTHR_EM within a few percent of k, PrivQT off by ~|Z|/2.
    assert err["PrivTHR"] < 0.1 * k and err["PrivTHREM"] < 0.1 * k, err
    assert err["PrivQT"] > 0.3 * k, err


def test_privthr_ud_much_better_than_privqt(spiral, spiral_true):
    X, b = spiral
    uds = {cls.__name__: np.mean([ud(spiral_true.synopsis_.labels, e.synopsis_.labels) for e in _runs(cls, X, b, n=5)])
           for cls in (PrivQT, PrivTHR)}
    assert uds["PrivTHR"] < 0.5 * uds["PrivQT"], uds


# --- privacy accounting ----------------------------------------------------------------------
@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize("eps", [0.1, 1.0, 2.0])
def test_ledger_spends_exactly_epsilon(cls, eps, blobs):
    X, b, _ = blobs
    est = cls(epsilon=eps, bounds=b, num_grid=32, random_state=3).fit(X)
    spent, delta = est.budget_.total()
    assert spent <= eps * (1 + 1e-12) and delta == 0.0
    assert math.isclose(spent, eps, rel_tol=1e-9)


@pytest.mark.parametrize("cls,share,names", [
    (PrivTHR, 0.9, ["grid cell counts (quantisation)", "count of non-positive transformed values"]),
    (PrivTHREM, 0.7, ["grid cell counts (quantisation)", "density threshold (exponential mechanism)"]),
])
def test_default_budget_splits(cls, share, names, blobs):
    X, b, _ = blobs
    est = cls(epsilon=2.0, bounds=b, num_grid=32, random_state=0).fit(X)
    entries = list(est.budget_)
    assert [e.name for e in entries] == names
    assert math.isclose(entries[0].epsilon, share * 2.0, rel_tol=1e-12)
    assert math.isclose(entries[1].epsilon, (1 - share) * 2.0, rel_tol=1e-9)
    # Haar: the paper's values (the grid counts' own, plus at most 2^-10 for rounding onto the noise lattice)
    assert 1.0 <= entries[0].sensitivity <= 1.0 + 2.0 ** -10 and entries[1].sensitivity == 1.0


@pytest.mark.parametrize("cls", [PrivTHR, PrivTHREM])
def test_custom_split_is_what_is_spent(cls, blobs):
    X, b, _ = blobs
    est = cls(epsilon=1.0, bounds=b, num_grid=32, quantization_share=0.25, random_state=0).fit(X)
    e = list(est.budget_)
    assert math.isclose(e[0].epsilon, 0.25) and math.isclose(e[1].epsilon, 0.75)


def test_privbasic_without_public_size_spends_on_it(blobs):
    X, b, _ = blobs
    est = PrivBasic(epsilon=1.0, bounds=b, random_state=0).fit(X)
    names = [e.name for e in est.budget_]
    assert names == ["dataset size", "synopsis grid cell counts"]
    est2 = PrivBasic(epsilon=1.0, bounds=b, n_samples=len(X), random_state=0).fit(X)
    assert [e.name for e in est2.budget_] == ["synopsis grid cell counts"]
    assert math.isclose(est2.budget_.total()[0], 1.0)


@pytest.mark.parametrize("wavelet", ["bior2.2", "db2"])
def test_signed_wavelets_use_larger_sensitivities(wavelet, blobs):
    X, b, _ = blobs
    s, nonneg = approximation_influence(wavelet, 32, 2)
    assert not nonneg and s > 1
    thr = PrivTHR(epsilon=1.0, bounds=b, num_grid=32, wavelet=wavelet, random_state=0).fit(X)
    em = PrivTHREM(epsilon=1.0, bounds=b, num_grid=32, wavelet=wavelet, random_state=0).fit(X)
    assert list(thr.budget_)[1].sensitivity == s
    assert list(em.budget_)[1].sensitivity == 2 * s
    assert thr.budget_.total()[0] <= 1.0 + 1e-12 and em.budget_.total()[0] <= 1.0 + 1e-12


def test_haar_influence_is_one():
    assert approximation_influence("haar", 40, 2) == (1, True)
    assert approximation_influence("haar", 41, 3) == (1, True)


@pytest.mark.parametrize("wavelet", ["haar", "bior2.2", "db2"])
def test_sensitivity_bounds_hold_by_brute_force(wavelet):
    """Adding one point to any cell moves |Z| by <= s and the rank quality by <= its sensitivity."""
    rng = np.random.default_rng(7)
    m, d, p = 12, 2, 0.3
    s, nonneg = approximation_influence(wavelet, m, d)
    dq = s if nonneg else 2 * s
    for _ in range(10):
        C = rng.poisson(0.7, size=(m, m)).astype(float) * (rng.random((m, m)) < 0.6)
        W = wavelet_approximation(C, wavelet)
        grid = np.linspace(1e-3, max(W.max(), 1.0) + 1, 200)

        def quality(Wx, grid=grid):
            x = np.sort(Wx[Wx > 0])
            k = threshold_rank(x.size, p)
            rank = (x[None, :] >= grid[:, None]).sum(1)
            return -np.abs(rank - k)

        q0, z0 = quality(W), (W <= 0).sum()
        for cell in itertools.product(range(m), repeat=d):
            C1 = C.copy()
            C1[cell] += 1
            W1 = wavelet_approximation(C1, wavelet)
            assert abs(int((W1 <= 0).sum()) - int(z0)) <= s
            assert np.abs(quality(W1) - q0).max() <= dq


def test_non_private_refuses_budget_and_private_needs_epsilon(blobs):
    X, b, _ = blobs
    WaveCluster(epsilon=None, bounds=b).fit(X)
    with pytest.raises(ValueError, match="epsilon"):
        PrivQT(epsilon=None, bounds=b).fit(X)
    with pytest.raises(ValueError, match="epsilon"):
        PrivTHR(epsilon=-1.0, bounds=b).fit(X)


# --- reproducibility ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls", PRIVATE)
def test_same_seed_same_output(cls, blobs):
    X, b, _ = blobs
    a = cls(epsilon=0.5, bounds=b, num_grid=32, random_state=11).fit(X)
    c = cls(epsilon=0.5, bounds=b, num_grid=32, random_state=11).fit(X)
    d = cls(epsilon=0.5, bounds=b, num_grid=32, random_state=12).fit(X)
    assert np.array_equal(a.synopsis_.labels, c.synopsis_.labels)
    assert np.array_equal(a.synopsis_.values, c.synopsis_.values)
    assert np.array_equal(a.cluster_centers_, c.cluster_centers_)
    assert not np.array_equal(a.synopsis_.values, d.synopsis_.values)


# --- fitted attributes, prediction -------------------------------------------------------------
def test_fitted_attributes_and_predict(blobs):
    X, b, centres = blobs
    est = PrivTHR(epsilon=1.0, bounds=b, num_grid=32, density_threshold=0.5, random_state=0).fit(X)
    syn = est.synopsis_
    assert syn.labels.shape == (16, 16) and [len(e) for e in syn.edges] == [17, 17]
    assert syn.edges[0][0] == 0.0 and syn.edges[0][-1] == 10.0
    assert est.cluster_centers_.shape == (est.n_clusters_, 2)
    labels = est.predict(X)
    assert not hasattr(est, "labels_")  # a private estimator keeps no training labels (length n is private)
    assert np.array_equal(est.fit_predict(X), labels)  # ClusterMixin's fit_predict still works
    assert set(np.unique(labels)) <= set(range(-1, est.n_clusters_))
    assert est.n_clusters_ == 3
    # Each true blob centre is near one found centre.
    dist = np.linalg.norm(centres[:, None] - est.cluster_centers_[None], axis=2)
    assert dist.min(axis=1).max() < 0.6
    # Points outside the public box are labelled noise.
    assert (est.predict(np.array([[-5.0, 5.0], [5.0, 50.0]])) == -1).all()
    assert dpcore.ALGORITHMS["privthr"] is PrivTHR and PrivTHR.family == "grid clusters"


def test_quantize_counts_every_point_once():
    rng = np.random.default_rng(0)
    U = rng.random((5000, 3))
    U[:10] = 1.0  # upper edge goes into the last cell
    C = quantize(U, 7)
    assert C.shape == (7, 7, 7) and C.sum() == 5000 and C[-1, -1, -1] >= 10


def test_three_dimensional_and_other_wavelets_run():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(c, 0.05, size=(3000, 3)) for c in ([0.25] * 3, [0.75] * 3)])
    for wavelet in ["haar", "bior2.2", "sym4"]:
        est = PrivTHREM(epsilon=1.0, bounds=(0, 1), num_grid=16, wavelet=wavelet, random_state=0).fit(X)
        assert est.synopsis_.labels.shape == (8, 8, 8)
        assert est.budget_.total()[0] <= 1.0 + 1e-12
    wc = WaveCluster(bounds=(0, 1), num_grid=16, density_threshold=0.5).fit(X)
    assert wc.n_clusters_ == 2


def test_value_cap_is_used(blobs):
    X, b, _ = blobs
    est = PrivTHREM(epsilon=1.0, bounds=b, num_grid=32, value_cap=1e6, random_state=0).fit(X)
    assert 0 < est.threshold_ <= 1e6


# --- error paths --------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,msg", [
    (dict(num_grid=1), "num_grid"),
    (dict(num_grid=2.5), "num_grid"),
    (dict(num_grid=100_000), "num_grid"),
    (dict(density_threshold=10), "density_threshold"),
    (dict(density_threshold=-0.1), "density_threshold"),
    (dict(wavelet="morl"), "wavelet"),
    (dict(wavelet="nonsense"), "wavelet"),
    (dict(connectivity="diagonal"), "connectivity"),
])
def test_bad_parameters_raise(kw, msg, blobs):
    X, b, _ = blobs
    with pytest.raises(ValueError, match=msg):
        PrivQT(epsilon=1.0, bounds=b, **kw).fit(X)


@pytest.mark.parametrize("cls", [PrivTHR, PrivTHREM])
@pytest.mark.parametrize("share", [0, 1, 1.5, "half"])
def test_bad_share_raises(cls, share, blobs):
    X, b, _ = blobs
    with pytest.raises(ValueError, match="quantization_share"):
        cls(epsilon=1.0, bounds=b, quantization_share=share).fit(X)


def test_other_errors(blobs):
    X, b, _ = blobs
    with pytest.raises(ValueError, match="value_cap"):
        PrivTHREM(epsilon=1.0, bounds=b, value_cap=-1).fit(X)
    with pytest.raises(ValueError, match="theta"):
        PrivBasic(epsilon=1.0, bounds=b, theta=0).fit(X)
    with pytest.raises(NotFittedError, match="not fitted"):
        PrivQT().predict(X)
    est = PrivQT(epsilon=1.0, bounds=b).fit(X)
    with pytest.raises(ValueError, match="columns"):
        est.predict(np.ones((3, 3)))
    with pytest.warns(PrivacyLeakWarning):
        PrivQT(epsilon=1.0).fit(X)
    # The ledger refuses a spend beyond the grant.
    with pytest.raises(BudgetExceededError):
        est.budget_.spend("more", 0.1)


# --- measures ------------------------------------------------------------------------------------
def test_ud_properties():
    A = np.array([[0, 0, -1], [-1, 1, 1], [-1, -1, 1]])
    assert ud(A, A) == 0.0
    perm = np.where(A >= 0, 1 - A, -1)   # relabelled clusters
    assert ud(A, perm) == 0.0
    # The two clusters (2 and 3 cells) merged: match the 3-cell one (symmetric difference 2)
    # and leave the 2-cell one unmatched (2): cost 4 over 5 true significant cells.
    merged = np.where(A >= 0, 0, -1)
    assert ud(A, merged) == pytest.approx(4 / 5)
    empty = -np.ones_like(A)
    assert ud(A, empty) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same"):
        ud(A, A[:2])


def test_dcom_dc2e_f_measure_properties():
    rng = np.random.default_rng(3)
    a = rng.integers(-1, 4, size=60)
    relabel = np.array([3, 2, 1, 0, -1])[a + 1]
    assert dcom(a, relabel) == 0.0 and dc2e(a, relabel) == 0.0 and f_measure(a, a) == pytest.approx(1.0)
    b = rng.integers(-1, 4, size=60)
    pairs = list(itertools.combinations(range(60), 2))
    brute = np.mean([(a[i] == a[j]) != (b[i] == b[j]) for i, j in pairs])
    assert dc2e(a, b) == pytest.approx(brute)
    assert 0 < dcom(a, b) <= 1 and 0 < f_measure(a, b) < 1


def test_classification_measures_on_spiral(spiral, spiral_true):
    X, b = spiral
    tr, te = train_test_indices(len(X), np.random.default_rng(0))
    assert len(te) == round(0.1 * len(X)) and len(np.intersect1d(tr, te)) == 0
    true = WaveCluster(bounds=b, **SPIRAL).fit(X[tr])
    same = classification_measures(X[te], true, true)
    assert same == {"DCOM": 0.0, "DC2E": 0.0}
    # The median of three releases: one release can be an outlier (e.g. a cluster split by the noise).
    thr = {"DCOM": float(np.median([classification_measures(
        X[te], true, PrivTHR(epsilon=1.0, bounds=b, random_state=s, **SPIRAL).fit(X[tr]))["DCOM"] for s in range(3)]))}
    qt = classification_measures(X[te], true, PrivQT(epsilon=1.0, bounds=b, random_state=0, **SPIRAL).fit(X[tr]))
    assert thr["DCOM"] < 0.1 and thr["DCOM"] < qt["DCOM"]
