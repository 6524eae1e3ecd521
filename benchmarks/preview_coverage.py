"""How often a release preview's 80 % band covers real draws, per algorithm and data set (issue 56, point 3).

A preview (:func:`dpcore.evaluation.release_preview`) is computed from recorded releases only; here
the "recorded" releases are seeded simulations (``simulation=True``), and the real draws are fresh
fits of the same setting on the data.  For each (algorithm, data set): ``N_REAL`` real draws at
k = 5, ε = 1; ``N_PREVIEWS`` previews, each from one of the draws and a look-alike (the draw's own
synopsis when it has one, else a sanitized database drawn at ``SHARE`` of ε, as the app's
"look-alike for previews"); coverage = the mean share of real draws inside each preview's band.
It prints the real draws' 10-50-90 % quantiles and the previews' mean band beside the coverage, so a
miss shows its direction.  tests/test_preview.py checks the algorithms that reach 0.7 (their classes declare ``preview_checked``).

Run: ``DPCORE_DATA=/work/shared/data python3 -m benchmarks.preview_coverage [algorithm ...]``
(``--data taxi,gowalla,upload``, ``--share 0.1``, ``--lookalike sanitize``, ``--real 10``, ``--previews 3``,
``--releases 8``, ``--force-lookalike``).
Results: benchmarks/results/preview_coverage.txt.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from benchmarks._common import TAXI_BOUNDS, data_dir, taxi_points
from dpcore.algorithms.registry import releasable
from dpcore.evaluation import centre_error
from dpcore.evaluation.preview import previewable, release_preview
from dpcore.exceptions import InfeasibleBudgetError
from dpcore.release import build_release

K, EPS = 5, 1.0
GOWALLA_BOUNDS = (np.array([-74.26, 40.48]), np.array([-73.70, 40.92]))
UPLOAD_BOUNDS = (np.array([-74.3, 40.45]), np.array([-73.65, 40.95]))
#: ui.data_picker.DEFAULT_MAX_CONTRIBUTIONS (not imported: benchmarks stay below the app).
L_PERSON = 5
ALL = ("eugkm", "hybrid", "dplloyd", "gkm", "gkm3k", "pgkm", "kmeans_guarantee", "subcluster", "coreset", "balcan",
       "dpm", "zcdp_lloyd", "auto")


def taxi():
    """5,000 taxi pickups (row level), as tests/test_preview.py."""
    X = taxi_points()
    return X[np.random.default_rng(0).permutation(len(X))[:5000]], TAXI_BOUNDS, None, None


def gowalla():
    """Check-ins of 400 Gowalla users at person level (L = 5), as tests/test_preview.py."""
    df = pd.read_csv(data_dir() / "gowalla_nyc_checkins.csv.gz", usecols=["user_id", "longitude", "latitude"])
    users = np.random.default_rng(0).permutation(df["user_id"].unique())[:400]
    df = df[df["user_id"].isin(users)]
    return df[["longitude", "latitude"]].to_numpy(float), GOWALLA_BOUNDS, df["user_id"].to_numpy(), L_PERSON


def upload():
    """The 3,000-row upload-like check-ins of tests/test_preview.py (500 users, person level)."""
    rng = np.random.default_rng(1)
    centres = np.array([[-73.98, 40.75], [-73.95, 40.65], [-73.85, 40.85], [-74.1, 40.6], [-73.78, 40.7]])
    pts = centres[rng.integers(0, 5, 3000)] + rng.normal(0, 0.01, (3000, 2))
    ids = rng.integers(0, 500, 3000)
    keep = ((pts >= UPLOAD_BOUNDS[0]) & (pts <= UPLOAD_BOUNDS[1])).all(axis=1)
    return pts[keep], UPLOAD_BOUNDS, ids[keep], L_PERSON


DATA = {"taxi": taxi, "gowalla": gowalla, "upload": upload}


def draw(X, bounds, ids, L, seed, algorithm, epsilon=EPS):
    kw = {"max_contributions": L} if L else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return releasable(algorithm)(n_clusters=K, epsilon=epsilon, bounds=bounds, random_state=seed, **kw).fit(
            X, **({"privacy_id": ids} if L else {}))


def coverage(X, bounds, ids, L, algorithm, *, share=0.1, lookalike="sanitize", n_real=10, n_previews=3, n_releases=8,
             n_checks=2, force_lookalike=False):
    """(coverage, real 10-50-90 % quantiles, mean preview band) or a refusal message.

    ``force_lookalike``: preview even a draw that holds its own synopsis (EUGkM, Hybrid) on the
    ``lookalike`` release, as a centres-only draw is (to see how a look-alike serves a grid algorithm).
    """
    with threadpool_limits(1):
        ref = KMeans(n_clusters=K, n_init=3, random_state=0).fit(X).cluster_centers_
        try:
            fits = [draw(X, bounds, ids, L, seed, algorithm) for seed in range(100, 100 + n_real)]
        except InfeasibleBudgetError as e:
            return f"refuses: {str(e).split(':')[0]}"
        real = np.array([centre_error(f.cluster_centers_, ref, geo=True, bounds=bounds) for f in fits])
        covered, bands = [], []
        for i, fit in enumerate(fits[:n_previews]):
            rel = build_release(fit, algorithm=algorithm, dataset="t", simulation=True)
            shape = None if previewable(rel) and not force_lookalike else build_release(
                draw(X, bounds, ids, L, 200 + i, lookalike, share * EPS), algorithm=lookalike, dataset="t",
                simulation=True)
            p = release_preview(rel, lookalike=shape, geo=True, n_releases=n_releases, n_checks=n_checks,
                                random_state=i)
            covered.append(p.covers(real).mean())
            bands.append(p.band)
    return float(np.mean(covered)), np.quantile(real, [0.1, 0.5, 0.9]), np.nanmean(bands, axis=0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("algorithms", nargs="*", default=list(ALL))
    ap.add_argument("--data", default="taxi,gowalla,upload")
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--lookalike", default="sanitize", help="the look-alike's algorithm for centres-only draws")
    ap.add_argument("--real", type=int, default=10)
    ap.add_argument("--previews", type=int, default=3)
    ap.add_argument("--releases", type=int, default=8, help="simulated releases per preview (the app: 12)")
    ap.add_argument("--force-lookalike", action="store_true",
                    help="preview EUGkM and Hybrid on the look-alike release too, not on their own grid")
    args = ap.parse_args(argv)
    print(f"k = {K}, ε = {EPS}; {args.real} real draws, {args.previews} previews of {args.releases} releases; "
          f"{'every algorithm' if args.force_lookalike else 'centres-only algorithms'} on a "
          f"{args.lookalike} release at ε = {args.share * EPS:g}; errors in metres")
    print(f"{'algorithm':18} {'data':8} {'coverage':>8}  {'real q10 / q50 / q90':>22}  {'band lo / mid / hi':>22}  s")
    for name in args.data.split(","):
        X, bounds, ids, L = DATA[name]()
        for algo in args.algorithms:
            t = time.perf_counter()
            out = coverage(X, bounds, ids, L, algo, share=args.share, lookalike=args.lookalike, n_real=args.real,
                           n_previews=args.previews, n_releases=args.releases,
                           force_lookalike=args.force_lookalike)
            s = time.perf_counter() - t
            if isinstance(out, str):
                print(f"{algo:18} {name:8} {'-':>8}  {out}", flush=True)
                continue
            cov, real, band = out
            print(f"{algo:18} {name:8} {cov:8.2f}  {' / '.join(f'{v:6.0f}' for v in real):>22}  "
                  f"{' / '.join(f'{v:6.0f}' for v in band):>22}  {s:.0f}", flush=True)


if __name__ == "__main__":
    main()
