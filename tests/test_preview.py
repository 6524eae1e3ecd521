"""Accuracy previews from a recorded release (issue 56, point 3), checked against real draws.

A preview is computed from recorded releases only (a synopsis, its noisy size and the unit); the real
draws are fresh fits of the same setting on the data.  The preview's 80 % band must cover at least
70 % of them on the taxi sample, on Gowalla check-ins at person level and on an upload-like CSV: for
EUGkM and Hybrid on their own synopsis, and for the algorithms that release centres only (DPLloyd,
zCDP-Lloyd, DPM, ...) on the synopsis of a sanitized database drawn at a tenth of its ε (the app's
"look-alike for previews"); the old public look-alike (public bounds, k and a public size) fails the
same check.  Draws here are seeded so the test is
reproducible: they are simulations (``simulation=True``), never releases.

Coverage (mean over 3 previews of 10 real draws, k = 5, ε = 1; ``benchmarks/preview_coverage.py``,
its table in benchmarks/results/preview_coverage.txt): EUGkM 0.90 taxi, 0.97 Gowalla, 0.97 upload;
Hybrid 1.00, 0.97, 0.97; on a sanitized database at ε = 0.1: DPLloyd 1.00, 0.90, 0.77; zCDP-Lloyd
0.93, 0.87, 0.97 and DPM 0.93, 0.93, 1.00 (0.63 and 0.33 on taxi before the look-alike dropped
PrivTree leaves within noise of empty, :func:`~dpcore.evaluation.preview.floor_scales`); GkM, GkM-3K,
KMeans-Guarantee, SubClustering and Balcan 0.77 to 1.00.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from dpcore.algorithms.registry import releasable
from dpcore.datasets import upload
from dpcore.evaluation import centre_error, epsilon_for_accuracy
from dpcore.evaluation.preview import (
    ReleasePreview,
    checked_keys,
    epsilon_for_accuracy_from_release,
    lookalike_source,
    previewable,
    release_preview,
    synopsis_points,
)
from dpcore.release import build_release
from ui.data_picker import DEFAULT_MAX_CONTRIBUTIONS

GOWALLA_BOUNDS = (np.array([-74.26, 40.48]), np.array([-73.70, 40.92]))
TAXI_BOUNDS = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))
UPLOAD_BOUNDS = (np.array([-74.3, 40.45]), np.array([-73.65, 40.95]))
K, EPS = 5, 1.0
N_REAL, N_PREVIEWS = 10, 3
#: The share of a centres-only draw's ε its look-alike (a sanitized database) is drawn at (ui.accuracy).
SHARE = 0.1


def _draw(X, bounds, ids, L, seed, algorithm="eugkm", epsilon=EPS, bounding=None):
    kw = {"max_contributions": L} if L else {}
    if L and bounding:
        kw["contribution_bounding"] = bounding
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return releasable(algorithm)(n_clusters=K, epsilon=epsilon, bounds=bounds, random_state=seed, **kw).fit(
            X, **({"privacy_id": ids} if L else {}))


#: (real draws, simulated releases per preview) where the defaults' sampling noise is too large to judge by:
#: PGkM's real errors spread widely (10 taxi draws once had a 5.2 km median, 20 have 4.5 km; the previews 4.3 km).
DRAWS = {"pgkm": (20, 12)}
#: (data, algorithm) -> (real draws, simulated releases per preview, previews) for weighted person-level draws
#: whose coverage 10 draws and 3 previews cannot judge (issue 68): a weighted release carries no sampling
#: variance, and its bands cover 0.71-0.79 of real draws measured over 20-30 draws and 6 previews (EUGkM,
#: Hybrid on Gowalla; KMeans-Guarantee, DPM on the upload) where 3 previews' mean swung from 0.53 to 0.97.
PERSON_DRAWS = {("gowalla", "eugkm"): (20, 8, 6), ("gowalla", "hybrid"): (20, 8, 6),
                ("upload", "kmeans_guarantee"): (20, 8, 6), ("upload", "dpm"): (20, 8, 6)}


def _coverage(X, bounds, ids=None, L=None, algorithm="eugkm", lookalike=None, draws=None):
    """Mean share of real draws inside the previews' 80 % bands, and the real draws' errors.

    ``lookalike``: None, each preview works from its release's own synopsis; else the key of the
    algorithm whose release (a fresh draw at ``SHARE`` × ε, as the app's look-alike) supplies it.
    ``draws``: (real draws, simulated releases per preview, previews), default ``DRAWS``'s or (10, 8, 3).
    """
    with threadpool_limits(1):
        ref = KMeans(n_clusters=K, n_init=3, random_state=0).fit(X).cluster_centers_
        n_real, n_releases, n_previews = draws or (*DRAWS.get(algorithm, (N_REAL, 8)), N_PREVIEWS)
        fits = [_draw(X, bounds, ids, L, seed, algorithm) for seed in range(100, 100 + n_real)]
        real = np.array([centre_error(f.cluster_centers_, ref, geo=True, bounds=bounds) for f in fits])
        covered, medians = [], []
        for i, fit in enumerate(fits[:n_previews]):
            rel = build_release(fit, algorithm=algorithm, dataset="t", simulation=True)
            # The app's look-alike for previews is bounded as the draw (ui.accuracy.lookalike_offer).
            how = (fit.privacy_unit_ or {}).get("bounding")
            shape = None if lookalike is None else build_release(
                _draw(X, bounds, ids, L, 200 + i, lookalike, SHARE * EPS, bounding=how), algorithm=lookalike,
                dataset="t", simulation=True)
            p = release_preview(rel, lookalike=shape, geo=True, n_releases=n_releases, n_checks=2, random_state=i)
            assert isinstance(p, ReleasePreview) and p.max_contributions == L
            assert p.band[0] <= p.simulated[0] <= p.simulated[2] <= p.band[2]
            assert np.isfinite(p.uncertainty)       # the look-alike's own noise is measured, whichever release it is
            covered.append(p.covers(real).mean())
            medians.append(p.band[1])
    # A band may not cover by width alone: its median is the real draws' within a factor of two.
    assert 0.5 < np.mean(medians) / np.median(real) < 2.0, (np.mean(medians), np.median(real))
    return round(float(np.mean(covered)), 9), real      # a mean of shares of 10 draws: no float residue


def _old_coverage(real, bounds, algorithm="eugkm"):
    """The same check for the public look-alike's band (the preview before issue 56)."""
    old = epsilon_for_accuracy(algorithm, 1.0, bounds=bounds, n_clusters=K, n=10_000, geo=True, epsilons=(EPS,),
                               n_releases=5, random_state=0)
    return float(((real >= old.band[0, 0]) & (real <= old.band[0, 2])).mean())


@pytest.fixture(scope="module")
def upload_like(tmp_path_factory):
    """A 3,000-row CSV as an analyst uploads it (the size of issue 56's report): user_id, longitude, latitude."""
    rng = np.random.default_rng(1)
    centres = np.array([[-73.98, 40.75], [-73.95, 40.65], [-73.85, 40.85], [-74.1, 40.6], [-73.78, 40.7]])
    pts = centres[rng.integers(0, 5, 3000)] + rng.normal(0, 0.01, (3000, 2))
    path = tmp_path_factory.mktemp("up") / "checkins.csv"
    pd.DataFrame({"user_id": rng.integers(0, 500, 3000), "longitude": pts[:, 0], "latitude": pts[:, 1]}).to_csv(
        path, index=False)
    df = upload.read_table(str(path), filename="checkins.csv")
    return upload.dataset_from_frame(df, ["longitude", "latitude"], bounds=UPLOAD_BOUNDS, geo=True,
                                     unit_column="user_id")


@pytest.fixture(scope="module")
def taxi_sample(taxi_X):
    return taxi_X[np.random.default_rng(0).permutation(len(taxi_X))[:5000]]


@pytest.fixture(scope="module")
def gowalla_people(shared_data):
    """Check-ins of 400 Gowalla users: (X, user ids)."""
    df = pd.read_csv(shared_data / "gowalla_nyc_checkins.csv.gz", usecols=["user_id", "longitude", "latitude"])
    users = np.random.default_rng(0).permutation(df["user_id"].unique())[:400]
    df = df[df["user_id"].isin(users)]
    return df[["longitude", "latitude"]].to_numpy(float), df["user_id"].to_numpy()


#: (algorithm, look-alike): EUGkM and Hybrid on their own grid; the algorithms that release centres only on a
#: sanitized database's point synopsis.  Exactly the classes that declare preview_checked (asserted below).
SETTINGS = [("eugkm", None), ("hybrid", None)] + [(key, "sanitize") for key in (
    "dplloyd", "gkm", "gkm3k", "kmeans_guarantee", "subcluster", "balcan", "dpm", "zcdp_lloyd", "pgkm")]


def test_the_checked_algorithms_are_those_checked_here():
    """A preview says "checked against real draws" only for an algorithm these tests check on every data set."""
    assert set(checked_keys()) == {key for key, _ in SETTINGS}


@pytest.mark.parametrize("algorithm, lookalike", SETTINGS)
def test_preview_covers_real_draws_on_the_taxi_sample(taxi_sample, algorithm, lookalike):
    cov, real = _coverage(taxi_sample, TAXI_BOUNDS, algorithm=algorithm, lookalike=lookalike)
    assert cov >= 0.7, cov
    if algorithm == "eugkm":
        assert _old_coverage(real, TAXI_BOUNDS) < 0.7


@pytest.mark.parametrize("algorithm, lookalike", SETTINGS)
def test_preview_covers_real_draws_on_gowalla_at_person_level(gowalla_people, algorithm, lookalike):
    X, ids = gowalla_people
    cov, real = _coverage(X, GOWALLA_BOUNDS, ids, DEFAULT_MAX_CONTRIBUTIONS, algorithm=algorithm, lookalike=lookalike,
                          draws=PERSON_DRAWS.get(("gowalla", algorithm)))
    assert cov >= 0.7, cov
    if algorithm == "eugkm":
        assert _old_coverage(real, GOWALLA_BOUNDS) < 0.7


@pytest.mark.parametrize("algorithm, lookalike", [  # DPM's 20 draws and 6 previews on the upload: about 50 s
    pytest.param(*s, marks=pytest.mark.heavy) if PERSON_DRAWS.get(("upload", s[0])) and s[0] == "dpm" else s
    for s in SETTINGS])
def test_preview_covers_real_draws_on_an_upload(upload_like, algorithm, lookalike):
    cov, real = _coverage(upload_like.X, UPLOAD_BOUNDS, np.asarray(upload_like.units), DEFAULT_MAX_CONTRIBUTIONS,
                          algorithm=algorithm, lookalike=lookalike, draws=PERSON_DRAWS.get(("upload", algorithm)))
    assert cov >= 0.7, cov
    if algorithm in ("eugkm", "dplloyd"):
        # Issue 56's report: the look-alike said 104–176 m where the draws were kilometres off.
        assert _old_coverage(real, UPLOAD_BOUNDS, algorithm) < 0.7


def test_look_alike_points_come_from_the_synopsis_at_its_noisy_size():
    fit = _draw(np.random.default_rng(2).uniform([-74.0, 40.8], [-73.95, 40.85], (4000, 2)), TAXI_BOUNDS,
                None, None, 5)
    X, size = synopsis_points(fit.synopsis_, TAXI_BOUNDS, random_state=0)
    assert size == round(float(np.sum(fit.synopsis_.counts))) and X.shape == (size, 2)
    assert (X >= TAXI_BOUNDS[0]).all() and (X <= TAXI_BOUNDS[1]).all()
    # Most drawn points lie where the data are (the noisy grid's mass), not spread over the box.
    inside = ((X >= [-74.01, 40.79]) & (X <= [-73.94, 40.86])).all(axis=1).mean()
    assert inside > 0.8, inside


def test_person_level_previews_are_wider_than_row_level_ones(upload_like):
    X, ids = upload_like.X, np.asarray(upload_like.units)
    row = build_release(_draw(X, UPLOAD_BOUNDS, None, None, 1), algorithm="eugkm", dataset="t", simulation=True)
    person = build_release(_draw(X, UPLOAD_BOUNDS, ids, 20, 1), algorithm="eugkm", dataset="t", simulation=True)
    a = release_preview(row, geo=True, n_releases=5, n_checks=0, random_state=0)
    b = release_preview(person, geo=True, n_releases=5, n_checks=0, random_state=0)
    assert b.max_contributions == 20 and a.max_contributions is None
    assert b.simulated[1] > a.simulated[1]
    assert np.isnan(a.uncertainty) and "uncertain" not in a.sentence() and "costs no ε" in a.sentence()


def test_release_without_a_synopsis_and_bad_inputs_are_refused():
    X = np.random.default_rng(3).uniform(TAXI_BOUNDS[0], TAXI_BOUNDS[1], (2000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lloyd = releasable("dplloyd")(n_clusters=3, epsilon=1.0, bounds=TAXI_BOUNDS, random_state=0).fit(X)
    rel = build_release(lloyd, algorithm="dplloyd", dataset="t", simulation=True)
    assert not previewable(rel) and not previewable("not a release")
    with pytest.raises(ValueError, match="no grid, point or coreset synopsis"):
        release_preview(rel)
    good = build_release(_draw(X, TAXI_BOUNDS, None, None, 0), algorithm="eugkm", dataset="t", simulation=True)
    assert previewable(good)
    with pytest.raises(ValueError, match="no grid, point or coreset synopsis"):
        release_preview(good, lookalike=rel)
    other = build_release(_draw(X, (TAXI_BOUNDS[0] - 0.1, TAXI_BOUNDS[1]), None, None, 0), algorithm="eugkm",
                          dataset="t", simulation=True)
    with pytest.raises(ValueError, match="other public bounds"):
        release_preview(rel, lookalike=other)
    with pytest.raises(ValueError, match="positive"):
        release_preview(good, epsilon=0.0)
    with pytest.raises(ValueError, match="positive"):
        epsilon_for_accuracy_from_release(good, -1.0)
    with pytest.raises(TypeError):
        release_preview(42)


def test_a_centres_only_release_is_previewed_on_the_best_recorded_synopsis_of_the_same_data(upload_like):
    """lookalike_source: the release's own synopsis, else the largest-ε one of the same bounds and unit."""
    X, ids, L = upload_like.X, np.asarray(upload_like.units), DEFAULT_MAX_CONTRIBUTIONS
    lloyd = {"release": build_release(_draw(X, UPLOAD_BOUNDS, ids, L, 0, "dplloyd"), algorithm="dplloyd",
                                      dataset="t", simulation=True)}
    san = [build_release(_draw(X, UPLOAD_BOUNDS, ids, L, s, "sanitize", e), algorithm="sanitize", dataset="t",
                         simulation=True) for s, e in ((1, 0.1), (2, 0.3))]
    row_level = build_release(_draw(X, UPLOAD_BOUNDS, None, None, 3, "eugkm", 2.0), algorithm="eugkm",
                              dataset="t", simulation=True)
    wide = build_release(_draw(X, (UPLOAD_BOUNDS[0] - 1, UPLOAD_BOUNDS[1]), ids, L, 4, "eugkm", 2.0),
                         algorithm="eugkm", dataset="t", simulation=True)
    assert lookalike_source(lloyd["release"], [row_level, wide]) is None     # other unit, other bounds
    best = lookalike_source(lloyd["release"], [row_level, san[0], wide, san[1]])
    assert best is not None and best.release is san[1]
    # A sanitized database before a grid of larger ε: previews are checked on its synopsis.
    grid = build_release(_draw(X, UPLOAD_BOUNDS, ids, L, 6, "eugkm", 2.0), algorithm="eugkm", dataset="t",
                         simulation=True)
    assert lookalike_source(lloyd["release"], [grid, san[0]]).release is san[0]
    assert lookalike_source(lloyd["release"], [grid]).release is grid
    own = build_release(_draw(X, UPLOAD_BOUNDS, ids, L, 5), algorithm="eugkm", dataset="t", simulation=True)
    assert lookalike_source(own, san).release is own
    p = release_preview(lloyd["release"], lookalike=best, geo=True, n_releases=4, n_checks=1, random_state=0)
    said = p.sentence()
    assert "setting (DPLloyd)" in said and "sanitized database at ε = 0.3" in said and "costs no ε" in said, said
    assert p.max_contributions == L and np.isfinite(p.band).all()
    # The same through Compare's question: the answer names both releases.
    ans = epsilon_for_accuracy_from_release(lloyd["release"], 50_000.0, lookalike=best, geo=True, epsilons=(1.0,),
                                            n_releases=3, random_state=0)
    assert ans.epsilon == 1.0 and "sanitized database" in ans.source


def test_a_look_alike_is_matched_on_the_value_of_L_before_its_kind_and_its_epsilon():
    """Three candidates: a sanitized database at another L (the largest ε), a grid at the same L and a
    sanitized database at the same L.  Same L first, then a sanitized database, then the largest ε."""
    X = np.random.default_rng(9).normal([-74.0, 40.8], 0.02, (2000, 2)).clip(TAXI_BOUNDS[0], TAXI_BOUNDS[1])
    ids = np.arange(2000) // 8

    def rel(key, L, e, seed):
        return build_release(_draw(X, TAXI_BOUNDS, ids, L, seed, key, e), algorithm=key, dataset="t", simulation=True)
    lloyd = rel("dplloyd", 5, 1.0, 0)
    other_L, grid_L, san_L = rel("sanitize", 10, 0.5, 1), rel("eugkm", 5, 0.2, 2), rel("sanitize", 5, 0.1, 3)
    assert lookalike_source(lloyd, [other_L, grid_L, san_L]).release is san_L
    assert lookalike_source(lloyd, [other_L, grid_L]).release is grid_L        # same L before sanitized
    assert lookalike_source(lloyd, [other_L]).release is other_L               # another L only as a last resort
    # A setting not drawn yet (the curve): the page's L.
    pick = lambda L: lookalike_source(None, [other_L, grid_L, san_L], bounds=TAXI_BOUNDS, person_level=True,  # noqa: E731
                                      max_contributions=L).release
    assert pick(5) is san_L and pick(10) is other_L and pick(None) is other_L  # no L given: ε decides among sanitized


def test_a_look_alike_is_matched_on_the_bounding_after_L_and_simulates_as_the_draw_bounds():
    """Issue 68: a sampled draw (Balcan samples only) prefers a sampled look-alike, a weighted one a weighted
    look-alike, before the kind and ε; and the preview's simulated releases bound as the draw did."""
    X = np.random.default_rng(9).normal([-74.0, 40.8], 0.02, (2000, 2)).clip(TAXI_BOUNDS[0], TAXI_BOUNDS[1])
    ids = np.arange(2000) // 8

    def rel(key, e, seed, how):
        return build_release(_draw(X, TAXI_BOUNDS, ids, 5, seed, key, e, bounding=how), algorithm=key, dataset="t",
                             simulation=True)
    weighted_grid, weighted_san = rel("eugkm", 1.0, 1, "weight"), rel("sanitize", 0.5, 2, "weight")
    sampled_san = rel("sanitize", 0.1, 3, "sample")
    sampled, weighted = rel("dplloyd", 1.0, 0, "sample"), rel("dplloyd", 1.0, 4, "weight")
    assert lookalike_source(sampled, [weighted_grid, weighted_san, sampled_san]).release is sampled_san
    assert lookalike_source(weighted, [weighted_grid, weighted_san, sampled_san]).release is weighted_san
    pick = lambda how: lookalike_source(None, [weighted_san, sampled_san], bounds=TAXI_BOUNDS,  # noqa: E731
                                        person_level=True, max_contributions=5, bounding=how).release
    assert pick("sample") is sampled_san and pick("weight") is weighted_san
    seen = []
    real_fit = releasable("dplloyd").fit

    def spy(self, *a, **kw):
        seen.append(self.contribution_bounding)
        return real_fit(self, *a, **kw)
    import unittest.mock
    with unittest.mock.patch.object(releasable("dplloyd"), "fit", spy):
        for draw in (sampled, weighted):
            release_preview(draw, lookalike=sampled_san, geo=True, n_releases=2, n_checks=0, random_state=0)
    assert seen == ["sample"] * 2 + ["weight"] * 2


def test_epsilon_for_accuracy_from_a_release_answers_on_the_release_and_never_nan():
    X = np.random.default_rng(4).uniform(TAXI_BOUNDS[0], TAXI_BOUNDS[1], (3000, 2))
    rel = build_release(_draw(X, TAXI_BOUNDS, None, None, 0), algorithm="eugkm", dataset="t", simulation=True)
    ans = epsilon_for_accuracy_from_release(rel, 1.0, geo=True, epsilons=(0.5, 5.0), n_releases=3, random_state=0)
    assert ans.epsilon is None and "No ε up to 5" in ans.sentence() and "release" in ans.source
    assert np.isfinite(ans.band).all() and ans.band[1, 1] < ans.band[0, 1]


def test_the_accuracy_chart_draws_only_finite_bands_and_nothing_when_there_are_none():
    """Issue 56: a log y-axis of "1, 10^52 … NaN×10^Infinity" under a NaN band; now words say it instead."""
    from dpcore.evaluation import AccuracyAnswer
    from ui.charts import accuracy_figure
    eps = np.array([0.5, 1.0, 5.0])
    none = AccuracyAnswer(None, 300.0, "m", eps, np.full((3, 3), np.nan), np.zeros(3), 0.9, 5, "r")
    assert accuracy_figure(none) is None and "No ε up to 5" in none.sentence()
    band = np.array([[np.nan] * 3, [np.inf, 1.0, 2.0], [100.0, 200.0, 400.0]])
    fig = accuracy_figure(AccuracyAnswer(None, 300.0, "m", eps, band, np.zeros(3), 0.9, 5, "r"))
    xs = np.concatenate([np.asarray(t.x, dtype=float) for t in fig.data if t.x is not None])
    assert set(xs) == {5.0}                                    # only the finite ε is drawn
    lo, hi = fig.layout.yaxis.range
    assert np.isfinite([lo, hi]).all() and lo < np.log10(100.0) and hi > np.log10(400.0)


def test_a_person_level_curve_on_look_alike_points_is_noisier_than_a_row_level_one():
    """compare_curves(max_contributions=L): persons of L consecutive rows, so every noise is the person's."""
    from dpcore.evaluation import compare_curves
    X = np.random.default_rng(6).normal([-74.0, 40.8], 0.02, (3000, 2)).clip(TAXI_BOUNDS[0], TAXI_BOUNDS[1])
    kw = dict(epsilons=[1.0], n_seeds=6, n_clusters=3, random_state=0)
    row = compare_curves(X, TAXI_BOUNDS, ["dplloyd"], **kw)[0]
    person = compare_curves(X, TAXI_BOUNDS, ["dplloyd"], max_contributions=10, **kw)[0]
    assert np.median(person.values) > np.median(row.values) > 1.0
    with pytest.raises(ValueError, match="at least 1"):
        compare_curves(X, TAXI_BOUNDS, ["dplloyd"], max_contributions=0, **kw)


def test_the_owners_curve_on_gowalla_bounds_the_real_persons_as_a_person_level_draw_does(gowalla_people,
                                                                                         monkeypatch):
    """compare_curves(privacy_id=, max_contributions=L): the data's own persons, bounded to L rows each.

    Issue 56: the owner's curve on the raw data was row level, so the owner read an ε too small for
    person-level privacy.  At person level every noise scale grows with L, so the error at a fixed ε is
    larger; and every simulated release's ledger records sensitivities of a person's L rows.
    """
    from dpcore.algorithms.registry import ALGORITHMS
    from dpcore.evaluation import compare_curves
    X, ids = gowalla_people
    L = DEFAULT_MAX_CONTRIBUTIONS
    cls = ALGORITHMS["dplloyd"]
    fits, fit = [], cls.fit

    def spy(self, X, *a, **kw):
        fits.append((self, kw.get("privacy_id")))
        return fit(self, X, *a, **kw)

    monkeypatch.setattr(cls, "fit", spy)
    kw = dict(epsilons=[0.5], n_seeds=6, n_clusters=K, random_state=0)
    row = compare_curves(X, GOWALLA_BOUNDS, ["dplloyd"], **kw)[0]
    n_row = len(fits)
    person = compare_curves(X, GOWALLA_BOUNDS, ["dplloyd"], max_contributions=L, privacy_id=ids, **kw)[0]
    assert np.median(person.values) > np.median(row.values) > 1.0, (person.values, row.values)
    assert all(est.privacy_unit_ is None or not est.privacy_unit_ for est, _ in fits[:n_row])
    for est, given in fits[n_row:]:
        assert given is ids                                          # the real persons, not fabricated ones
        assert est.privacy_unit_["max_contributions"] == L
        assert est.privacy_unit_["bounding"] == "weight"             # as a draw bounds by default (issue 68)
        sens = {e.sensitivity for e in est.budget_ if e.name.endswith("counts")}
        # a person's L rows, not one row (weighted counts: plus what rounding onto their lattice adds)
        assert sens and all(L <= s <= L * (1 + 2 ** -7) for s in sens), sens
    with pytest.raises(ValueError, match="needs max_contributions"):
        compare_curves(X, GOWALLA_BOUNDS, ["dplloyd"], privacy_id=ids, **kw)
    with pytest.raises(ValueError, match="one id per row"):
        compare_curves(X, GOWALLA_BOUNDS, ["dplloyd"], max_contributions=L, privacy_id=ids[:-1], **kw)


def test_the_owners_accuracy_answer_on_gowalla_is_person_level(gowalla_people):
    """epsilon_for_accuracy(X=raw, privacy_id=): the real persons bounded to L, so a larger error at the same ε."""
    X, ids = gowalla_people
    L = DEFAULT_MAX_CONTRIBUTIONS
    kw = dict(bounds=GOWALLA_BOUNDS, n_clusters=K, X=X, geo=True, epsilons=(0.5,), n_releases=5, random_state=0)
    row = epsilon_for_accuracy("dplloyd", 1000.0, **kw)
    person = epsilon_for_accuracy("dplloyd", 1000.0, params={"max_contributions": L}, privacy_id=ids, **kw)
    assert person.band[0, 1] > row.band[0, 1], (person.band, row.band)
    with pytest.raises(ValueError, match="max_contributions"):
        epsilon_for_accuracy("dplloyd", 1000.0, privacy_id=ids, **kw)
    with pytest.raises(ValueError, match="one id per row"):
        epsilon_for_accuracy("dplloyd", 1000.0, params={"max_contributions": L}, privacy_id=ids[1:], **kw)


def test_the_apps_accuracy_answer_on_raw_data_takes_the_upload_s_person_column(upload_like):
    """ui.accuracy.error_setting (the one setting behind the Explorer's band and Compare's answer): the page's unit
    (person level by default, L) in its parameters, and the data set's own person ids with the rows it simulates on."""
    from ui import accuracy
    setting, points = accuracy.error_setting(upload_like, "fp-spy", "dplloyd", K, {})
    assert dict(setting.params)["max_contributions"] == DEFAULT_MAX_CONTRIBUTIONS
    X, ids, reference = points()
    assert X is upload_like.X and np.array_equal(np.asarray(ids), np.asarray(upload_like.units))
    assert reference.shape == (K, X.shape[1])         # the map's k-means reference, on all rows


def test_the_apps_curve_on_raw_data_is_simulated_on_the_upload_s_person_column(upload_like, monkeypatch):
    """ui.curves.utility_curves without a look-alike: the page's unit (person level by default, L) and the
    data set's own person ids reach compare_curves."""
    from ui import curves
    seen = {}

    def spy(*a, **kw):
        seen.update(kw)
        return []                 # nothing measured: a cancelled curve, never cached
    monkeypatch.setattr(curves, "_compute", spy)
    curves.utility_curves(upload_like, "fp", ["dplloyd"], epsilons=[0.5], n_seeds=2, n_clusters=K)
    assert seen["max_contributions"] == DEFAULT_MAX_CONTRIBUTIONS
    assert np.array_equal(np.asarray(seen["privacy_id"]), np.asarray(upload_like.units))


def test_a_look_alike_for_a_setting_not_drawn_yet_matches_its_bounds_and_unit():
    X = np.random.default_rng(7).uniform(TAXI_BOUNDS[0], TAXI_BOUNDS[1], (2000, 2))
    ids = np.arange(2000) // 4
    rels = [build_release(_draw(X, TAXI_BOUNDS, ids if L else None, L, s, "eugkm", e), algorithm="eugkm",
                          dataset="t", simulation=True) for s, (L, e) in enumerate(((None, 0.5), (None, 2.0), (5, 1.0)))]
    row = lookalike_source(None, rels, bounds=TAXI_BOUNDS, person_level=False)
    person = lookalike_source(None, rels, bounds=TAXI_BOUNDS, person_level=True)
    assert row.release is rels[1] and person.release is rels[2]
    assert lookalike_source(None, rels, bounds=(TAXI_BOUNDS[0], TAXI_BOUNDS[1] + 1), person_level=False) is None
    assert lookalike_source(None, rels, bounds=(np.zeros(3), np.ones(3)), person_level=False) is None
    with pytest.raises(ValueError, match="bounds and the unit"):
        lookalike_source(None, rels)


def test_a_preview_of_an_algorithm_not_checked_against_real_draws_says_so():
    X = np.random.default_rng(8).normal([-74.0, 40.8], 0.02, (3000, 2)).clip(TAXI_BOUNDS[0], TAXI_BOUNDS[1])
    shape = build_release(_draw(X, TAXI_BOUNDS, None, None, 1, "sanitize", 0.5), algorithm="sanitize", dataset="t",
                          simulation=True)
    said = {}
    # Auto is not checked: on the upload its previews covered 53 % of real draws (dpcore.evaluation.preview.checked_keys
    # says why; benchmarks/results/preview_coverage.txt).
    for key in ("dpm", "auto"):
        rel = build_release(_draw(X, TAXI_BOUNDS, None, None, 2, key), algorithm=key, dataset="t", simulation=True)
        p = release_preview(rel, lookalike=shape, geo=True, n_releases=3, n_checks=0, random_state=0)
        said[key] = (p.checked, p.sentence())
    assert said["dpm"][0] and "not checked" not in said["dpm"][1]
    assert not said["auto"][0] and "not checked against real draws yet" in said["auto"][1]
    assert "DPM" in said["auto"][1] and "zCDP-Lloyd" in said["auto"][1] and "(separation)" not in said["auto"][1]
    # A checked algorithm on another kind of look-alike (an EUGkM grid) is not called checked: DPM's previews
    # there covered 60 % of real draws on the taxi sample.
    grid = build_release(_draw(X, TAXI_BOUNDS, None, None, 3, "eugkm"), algorithm="eugkm", dataset="t", simulation=True)
    rel = build_release(_draw(X, TAXI_BOUNDS, None, None, 2, "dpm"), algorithm="dpm", dataset="t", simulation=True)
    p = release_preview(rel, lookalike=grid, geo=True, n_releases=3, n_checks=0, random_state=0)
    assert not p.checked and "not checked against real draws yet" in p.sentence()
    assert release_preview(grid, geo=True, n_releases=3, n_checks=0, random_state=0).checked
