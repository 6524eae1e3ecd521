"""Reproduce Chen, Yu & Chirkova (2015) §6: private vs true k, UD, DCOM, DC2E (and F-measure).

For each of the paper's three shape sets (the DiffPrivWaveCluster test files in shared/data), with
the non-private parameters reused for every private technique (Haar, level 1), every epsilon in
0.1..2 and 10 runs:

* k and UD come from a fit on the whole set (the paper's Figure "comparison of k" and the UD figure);
* DCOM, DC2E and F-measure from "clustering first, then classification": fits on a random 90 %,
  decision trees trained on the labelled cells of the true and private results, evaluated on the
  held-out 10 % (F-measure: the held-out points' labels, the non-private result as ground truth).

Parameters: spiral num_grid 40 / density threshold 10 % reproduces the paper's own numbers
(true k 144, |Z| 241); 15-clusters 48 / 60 % and aggregation 50 / 15 % are the settings in the
authors' published run scripts (lchen10/DiffPrivWaveCluster).  As in the paper, the quantised box
is the data's range, passed here as the public bounds.

Writes benchmarks/results/wavecluster_paper_runs.csv (one row per run),
wavecluster_paper_summary.csv (means) and wavecluster_paper.html (plotly), and prints the tables.

    python benchmarks/wavecluster_paper.py [--runs 10] [--eps 0.1,0.2,0.5,1,1.5,2]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import data_dir  # noqa: E402
from dpcore.algorithms.wavecluster.private import PrivBasic, PrivQT, PrivTHR, PrivTHREM
from dpcore.algorithms.wavecluster.wavecluster import WaveCluster
from dpcore.metrics.wavecluster import classification_measures, f_measure, train_test_indices, ud

RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = {
    "spiral": ("privwavecluster_spiral_30k.csv.gz", 40, 0.10),
    "15-clusters": ("privwavecluster_15clusters_30k.csv.gz", 48, 0.60),
    "aggregation": ("privwavecluster_aggregation_30k.csv.gz", 50, 0.15),
}
TECHNIQUES = {"PrivBasic": PrivBasic, "PrivQT": PrivQT, "PrivTHR": PrivTHR, "PrivTHR_EM": PrivTHREM}
PAPER_SPIRAL_EPS1 = {"true k": 144, "PrivTHR": 141.0, "PrivTHR_EM": 142.8, "PrivQT": 284.0, "PrivBasic": 249.2}


def run(eps_list, n_runs):
    rows = []
    for dname, (fname, num_grid, p) in DATASETS.items():
        X = pd.read_csv(data_dir() / fname)[["x", "y"]].to_numpy(float)
        bounds = (X.min(axis=0), X.max(axis=0))
        params = dict(bounds=bounds, num_grid=num_grid, density_threshold=p)
        true_full = WaveCluster(**params).fit(X)
        print(f"{dname}: n={len(X)}, num_grid={num_grid}, density threshold={p:.0%}: true k={true_full.threshold_rank_}, "
              f"|Z|={int((true_full.synopsis_.values <= 0).sum())}, clusters={true_full.n_clusters_}")
        for run_id in range(n_runs):
            tr, te = train_test_indices(len(X), np.random.default_rng(1000 + run_id))
            true_tr = WaveCluster(**params).fit(X[tr])
            true_te = true_tr.predict(X[te])
            for eps in eps_list:
                for tname, cls in TECHNIQUES.items():
                    seed = [run_id, int(eps * 1000), list(TECHNIQUES).index(tname), list(DATASETS).index(dname)]
                    est = cls(epsilon=eps, random_state=np.random.default_rng(seed), **params).fit(X)
                    assert est.budget_.total()[0] <= eps * (1 + 1e-9)
                    est_tr = cls(epsilon=eps, random_state=np.random.default_rng(seed + [1]), **params).fit(X[tr])
                    cm = classification_measures(X[te], true_tr, est_tr)
                    rows.append(dict(dataset=dname, technique=tname, epsilon=eps, run=run_id,
                                     true_k=true_full.threshold_rank_, k=est.threshold_rank_,
                                     n_significant=est.n_significant_, true_clusters=true_full.n_clusters_,
                                     clusters=est.n_clusters_, UD=ud(true_full.synopsis_.labels, est.synopsis_.labels),
                                     DCOM=cm["DCOM"], DC2E=cm["DC2E"], F=f_measure(true_te, est_tr.predict(X[te]))))
    return pd.DataFrame(rows)


def figure(summary: pd.DataFrame, path: Path):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
    measures = ["k", "UD", "DCOM", "DC2E", "F"]
    dsets = list(DATASETS)
    fig = make_subplots(rows=len(dsets), cols=len(measures), subplot_titles=[f"{d}: {m}" for d in dsets for m in measures],
                        horizontal_spacing=0.04, vertical_spacing=0.08)
    colours = {"PrivBasic": "#7f7f7f", "PrivQT": "#d62728", "PrivTHR": "#1f77b4", "PrivTHR_EM": "#2ca02c"}
    for i, d in enumerate(dsets, 1):
        sub = summary[summary.dataset == d]
        for j, m in enumerate(measures, 1):
            for t, c in colours.items():
                s = sub[sub.technique == t]
                fig.add_trace(go.Scatter(x=s.epsilon, y=s[m], mode="lines+markers", name=t, line=dict(color=c),
                                         legendgroup=t, showlegend=(i == 1 and j == 1)), row=i, col=j)
            if m == "k":
                fig.add_trace(go.Scatter(x=sub.epsilon.unique(), y=[sub.true_k.iloc[0]] * sub.epsilon.nunique(),
                                         mode="lines", name="true k", line=dict(color="black", dash="dash"),
                                         legendgroup="true", showlegend=(i == 1)), row=i, col=j)
    fig.update_layout(height=300 * len(dsets), width=1500,
                      title="DP WaveCluster (Chen, Yu & Chirkova 2015, §6): mean of 10 runs per epsilon")
    fig.update_xaxes(title_text="ε")
    fig.write_html(path, include_plotlyjs="cdn")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--eps", default="0.1,0.2,0.5,1,1.5,2")
    args = ap.parse_args()
    eps_list = [float(e) for e in args.eps.split(",")]
    t0 = time.perf_counter()
    df = run(eps_list, args.runs)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "wavecluster_paper_runs.csv", index=False)
    summary = (df.groupby(["dataset", "technique", "epsilon"], as_index=False)
                 [["true_k", "k", "n_significant", "true_clusters", "clusters", "UD", "DCOM", "DC2E", "F"]].mean())
    hits = df.assign(hit=df.clusters == df.true_clusters).groupby(["dataset", "technique", "epsilon"]).hit.mean()
    summary = summary.merge(hits.rename("share_right_clusters").reset_index())
    summary.to_csv(RESULTS / "wavecluster_paper_summary.csv", index=False)
    figure(summary, RESULTS / "wavecluster_paper.html")
    pd.set_option("display.width", 200)
    for m in ["k", "clusters", "share_right_clusters", "UD", "DCOM", "DC2E", "F"]:
        print(f"\n== mean {m} ==")
        print(summary.pivot_table(index=["dataset", "epsilon"], columns="technique", values=m).round(3).to_string())
    s = summary[(summary.dataset == "spiral") & (summary.epsilon == 1.0)].set_index("technique")
    if len(s):
        print("\nspiral, ε = 1: measured vs paper")
        print(f"  true k: {int(s.true_k.iloc[0])} (paper {PAPER_SPIRAL_EPS1['true k']})")
        for t in TECHNIQUES:
            print(f"  {t:10s} mean k {s.loc[t, 'k']:7.1f}   (paper {PAPER_SPIRAL_EPS1[t]})")
    print(f"\nwrote {RESULTS}/wavecluster_paper_runs.csv, _summary.csv, .html in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
