"""Joshi & Thakkar (2022) Figure 3: CostGap against epsilon, KMeans-Guarantee vs SubClustering.

Datasets (scikit-learn): iris (k = 3), wine (k = 3), breast cancer (k = 2),
digits (k = 10).  CostGap (Eq. 1) = |Cost_DP - Cost_Lloyd| / Cost_Lloyd with
Cost_Lloyd from scikit-learn k-means (10 k-means++ starts), both measured in
the [-1, 1]^d normalisation of the attribute ranges (taken as public bounds).
30 runs per point, 10 for digits (as the paper).  The summary ratio is
mean CostGap(KMeans-Guarantee) / mean CostGap(SubClustering) over all
epsilons (paper: iris 1.1x, wine 4.13x, breast cancer 2.83x, digits ~1x).
The paper does not give its epsilon grid; we use 0.5 to 16.

Usage
-----
    python benchmarks/joshi2022_figure3.py           # full
    python benchmarks/joshi2022_figure3.py --quick   # 3 epsilons, 5 runs

Writes benchmarks/results/joshi2022_figure3.csv and .html.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets as skd
from sklearn.cluster import KMeans as SKKMeans

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore.metrics import cost_gap  # noqa: E402
from dpcore.utils.domain import check_bounds

RESULTS = Path(__file__).resolve().parent / "results"
EPSILONS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
PAPER_RATIO = {"iris": "1.1", "wine": "4.13", "breast_cancer": "2.83", "digits": "~1"}
DATASETS = {"iris": (skd.load_iris, 3, 30), "wine": (skd.load_wine, 3, 30),
            "breast_cancer": (skd.load_breast_cancer, 2, 30), "digits": (skd.load_digits, 10, 10)}
METHODS = {"kmeans_guarantee": "KMeans-Guarantee", "subcluster": "SubClustering"}


def run(epsilons, runs_override=None, log=print):
    rows = []
    for name, (loader, k, runs) in DATASETS.items():
        runs = runs_override or runs
        X = loader().data.astype(float)
        lo, hi = X.min(0), X.max(0)
        bounds = (lo, np.where(hi > lo, hi, lo + 1.0))   # constant pixels (digits) get a unit-wide range
        dom = check_bounds(bounds, d=X.shape[1])
        base = dom.denormalize(SKKMeans(k, n_init=10, random_state=0).fit(dom.normalize(X)).cluster_centers_)
        t0 = time.time()
        for eps in epsilons:
            for key in METHODS:
                gaps = [cost_gap(X, dpcore.ALGORITHMS[key](k, epsilon=eps, bounds=bounds, random_state=s)
                                 .fit(X).cluster_centers_, base, bounds=bounds) for s in range(runs)]
                rows.append(dict(dataset=name, method=key, epsilon=eps, costgap_mean=float(np.mean(gaps)),
                                 costgap_sem=float(np.std(gaps) / np.sqrt(runs)), runs=runs))
        log(f"{name}: N={X.shape[0]}, d={X.shape[1]}, k={k}, {runs} runs per point ({time.time() - t0:.0f}s)")
    return pd.DataFrame(rows)


def figure(df, path):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    names = list(dict.fromkeys(df.dataset))
    fig = make_subplots(rows=2, cols=2, subplot_titles=names)
    for i, name in enumerate(names):
        for key, label in METHODS.items():
            s = df[(df.dataset == name) & (df.method == key)]
            fig.add_trace(go.Scatter(x=s.epsilon, y=s.costgap_mean, mode="lines+markers", name=label,
                                     legendgroup=key, showlegend=i == 0,
                                     error_y=dict(type="data", array=s.costgap_sem)),
                          row=i // 2 + 1, col=i % 2 + 1)
        fig.update_xaxes(type="log", title_text="epsilon", row=i // 2 + 1, col=i % 2 + 1)
        fig.update_yaxes(title_text="CostGap", row=i // 2 + 1, col=i % 2 + 1)
    fig.update_layout(title="Joshi & Thakkar 2022, Figure 3 (reproduction): CostGap vs epsilon",
                      height=800, width=1100)
    fig.write_html(path, include_plotlyjs="cdn")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 epsilons, 5 runs")
    args = ap.parse_args(argv)
    epsilons, runs = ([1.0, 4.0, 16.0], 5) if args.quick else (EPSILONS, None)
    df = run(epsilons, runs)
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    df.to_csv(RESULTS / f"joshi2022_figure3{suffix}.csv", index=False)
    figure(df, RESULTS / f"joshi2022_figure3{suffix}.html")
    t = df.pivot_table(index=["dataset", "epsilon"], columns="method", values="costgap_mean")
    print("\nmean CostGap")
    print(t.rename(columns=METHODS).to_string(float_format=lambda v: f"{v:.3f}"))
    print("\nratio of mean CostGaps over all epsilons, KMeans-Guarantee / SubClustering (paper in brackets)")
    for name in dict.fromkeys(df.dataset):
        m = df[df.dataset == name].groupby("method").costgap_mean.mean()
        print(f"  {name:14s} {m['kmeans_guarantee'] / m['subcluster']:.2f}x   (paper {PAPER_RATIO[name]}x)")
    print(f"\nwrote {RESULTS / f'joshi2022_figure3{suffix}.csv'} and .html")


if __name__ == "__main__":
    main()
