"""The privacy unit, audited (issue 23): neighbours that add or remove a whole unit, on real data.

* **Statistical** (Gowalla NYC check-ins, 138,957 rows, 7,115 users): an adversary who knows every other
  check-in and where the heaviest user checks in watches EUGkM's released grid (ε = 1): the sum of the
  noisy counts of the cells holding that user's check-ins (their busiest cell alone, the issue's adversary,
  is weaker: after sampling few of the user's kept rows fall in it), and guesses whether the user is in the
  data.  ε-DP for a unit bounds any such guess's accuracy by
  e^ε / (1 + e^ε) = 73.1 %; the test allows 7 points of sampling slack over 100 + 100 trials.  At row level
  the same adversary is right about 100 % of the time; and a mutation that leaves every sensitivity at the
  row level (the unit's L rows noised as if they were one) is caught.
  Both boundings: sampling (at most L rows a user) and weighting (every row weighted min(1, L / m), issue 68),
  and a weighting that forgets to cap the weights (every row weight 1) is caught as well.
* **Structural**: fits on D and on D minus a whole unit (several rows, L + 1 rows, far more), coupled on
  their released values, show the same structure for every private estimator and the sanitized synopsis (the
  unit, L and the bounding included), with sampling and, where the estimator can, with weighting.
* **Exact**: with the same coupling, every noised query's integer input moves by at most its stated
  sensitivity (L rows' worth) when a whole unit is removed, with either bounding; weights that are not capped,
  or rounded up instead of down, break that bound and are caught.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.algorithms.base import DPClusterer
from dpcore.algorithms.sanitize import Sanitizer
from dpcore.datasets import GOWALLA_BOUNDS
from dpcore.utils import contributions
from dpcore.utils.contributions import WEIGHT_BITS

from .structure import coupled_pair, structural_differences
from .test_exact_sums import noised_queries, violations

EPS = 1.0
TRIALS = 100
BOUND = math.exp(EPS) / (1 + math.exp(EPS)) + 0.07
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def gowalla(shared_data):
    df = pd.read_csv(shared_data / "gowalla_nyc_checkins.csv.gz")
    X = df[["longitude", "latitude"]].to_numpy(float)
    ids = df["user_id"].to_numpy()
    heavy = int(pd.Series(ids).value_counts().idxmax())
    return X, ids, heavy


def _cells_of(est, points) -> tuple:
    """The grid cells (index arrays) holding ``points``, each cell once."""
    idx = np.stack([np.clip(np.searchsorted(e, points[:, j], side="right") - 1, 0, len(e) - 2)
                    for j, e in enumerate(est.synopsis_.edges)], axis=1)
    return tuple(np.unique(idx, axis=0).T)


def _accuracy(X, ids, heavy, *, max_contributions=None, bounding="sample") -> float:
    """How often the adversary tells D (heavy user in) from D' (out) from one cell's noisy count."""
    mine = ids == heavy
    kw = dict(n_clusters=5, epsilon=EPS, bounds=GOWALLA_BOUNDS, n_samples=len(X), n_init=1)
    if max_contributions is not None:
        kw.update(max_contributions=max_contributions, contribution_bounding=bounding)
    seen = {}
    for name, keep in (("in", np.ones(len(X), bool)), ("out", ~mine)):
        counts = []
        for _ in range(TRIALS):
            est = dpcore.ALGORITHMS["eugkm"](**kw)
            fit = est.fit(X[keep], privacy_id=ids[keep]) if max_contributions is not None else est.fit(X[keep])
            counts.append(float(np.sum(fit.synopsis_.counts[_cells_of(fit, X[mine])])))
        seen[name] = np.array(counts)
    threshold = (np.median(seen["in"]) + np.median(seen["out"])) / 2       # the best threshold, given the medians
    right = (seen["in"] > threshold).sum() + (seen["out"] <= threshold).sum()
    return right / (2 * TRIALS)


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_user_level_release_protects_the_heaviest_user(gowalla, bounding):
    X, ids, heavy = gowalla
    user_level = _accuracy(X, ids, heavy, max_contributions=20, bounding=bounding)
    print(f"\ndistinguisher accuracy: user level (L = 20, {bounding}) {user_level:.2f}, allowed {BOUND:.3f}")
    assert user_level <= BOUND


def test_a_row_level_release_gives_the_heaviest_user_away(gowalla):
    X, ids, heavy = gowalla
    row_level = _accuracy(X, ids, heavy)
    print(f"\ndistinguisher accuracy: row level {row_level:.2f}")
    assert row_level >= 0.95          # the same adversary against a row-level release


def _one_heavy_unit(gowalla):
    """The users with at most L check-ins (kept whole: no sampling randomness, weight 1) and one unit with 500
    check-ins at one place: however it is bounded, its L rows' worth all lands in one cell."""
    X, ids, _ = gowalla
    light = pd.Series(ids).map(pd.Series(ids).value_counts()).to_numpy() <= 20
    place = X[light][0]
    X = np.concatenate([X[light], np.repeat(place[None, :], 500, axis=0)])
    heavy = int(ids.max()) + 1
    return X, np.concatenate([ids[light], np.full(500, heavy)]), heavy


def test_a_row_level_sensitivity_under_a_unit_is_caught(gowalla, monkeypatch):
    """Noise calibrated for one row gives the heavy unit's L rows away."""
    X, ids, heavy = _one_heavy_unit(gowalla)
    assert _accuracy(X, ids, heavy, max_contributions=20) <= BOUND          # the real code holds here too
    real = DPClusterer._record_unit

    def forgets_the_factor(self, L, how, noise, unit):
        real(self, L, how, noise, unit)
        noise.contribution_factor = 1          # the mutation: L rows per unit, noise for one row
    monkeypatch.setattr(DPClusterer, "_record_unit", forgets_the_factor)
    assert _accuracy(X, ids, heavy, max_contributions=20) > BOUND


def _uncapped(codes, max_contributions):
    """The mutation: every row keeps weight 1, so a unit weighs all its rows, not at most L."""
    return np.full(np.size(codes), 1 << WEIGHT_BITS, dtype=np.int64)


def _rounded_up(codes, max_contributions):
    """The mutation: ``ceil(L 2^B / m)`` instead of the floor: a unit's weights can sum to more than L."""
    one = 1 << WEIGHT_BITS
    counts = np.bincount(codes)
    return np.minimum(one, -((-int(max_contributions) * one) // np.maximum(counts, 1)))[codes].astype(np.int64)


def test_uncapped_weights_are_caught(gowalla, monkeypatch):
    """Weighting that forgets the cap min(1, L / m): the heavy unit's 500 rows count 500, noise is for 20."""
    X, ids, heavy = _one_heavy_unit(gowalla)
    assert _accuracy(X, ids, heavy, max_contributions=20, bounding="weight") <= BOUND     # the real code holds
    monkeypatch.setattr(contributions, "contribution_weights", _uncapped)
    assert _accuracy(X, ids, heavy, max_contributions=20, bounding="weight") > BOUND


# -- structure: neighbours that differ by a whole unit -------------------------------------------------------
def _units(seed=0):
    rng = np.random.default_rng(seed)
    sizes = np.array([1, 2, 3, 6, 7, 30, 1, 4, 2, 9])          # unit 5 has 30 rows (far more than L = 6)
    ids = np.repeat(np.arange(sizes.size), sizes)
    X = np.clip(rng.normal(0, 0.4, size=(ids.size, 2)) + (ids[:, None] % 3 - 1) * 0.5, -1.2, 1.2)
    return X, ids


def _unit_maker(key: str, bounding: str):
    """A fast private estimator of registry ``key`` (or the sanitized synopsis) at L = 6 with ``bounding``."""
    if key.startswith("sanitize:"):
        method = key.split(":")[1]
        return lambda seed: Sanitizer(2, epsilon=1.0, bounds=(-1.0, 1.0), method=method, depth=4, random_state=seed,
                                      max_contributions=6, contribution_bounding=bounding)
    cls = dpcore.ALGORITHMS[key]
    kw = dict(epsilon=1.0, bounds=(-1.0, 1.0), max_contributions=6, contribution_bounding=bounding)
    if "n_clusters" in cls().get_params():
        kw["n_clusters"] = 2
    if cls.needs_delta:
        kw["delta"] = 1e-3 if key == "balcan" else 1e-6
    if key == "coreset":
        kw.update(epsilon=100.0, n_samples=2000, n_init=1)
    if key.startswith("priv"):
        kw["num_grid"] = 8
    return lambda seed: cls(random_state=seed, **kw)


SANITIZE = ["sanitize:privtree", "sanitize:adaptive", "sanitize:uniform"]
PRIVATE = sorted(k for k, c in dpcore.ALGORITHMS.items() if c.private)
WEIGHTING = sorted(k for k in PRIVATE if dpcore.ALGORITHMS[k].supports_weighting) + SANITIZE
UNIT_CASES = [(k, "sample") for k in PRIVATE + SANITIZE] + [(k, "weight") for k in WEIGHTING]


@pytest.mark.parametrize("drop", [3, 4, 5])                     # a unit of 6 rows (= L), 7 (= L + 1), 30
@pytest.mark.parametrize("key,bounding", UNIT_CASES)
def test_structure_is_public_between_neighbours_that_differ_by_a_unit(key, bounding, drop):
    X, ids = _units()
    keep = ids != drop
    a, b, mismatches = coupled_pair(_unit_maker(key, bounding), X, X[keep], key.split(":")[0],
                                    fit_kw={"privacy_id": ids}, fit_kw_p={"privacy_id": ids[keep]})
    diffs = structural_differences(a, b, mismatches)
    assert a["outcome"] == "fitted" and not diffs, "\n".join(diffs)
    assert a["export"]["privacy_unit"]["bounding"] == bounding


def _unit_queries(monkeypatch, key, bounding, drop=5):
    X, ids = _units()
    keep = ids != drop
    return noised_queries(monkeypatch, _unit_maker(key, bounding), X, X[keep], key.split(":")[0],
                          fit_kw={"privacy_id": ids}, fit_kw_p={"privacy_id": ids[keep]})


@pytest.mark.parametrize("key,bounding", UNIT_CASES)
def test_a_unit_moves_every_noised_input_by_at_most_its_sensitivity(key, bounding, monkeypatch):
    """The unit of 30 rows (L = 6) removed: every noised integer input moves by at most L rows' bound.

    PrivTree's split decisions are checked on their input below (the walk itself follows each side's
    own decisions, so its queries do not pair up): here its leaf counts, the query after the walk."""
    if key in ("gkm", "gkm3k"):
        pytest.skip("GkM's random blocks are drawn by row count (audit.coupled = False: tests/audit/test_exact_sums.py)")
    a, b, mismatches = _unit_queries(monkeypatch, key, bounding)
    if key == "sanitize:privtree":
        a, b = a[-1:], b[-1:]
    assert not mismatches, mismatches
    assert a and len(a) == len(b)
    assert not violations(a, b), f"{key} ({bounding}): " + "; ".join(violations(a, b)[:5])


def _pyramid_shift(bounding, drop=5, weights=None):
    """The largest L1 move, over the levels of PrivTree's count pyramid, when unit ``drop`` is removed (counts)."""
    from dpcore.algorithms.sanitize import _exact_counts, _pyramid
    X, ids = _units()
    keep = ids != drop
    levels = []
    for rows, units in ((X, ids), (X[keep], ids[keep])):
        est = Sanitizer(epsilon=1.0, bounds=(-1.0, 1.0), depth=4, random_state=0, max_contributions=6,
                        contribution_bounding=bounding)
        src, _, _ = est._begin_fit(rows, privacy_id=units)
        fine, bits = _exact_counts(src.grid_counts(est.bounds_, (16, 16)), (16, 16))
        levels.append([lv / float(1 << bits) for lv in _pyramid(fine)])
    return max(float(np.abs(u - v).sum()) for u, v in zip(*levels))


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_privtree_decisions_see_each_level_move_by_at_most_L(bounding, monkeypatch):
    """PrivTree's proof needs every level's (weighted) counts to move by at most L in L1 for one unit; the
    rounded-up weights move them by more."""
    assert _pyramid_shift(bounding) <= 6
    if bounding == "weight":
        monkeypatch.setattr(contributions, "contribution_weights", _rounded_up)
        assert _pyramid_shift(bounding) > 6


@pytest.mark.parametrize("mutant", [_uncapped, _rounded_up])
@pytest.mark.parametrize("key", ["sanitize:uniform", "dplloyd"])
def test_weights_not_capped_or_rounded_up_are_caught(key, mutant, monkeypatch):
    """Weights summing to more than L for a unit move a noised input beyond its sensitivity: the exact audit
    sees it (uncapped: 30 rows count 30; rounded up: 30 x 820 / 2^12 > 6)."""
    monkeypatch.setattr(contributions, "contribution_weights", mutant)
    a, b, _ = _unit_queries(monkeypatch, key, "weight")
    assert violations(a, b), f"the audit did not catch {mutant.__name__} weights"
