"""People, not rows (issue 23): a privacy unit with bounded contributions, in memory and in every engine."""
from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore import sources
from dpcore.release import build_release, validate_release
from dpcore.sources import ArraySource
from dpcore.sources.sampling import sampled
from dpcore.utils.contributions import (
    WEIGHT_BITS,
    contribution_weights,
    sample_mask,
    unit_codes,
)
from dpcore.utils.domain import check_bounds

BOUNDS = (np.array([0.0, 0.0]), np.array([1.0, 1.0]))


def _people(n_units=300, seed=0):
    """Units with very unequal numbers of rows (1 to 400), some rows repeated exactly, some outside the box."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.zipf(1.6, n_units), 400)
    ids = np.repeat(np.arange(n_units), sizes)
    homes = rng.uniform(0, 1, size=(n_units, 2))
    X = homes[ids] + rng.normal(0, 0.03, size=(ids.size, 2))
    X[::17] = X[::17][:, ::-1]                 # identical rows within a unit happen
    X[5] = [1.2, -0.1]                         # outside the box: clipped, still hashed the same everywhere
    return X, ids


def test_sampling_keeps_at_most_L_rows_per_unit_and_is_keyed():
    X, ids = _people()
    dom = check_bounds(BOUNDS, d=2)
    Xc, _ = dom.clip(X)
    codes, n_units = unit_codes(ids)
    keep = sample_mask(Xc, codes, 5, dom, key=12345)
    per = np.bincount(codes[keep], minlength=n_units)
    assert per.max() == 5 and np.array_equal(per, np.minimum(np.bincount(codes), 5))
    other = sample_mask(Xc, codes, 5, dom, key=999)
    assert not np.array_equal(keep, other)                      # another key keeps other rows
    np.testing.assert_array_equal(keep, sample_mask(Xc, codes, 5, dom, key=12345))


def test_weights_sum_to_at_most_L_per_unit():
    _, ids = _people()
    codes, _ = unit_codes(ids)
    for L in (1, 3, 50):
        w = contribution_weights(codes, L)
        per = np.bincount(codes, weights=w)
        assert per.max() <= L * 2 ** WEIGHT_BITS
        small = np.bincount(codes) <= L                           # units within the bound keep weight 1
        assert np.all(per[small] == np.bincount(codes)[small] * 2 ** WEIGHT_BITS)


def _check_same(a, b, dom):
    np.testing.assert_array_equal(a.grid_counts(dom, (7, 5)), b.grid_counts(dom, (7, 5)))
    C = np.array([[-0.5, 0.2], [0.4, -0.3], [0.1, 0.8]])
    ca, sa = a.cluster_sums(C, dom)
    cb, sb = b.cluster_sums(C, dom)
    np.testing.assert_array_equal(ca, cb)
    assert [int(v) for v in sa.q.ravel()] == [int(v) for v in sb.q.ravel()]
    assert a.count() == b.count()


@pytest.fixture(scope="module")
def people_parquet(tmp_path_factory):
    X, ids = _people()
    path = tmp_path_factory.mktemp("people") / "people.parquet"
    pd.DataFrame({"x": X[:, 0], "y": X[:, 1], "user": ids.astype(str)}).to_parquet(path)
    return X, ids, path


def _in_memory(X, ids, L, key):
    dom = check_bounds(BOUNDS, d=2)
    Xc, _ = dom.clip(X)
    codes, _ = unit_codes(ids.astype(str))
    return ArraySource(X[sample_mask(Xc, codes, L, dom, key)]), dom


def _engine_source(engine, path, request, name):
    """The people of ``path`` on one engine (DuckDB file, Spark local[2], the throwaway PostgreSQL)."""
    if engine == "duckdb":
        return sources.from_files(path, columns=["x", "y"])
    if engine == "spark":
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            if os.environ.get("CI"):
                pytest.fail("no Java in CI")
            pytest.skip("no Java")
        spark = sources.spark_session("local[2]", conf={"spark.ui.showConsoleProgress": "false",
                                                        "spark.sql.shuffle.partitions": "2"})
        return sources.from_spark(spark.read.parquet(str(path)), columns=["x", "y"])
    import ibis
    url = request.getfixturevalue("pg_server").new_database(name)
    con = ibis.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    con.create_table("checkins", pd.read_parquet(path), overwrite=True)
    return sources.from_table(url, "checkins", columns=["x", "y"])


@pytest.mark.parametrize("engine", ["duckdb", "spark", "postgres"])
def test_engines_bound_exactly_as_the_in_memory_path(engine, people_parquet, request):
    X, ids, path = people_parquet
    key, L = 1_234_567, 4
    ref, dom = _in_memory(X, ids, L, key)
    src = _engine_source(engine, path, request, "units")
    _check_same(ref, sampled(src, "user", L, key, dom), dom)


def _check_same_weighted(a, b, dom):
    """Weighted aggregates: the same fixed-point integers (numerators and bits)."""
    for x, y in [(a.grid_counts(dom, (7, 5)), b.grid_counts(dom, (7, 5))), (a.count(), b.count())]:
        assert x.bits == y.bits and np.array_equal(np.asarray(x.q, dtype=np.int64), np.asarray(y.q, dtype=np.int64))
    C = np.array([[-0.5, 0.2], [0.4, -0.3], [0.1, 0.8]])
    (ca, sa), (cb, sb) = a.cluster_sums(C, dom), b.cluster_sums(C, dom)
    assert (ca.bits, sa.bits) == (cb.bits, sb.bits)
    assert [int(v) for v in ca.q.ravel()] == [int(v) for v in cb.q.ravel()]
    assert [int(v) for v in sa.q.ravel()] == [int(v) for v in sb.q.ravel()]
    assert a.inertia(C, dom) == pytest.approx(b.inertia(C, dom), rel=1e-9)


@pytest.mark.parametrize("engine", ["duckdb", "spark", "postgres"])
def test_engines_weight_exactly_as_the_in_memory_path(engine, people_parquet, request):
    """contribution_bounding='weight' where the data live: the same integer weights min(1, L/m) 2^B and sums."""
    from dpcore.sources.memory import WeightedArraySource
    from dpcore.sources.weighting import weighted
    X, ids, path = people_parquet
    L = 4
    dom = check_bounds(BOUNDS, d=2)
    codes, _ = unit_codes(ids.astype(str))
    ref = WeightedArraySource(X, contribution_weights(codes, L), weight_bits=WEIGHT_BITS)
    src = weighted(_engine_source(engine, path, request, "weights"), "user", L)
    _check_same_weighted(ref, src, dom)
    assert int(src.count().q) <= L * 2 ** WEIGHT_BITS * np.unique(ids).size


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_a_fit_on_a_source_equals_the_fit_in_memory(people_parquet, bounding):
    """Same seed, same key (or weights): DuckDB keeps the same rows, so the simulated releases are bit-identical."""
    X, ids, path = people_parquet
    make = lambda: dpcore.ALGORITHMS["dplloyd"](n_clusters=3, epsilon=1.0, bounds=BOUNDS, max_contributions=3,  # noqa: E731
                                                random_state=5, contribution_bounding=bounding)
    a = make().fit(X, privacy_id=ids.astype(str))
    b = make().fit(sources.from_files(path, columns=["x", "y"]), privacy_id="user")
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


@pytest.mark.parametrize("bounding", ["weight", "sample"])
def test_the_sanitized_database_on_a_source_equals_the_one_in_memory(people_parquet, bounding):
    """The synopsis reads a source once (issue 66) but a weighted source keeps its weighted histogram: the same
    seed gives the same points and weights on DuckDB as on the array (an unweighted one-pass profile would not)."""
    from dpcore.algorithms import Sanitizer
    X, ids, path = people_parquet
    make = lambda: Sanitizer(epsilon=1.0, bounds=BOUNDS, max_contributions=3, random_state=5,  # noqa: E731
                             contribution_bounding=bounding)
    a = make().fit(X, privacy_id=ids.astype(str))
    b = make().fit(sources.from_files(path, columns=["x", "y"]), privacy_id="user")
    np.testing.assert_array_equal(a.synopsis_.points, b.synopsis_.points)
    np.testing.assert_array_equal(a.synopsis_.weights, b.synopsis_.weights)


def _unit_kwargs(key: str) -> dict:
    """Fast, valid parameters of one private registry key for the unit tests."""
    cls = dpcore.ALGORITHMS[key]
    kw = dict(epsilon=50.0 if key == "coreset" else 1.0, bounds=BOUNDS, random_state=0)
    if "n_clusters" in cls().get_params():
        kw["n_clusters"] = 2
    if cls.needs_delta:
        kw["delta"] = 1e-3 if key == "balcan" else 1e-6
    if key == "coreset":
        kw.update(n_samples=50_000, n_init=1)
    if key.startswith("priv"):
        kw["num_grid"] = 16
    return kw


@pytest.mark.parametrize("key", sorted(k for k, c in dpcore.ALGORITHMS.items() if c.private))
def test_every_private_estimator_scales_its_sensitivities_by_L(key):
    X, ids = _people(120, seed=1)
    cls = dpcore.ALGORITHMS[key]
    kw = _unit_kwargs(key)
    row = cls(**kw).fit(X)
    unit = cls(**kw, max_contributions=7).fit(X, privacy_id=ids)
    # the class's default bounding: weighting where it can weight (issue 68), else sampling
    assert unit.privacy_unit_ == {"unit": "privacy_id", "max_contributions": 7,
                                  "bounding": "weight" if cls.supports_weighting else "sample"}
    assert unit.budget_.privacy_unit == unit.privacy_unit_
    # The same steps (by name; a noisy size may change how many iterations run) at 7 times the sensitivity,
    # up to what rounding onto the release lattice adds.  (The coreset's steps are composite: their inner
    # draws spend on child sources, which inherit the factor.)
    rs = {e.name: e.sensitivity for e in row.budget_ if e.sensitivity is not None}
    us = {e.name: e.sensitivity for e in unit.budget_ if e.sensitivity is not None}
    common = set(rs) & set(us)
    assert common or key == "coreset"
    for name in common:
        r, u = rs[name], us[name]
        assert 7 * r * (1 - 2 ** -9) <= u <= 7 * r * (1 + 2 ** -8), (key, name, r, u)
    rel = build_release(unit, algorithm=key, simulation=True)
    validate_release(rel)
    assert rel["privacy_unit"]["person_level"] and rel["privacy_unit"]["max_contributions"] == 7


def test_unit_parameters_are_checked_with_sentences():
    X, ids = _people(50)
    cls = dpcore.ALGORITHMS["eugkm"]
    with pytest.raises(ValueError, match="pass fit\\(X, privacy_id=ids\\)"):
        cls(3, epsilon=1.0, bounds=BOUNDS, max_contributions=5).fit(X)
    with pytest.raises(ValueError, match="set max_contributions=L"):
        cls(3, epsilon=1.0, bounds=BOUNDS).fit(X, privacy_id=ids)
    with pytest.raises(ValueError, match="one unit id per row"):
        cls(3, epsilon=1.0, bounds=BOUNDS, max_contributions=5).fit(X, privacy_id=ids[:-1])
    with pytest.raises(ValueError, match="whole number of rows >= 1"):
        cls(3, epsilon=1.0, bounds=BOUNDS, max_contributions=0).fit(X, privacy_id=ids)
    with pytest.raises(ValueError, match="missing values"):
        cls(3, epsilon=1.0, bounds=BOUNDS, max_contributions=5).fit(X, privacy_id=np.where(ids > 3, ids, np.nan))


@pytest.mark.parametrize("key", sorted(k for k, c in dpcore.ALGORITHMS.items() if c.private))
def test_weighting_has_the_sensitivity_of_sampling_or_is_refused_with_its_reason(key):
    """Every private estimator: weighting calibrates every step as L sampled rows (the same sensitivities, up
    to the finer lattice's rounding), records the rule, keeps no per-row weights; or refuses with its reason."""
    X, ids = _people(120, seed=2)
    cls = dpcore.ALGORITHMS[key]
    kw = _unit_kwargs(key)
    if not cls.supports_weighting:
        with pytest.raises(TypeError, match=re.escape(f"supports contribution_bounding='sample' only: {cls.weighting_refusal}")):
            cls(**kw, max_contributions=4, contribution_bounding="weight").fit(X, privacy_id=ids)
        return
    sampled = cls(**kw, max_contributions=4, contribution_bounding="sample").fit(X, privacy_id=ids)
    weighted = cls(**kw, max_contributions=4, contribution_bounding="weight").fit(X, privacy_id=ids)
    assert weighted.privacy_unit_ == {"unit": "privacy_id", "max_contributions": 4, "bounding": "weight"}
    assert "_row_weights" not in vars(weighted)
    ss = {e.name: e.sensitivity for e in sampled.budget_ if e.sensitivity is not None}
    ws = {e.name: e.sensitivity for e in weighted.budget_ if e.sensitivity is not None}
    common = set(ss) & set(ws)
    assert common
    for name in common:
        assert ss[name] * (1 - 2 ** -8) <= ws[name] <= ss[name] * (1 + 2 ** -7), (key, name, ss[name], ws[name])
    assert weighted.budget_.total()[0] == pytest.approx(sampled.budget_.total()[0])


def test_max_contributions_chosen_privately_from_gowalla_users(shared_data):
    """L as a DP quantile of check-ins per user: near the true quantile, one spend of epsilon, errors."""
    from dpcore.privacy.units import choose_max_contributions
    ids = pd.read_csv(shared_data / "gowalla_nyc_checkins.csv.gz", usecols=["user_id"])["user_id"].to_numpy()
    per_user = np.bincount(np.unique(ids, return_inverse=True)[1])
    true_q = np.quantile(per_user, 0.9)
    chosen = [choose_max_contributions(ids, epsilon=0.1, quantile=0.9, upper=2000) for _ in range(5)]
    for c in chosen:
        # 7,115 users: at epsilon = 0.1 the rank error is a few dozen users, i.e. within the 85-95th percentiles
        assert np.quantile(per_user, 0.85) <= c.max_contributions <= np.quantile(per_user, 0.95) + 1, (
            c.max_contributions, true_q)
        assert c.budget.spent_epsilon == pytest.approx(0.1)
        assert c.budget.privacy_unit["max_contributions"] == 1
    with pytest.raises(ValueError, match="epsilon"):
        choose_max_contributions(ids, epsilon=0)
    with pytest.raises(ValueError, match="quantile"):
        choose_max_contributions(ids, epsilon=1, quantile=1.5)
    with pytest.raises(ValueError, match="no rows"):
        choose_max_contributions(np.array([], dtype=np.int64), epsilon=1)


def test_the_advice_and_the_regime_rule_see_the_unit():
    """With L rows per unit every sensitivity is L times larger: advice and regime checks use epsilon / L."""
    from dpcore.evaluation import advise
    a, b = advise(20_000, 2, 5, 1.0, max_contributions=10), advise(20_000, 2, 5, 0.1)
    assert a.best == b.best and a.mse == pytest.approx(b.mse)
    with pytest.raises(ValueError, match="max_contributions"):
        advise(20_000, 2, 5, 1.0, max_contributions=0)
    X, ids = _people(n_units=200)
    row = dpcore.ALGORITHMS["dplloyd"](n_clusters=3, epsilon=1.0, bounds=BOUNDS).fit(X)
    unit = dpcore.ALGORITHMS["dplloyd"](n_clusters=3, epsilon=1.0, bounds=BOUNDS, max_contributions=50).fit(
        X, privacy_id=ids)
    # the same public inputs, but the unit-level fit's rule is asked at epsilon / 50: a worse verdict or reason
    assert unit.regime_.reason != row.regime_.reason


def test_every_estimator_weights_by_default_where_it_can():
    """Issue 68: weighting is the default bounding of every estimator (and sanitize) whose mechanisms are sums
    over rows; the others sample by default and say why they cannot weight."""
    import inspect

    from dpcore.algorithms.registry import DEFAULT_BOUNDING, RELEASE_KINDS, bounding_for
    assert DEFAULT_BOUNDING == "weight"
    for key, cls in RELEASE_KINDS.items():
        if not cls.private:
            continue
        default = cls().get_params()["contribution_bounding"]
        assert default == ("weight" if cls.supports_weighting else "sample"), key
        assert bounding_for(key) == default and bounding_for(cls, "sample") == "sample"
        assert cls.supports_weighting or cls.weighting_refusal and "contribution_bounding" in (cls.__doc__ or "")
    assert inspect.signature(dpcore.sanitize).parameters["contribution_bounding"].default == "weight"
    with pytest.raises(ValueError, match="'weight' or 'sample'"):
        bounding_for("eugkm", "both")


def test_the_app_runs_weighting_where_the_algorithm_can_and_says_when_it_samples(monkeypatch):
    """The page's bounding (weighting by default) reaches the estimators that can weight; one that can only sample
    gets sampling and a sentence with its reason (ui.data_picker.unit_params, bounding_note)."""
    from types import SimpleNamespace

    import streamlit as st

    from ui import data_picker
    monkeypatch.setattr(st, "session_state", {})
    ds = SimpleNamespace(units=np.arange(10), unit_column="user_id")
    assert data_picker.unit_params(ds) == {"max_contributions": data_picker.DEFAULT_MAX_CONTRIBUTIONS,
                                           "contribution_bounding": "weight"}
    assert data_picker.unit_params(ds, "eugkm")["contribution_bounding"] == "weight"
    assert data_picker.unit_params(ds, "privthr")["contribution_bounding"] == "sample"
    assert data_picker.bounding_note(ds, "eugkm") is None
    note = data_picker.bounding_note(ds, "privthr")
    assert note and dpcore.ALGORITHMS["privthr"].weighting_refusal in note
    st.session_state["contribution_bounding"] = "sample"
    assert data_picker.bounding_note(ds, "privthr") is None
    assert data_picker.unit_params(ds, "eugkm")["contribution_bounding"] == "sample"
    assert next(iter(data_picker.BOUNDINGS)) == "weight"         # the select box opens on the default
