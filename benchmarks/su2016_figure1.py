"""Su et al. (2016) Figure 1: NICV against epsilon for the private k-means methods.

Datasets (normalised to [-1, 1]^d with public bounds, as §5.1): S1 (k = 15),
the Gowalla NYC locations (k = 5; the paper used all 107,091 Gowalla
locations, only the NYC subset is available), Adult's six numeric attributes
(k = 5) and scikit-learn's 8x8 digits (k = 10; the issue's "MNIST digits";
the paper's Figure 1 has TIGER, Image and Lifesci instead, which are not
available).  Methods: DPLloyd, GkM, GkM-3K, PGkM, EUGkM, Hybrid and the
non-private baseline (scikit-learn k-means, best of 30 k-means++ starts).

Protocol: the paper averages 3,000 DPLloyd runs (30 initial centroid sets x
100), 10 synopses for EUGkM and 100 runs for GkM and PGkM.  This script runs
``--runs`` seeds per method (default 10; each DPLloyd seed has its own
sphere-packing initial centres), which is said in the output.

Usage
-----
    python benchmarks/su2016_figure1.py            # full (about 20-40 min on one core)
    python benchmarks/su2016_figure1.py --quick    # 3 epsilons, 2 runs, S1 and digits only

Writes benchmarks/results/su2016_figure1.csv and .html.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore.metrics import nicv  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
DATA = Path(os.environ.get("DPCORE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
METHODS = ["dplloyd", "gkm", "gkm3k", "pgkm", "eugkm", "hybrid"]
LABELS = {"dplloyd": "DPLloyd", "gkm": "GkM", "gkm3k": "GkM-3K", "pgkm": "PGkM", "eugkm": "EUGkM",
          "hybrid": "Hybrid", "kmeans": "baseline (non-private)"}
EPSILONS = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]


def load_datasets(names):
    out = {}
    if "S1" in names:
        X = pd.read_csv(DATA / "franti_s1.csv.gz", usecols=["x", "y"]).to_numpy(float)
        out["S1"] = (X, (np.zeros(2), np.full(2, 1.0e6)), 15, "public box [0, 1e6]^2")
    if "Gowalla-NYC" in names:
        X = pd.read_csv(DATA / "gowalla_nyc_locations.csv.gz", usecols=["longitude", "latitude"]).to_numpy(float)
        out["Gowalla-NYC"] = (X, (np.array([-74.26, 40.48]), np.array([-73.70, 40.92])), 5,
                              "the NYC box the subset was cut with")
    if "Adult-num" in names:
        cols = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
        X = pd.read_csv(DATA / "adult.csv.gz", usecols=cols)[cols].dropna().to_numpy(float)
        out["Adult-num"] = (X, (X.min(0), X.max(0)), 5, "attribute ranges taken as public (as the paper)")
    if "digits" in names:
        from sklearn.datasets import load_digits
        X = load_digits().data.astype(float)
        out["digits"] = (X, (np.zeros(64), np.full(64, 16.0)), 10, "pixel range [0, 16]")
    return out


def run(datasets, epsilons, runs, log=print):
    rows = []
    for name, (X, bounds, k, bnote) in datasets.items():
        t0 = time.time()
        base = dpcore.ALGORITHMS["kmeans"](k, bounds=bounds, n_init=30, random_state=0).fit(X)
        b = nicv(X, base.cluster_centers_, bounds=bounds)
        for eps in epsilons:
            rows.append(dict(dataset=name, method="kmeans", epsilon=eps, nicv_mean=b, nicv_std=0.0, runs=1, error=""))
        log(f"{name}: N={X.shape[0]}, d={X.shape[1]}, k={k}, bounds: {bnote}; baseline NICV {b:.4g}")
        for eps in epsilons:
            times = {}
            for m in METHODS:
                t1 = time.time()
                try:
                    vals = [nicv(X, dpcore.ALGORITHMS[m](k, epsilon=eps, bounds=bounds, random_state=s)
                                 .fit(X).cluster_centers_, bounds=bounds) for s in range(runs)]
                    err = ""
                except Exception as exc:  # report, do not hide: e.g. EUGkM's grid in 64 dimensions
                    vals, err = [np.nan], f"{type(exc).__name__}: {exc}"
                    if eps == epsilons[0]:
                        log(f"  {m} failed on {name}: {err}")
                times[m] = time.time() - t1
                rows.append(dict(dataset=name, method=m, epsilon=eps, nicv_mean=float(np.mean(vals)),
                                 nicv_std=float(np.std(vals)), runs=runs, error=err))
            log(f"  eps={eps:g} done ({time.time() - t0:.0f}s; " +
                ", ".join(f"{m} {v:.1f}s" for m, v in times.items()) + ")")
    return pd.DataFrame(rows)


def figure(df, path):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    names = list(dict.fromkeys(df.dataset))
    cols = min(2, len(names))
    fig = make_subplots(rows=(len(names) + 1) // 2, cols=cols, subplot_titles=names)
    for i, name in enumerate(names):
        sub = df[df.dataset == name]
        for m in ["kmeans"] + METHODS:
            s = sub[sub.method == m]
            fig.add_trace(go.Scatter(x=s.epsilon, y=s.nicv_mean, mode="lines+markers", name=LABELS[m],
                                     legendgroup=m, showlegend=i == 0,
                                     line=dict(dash="dash") if m == "kmeans" else None),
                          row=i // 2 + 1, col=i % 2 + 1)
        fig.update_xaxes(type="log", title_text="epsilon", row=i // 2 + 1, col=i % 2 + 1)
        fig.update_yaxes(type="log", title_text="NICV", row=i // 2 + 1, col=i % 2 + 1)
    fig.update_layout(title="Su et al. 2016, Figure 1 (reproduction): NICV vs epsilon, data in [-1, 1]^d",
                      height=420 * ((len(names) + 1) // 2), width=1100)
    fig.write_html(path, include_plotlyjs="cdn")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 epsilons, 2 runs, S1 and digits only")
    ap.add_argument("--runs", type=int, default=10, help="seeds per method and epsilon (paper: 100-3000)")
    args = ap.parse_args(argv)
    if args.quick:
        names, epsilons, runs = ["S1", "digits"], [0.1, 0.5, 2.0], 2
    else:
        names, epsilons, runs = ["S1", "Gowalla-NYC", "Adult-num", "digits"], EPSILONS, args.runs
    print(f"Protocol: {runs} runs per method and epsilon (paper: 3,000 for DPLloyd, 10 synopses for EUGkM, "
          f"100 for GkM/PGkM); baseline = best of 30 k-means++ starts; NICV in [-1, 1]^d.")
    df = run(load_datasets(names), epsilons, runs)
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    df.to_csv(RESULTS / f"su2016_figure1{suffix}.csv", index=False)
    figure(df, RESULTS / f"su2016_figure1{suffix}.html")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for name in dict.fromkeys(df.dataset):
            t = df[df.dataset == name].pivot(index="epsilon", columns="method", values="nicv_mean")
            print(f"\n{name}: mean NICV ({runs} runs)")
            print(t[["kmeans"] + METHODS].rename(columns=LABELS).to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nwrote {RESULTS / f'su2016_figure1{suffix}.csv'} and .html")


if __name__ == "__main__":
    main()
