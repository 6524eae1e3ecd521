"""GkM and GkM-3K (Su et al. 2016, §4.1.2, Eq. 3): budget, reproducibility, the paper's findings."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.algorithms.centroid.gupt import GkM, GkM3K, align_blocks, block_kmeans
from dpcore.metrics import nicv
from dpcore.privacy.accountant import BudgetLedger
from dpcore.privacy.mechanisms import NoiseSource

S1_K = 15


@pytest.fixture(scope="module")
def s1(shared_data):
    X = pd.read_csv(shared_data / "franti_s1.csv.gz", usecols=["x", "y"]).to_numpy(float)
    return X, (np.zeros(2), np.full(2, 1.0e6))   # public box: S1 coordinates are in [0, 10^6]


def _mean_nicv(key, X, bounds, eps, seeds, **kw):
    vals = []
    for s in seeds:
        est = dpcore.ALGORITHMS[key](S1_K, epsilon=eps, bounds=bounds, random_state=s, **kw).fit(X)
        vals.append(nicv(X, est.cluster_centers_, bounds=bounds))
    return float(np.mean(vals))


@pytest.mark.parametrize("cls", [GkM, GkM3K])
def test_ledger_spends_exactly_epsilon_and_noisy_n(cls, blobs):
    X, bounds, _ = blobs
    est = cls(3, epsilon=0.7, bounds=bounds, random_state=1).fit(X)
    eps, delta = est.budget_.total()
    assert eps == pytest.approx(0.7, rel=1e-12) and eps <= 0.7 * (1 + 1e-9) and delta == 0
    names = [e.name for e in est.budget_]
    assert names[0] == "dataset size"
    # Half of what is left goes to the 2d range quantiles, half to the Laplace noise of Eq. 3.
    rng_spent = sum(e.epsilon for e in est.budget_ if e.name.startswith("output range"))
    noise_spent = sum(e.epsilon for e in est.budget_ if e.name.startswith("averaged centres"))
    assert rng_spent == pytest.approx(noise_spent, rel=1e-9)
    assert sum(1 for e in est.budget_ if e.name.startswith("output range")) == 2 * X.shape[1]


def test_public_n_costs_nothing_and_sets_blocks(blobs):
    X, bounds, _ = blobs
    gk = GkM(3, epsilon=1.0, bounds=bounds, n_samples=6000, random_state=0).fit(X)
    g3 = GkM3K(3, epsilon=1.0, bounds=bounds, n_samples=6000, random_state=0).fit(X)
    assert all(e.name != "dataset size" for e in gk.budget_)
    assert gk.n_blocks_ == round(6000 ** 0.4) and g3.n_blocks_ == round(6000 / 9)


def test_laplace_scale_matches_eq3(blobs):
    X, bounds, _ = blobs
    k, d, eps = 3, 2, 1.0
    est = GkM(k, epsilon=eps, bounds=bounds, n_samples=6000, random_state=3).fit(X)
    entry = [e for e in est.budget_ if e.name.startswith("averaged centres")][0]
    # Laplace on centres scaled by 1/(max_i - min_i): scale = k d / (l * eps/2) = 2 k d / (l eps).
    # The noised query is the exact sum over the l blocks (then divided by l): sensitivity k d, plus what
    # rounding onto the release lattice adds (at most 2^-10 of it).
    assert k * d <= entry.sensitivity <= k * d * 1.001
    assert entry.epsilon == pytest.approx(eps / 2)
    lo, hi = est.output_range_[:, 0], est.output_range_[:, 1]
    assert np.all(lo <= hi) and np.all(lo >= bounds[0]) and np.all(hi <= bounds[1])


@pytest.mark.parametrize("cls", [GkM, GkM3K])
def test_same_seed_same_output(cls, blobs):
    X, bounds, _ = blobs
    a = cls(3, epsilon=1.0, bounds=bounds, random_state=7).fit(X).cluster_centers_
    b = cls(3, epsilon=1.0, bounds=bounds, random_state=7).fit(X).cluster_centers_
    c = cls(3, epsilon=1.0, bounds=bounds, random_state=8).fit(X).cluster_centers_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.all(a >= 0) and np.all(a <= 10)


def test_error_paths(blobs):
    X, bounds, _ = blobs
    with pytest.raises(ValueError, match="align"):
        GkM(3, epsilon=1.0, bounds=bounds, align="nope").fit(X)
    with pytest.raises(ValueError, match="solver"):
        GkM(3, epsilon=1.0, bounds=bounds, solver="nope").fit(X)
    with pytest.raises(ValueError, match="range_quantiles"):
        GkM(3, epsilon=1.0, bounds=bounds, range_quantiles=(0.9, 0.1)).fit(X)
    with pytest.raises(ValueError, match="epsilon"):
        GkM(3, epsilon=-1.0, bounds=bounds).fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        GkM3K(0, epsilon=1.0, bounds=bounds).fit(X)
    with pytest.warns(dpcore.PrivacyLeakWarning):
        GkM(3, epsilon=1.0, random_state=0).fit(X)


def test_block_kmeans_batched_matches_lloyd_fixed_point():
    """Each block's batched-Lloyd centres are means of the block points nearest them."""
    rng = np.random.default_rng(0)
    Z = rng.uniform(-1, 1, size=(600, 2))
    block = rng.integers(20, size=600)
    out = block_kmeans(Z, block, 20, 3, rng, solver="batched", max_iter=200)
    for b in (0, 7, 19):
        pts = Z[block == b]
        lab = ((pts[:, None] - out[b][None]) ** 2).sum(-1).argmin(1)
        for j in range(3):
            if np.any(lab == j):
                np.testing.assert_allclose(out[b, j], pts[lab == j].mean(0), atol=1e-8)


def test_alignment_recovers_a_permutation():
    rng = np.random.default_rng(1)
    ref = np.array([[-0.5, -0.5], [0.5, 0.5], [0.5, -0.5]])
    blocks = np.stack([ref[rng.permutation(3)] + rng.normal(0, 0.01, (3, 2)) for _ in range(10)])
    np.testing.assert_allclose(align_blocks(blocks, ref, "match"), np.broadcast_to(ref, blocks.shape), atol=0.05)
    srt = align_blocks(blocks, ref, "sort")
    assert np.all(np.diff(srt[:, :, 0], axis=1) >= -0.05)


def test_quantile_mechanism_is_private_range_and_accurate():
    ledger = BudgetLedger(10.0)
    noise = NoiseSource(np.random.default_rng(0), ledger)
    vals = np.linspace(-0.5, 0.5, 2001)
    q = noise.quantile(vals, 0.5, lower=-1, upper=1, epsilon=5.0, name="median")
    assert abs(q) < 0.05 and ledger.total()[0] == pytest.approx(5.0)
    with pytest.raises(ValueError):
        noise.quantile(vals, 1.5, lower=-1, upper=1, epsilon=1.0, name="bad")


def test_paper_findings_on_s1(s1):
    """Su et al. Fig. 1 / §5.2: DPLloyd beats GkM at epsilon = 1; GkM-3K beats GkM."""
    X, bounds = s1
    seeds = range(4)
    dpl = _mean_nicv("dplloyd", X, bounds, 1.0, seeds)
    gkm = _mean_nicv("gkm", X, bounds, 1.0, seeds)
    gkm3 = _mean_nicv("gkm3k", X, bounds, 1.0, seeds)
    assert dpl < gkm
    assert gkm3 < gkm
