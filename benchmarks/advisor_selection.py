"""How often ``auto``'s private selection releases a poor candidate: the score capped at the box vs at a cell.

For each (data, epsilon, seed) the candidates of ``auto``'s plan are fitted once on their shares,
exactly as :class:`dpcore.algorithms.auto_kmeans.AutoKMeans` fits them; then, for each score cap,
the probability that permute-and-flip (monotone, ``selection_share`` of epsilon) releases each
candidate is computed exactly (every order of the candidates), with no draw.  Reported per cap:
the expected cost ratio of the release to non-private k-means, and the chance of releasing a
candidate more than 1.25x worse than the best candidate fitted.

Caps: ``box`` (each row's squared distance over the box's squared diagonal, before) and ``cell``
(over the squared diagonal of one of k equal cells tiling the box, ``D^2 k^(-2/d)``, now).

Data: the 3-d mixture of 20 tight clusters the unequal-split test uses, three held-out mixtures of
``benchmarks.advisor_auto`` (2-d c = 3 with 16 clusters, 8-d c = 2 with 12, 12-d c = 8 with 40) and
DPM's ``synth_10d``; only cells where the plan takes two or more candidates are reported.

    python -m benchmarks.advisor_selection [--seeds 5] [--selection-share 0.05]
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dpcore.advisor.model import SELECTION_SHARE  # noqa: E402
from dpcore.algorithms.auto_kmeans import AutoKMeans, clipped_cost_score, release_probabilities  # noqa: E402
from dpcore.metrics import inertia  # noqa: E402

from .advisor_calibration import mixture  # noqa: E402


def cases():
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(50_000, n_features=3, centers=20, center_box=(-0.8, 0.8), cluster_std=0.03, random_state=4)
    out = [("3-d, 20 tight clusters", np.clip(X, -1, 1), 20, (-1.0, 1.0)),
           ("held-out n=50000 d=2 k=16 c=3", mixture(50_000, 2, 16, 3.0, 7), 16, (-1.0, 1.0)),
           ("held-out n=30000 d=8 k=12 c=2", mixture(30_000, 8, 12, 2.0, 7), 12, (-1.0, 1.0)),
           ("held-out n=100000 d=12 k=40 c=8", mixture(100_000, 12, 40, 8.0, 7), 40, (-1.0, 1.0))]
    X, _ = make_blobs(100_000, 10, centers=64, center_box=(-100, 100), random_state=42)
    out.append(("synth_10d (DPM's 64 blobs)", X, 64, (-100.0, 100.0)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--selection-share", type=float, default=SELECTION_SHARE,
                    help=f"auto's selection_share (default {SELECTION_SHARE})")
    args = ap.parse_args(argv)
    from sklearn.cluster import KMeans
    print(f"{'data':<32} {'eps':>4} {'candidates':<24} {'best':>6} {'box: E ratio':>12} {'P>1.25x':>8} "
          f"{'cell: E ratio':>13} {'P>1.25x':>8}")
    for name, X, k, (lo, hi) in cases():
        ref = inertia(X, KMeans(k, n_init=3, random_state=0).fit(X).cluster_centers_)
        lower, upper = np.full(X.shape[1], lo), np.full(X.shape[1], hi)
        for eps in (0.5, 1.0, 2.0):
            auto = AutoKMeans(k, epsilon=eps, bounds=(lo, hi), n_samples=len(X), selection_share=args.selection_share)
            plan = auto.plan(float(len(X)), X.shape[1], eps)
            if len(plan) < 2:
                continue
            eps_sel = eps * auto.selection_share
            stats = {"box": [], "cell": []}
            bests = []
            for seed in range(args.seeds):
                centres = []
                for j, (key, eps_c, delta_c, _) in enumerate(plan):
                    est = auto.candidate(key, eps_c, delta_c, float(len(X)), (lo, hi), 1000 * seed + j)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        centres.append(est.fit(X).cluster_centers_)
                ratio = np.array([inertia(X, C) / ref for C in centres])
                bests.append(ratio.min())
                for cap, kk in (("box", 1), ("cell", k)):
                    s = np.array([-clipped_cost_score(np.clip(X, lo, hi), C, lower, upper, kk) for C in centres], float)
                    prob = release_probabilities(s, eps_sel)
                    stats[cap].append((prob @ ratio, prob[ratio > 1.25 * ratio.min()].sum()))
            cols = []
            for cap in ("box", "cell"):
                a = np.array(stats[cap])
                cols += [f"{a[:, 0].mean():>12.3g}", f"{a[:, 1].mean():>8.1%}"]
            cand = "+".join(f"{key} {e:.2g}" for key, e, _, _ in plan)
            print(f"{name:<32} {eps:>4g} {cand:<24} {np.mean(bests):>6.3g} {cols[0]} {cols[1]} {cols[2]:>13} {cols[3]}",
                  flush=True)


if __name__ == "__main__":
    main()
