"""PGkM (Su et al. 2016, §4.1.3): budget, reproducibility, round rule, the paper's finding on S1."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.algorithms.centroid.privgene import PGkM, candidate_costs, crossover_mutate, pgkm_rounds
from dpcore.metrics import inertia, nicv


def test_round_rule():
    assert pgkm_rounds(5000, 1.0) == 8                     # 1.25e-3 * 5000 / 10 < 8
    assert pgkm_rounds(10 ** 6, 1.0) == 125                # 1.25e-3 * 1e6 * 1 / 10


def test_ledger_and_selection_sensitivity(blobs):
    X, bounds, _ = blobs
    est = PGkM(3, epsilon=0.9, bounds=bounds, random_state=0).fit(X)
    eps, _ = est.budget_.total()
    assert eps == pytest.approx(0.9, rel=1e-12) and eps <= 0.9 * (1 + 1e-9)
    sel = [e for e in est.budget_ if e.mechanism == "exponential"]
    # m' = 10 draws in every round but the last, which releases one centre set.
    assert len(sel) == 10 * (est.n_rounds_ - 1) + 1
    assert all(e.sensitivity == pytest.approx(4.0 * X.shape[1]) for e in sel)
    per_round = {}
    for e in sel:
        rnd = e.name.split(":")[0]
        per_round[rnd] = per_round.get(rnd, 0.0) + e.epsilon
    np.testing.assert_allclose(list(per_round.values()), per_round["round 1"], rtol=1e-9)


def test_same_seed_same_output(blobs):
    X, bounds, _ = blobs
    a = PGkM(3, epsilon=1.0, bounds=bounds, n_samples=6000, random_state=4).fit(X).cluster_centers_
    b = PGkM(3, epsilon=1.0, bounds=bounds, n_samples=6000, random_state=4).fit(X).cluster_centers_
    np.testing.assert_array_equal(a, b)


def test_costs_and_genetic_operators():
    rng = np.random.default_rng(0)
    Z = rng.uniform(-1, 1, (500, 3))
    pool = rng.uniform(-1, 1, (6, 4, 3))
    np.testing.assert_allclose(candidate_costs(Z, pool), [inertia(Z, p) for p in pool], rtol=1e-10)
    parents = rng.uniform(-1, 1, (10, 4, 3))
    kids = crossover_mutate(parents, 200, 0.0, rng)
    assert kids.shape == (200, 4, 3)
    flat_p = parents.reshape(10, -1)
    # Without mutation every child coordinate comes from a parent at the same position.
    for kid in kids.reshape(200, -1)[:20]:
        assert all(np.any(np.isclose(kid[j], flat_p[:, j])) for j in range(12))
    mut = crossover_mutate(parents, 200, 0.3, np.random.default_rng(1))
    assert np.all(np.abs(mut) <= 1.0)


def test_error_paths(blobs):
    X, bounds, _ = blobs
    with pytest.raises(ValueError, match="n_selected"):
        PGkM(3, epsilon=1.0, bounds=bounds, n_candidates=5, n_selected=10).fit(X)
    with pytest.raises(ValueError, match="n_rounds"):
        PGkM(3, epsilon=1.0, bounds=bounds, n_rounds=0).fit(X)
    with pytest.raises(ValueError, match="mutation_scale"):
        PGkM(3, epsilon=1.0, bounds=bounds, mutation_scale=-1).fit(X)


def test_utility_improves_with_epsilon(blobs):
    X, bounds, _ = blobs
    def mean_nicv(eps):
        return np.mean([nicv(X, PGkM(3, epsilon=eps, bounds=bounds, n_samples=6000, random_state=s)
                             .fit(X).cluster_centers_, bounds=bounds) for s in range(4)])
    assert mean_nicv(20.0) < mean_nicv(0.05)


def test_dplloyd_beats_pgkm_on_s1(shared_data):
    """Su et al. Fig. 1 / §5.3: PGkM is inferior to DPLloyd on S1 at epsilon = 1."""
    X = pd.read_csv(shared_data / "franti_s1.csv.gz", usecols=["x", "y"]).to_numpy(float)
    bounds = (np.zeros(2), np.full(2, 1.0e6))
    def mean_nicv(key):
        return np.mean([nicv(X, dpcore.ALGORITHMS[key](15, epsilon=1.0, bounds=bounds, random_state=s)
                             .fit(X).cluster_centers_, bounds=bounds) for s in range(4)])
    assert mean_nicv("dplloyd") < mean_nicv("pgkm")
