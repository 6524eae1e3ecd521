"""A DPLloyd variant is one module and one registry line (issue 68, part 3).

``dplloyd_random`` (DPLloyd's noisy iterations from uniform random starts) is written below as a contributor
would, in a temporary folder: a :class:`~dpcore.algorithms._blocks.lloyd.NoisyLloyd` subclass that declares
its key, its descriptions and its start, and nothing else; the size, the regime rule, the iterations, the
ledger and the budget plan are the blocks'.  The checks:

* registered by one line, it fits arrays and a DuckDB source, and its ledger follows its budget plan;
* from the same start and the same generator it releases exactly what DPLloyd releases, with the same
  ledger: the iterations are DPLloyd's, not a copy of them;
* DPLloyd itself is still its start followed by the noisy Lloyd steps composed by hand from the lower
  blocks (the noisy size, sphere packing or the grid start, :func:`noisy_lloyd_step` t times): the
  releases it made before its loop became a block;
* every suite that covers "each estimator" picks the variant up (heavy: a fresh interpreter, as
  ``tests/test_toy_algorithm.py`` does for its toy).
"""
from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_toy_algorithm import assert_audited, run_suites

import dpcore
from dpcore.algorithms import registry
from dpcore.algorithms._blocks.grid_kmeans import eugkm_fit
from dpcore.algorithms._blocks.lloyd import auto_schedule, noisy_lloyd_step
from dpcore.algorithms._blocks.size import public_or_noisy_size
from dpcore.algorithms._blocks.sphere_packing import sphere_packing_centers
from dpcore.algorithms.regime import RegimeWarning
from dpcore.privacy.accountant import BudgetLedger
from dpcore.privacy.mechanisms import NoiseSource
from dpcore.sources import ArraySource
from dpcore.utils.domain import check_bounds

KEY = "dplloyd_random"

#: The variant's whole module: its declarations and its start.
VARIANT_MODULE = '''
"""DPLloyd from uniform random starts: DPLloyd's noisy iterations, a start of its own (a test's variant)."""
from dpcore.algorithms._blocks.lloyd import NoisyLloyd
from dpcore.algorithms.traits import AuditCase, PrivacyCase


class DPLloydRandom(NoisyLloyd):
    """DPLloyd's noisy Lloyd iterations (Su et al. 2016, §4.1.1) from k uniform random centres in the box."""

    key = "dplloyd_random"
    display_name = "DPLloyd, random starts"
    reference = "Su et al. 2016, §4.1.1 (uniform random starts)"
    summary = "DPLloyd's noisy Lloyd iterations from k uniform random centres."
    colour = "#8c564b"
    audit = AuditCase(
        privacy=(PrivacyCase("one iteration, record at the far corner", dict(n_clusters=1, n_iter=1, assignment="rows"),
                             data="corner", n=20, d=2, added=(1.0, 1.0), n_runs=2000, ci_runs=300),),
        structural=dict(n_iter=2, assignment="rows"), exact_sums=dict(n_iter=2), sources=dict(n_clusters=3))

    def _start(self, X, noise, n_est, epsilon):
        # Data-independent: drawn from the fit's generator, it costs nothing (the budget is left whole).
        return noise.rng.uniform(-1.0, 1.0, size=(int(self.n_clusters), X.n_features)), epsilon
'''


def write_variant(folder: Path) -> None:
    (folder / "dplloyd_random.py").write_text(textwrap.dedent(VARIANT_MODULE))
    (folder / "dplloyd_random_plugin.py").write_text("from dpcore.algorithms.registry import register\n\n"
                                                     'register("dplloyd_random:DPLloydRandom")\n')


@pytest.fixture
def variant(tmp_path, monkeypatch):
    """The variant registered in this process by its one line (removed again afterwards)."""
    write_variant(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = registry.register("dplloyd_random:DPLloydRandom")
    yield cls
    del dpcore.ALGORITHMS[KEY], registry.RELEASE_KINDS[KEY]
    del sys.modules["dplloyd_random"]


@pytest.fixture
def blobs():
    rng = np.random.default_rng(3)
    return np.vstack([rng.normal(c, 0.08, size=(2000, 2)) for c in ([-0.5, -0.5], [0.5, 0.5], [-0.5, 0.5])])


def _same(a, b):
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert [(e.name, e.epsilon, e.delta) for e in a.budget_] == [(e.name, e.epsilon, e.delta) for e in b.budget_]


def test_the_variant_is_registered_by_one_line_and_follows_its_plan(variant, blobs):
    assert dpcore.ALGORITHMS[KEY] is variant and registry.releasable(KEY)
    est = variant(3, epsilon=1.0, bounds=(-1, 1), random_state=0).fit(blobs)
    assert est.cluster_centers_.shape == (3, 2) and est.n_iter_ >= 2
    assert est.budget_.total()[0] == pytest.approx(1.0)
    plan = est.budget_plan(2, est.n_samples_estimate_)
    assert list(plan) == ["dataset size", "iteration"]
    spent = sum(e.epsilon for e in est.budget_ if e.name.startswith("iteration"))
    assert spent == pytest.approx(plan["iteration"][0], abs=1e-12)
    # The iteration rule's regime is the block's, under the variant's key.
    with pytest.warns(RegimeWarning):
        tiny = variant(3, epsilon=0.01, bounds=(-1, 1), random_state=0).fit(blobs[:200])
    assert tiny.regime_.algorithm == KEY and tiny.regime_.status == "warn"


def test_the_variant_releases_what_dplloyd_releases_from_the_same_start(variant, blobs):
    for seed in range(3):
        for params in (dict(n_samples=6000), dict(n_samples=6000, assignment="rows"), dict(n_iter=4)):
            ours = variant(3, epsilon=0.5, bounds=(-1, 1), random_state=np.random.default_rng(seed), **params)
            ours.fit(blobs)
            # DPLloyd given the same centres, its generator advanced past the variant's draw of them:
            # with a public size (or a fixed n_iter) nothing else is drawn before the start.
            rng = np.random.default_rng(seed)
            start = rng.uniform(-1.0, 1.0, size=(3, 2))   # bounds (-1, 1): normalised = data units, exactly
            theirs = dpcore.ALGORITHMS["dplloyd"](3, epsilon=0.5, bounds=(-1, 1), init=start, random_state=rng,
                                                  **params).fit(blobs)
            np.testing.assert_array_equal(ours.init_centers_, theirs.init_centers_)
            _same(ours, theirs)
            assert (ours.n_iter_, ours.count_share_) == (theirs.n_iter_, theirs.count_share_)


def test_the_variant_fits_a_duckdb_source_as_its_array(variant, blobs, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    from dpcore import sources
    path = tmp_path / "blobs.parquet"
    pq.write_table(pa.table({"x": blobs[:, 0], "y": blobs[:, 1]}), path)
    on_source = variant(3, epsilon=1.0, bounds=(-1, 1), random_state=4).fit(sources.from_files(path, columns=["x", "y"]))
    _same(on_source, variant(3, epsilon=1.0, bounds=(-1, 1), random_state=4).fit(blobs))


def _by_hand(X, seed, *, epsilon, n_iter="auto", grid=False, k=3, bounds=(-1.0, 1.0)):
    """DPLloyd as it was written before its loop became a block: the size, the start, t noisy Lloyd steps."""
    src = ArraySource(X)
    dom = check_bounds(bounds, d=X.shape[1])
    noise = NoiseSource(np.random.default_rng(seed), BudgetLedger(epsilon, 0.0))
    count_share, eps_left = None, epsilon
    if n_iter == "auto":
        n_est, eps_left = public_or_noisy_size(src.count(), None, 0.02, epsilon, noise)
    if grid:
        e0 = 0.2 * eps_left
        init, _, _ = eugkm_fit(src, k, e0, n_est, noise, n_init=10, domain=dom,
                               grid_name="initial centres: grid cell counts")
        eps_left -= e0
    else:
        init = sphere_packing_centers(k, X.shape[1], noise.rng)
    if n_iter == "auto":
        t, count_share, _ = auto_schedule(n_est, X.shape[1], k, eps_left)
    else:
        t = n_iter
    centers = init
    for it in range(t):
        e = noise.ledger.remaining()[0] if it == t - 1 else eps_left / t
        centers = noisy_lloyd_step(src, centers, noise, epsilon=e, count_share=count_share,
                                   label=f"iteration {it + 1}", domain=dom)
    return dom.denormalize(centers), [(e.name, e.epsilon, e.delta) for e in noise.ledger]


@pytest.mark.parametrize("params, grid", [(dict(), True), (dict(init="sphere_packing"), False),
                                          (dict(n_iter=5), False)])
def test_dplloyd_is_its_start_then_the_noisy_lloyd_steps(blobs, params, grid):
    for seed in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = dpcore.ALGORITHMS["dplloyd"](3, epsilon=1.0, bounds=(-1, 1), assignment="rows", random_state=seed,
                                               **params).fit(blobs)
        assert est.init_ == ("grid" if grid else "sphere_packing")
        centers, ledger = _by_hand(blobs, seed, epsilon=1.0, n_iter=params.get("n_iter", "auto"), grid=grid)
        np.testing.assert_array_equal(est.cluster_centers_, centers)
        assert [(e.name, e.epsilon, e.delta) for e in est.budget_] == ledger


@pytest.mark.heavy
def test_every_suite_picks_up_the_variant(tmp_path):
    write_variant(tmp_path)
    assert_audited(run_suites(tmp_path, "dplloyd_random_plugin", "dplloyd_random or DPLloydRandom"), KEY)
