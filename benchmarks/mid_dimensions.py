"""Mid dimensions (issue 16, items 4-5): many clusters in 10-d, and bounded time or refusal up to 16-d.

1. **10-d blobs with 64 clusters** (``sklearn.datasets.make_blobs(10**5, 10, centers=64,
   center_box=(-100, 100), random_state=42)``, as in DPM's public demo; public bounds +-100,
   delta = 1e-6): median k-means cost (inertia) over seeds relative to non-private k-means
   (k = 64, scikit-learn, 3 restarts), for DPM, DPLloyd and Balcan et al., beside the figures the
   issue measured for DPM's own code (25x at epsilon = 1, 1.9x at 2).  Target: DPM <= 3x at 1.
2. **Time or refusal at 10^5 points in 11 and 16 dimensions** (5 Gaussian blobs, bounds +-100,
   k = 5, epsilon = 1, delta = 1e-6): every registry algorithm in a fresh process with a
   ``--timeout`` (default 30 s); the status says whether it fitted, warned (``RegimeWarning``) or
   refused up front (:mod:`dpcore.algorithms.regime`).  Target: <= 10 s or a refusal.

Times are for this 2-core machine, which may be shared with other work.

    python -m benchmarks.mid_dimensions [--seeds 5] [--timeout 30] [--skip-64] [--skip-time]
"""
from __future__ import annotations

import argparse
import inspect
import multiprocessing as mp
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore.metrics import inertia  # noqa: E402

#: The issue's measurements of DPM's public code (UzL-PrivSec/dp-mondrian-clustering) on this data.
DPM_OWN_CODE = {1.0: 25.0, 2.0: 1.9}


def blobs64():
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(100_000, 10, centers=64, center_box=(-100, 100), random_state=42)
    return X


def figure_64(seeds: int, epsilons=(0.5, 1.0, 2.0)):
    X = blobs64()
    base = dpcore.ALGORITHMS["kmeans"](64, bounds=(-100, 100), random_state=0).fit(X)
    ref = inertia(X, base.cluster_centers_)
    print(f"\n10-d blobs, 64 clusters, n = {len(X):,}, bounds +-100, delta = 1e-6; median cost / non-private over "
          f"{seeds} seeds (non-private k-means cost {ref:.4g})")
    print(f"{'algorithm':<22} {'epsilon':>7} {'median':>8} {'worst':>8} {'s/fit':>6}  reference")
    for key in ("dpm", "dplloyd", "balcan"):
        cls = dpcore.ALGORITHMS[key]
        for e in epsilons:
            r, t0 = [], time.perf_counter()
            for s in range(seeds):
                kw = dict(epsilon=e, bounds=(-100, 100), random_state=s)
                if cls.needs_delta:
                    kw["delta"] = 1e-6 if key != "balcan" else 0.1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = cls(64, **kw).fit(X)
                r.append(inertia(X, est.cluster_centers_) / ref)
            dt = (time.perf_counter() - t0) / seeds
            note = ""
            if key == "dpm":
                own = DPM_OWN_CODE.get(e)
                note = (f"DPM's own code {own:g}x (issue); " if own else "") + \
                    ("target <= 3x: " + ("met" if np.median(r) <= 3 else "NOT met") if e == 1.0 else "")
            print(f"{cls.display_name:<22} {e:>7g} {np.median(r):>8.2f} {np.max(r):>8.2f} {dt:>6.1f}  {note}",
                  flush=True)


def _one_fit(key: str, d: int, q):
    import warnings as w

    from sklearn.datasets import make_blobs

    import dpcore as dp
    from dpcore.algorithms.regime import OutOfRegimeError, RegimeWarning
    X, _ = make_blobs(100_000, n_features=d, centers=5, center_box=(-80, 80), random_state=0)
    cls = dp.ALGORITHMS[key]
    sig = inspect.signature(cls).parameters
    kw = dict(random_state=0, bounds=(-100.0, 100.0))
    if "n_clusters" in sig:
        kw["n_clusters"] = 5
    kw["epsilon"] = 1.0 if cls.private else None
    if cls.needs_delta:
        kw["delta"] = 0.1 if key == "balcan" else 1e-6
    t = time.perf_counter()
    with w.catch_warnings(record=True) as rec:
        w.simplefilter("always")
        try:
            cls(**kw).fit(X)
            warned = [str(m.message) for m in rec if issubclass(m.category, RegimeWarning)]
            status = ("warned: " + warned[0][:90]) if warned else "fitted"
        except OutOfRegimeError as exc:
            status = "refused up front: " + str(exc)[:90]
        except ValueError as exc:
            status = "refused (ValueError): " + str(exc)[:80]
    q.put((time.perf_counter() - t, status))


def time_table(timeout: float):
    ctx = mp.get_context("spawn")
    print(f"\n10^5 points, 5 blobs, k = 5, epsilon = 1: fit time or refusal (target <= 10 s or refused up front; "
          f"killed after {timeout:g} s)")
    print(f"{'algorithm':<16} {'d':>3} {'seconds':>8} {'met':>4}  status")
    for d in (11, 16):
        for key in dpcore.ALGORITHMS:
            q = ctx.Queue()
            p = ctx.Process(target=_one_fit, args=(key, d, q))
            p.start()
            p.join(timeout)
            if p.is_alive():
                p.kill()
                p.join()
                print(f"{key:<16} {d:>3} {'>' + format(timeout, 'g'):>8} {'NO':>4}  killed", flush=True)
                continue
            t, status = q.get()
            met = "yes" if t <= 10 or status.startswith("refused") else "NO"
            print(f"{key:<16} {d:>3} {t:>8.1f} {met:>4}  {status}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--skip-64", action="store_true")
    ap.add_argument("--skip-time", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_64:
        figure_64(args.seeds)
    if not args.skip_time:
        time_table(args.timeout)


if __name__ == "__main__":
    main()
