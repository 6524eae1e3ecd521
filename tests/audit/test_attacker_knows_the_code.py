"""Attacks the sampling audit cannot see: an attacker who knows the code, the release and its seed.

The Ding et al. audit (``dp_audit``) draws a fresh seed for every run, so it never
considers an attacker who can *regenerate* the noise.  Two such attacks, and the
mutations that prove the tests can fail:

(a) Known seed.  With a published (or default) seed, refitting on D and on D minus one
    record reproduces the noise exactly: the two releases differ in the one cell or
    centre the record touches, by exactly its contribution, and the record's presence
    is certain (epsilon = infinity).  Here every registry estimator at its defaults
    must give releases on D and D' that differ almost everywhere, and an attacker who
    refits with every seed the export shows (none) or a guessed one (0, 1, 42) must
    not reproduce the release.  Mutation: release noise seeded from a published seed.
(b) Floating point (Mironov 2012).  ``x + Lap(b)`` in doubles leaks ``x`` through the
    output's low bits.  Every value a fit draws through the noise module must be an
    integer (counts) or an exact multiple of the power-of-two lattice its ledger entry
    declares.  Mutation: numpy's float Laplace instead of the safe sampler.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpcore
from dpcore import release as R
from dpcore.algorithms import base as base_module
from dpcore.exceptions import InfeasibleBudgetError
from dpcore.privacy import mechanisms
from dpcore.privacy.mechanisms import NoiseSource

PRIVATE_KEYS = sorted(k for k, cls in dpcore.ALGORITHMS.items() if cls.private)
GUESSED_SEEDS = (0, 1, 42)


@pytest.fixture(scope="module")
def neighbours(taxi_X, taxi_bounds):
    """D: 6000 real taxi pickups; D': D minus one record (a pickup in a busy cell)."""
    rng = np.random.default_rng(20150101)
    D = taxi_X[rng.choice(taxi_X.shape[0], 6000, replace=False)]
    return D, D[1:], taxi_bounds


def make(key, bounds, **extra):
    cls = dpcore.ALGORITHMS[key]
    kw = {"bounds": bounds, **extra}
    if cls.needs_delta:
        kw["delta"] = 1e-6
    if key == "coreset":          # PRIVATE-K-MEAN is infeasible on a few thousand points at epsilon = 1
        kw.update(n_clusters=2, epsilon=50.0)
    return cls(**kw)


def released_numbers(est) -> np.ndarray:
    """Everything numeric the export publishes about the data: centres and synopsis values."""
    rel = R.build_release(est, algorithm="x", simulation=est.simulation_)
    parts = [np.ravel(np.asarray(rel["centroids"], dtype=float))]
    syn = rel["synopsis"] or {}
    for key in ("counts", "values", "weights", "points", "labels"):
        if key in syn:
            parts.append(np.ravel(np.asarray(syn[key], dtype=float)))
    return np.concatenate(parts) if parts else np.empty(0)


def differing(a: np.ndarray, b: np.ndarray) -> int:
    """How many released numbers differ (a different size counts as all of them)."""
    if a.shape != b.shape:
        return max(a.size, b.size)
    return int(np.count_nonzero(a != b))


def fit_quietly(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcore.SeededNoiseWarning)
        return est.fit(X)


def known_seed_attack(key, D, D_prime, bounds):
    """The attack: refit on D and on D' with every seed the export shows (or guessed ones).

    Returns (release on D, release on D' at defaults, which candidates reproduce the
    release on D exactly: a subset of {"D", "D'"}).  With reproducible noise exactly "D"
    matches and the record's presence is certain.
    """
    try:
        a = fit_quietly(make(key, bounds), D)
    except InfeasibleBudgetError as exc:
        pytest.skip(f"{key} infeasible on this sample: {exc}")
    b = fit_quietly(make(key, bounds), D_prime)
    ra = released_numbers(a)
    rel = R.build_release(a, algorithm=key, simulation=a.simulation_)
    seeds = [rel["seed_policy"]["random_state"]] if "random_state" in rel["seed_policy"] else list(GUESSED_SEEDS)
    matches = {name for name, X in (("D", D), ("D'", D_prime)) for s in seeds
               if np.array_equal(ra, released_numbers(fit_quietly(make(key, bounds, random_state=s), X)))}
    return a, b, matches


@pytest.mark.parametrize("key", PRIVATE_KEYS)
def test_known_seed_attacker_learns_nothing_at_defaults(key, neighbours):
    D, D_prime, bounds = neighbours
    a, b, matches = known_seed_attack(key, D, D_prime, bounds)
    assert not matches, f"{key}: refitting with a published or guessed seed reproduces the release on {matches}"
    ra, rb = released_numbers(a), released_numbers(b)
    n_diff = differing(ra, rb)
    print(f"{key}: {n_diff} of {max(ra.size, rb.size)} released numbers differ between D and D - 1 record")
    # The record touches one cell or centre; fresh noise changes (almost) every released number.
    assert n_diff >= max(2, 0.2 * max(ra.size, rb.size)), \
        f"{key}: the releases on D and D' differ in only {n_diff} numbers: the noise cancels"


def _published_seed(random_state):
    """Mutation: every fit's noise comes from a fixed, published seed (the old app default)."""
    return np.random.default_rng(0) if random_state is None else np.random.default_rng(random_state)


@pytest.mark.parametrize("key", ["eugkm", "dplloyd"])
def test_known_seed_audit_catches_a_published_seed(monkeypatch, key, neighbours):
    D, D_prime, bounds = neighbours
    monkeypatch.setattr(base_module, "check_random_state", _published_seed)
    a, b, matches = known_seed_attack(key, D, D_prime, bounds)
    assert matches == {"D"}                                     # caught: the attacker knows the record is in
    if key == "eugkm":                                          # the measurement, in miniature
        diff = np.asarray(a.synopsis_.counts) - np.asarray(b.synopsis_.counts)
        assert np.count_nonzero(diff) == 1 and np.abs(diff).max() == 1


# -- (b) floating point ---------------------------------------------------------------------------
class LatticeRecorder:
    """Records every additive release with the ledger entry it spent (its declared lattice)."""

    def __init__(self, monkeypatch):
        self.records = []
        for m in ("laplace", "gaussian"):
            orig = getattr(NoiseSource, m)

            def wrapper(src, *args, _orig=orig, **kwargs):
                out = _orig(src, *args, **kwargs)
                self.records.append((src.ledger[len(src.ledger) - 1], np.asarray(out)))
                return out
            monkeypatch.setattr(NoiseSource, m, wrapper)


def off_lattice(records) -> list[str]:
    """Entries whose released values are not integer multiples of the declared granularity."""
    bad = []
    for entry, out in records:
        g = entry.granularity
        if g is None or math.frexp(g)[0] != 0.5:
            bad.append(f"{entry.name}: no power-of-two lattice declared ({g})")
            continue
        k = np.asarray(out, dtype=float) / g
        if not np.array_equal(k, np.rint(k)):
            bad.append(f"{entry.name}: values off the lattice {g}")
    return bad


@pytest.mark.parametrize("key", PRIVATE_KEYS)
def test_released_values_lie_on_their_lattice(key, neighbours, monkeypatch):
    D, _, bounds = neighbours
    rec = LatticeRecorder(monkeypatch)
    try:
        est = make(key, bounds).fit(D)
    except InfeasibleBudgetError as exc:
        pytest.skip(f"{key} infeasible on this sample: {exc}")
    assert off_lattice(rec.records) == []
    syn = getattr(est, "synopsis_", None)
    if syn is not None and getattr(syn, "kind", "") == "grid":
        counts = np.asarray(syn.counts)
        assert np.array_equal(counts, np.rint(counts)), "noisy grid counts must be integers"


def _float_laplace(rng, scale, size=()):
    """Mutation: numpy's floating-point Laplace in place of the discrete sampler."""
    return rng.laplace(0.0, scale, size=size)


@pytest.mark.parametrize("key", ["eugkm", "dplloyd"])
def test_float_audit_catches_numpys_laplace(monkeypatch, key, neighbours):
    D, _, bounds = neighbours
    monkeypatch.setattr(mechanisms, "discrete_laplace", _float_laplace)
    rec = LatticeRecorder(monkeypatch)
    make(key, bounds).fit(D)
    assert off_lattice(rec.records), "numpy's float Laplace went unnoticed"
