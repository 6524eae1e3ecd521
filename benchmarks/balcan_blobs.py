"""Balcan et al. / Edler (2023) on the make_blobs sets of Edler §5.5 (Tables 15 and 16 style).

100000 points, 100 dimensions, 64 centres in the box (0, 100), sd 1; public
bounds -5..105 (r = 110), delta = 0.1, epsilon = 1.  Inertia vs k in
{2, ..., 64} beside non-private k-means++, the thesis-noise variant (NOT DP,
see balcan_mnist.py) and diffprivlib where its venv exists.

Usage: ``python benchmarks/balcan_blobs.py [--runs 2] [--dpl-python PATH]``.
Writes ``benchmarks/results/balcan_blobs_k.csv``.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans as SKKMeans
from sklearn.datasets import make_blobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from balcan_mnist import OUT, run_balcan, run_dpl  # noqa: E402

EDLER_T15 = {2: (8006593279, 8005867623, 8008008879, 7970197410), 4: (7755163296, 7816157600, 7701395825, 7569614479),
             8: (7269464091, 7388525276, 7161761324, 6915096690), 16: (6813257933, 6974402996, 6363514041, 5629634742),
             32: (5683927702, 6104716131, 5261762330, 3467080527), 64: (4558354663, 5419700408, 4326059414, 9988959)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--dpl-python", default="/tmp/dplvenv/bin/python")
    a = ap.parse_args()
    X, _ = make_blobs(n_samples=100_000, n_features=100, centers=64, center_box=(0, 100), cluster_std=1.0,
                      random_state=0)
    bounds = (-5.0, 105.0)
    seeds = range(a.runs)
    tmp = Path(tempfile.mkdtemp()) / "blobs.npy"
    np.save(tmp, X)
    rows = []
    for k in (2, 4, 8, 16, 32, 64):
        km = float(np.mean([SKKMeans(k, n_init=1, random_state=s).fit(X).inertia_ for s in seeds]))
        b, bs, sec = run_balcan(X, k, 1.0, seeds, bounds=bounds)
        bt, _, _ = run_balcan(X, k, 1.0, seeds, thesis=True, bounds=bounds)
        dpl, ver = run_dpl(a.dpl_python, tmp, k, 1.0, seeds, bounds)
        e = EDLER_T15[k]
        rows.append(dict(k=k, balcan=b, balcan_std=bs, balcan_seconds=sec, balcan_thesis_noise=bt, kmeanspp=km,
                         diffprivlib=dpl, diffprivlib_version=ver, edler_python=e[0], edler_matlab_corrected=e[1],
                         edler_diffprivlib=e[2], edler_kmeanspp=e[3]))
        print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)
    df = pd.DataFrame(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT / "balcan_blobs_k.csv", index=False)
    print("\nInertia vs k, make_blobs 100000 x 100 (64 centres), epsilon = 1, mean of", a.runs, "runs")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
