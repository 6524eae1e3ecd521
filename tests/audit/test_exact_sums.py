"""Noise that no record can steer: every noised query's input moves by at most its stated sensitivity, exactly.

The adversary of issue 29 has the code and crafts neighbouring datasets whose float running sums diverge:
float32-representable values whose running sums straddle binade edges, so that removing one row changes
how every later addition rounds (float32 sums of 180,098 such rows moved by 64x the sensitivity).  Here:

* two fits, on ``D`` and ``D' = D`` minus its first row, are coupled on their released values
  (:class:`~tests.audit.structure.NoiseTape`), so every mechanism call on ``D'`` answers the same question
  (same centres, same cells) as on ``D``;
* every additive mechanism hands its integer query to ``NoiseSource._noised`` (lattice indices and the
  sensitivity in those units) just before the noise is added; the audit records both fits' queries and
  checks, in exact integer arithmetic, ``||k_D - k_D'|| <= sensitivity`` (L1 for Laplace, L2 for Gaussian);
* for every private estimator of the registry, and for DPLloyd on every engine (numpy, DuckDB, Spark
  local[2], PostgreSQL);
* and a deliberately float32-summing DPLloyd fails it: the audit can tell.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpcore
from dpcore.privacy.mechanisms import NoiseSource

from .structure import NoiseTape, observe

N = 2 ** 17
BOUNDS = (0.0, 1.0)
PRIVATE_KEYS = sorted(k for k, cls in dpcore.ALGORITHMS.items() if cls.private)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def binade_data(n: int = N) -> np.ndarray:
    """Float32-representable values in [0, 1], half of them just below and above binade edges."""
    rng = np.random.default_rng(29)
    edges = np.array([0.5, 0.25, 0.75, 0.125, 1.0], dtype=np.float32)
    near = edges[rng.integers(0, edges.size, size=(n // 2, 2))]
    near = near + rng.choice([-1, 1], size=near.shape).astype(np.float32) * np.float32(2.0 ** -24) * rng.integers(
        1, 8, size=near.shape).astype(np.float32)
    X = np.concatenate([np.clip(near, 0, 1), rng.uniform(0, 1, size=(n - n // 2, 2)).astype(np.float32)])
    rng.shuffle(X)
    return X.astype(np.float64)           # every value exactly a float32


def _maker(key, **extra):
    cls = dpcore.ALGORITHMS[key]
    params = cls().get_params()
    kw = dict(epsilon=1.0, bounds=BOUNDS)
    if "n_clusters" in params:
        kw["n_clusters"] = 3
    if cls.needs_delta:
        kw["delta"] = 1e-6
    kw.update(cls.audit.exact_sums)   # the class's declared fast settings
    kw.update(extra)
    return lambda seed: cls(random_state=seed, **kw)


def noised_queries(monkeypatch, make, X, Xp, key, fit_kw=None, fit_kw_p=None):
    """The integer queries noised on D and on D' (coupled on released values), in call order.

    ``fit_kw`` / ``fit_kw_p``: extra ``fit`` arguments on each side (the rows' ``privacy_id``)."""
    seen: list[tuple] = []

    def spy(self, k, bound, norm):
        seen.append((np.array(k, dtype=object), bound, norm))
        return k

    monkeypatch.setattr(NoiseSource, "_noised", spy)
    tape = NoiseTape(0)
    observe(lambda: make(0), X, tape, key, fit_kw)
    mark = len(seen)
    tape.replay()
    observe(lambda: make(0), Xp, tape, key, fit_kw_p)
    tape.finish()
    return seen[:mark], seen[mark:], tape.mismatches


def violations(a, b) -> list[str]:
    """Queries whose inputs on D and D' differ by more than the sensitivity the mechanism was calibrated to."""
    out = []
    for i, ((ka, ba, na), (kb, bb, nb)) in enumerate(zip(a, b)):
        if (ba, na, ka.shape) != (bb, nb, kb.shape):
            out.append(f"query {i}: different calibration or shape ({ba}, {na}, {ka.shape}) vs ({bb}, {nb}, {kb.shape})")
            continue
        diff = [abs(int(x) - int(y)) for x, y in zip(ka.ravel(), kb.ravel())]
        size = sum(diff) if na == "l1" else sum(v * v for v in diff)
        limit = Fraction(ba) if na == "l1" else Fraction(ba) ** 2
        if size > limit:
            moved = size if na == "l1" else math.sqrt(size)
            out.append(f"query {i}: one record moved the noised input by {moved:.6g} > sensitivity {ba:.6g} ({na})")
    return out


@pytest.fixture(scope="module")
def pair():
    X = binade_data()
    return X, X[1:]


#: Estimators that declare ``audit.coupled = False`` (GkM and GkM-3K put every row in a random block,
#: ``rng.integers(n_blocks, size=n)``: a draw whose size is the data's, which the tape cannot couple
#: between D and D', whose blocks would differ everywhere).  Their noised query, the exact sum of the
#: blocks' quantised outputs, is checked block by block below.
COUPLED_KEYS = [k for k in PRIVATE_KEYS if dpcore.ALGORITHMS[k].audit.coupled]


@pytest.mark.heavy
@pytest.mark.parametrize("key", COUPLED_KEYS)
def test_every_noised_input_moves_by_at_most_its_sensitivity(key, pair, monkeypatch):
    X, Xp = pair
    a, b, mismatches = noised_queries(monkeypatch, _maker(key), X, Xp, key)
    assert not mismatches, mismatches
    assert a and len(a) == len(b)
    assert not violations(a, b), f"{key}: " + "; ".join(violations(a, b)[:5])


def test_gupt_block_average_moves_by_at_most_its_sensitivity(monkeypatch):
    """One record changes one block's output, anyhow: the noised sum over blocks moves by at most k d."""
    from dpcore.algorithms.centroid.gupt import noisy_block_average
    rng = np.random.default_rng(3)
    k, d, n_blocks = 3, 2, 64
    lo, hi = np.array([-0.9, -0.5]), np.array([0.7, 0.8])
    outs = rng.uniform(-1, 1, size=(n_blocks, k, d)).astype(np.float32).astype(float)
    for block in range(0, n_blocks, 7):
        other = outs.copy()
        other[block] = rng.choice([-1.0, 1.0, lo[0], hi[1], 0.5 + 2.0 ** -24], size=(k, d))
        seen: list[tuple] = []

        def spy(self, q, bound, norm, seen=seen):
            seen.append((q, bound, norm))
            return q
        monkeypatch.setattr(NoiseSource, "_noised", spy)
        for o in (outs, other):
            noisy_block_average(o, lo, hi, NoiseSource(np.random.default_rng(0), dpcore.BudgetLedger(1.0)),
                                epsilon=1.0, name="averaged centres")
        assert len(seen) == 2 and not violations(seen[:1], seen[1:])


TAXI_BOX = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))


def _float32_cluster_sums(self, centers, bounds):
    """The mutant: a source's cluster sums accumulated row by row in float32 in data units, then normalised.

    A realistic float bug (zCDP-Lloyd once summed in float32): far from 0 (longitudes near -74) the
    running sum's last bit is worth 1/8 degree, so neighbouring sums differ by the removed row's value
    rounded to that grid, not by the value itself.
    """
    from dpcore.sources.base import as_domain
    from dpcore.utils.fixedpoint import FixedPoint, quantize
    from dpcore.utils.nearest import assign
    dom = as_domain(bounds, self.n_features)
    Xc, _ = dom.clip(self.X)
    lab = assign(dom.normalize(Xc), centers)
    k, d = centers.shape
    sums = np.zeros((k, d))
    counts = np.bincount(lab, minlength=k)
    for c in range(k):
        rows = Xc[lab == c].astype(np.float32)
        if rows.size:
            raw = np.cumsum(rows, axis=0, dtype=np.float32)[-1].astype(np.float64)
            sums[c] = (raw - counts[c] * dom.center) * (2.0 / dom.width)
    return counts.astype(np.int64), FixedPoint(quantize(sums))


@pytest.mark.parametrize("assignment", ["rows", "cells"])
def test_a_float32_summing_variant_fails_the_audit(monkeypatch, assignment):
    rng = np.random.default_rng(7)
    lo, hi = TAXI_BOX
    X = (lo + (hi - lo) * rng.uniform(0, 1, size=(60_000, 2))).astype(np.float32).astype(np.float64)
    X[0] = hi       # the removed row at the box's corner moves the sums by exactly the sensitivity: no slack
    Xp = X[1:]
    from dpcore.sources import ArraySource
    from dpcore.sources.cells import CellSource
    # The same bug at each path's entry: per-row sums, or the one-pass statistics' cluster sums (issue 26).
    monkeypatch.setattr(ArraySource, "cluster_sums", _float32_cluster_sums)
    monkeypatch.setattr(CellSource, "cluster_sums", lambda self, C, b: _float32_cluster_sums(self.source, C, b))
    make = _maker("dplloyd", init="sphere_packing", bounds=TAXI_BOX, assignment=assignment)
    a, b, _ = noised_queries(monkeypatch, make, X, Xp, "dplloyd")
    assert violations(a, b), "the audit did not catch float32 running sums"
    # ... and the real code passes the same pair
    monkeypatch.undo()
    a, b, _ = noised_queries(monkeypatch, make, X, Xp, "dplloyd")
    assert a and not violations(a, b)


# -- the engines: DPLloyd on DuckDB, Spark and PostgreSQL computes the same exact sums ---------------------------
def _parquet(X, path):
    import pandas as pd
    pd.DataFrame(X, columns=["x", "y"]).to_parquet(path)
    return path


@pytest.mark.heavy
@pytest.mark.parametrize("engine", ["duckdb", "spark", "postgres"])
def test_engine_sums_are_exact_between_neighbours(engine, pair, tmp_path, monkeypatch, request):
    from dpcore import sources
    X, Xp = pair
    if engine == "duckdb":
        src, srcp = (sources.from_files(_parquet(A, tmp_path / f"{i}.parquet"), columns=["x", "y"])
                     for i, A in enumerate((X, Xp)))
    elif engine == "spark":
        import os
        import shutil
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            pytest.skip("no Java")
        spark = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                        "spark.sql.shuffle.partitions": "2"})
        src, srcp = (sources.from_spark(spark.read.parquet(str(_parquet(A, tmp_path / f"{i}.parquet"))),
                                        columns=["x", "y"]) for i, A in enumerate((X, Xp)))
    else:
        import ibis
        import pandas as pd
        url = request.getfixturevalue("pg_server").new_database("exact")
        con = ibis.connect(url.replace("postgresql+psycopg://", "postgresql://"))
        for name, A in (("d", X), ("dp", Xp)):
            con.create_table(name, pd.DataFrame(A, columns=["x", "y"]), overwrite=True)
        src, srcp = sources.from_table(url, "d", columns=["x", "y"]), sources.from_table(url, "dp", columns=["x", "y"])
    a, b, mismatches = noised_queries(monkeypatch, _maker("dplloyd", init="sphere_packing"), src, srcp, "dplloyd")
    assert not mismatches and a and len(a) == len(b)
    assert not violations(a, b), "; ".join(violations(a, b)[:5])
    # ... and the same integers as the in-memory path (the first query sees the same public centres)
    ref, _, _ = noised_queries(monkeypatch, _maker("dplloyd", init="sphere_packing"), X, Xp, "dplloyd")
    assert [int(v) for v in a[0][0].ravel()] == [int(v) for v in ref[0][0].ravel()]


@pytest.mark.parametrize("method", ["privtree", "adaptive", "uniform"])
def test_sanitize_noised_inputs_move_by_at_most_their_sensitivity(method, pair, monkeypatch):
    """dpcore.sanitize (issue 57): its exact histogram counts, PrivTree's biased counts included."""
    from dpcore.algorithms.sanitize import Sanitizer
    X, Xp = pair
    make = lambda seed: Sanitizer(2, epsilon=1.0, bounds=BOUNDS, method=method, depth=5,  # noqa: E731
                                  random_state=seed)
    a, b, mismatches = noised_queries(monkeypatch, make, X, Xp, "sanitize")
    assert not mismatches, mismatches
    assert a and len(a) == len(b)
    assert not violations(a, b), f"{method}: " + "; ".join(violations(a, b)[:5])
