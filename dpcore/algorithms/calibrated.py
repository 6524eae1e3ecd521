"""Calibrated predictions of every centre-releasing algorithm's k-means cost, from public inputs only.

The paper's error formulas (Su et al. 2016, §6) cover three algorithms under assumptions (equal,
well-separated clusters) that real data break; an advisor built on them alone picked an algorithm
550x worse than the best on DPM's 10-d benchmark (issue 25).  This module predicts instead from
**measurements**: ``benchmarks/advisor_calibration.py`` fits every algorithm in :data:`CANDIDATES`
on Gaussian mixtures over n 10^3-10^6, d 2-100, k 3-100, three separations and epsilon 0.05-5, and on
the real sets of the project's data folder, and stores each fit's cost ratio to non-private k-means
(``cost / cost_nonprivate``, 1 is perfect) as package data (``data/advisor_calibration.csv``).

The model
---------
For public inputs ``(n, d, k, epsilon)`` and one algorithm, the prediction is a distance-weighted
average of the log cost ratios of the :data:`NEIGHBOURS` calibration points nearest in the scaled
coordinates :func:`features` (log10 of n*epsilon, log10 n, log2 d, log2 k; the budget acts mostly
through n*epsilon, the noisy sums' signal-to-noise), with weights ``1 / (distance + 0.25)^2``.
Its uncertainty is the weighted spread of those neighbours' log ratios: what is not public
(separation, cluster sizes) varies among them.  A point whose fit timed out or failed counts as
unavailable; the algorithm is predicted unavailable where :data:`MAX_FAILED` (2) of its neighbours
are.  The trivial answer
(one centre at a DP mean, ``zcdp_lloyd`` with k = 1) is predicted the same way.  The model's
leave-one-dataset-out error is printed by ``python -m benchmarks.advisor_calibration --loo`` and
tabled in docs/guide/advisor.rst.

Privacy
-------
A function of public inputs (a public or already-released noisy n, d, k, epsilon) and of public
calibration data: post-processing, no cost, and the same whatever the private data hold.  It is
what :func:`dpcore.algorithms.regime.check_fit` reads to warn, refuse and name a better algorithm.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §6 (the
formulas kept beside the prediction in :func:`dpcore.evaluation.advise`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

#: Registry keys the advisor ranks: every algorithm that releases k centres (the WaveCluster family
#: releases grid clusters, not centres, and is not on the k-means cost scale).
CANDIDATES: tuple[str, ...] = ("dplloyd", "eugkm", "hybrid", "gkm", "gkm3k", "pgkm", "kmeans_guarantee",
                               "subcluster", "coreset", "balcan", "dpm", "zcdp_lloyd")
#: The trivial answer's key in predictions: one centre at a DP mean.
TRIVIAL = "dp_mean"
#: The calibration's epsilons and delta (every (epsilon, delta) algorithm was calibrated at this delta).
EPSILONS: tuple[float, ...] = (0.05, 0.25, 1.0, 5.0)
DELTA = 1e-6
#: An algorithm is warned about when its prediction exceeds this share of the trivial answer's: the
#: predictions are coarse (separation is not public), so a warning at the line itself stays silent on
#: 140 of the 1,157 calibration fits (of 2,820) that measured worse than the trivial answer; at 0.8,
#: on 79, for 348 warnings on fits that measured better (247 at the line).  Issue 25 asks for no
#: silent garbage; a warning costs nothing.
WARN_SHARE = 0.8
#: Neighbours averaged per prediction.
NEIGHBOURS = 6
#: An algorithm is not ranked where at least this many of those neighbours timed out or failed
#: (leave-one-out: picks within 2x of the best rise from 91 % of cells at 3 of 6 to 94 % at 2).
MAX_FAILED = 2
#: Scales of :func:`features`: one unit is a step of the calibration grid.
SCALES = np.array([0.5, 1.5, 1.6, 1.6])

CALIBRATION_PATH = Path(__file__).with_name("data") / "advisor_calibration.csv"


def features(n, d, k, epsilon) -> np.ndarray:
    """Scaled model coordinates ``(log10(n eps), log10 n, log2 d, log2 k) / SCALES``, shape (m, 4)."""
    n, d, k, e = (np.asarray(v, dtype=float) for v in (n, d, k, epsilon))
    x = np.stack([np.log10(np.maximum(n, 1.0) * e), np.log10(np.maximum(n, 1.0)), np.log2(d), np.log2(k)], axis=-1)
    return np.atleast_2d(x / SCALES)


@dataclass(frozen=True)
class Prediction:
    """One algorithm's predicted k-means cost ratio to non-private k-means (1 is perfect).

    Attributes
    ----------
    key : str
        Registry key, or :data:`TRIVIAL`.
    ratio : float
        The prediction (geometric weighted mean of the neighbours' ratios); inf when unavailable.
    low, high : float
        ``ratio`` divided and multiplied by ``exp(spread)``: about the middle two thirds of what the
        neighbours measured (data the inputs do not describe).
    available : bool
        False where :data:`MAX_FAILED` neighbouring calibration fits timed out or failed.
    regret : float
        How many times the best answer measured on the same calibration data (every algorithm and
        the trivial one) this one cost, averaged geometrically over the same neighbours: the ranking's
        key (1 = it was always the best).
    """

    key: str
    ratio: float
    low: float
    high: float
    available: bool = True
    regret: float = math.nan


@lru_cache(maxsize=1)
def calibration() -> pd.DataFrame:
    """The calibration table (package data), one row per (data set, epsilon, algorithm).

    Columns: source, n, d, k, separation, epsilon, key, ratio, trivial_ratio, status, regime, seconds.

    Raises
    ------
    FileNotFoundError
        If the package data is missing (a broken install).
    """
    return pd.read_csv(CALIBRATION_PATH)


@lru_cache(maxsize=1)
def _tables():
    cal = calibration()
    cal = cal.assign(group=_group_ids(cal), log_ratio=np.log(cal["ratio"].to_numpy(float)),
                     log_trivial=np.log(cal["trivial_ratio"].to_numpy(float)))
    # Regret: how many times worse than the best answer measured on the same data at the same epsilon
    # (every algorithm and the trivial one).  Ranking by it weighs each calibration data set equally,
    # where raw ratios would let the tightest clusters (ratios in the thousands) decide every ranking.
    best = cal.groupby(["group", "epsilon"])["log_ratio"].transform("min")
    best = np.fmin(best.to_numpy(float), cal["log_trivial"].to_numpy(float))
    cal = cal.assign(regret=cal["log_ratio"] - best, trivial_regret=cal["log_trivial"] - best)
    out = {}
    for key, g in cal.groupby("key"):
        out[key] = (features(g.n, g.d, g.k, g.epsilon), g["log_ratio"].to_numpy(float),
                    g["regret"].to_numpy(float), g["group"].to_numpy())
    g = cal.drop_duplicates(["group", "epsilon"])
    out[TRIVIAL] = (features(g.n, g.d, g.k, g.epsilon), g["log_trivial"].to_numpy(float),
                    g["trivial_regret"].to_numpy(float), g["group"].to_numpy())
    return out


def _group_ids(g: pd.DataFrame) -> np.ndarray:
    """One id per calibration data set (source, n, d, k, separation): what leave-one-out leaves out together."""
    return (g["source"].astype(str) + "|" + g["n"].astype(str) + "|" + g["d"].astype(str) + "|"
            + g["k"].astype(str) + "|" + g["separation"].fillna(0.0).astype(str)).to_numpy()


def _predict(key: str, x: np.ndarray, exclude: str | None = None) -> Prediction:
    X, y, regret, groups = _tables()[key]
    keep = groups != exclude if exclude is not None else slice(None)
    X, y, regret = X[keep], y[keep], regret[keep]
    dist = np.sqrt(((X - x) ** 2).sum(axis=1))
    near = np.argsort(dist, kind="stable")[:NEIGHBOURS]
    ok = np.isfinite(y[near])
    if (~ok).sum() >= MAX_FAILED:
        return Prediction(key, math.inf, math.inf, math.inf, False, math.inf)
    w = 1.0 / (dist[near][ok] + 0.25) ** 2
    v = y[near][ok]
    mean = float(np.sum(w * v) / w.sum())
    spread = float(np.sqrt(np.sum(w * (v - mean) ** 2) / w.sum()))
    r = math.exp(mean)
    g = float(np.exp(np.sum(w * regret[near][ok]) / w.sum()))
    return Prediction(key, r, r / math.exp(spread), r * math.exp(spread), True, g)


def predict(n: float, d: int, k: int, epsilon: float, *, keys=CANDIDATES, exclude: str | None = None
            ) -> list[Prediction]:
    """Predicted cost ratios for ``keys``, best first (unavailable ones last).

    Parameters
    ----------
    n : float
        A public dataset size or an already-released noisy count (> 0).
    d, k : int >= 1
    epsilon : float > 0
        The budget of the fit (divided by a privacy unit's L by the caller).
    keys : iterable of str
        Registry keys from :data:`CANDIDATES` (others are skipped).
    exclude : str, optional
        A calibration data set's id to leave out (leave-one-out validation).

    Returns
    -------
    list of Prediction, sorted by ratio.

    Raises
    ------
    ValueError
        For non-positive n, d, k or epsilon.

    Examples
    --------
    >>> from dpcore.algorithms.calibrated import predict, predict_trivial
    >>> ranking = predict(100_000, 2, 5, 1.0)
    >>> ranking[0].ratio < predict_trivial(100_000, 2, 5, 1.0).ratio
    True
    """
    x = _check(n, d, k, epsilon)
    tables = _tables()
    preds = [_predict(key, x, exclude) for key in keys if key in tables and key != TRIVIAL]
    return sorted(preds, key=lambda p: p.regret)


def predict_trivial(n: float, d: int, k: int, epsilon: float, *, exclude: str | None = None) -> Prediction:
    """The trivial answer's predicted cost ratio (one centre at a DP mean, on the same scale).

    Same parameters and errors as :func:`predict`.
    """
    return _predict(TRIVIAL, _check(n, d, k, epsilon), exclude)


def _check(n, d, k, epsilon) -> np.ndarray:
    n, d, k, epsilon = float(n), int(d), int(k), float(epsilon)
    if not (n > 0 and epsilon > 0 and d >= 1 and k >= 1 and math.isfinite(n) and math.isfinite(epsilon)):
        raise ValueError(f"n, d, k and epsilon must be positive, got n={n}, d={d}, k={k}, epsilon={epsilon}")
    return features(n, d, k, epsilon)[0]


def first_pick(n: float, d: int, k: int, epsilon: float) -> str:
    """The key the calibrated advisor ranks first for these public inputs (:data:`TRIVIAL` when even the
    best prediction is not below the trivial answer's)."""
    best = predict(n, d, k, epsilon)[0]
    return best.key if best.regret < predict_trivial(n, d, k, epsilon).regret else TRIVIAL


def leave_one_out(allowed=None) -> pd.DataFrame:
    """The model's leave-one-data-set-out validation: every calibration fit predicted without its data set.

    Parameters
    ----------
    allowed : callable ``(key, n, d, k, epsilon, delta) -> bool``, optional
        Which keys may be picked for a cell (the advisor passes
        :func:`dpcore.algorithms.regime.runnable`: not refused for feasibility or run time).

    Returns
    -------
    DataFrame, one row per (data set, epsilon, key) with columns source, n, d, k, epsilon, key,
    measured, predicted, trivial_measured, trivial_predicted, first_pick (the advisor's pick for the
    cell, fitted without it) and pick_measured (what that pick measured there).
    """
    cal = calibration()
    cal = cal.assign(group=_group_ids(cal))
    rows = []
    for (group, eps), cell in cal.groupby(["group", "epsilon"], sort=False):
        r0 = cell.iloc[0]
        x = features(r0.n, r0.d, r0.k, eps)[0]
        preds = {key: _predict(key, x, group) for key in cell.key}
        triv = _predict(TRIVIAL, x, group)
        cands = [p for p in preds.values() if p.available
                 and (allowed is None or allowed(p.key, r0.n, r0.d, r0.k, eps, DELTA))]
        best = min(cands, key=lambda p: p.regret) if cands else triv
        pick = best.key if best.regret < triv.regret else TRIVIAL
        measured = dict(zip(cell.key, cell.ratio))
        pick_measured = r0.trivial_ratio if pick == TRIVIAL else measured[pick]
        for key, p in preds.items():
            rows.append(dict(source=r0.source, n=r0.n, d=r0.d, k=r0.k, epsilon=eps, key=key,
                             separation=0.0 if pd.isna(r0.separation) else r0.separation,
                             measured=measured[key], predicted=p.ratio, trivial_measured=r0.trivial_ratio,
                             trivial_predicted=triv.ratio, first_pick=pick, pick_measured=pick_measured))
    return pd.DataFrame(rows)


def loo_summary(loo: pd.DataFrame) -> dict:
    """The figures of :func:`leave_one_out` that issue 25 sets goals on.

    Returns
    -------
    dict with ``cells`` (data set x epsilon), ``pick_within_1_25`` (share of cells whose first pick
    measured at most 1.25x the best measured answer, trivial included), ``pick_within_2``,
    ``pick_unfinished`` (cells whose pick did not finish in the calibration's time limit: counted as
    infinitely worse above), ``pick_worst`` (the largest factor of a pick that finished),
    ``median_factor`` and ``p90_factor`` (of ``exp|log predicted - log measured|`` over
    available fits), ``silent_garbage`` (fits measured worse than the trivial answer whose prediction
    did not warn about, at :data:`WARN_SHARE`) and ``false_alarms`` (warned about, measured better).
    """
    cell = ["source", "n", "d", "k", "separation", "epsilon"]
    cells = loo.drop_duplicates(cell)
    best = loo.groupby(cell).apply(
        lambda c: min(c.measured.min(), c.trivial_measured.iloc[0]), include_groups=False)
    cells = cells.set_index(cell)
    # A pick that did not finish in the calibration (timeout, failure) counts as infinitely worse.
    factor = (cells.pick_measured / best.loc[cells.index]).fillna(np.inf)
    ok = loo[np.isfinite(loo.measured) & np.isfinite(loo.predicted)]
    err = np.exp(np.abs(np.log(ok.predicted) - np.log(ok.measured)))
    meas = loo[np.isfinite(loo.measured)]
    warned = meas.predicted > WARN_SHARE * meas.trivial_predicted
    worse = meas.measured > meas.trivial_measured
    return dict(cells=len(cells), pick_within_1_25=float((factor <= 1.25).mean()),
                pick_within_2=float((factor <= 2).mean()), pick_unfinished=int(np.isinf(factor).sum()),
                pick_worst=float(factor[np.isfinite(factor)].max()),
                median_factor=float(np.median(err)), p90_factor=float(np.quantile(err, 0.9)),
                silent_garbage=int((worse & ~warned).sum()), false_alarms=int((~worse & warned).sum()),
                fits=len(meas))
