"""The advisor's calibration suite (issue 25): every centre-releasing algorithm, measured, on public designs.

For Gaussian mixtures over a grid of the advisor's public inputs (n 10^3-10^6, d 2-100, k 3-100,
epsilon 0.05-5) and for the real sets in ``$DPCORE_DATA``, every registry algorithm that releases
centres is fitted once per (data, epsilon) and its k-means cost is divided by non-private k-means'
(scikit-learn, 3 restarts) on the same data.  The trivial answer, one centre at a DP mean
(``zcdp_lloyd`` with k = 1, the same epsilon and delta), is measured on the same scale.

What is not public, and therefore not a model input, varies across the design: the separation of
the mixture (Dasgupta's c-separation, ``|mu_i - mu_j| >= c sigma sqrt(d)`` for the closest pair,
c in {1, 2, 4}, cycled over the grid; ``--tight`` adds c = 16 on a sub-grid, ``--complete`` every
c in {1, 2, 4, 16} at every (n, d, k) up to 10^5 rows, ``--mid`` the same at 10^5 rows in 5 and 10
dimensions with 10-64 clusters, and ``--wide`` c = 32 on a sub-grid), the cluster sizes
(Dirichlet(2) weights; ``--equal`` adds the same mixtures with equal weights at every separation on
a sub-grid, source ``synthetic_equal``) and the centres.  The advisor's uncertainty is their spread.  Every row
records the seed its mixture was drawn with and the fits' random_state (columns ``seed``,
``fit_seed``).

Refusals are **bypassed** here (the regime verdict is recorded in ``regime``): the advisor must know
what a refused algorithm would have given, to refuse only where it would have been worse than the
trivial answer.  Each fit runs in a forked child with a time limit (``--timeout``, 15 s, status
``timeout``; the algorithm's other epsilons on the same data are then not tried) and a 6 GiB address-space limit (status ``error``); two run at once.

Writes ``dpcore/advisor/data/advisor_calibration.csv`` (package data read by
:mod:`dpcore.advisor.model`), one row per (data, epsilon, algorithm).

    python -m benchmarks.advisor_calibration [--quick] [--timeout 15] [--out PATH]
    python -m benchmarks.advisor_calibration --tight          # the supplements, each appended:
    python -m benchmarks.advisor_calibration --complete       #   run one at a time
    python -m benchmarks.advisor_calibration --mid            #   (23 minutes)
    python -m benchmarks.advisor_calibration --equal          #   (96 data sets, 40 minutes)
    python -m benchmarks.advisor_calibration --between        # 192 data sets at epsilon 0.5 (31 minutes)
    python -m benchmarks.advisor_calibration --twenty-five    # d = 25: 90 data sets
    python -m benchmarks.advisor_calibration --wide --out benchmarks/results/advisor_calibration_wide32.csv
    python -m benchmarks.advisor_calibration --loo      # the model's leave-one-out table (docs)
    python -m benchmarks.advisor_calibration --refit eugkm,hybrid,dplloyd   # after a change to their grid code
    python -m benchmarks.advisor_calibration --add KEY  # a new algorithm: measured on every data set the table holds

Calibration is opt-in per estimator class (``calibrated = True``, issue 58): ``--add KEY`` measures one
registry key on every data set of the table (mixtures redrawn from their seeds, fits seeded with the
table's fit seeds, the real sets from ``$DPCORE_DATA``) at the epsilons the table holds for each, and
appends its rows; the trivial answer's ratio is the table's own for the same data and epsilon.  Then
declare ``calibrated = True`` on the class: ``tests/test_advisor_calibrated.py`` checks that every
class so declared, and no other, is in the table.  ``--every N`` measures one data set in N (a quick
look; the table wants them all).

Takes about 25 minutes on 2 cores (``--quick``: n <= 10^4, a few minutes); ``--complete``, 36 minutes.
"""
from __future__ import annotations

import os
import sys

# Two fits run at once on two cores: one thread each, set before numpy and numba load, and only then.
# A process that had loaded numba (a test worker) and imported this module later failed every numba
# compile once its thread pool started ("Cannot set NUMBA_NUM_THREADS to a different value once the
# threads have been launched"): the pool can start on the configuration read before the change.
if "numba" not in sys.modules:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")   # fork-safe, unlike OpenMP

import argparse
import multiprocessing as mp
import resource
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore.advisor.model import (  # noqa: E402
    CALIBRATION_PATH,
    DELTA,
    EPSILONS,
    EQUAL_SOURCE,
    TRIVIAL,
    WARN_SHARE,
)
from dpcore.advisor.separation_read import SOURCE_SIZES, mixture  # noqa: E402,F401  (the suite's law, re-exported)
from dpcore.algorithms import regime as regime_module  # noqa: E402
from dpcore.metrics import inertia  # noqa: E402

from ._common import data_dir  # noqa: E402

SEPARATIONS = (1.0, 2.0, 4.0)
#: Epsilons between the grid's, measured by ``--between`` on the equal-sizes supplement's cells (both
#: size laws): DPM's budget threshold at 10^4-10^5 rows falls between 0.25 and 1 (at 10^5 rows, d = 10,
#: k = 64, equal sizes, c = 16: 236x at 0.25, 1.46x at 0.5, 1.1x at 1; zCDP-Lloyd 46x at 0.5), where the
#: model would interpolate across a factor of 4.  Appended to the table like the supplements (2,304
#: rows, 31 minutes; leave-one-out 84.0 % of the grid's cells within 1.25x with it, 83.0 % without).
BETWEEN_EPSILONS = (0.5,)
#: The sources of the table's Gaussian mixtures (drawn again from their seeds); every other source is
#: a real set of ``$DPCORE_DATA``.
MIXTURE_SOURCES = tuple(SOURCE_SIZES)
#: The first two size laws' sources, in the order the columns before ``--skewed`` ran them (their jobs
#: and seeds are recorded in the table and must stay as they were).
FIRST_LAWS = ("synthetic", EQUAL_SOURCE)


def draw(source: str, n: int, d: int, k: int, separation: float, seed: int) -> np.ndarray:
    """A mixture source's data set again from its recorded seed: (n, d) in [-1, 1]^d."""
    return mixture(n, d, k, separation, seed=seed, sizes=SOURCE_SIZES[source])


#: The tight-cluster supplement: separation 16 (clusters like scikit-learn's make_blobs in a wide box,
#: DPM's regime), on a sub-grid.
TIGHT = (16.0, ((1_000, (2, 15, 50), (3, 30)), (10_000, (2, 5, 15, 50), (3, 30)), (100_000, (2, 15), (3, 30, 100))))

#: The wide-box supplement: separation 32 (make_blobs with unit spread in a box a hundred times wider,
#: DPM's own benchmarks: issue 16's ``synth_10d`` is c = 46), on the tight sub-grid plus d = 5 and
#: k = 10 at 10^5 rows, where the two regimes (Lloyd-type vs DPM's splits) part.
WIDE = (32.0, ((1_000, (2, 15, 50), (3, 30)), (10_000, (2, 5, 15, 50), (3, 30)),
               (100_000, (2, 5, 15), (3, 10, 30, 100))))

#: The mid-dimension supplement: 10^5 rows in 5 and 10 dimensions with 10-64 clusters, where the
#: grid had no point (its 10^5 rows are d in {2, 15, 50}, k in {3, 30, 100}) and where DPM's budget
#: threshold and zCDP-Lloyd's failure on far-apart clusters decide the pick (DPM's 10-d benchmark
#: ``synth_10d`` is 10^5 rows, d = 10, k = 64); every separation of the grid, then c = 32.
MID = ((1.0, 2.0, 4.0, 16.0), 32.0, ((100_000, (5, 10), (10, 30, 64)),))


#: The equal-sizes supplement (source ``synthetic_equal``): the same mixtures with equal weights, at
#: every separation of the grid, where cluster sizes part the algorithms most (measured at 10^5 rows,
#: d = 10, k = 64, epsilon 1, c = 16: DPM 1.1x with equal sizes, 9x with Dirichlet(2) ones; zCDP-Lloyd
#: 35x and 23x).  Run order: the mid cells first, then 10^4 and 10^3 rows, then 10^5 rows in 2 and 15
#: dimensions.
EQUAL = ((1.0, 2.0, 4.0, 16.0), ((100_000, (5, 10), (10, 30, 64)), (10_000, (2, 5, 15, 50), (3, 30)),
                                 (1_000, (2, 15, 50), (3, 30)), (100_000, (2, 15), (3, 30))))


def equal_jobs() -> list:
    """The equal-sizes supplement's data sets ``(source, (n, d, k), separation, seed, fit_seed)`` in run
    order; the j-th drawn with seed 5000 + j, fitted with random_state j."""
    seps, grid = EQUAL
    cells = [(n, d, k) for n, ds, ks in grid for d in ds for k in ks]
    return [(EQUAL_SOURCE, cell, c, 5000 + j, j) for j, (cell, c) in enumerate((cell, c) for cell in cells for c in seps)]


def between_jobs(cal: pd.DataFrame) -> list:
    """The data sets that ``--between`` measures at :data:`BETWEEN_EPSILONS`,
    each ``(source, (n, d, k), separation, seed, fit_seed)`` as the table records it (redrawn, refitted
    with the same seeds): every equal-sized mixture and the Dirichlet(2) one of the same (n, d, k,
    separation), the mid cells first; those already measured there are left out."""
    equal = cal[cal.source == EQUAL_SOURCE]
    cells = set(zip(equal.n, equal.d, equal.k, equal.separation))
    have = set(zip(cal.source, cal.n, cal.d, cal.k, cal.separation, cal.epsilon))
    jobs = [(src, (n, d, k), sep, seed, fit_seed) for src, n, d, k, sep, seed, fit_seed in table_data_sets(cal)
            if src in FIRST_LAWS and (n, d, k, sep) in cells
            and not all((src, n, d, k, sep, e) in have for e in BETWEEN_EPSILONS)]
    mid = mid_cells()
    return sorted(jobs, key=lambda job: (job[1] not in mid, job[0] != EQUAL_SOURCE))


#: The separation of ``--eight``: between the grid's 4 and 16, where the held-out c = 8 mixtures fell and
#: where, knowing their separation, the model's nearest hypothesis (c = 4) ranked zCDP-Lloyd first
#: while DPM measured best (``advisor_heldout --oracle``).
EIGHT = 8.0


def eight_jobs(cal: pd.DataFrame) -> list:
    """The data sets that ``--eight`` adds, each ``(source, (n, d, k), EIGHT, seed, fit_seed)``: every
    mixture (source, n, d, k) the table holds at c = 4, drawn again at c = 8, the j-th with seed
    6000 + j and random_state j; the mid cells first, then by size; those the table holds at c = 8
    already are left out.  Measured at :data:`EPSILONS` and :data:`BETWEEN_EPSILONS`."""
    four = cal[(cal.separation == 4.0) & cal.source.isin(FIRST_LAWS)]
    mid = mid_cells()
    # A total order on the cells (mid first, then by size): the j-th cell's seed depends on it.
    cells = sorted(set(zip(four.source, four.n, four.d, four.k)), key=lambda c: (c[1:] not in mid, c[1], c[0], c[2], c[3]))
    have = set(zip(cal.source, cal.n, cal.d, cal.k, cal.separation))
    return [(src, (int(n), int(d), int(k)), EIGHT, 6000 + j, j) for j, (src, n, d, k) in enumerate(cells)
            if (src, n, d, k, EIGHT) not in have]


#: The d = 25 column: between the grid's 15 and 50 dimensions, where real shapes of 16-20 dimensions
#: (a held-out 16-d set with 26 clusters, MNIST projected to 20) fell and the model interpolated
#: across a factor of 3.3 in d; every separation of :data:`dpcore.advisor.model.SEPARATIONS`,
#: both size laws, at the grid's epsilons and 0.5.  Run order: 10^4 rows, then 10^5, then 10^3.
TWENTY_FIVE = (25, ((10_000, (3, 10, 30)), (100_000, (3, 30, 100)), (1_000, (3, 10, 30))))


def twenty_five_jobs() -> list:
    """The d = 25 column's data sets ``(source, (n, d, k), separation, seed, fit_seed)`` in run order:
    per (n, d, k), every separation with unequal sizes then with equal ones; the j-th drawn with seed
    7000 + j, fitted with random_state j."""
    from dpcore.advisor.model import SEPARATIONS as ALL
    d, grid = TWENTY_FIVE
    cells = [(n, d, k) for n, ks in grid for k in ks]
    sets = [(src, cell, c) for cell in cells for src in FIRST_LAWS for c in ALL]
    return [(src, cell, c, 7000 + j, j) for j, (src, cell, c) in enumerate(sets)]


#: The skewed-sizes column (source ``synthetic_skewed``, Dirichlet(0.5) weights: a few heavy clusters
#: and many light ones, as in Fränti's Unbalance or pickups around a few hubs): d 2-10 (where the
#: skewed real sets lie), k 10 and 30, every separation, the grid's epsilons and 0.5.  Measured first
#: apart from the table (``--out`` elsewhere, then ``--held`` on it: the advisor had never seen such
#: sizes), then appended.  Run order: 10^4 rows, then 10^5, then 10^3.
SKEWED = ((2, 5, 10), (10, 30), (10_000, 100_000, 1_000))


def skewed_jobs() -> list:
    """The skewed column's data sets ``(source, (n, d, k), separation, seed, fit_seed)`` in run order;
    the j-th drawn with seed 8000 + j, fitted with random_state j."""
    from dpcore.advisor.model import SEPARATIONS as ALL
    ds, ks, ns = SKEWED
    sets = [((n, d, k), c) for n in ns for d in ds for k in ks for c in ALL]
    return [("synthetic_skewed", cell, c, 8000 + j, j) for j, (cell, c) in enumerate(sets)]


def mid_cells() -> set:
    """The (n, d, k) of the mid-dimension supplement: the cells the appended columns measure first."""
    return {(n, d, k) for n, ds, ks in MID[2] for d in ds for k in ks}


def mid_jobs() -> list:
    """The mid-dimension supplement's data sets ``(n, d, k, separation, seed, fit_seed)``, in run order:
    each (n, d, k) at separations 1-16, then each at 32; the j-th drawn with seed 4000 + j, fitted with
    random_state j."""
    seps, wide, grid = MID
    cells = [(n, d, k) for n, ds, ks in grid for d in ds for k in ks]
    jobs = [cell + (c,) for cell in cells for c in seps] + [cell + (wide,) for cell in cells]
    return [job + (4000 + j, j) for j, job in enumerate(jobs)]


def design(quick: bool):
    """(n, d, k) of the synthetic grid; the separation is cycled over it."""
    out = []
    for n, ds, ks in ((1_000, (2, 5, 15, 50, 100), (3, 10, 30)),
                      (10_000, (2, 5, 15, 50, 100), (3, 10, 30)),
                      (100_000, (2, 15, 50), (3, 30, 100)),
                      (1_000_000, (2, 15), (10, 100))):
        if quick and n > 10_000:
            continue
        out += [(n, d, k) for d in ds for k in ks]
    return out


def complete_jobs(done: pd.DataFrame) -> list:
    """The (n, d, k, separation) of the grid and the tight sub-grid, n <= 10^5, not yet in ``done``.

    Every separation at every such (n, d, k) makes separation a clean factor of the design: the
    separation hypotheses of :func:`dpcore.advisor.model.selection_plan` each see the whole
    grid.  Ordered 10^4 rows first, then 10^3, then 10^5 (the mid sizes decide the most picks).
    """
    syn = done[done.source == "synthetic"]
    have = set(zip(syn.n, syn.d, syn.k, syn.separation))
    c, grid = TIGHT
    cells = {(n, d, k) for n, d, k in design(False) if n <= 100_000}
    cells |= {(n, d, k) for n, ds, ks in grid for d in ds for k in ks}
    order = {10_000: 0, 1_000: 1, 100_000: 2}
    jobs = [("synthetic", cell, sep) for cell in sorted(cells, key=lambda t: (order[t[0]], t))
            for sep in SEPARATIONS + (c,) if (*cell, sep) not in have]
    return jobs


def table_data_sets(cal: pd.DataFrame):
    """The stored table's data sets in its order, each as ``(source, n, d, k, separation, seed, fit_seed)``.

    Every row records the seed its mixture was drawn with (empty for a real set) and the fits'
    random_state: a data set is redrawn, and its fits reseeded, from them.
    """
    first = cal.drop_duplicates(["source", "n", "d", "k", "separation"])
    return [(r.source, int(r.n), int(r.d), int(r.k), r.separation, None if pd.isna(r.seed) else int(r.seed),
             int(r.fit_seed)) for r in first.itertuples()]


def refit_jobs(cal: pd.DataFrame) -> list:
    """The data sets whose EUGkM grid (any calibrated epsilon) runs its Lloyd passes on the grid's rows:
    where ``grid_kmeans``' post-processing changed; every other fit is reproduced exactly."""
    from dpcore.algorithms._blocks.grid import eug_cells_per_dim
    from dpcore.algorithms.regime import GRID_ROW_PASS_CELLS
    return [job for job in table_data_sets(cal)
            if any(eug_cells_per_dim(job[1] * 0.98, e, job[2]) ** job[2] > GRID_ROW_PASS_CELLS for e in EPSILONS)]


def refit(path: Path, keys: list, timeout: float) -> None:
    """Re-measure ``keys`` on :func:`refit_jobs`' data sets, redrawn with their seeds; rows replaced in place."""
    cal = pd.read_csv(path)
    jobs = refit_jobs(cal)
    # the real sets are read only when one of them is to be refitted
    real = {name: X for name, X, _ in real_sets()} if any(job[0] not in MIXTURE_SOURCES for job in jobs) else {}
    print(f"{len(jobs)} data sets to refit for {', '.join(keys)}", flush=True)
    t_all = time.perf_counter()
    warm_up(keys)
    for i, (source, n, d, k, sep, seed, fit_seed) in enumerate(jobs):
        X = real[source] if source not in MIXTURE_SOURCES else draw(source, n, d, k, sep, seed)
        ref = _reference(X, k)
        at = (cal.source == source) & (cal.n == n) & (cal.d == d) & (cal.k == k) & (
            cal.separation.eq(sep) | (cal.separation.isna() & pd.isna(sep)))
        # every epsilon the table holds for these data (the grid's, and BETWEEN_EPSILONS where measured)
        res = run_all(X, k, sorted(cal.loc[at, "epsilon"].unique()), keys, timeout, seed=fit_seed)
        for (key, e), (cost, status, reg, sec) in res.items():
            row = at & (cal.key == key) & (cal.epsilon == e)
            cal.loc[row, ["ratio", "status", "regime", "seconds"]] = [cost / ref, status, reg, round(sec, 3)]
        print(f"[{i + 1}/{len(jobs)} {time.perf_counter() - t_all:6.0f}s] {source} n={n} d={d} k={k} c={sep}", flush=True)
        cal.to_csv(path, index=False, float_format="%.5g")


def calibrated_classes() -> list[str]:
    """The registry keys whose class declares ``calibrated = True`` (on the class itself), in registry order."""
    return [key for key, cls in dpcore.ALGORITHMS.items() if vars(cls).get("calibrated", False)]


def add_key(path: Path, key: str, timeout: float, every: int = 1) -> None:
    """Measure ``key`` on every ``every``-th data set the table holds, at its epsilons; rows appended (issue 58).

    Each data set is drawn again from its seed (a real set read from ``$DPCORE_DATA``; skipped, and
    said, when it is not there) and the fits seeded with its ``fit_seed``, as :func:`refit` does; the
    cost is divided by the same non-private reference (:func:`_reference`, seeded), and the trivial
    answer's ratio is the one the table holds for the same data and epsilon.
    """
    if key not in dpcore.ALGORITHMS:
        raise SystemExit(f"{key!r} is not a registry key")
    cal = pd.read_csv(path)
    if (cal.key == key).any():
        raise SystemExit(f"the table already measures {key!r}: --refit {key} re-measures it")
    jobs = table_data_sets(cal)[::max(int(every), 1)]
    real = {name: X for name, X, _ in real_sets()} if any(job[0] not in MIXTURE_SOURCES for job in jobs) else {}
    print(f"{len(jobs)} data sets to measure {key} on", flush=True)
    t_all, rows = time.perf_counter(), []
    warm_up([key])
    for i, (source, n, d, k, sep, seed, fit_seed) in enumerate(jobs):
        if source not in MIXTURE_SOURCES and source not in real:
            print(f"skipped {source}: not in $DPCORE_DATA", flush=True)
            continue
        X = real[source] if source not in MIXTURE_SOURCES else draw(source, n, d, k, sep, seed)
        at = (cal.source == source) & (cal.n == n) & (cal.d == d) & (cal.k == k) & (
            cal.separation.eq(sep) | (cal.separation.isna() & pd.isna(sep)))
        eps_list = sorted(cal.loc[at, "epsilon"].unique())
        ref = _reference(X, k)
        res = run_all(X, k, eps_list, [key], timeout, seed=fit_seed)
        for e in eps_list:
            cost, status, reg, sec = res[(key, e)]
            triv = float(cal.loc[at & (cal.epsilon == e), "trivial_ratio"].iloc[0])
            rows.append(dict(source=source, n=n, d=d, k=k, separation=sep, epsilon=e, key=key, ratio=cost / ref,
                             trivial_ratio=triv, status=status, regime=reg, seconds=round(sec, 3), seed=seed,
                             fit_seed=fit_seed))
        print(f"[{i + 1}/{len(jobs)} {time.perf_counter() - t_all:6.0f}s] {source} n={n} d={d} k={k} c={sep}",
              flush=True)
        pd.concat([cal, pd.DataFrame(rows)], ignore_index=True).to_csv(path, index=False, float_format="%.5g")
    if not vars(dpcore.ALGORITHMS[key]).get("calibrated", False):
        print(f"now declare calibrated = True on {dpcore.ALGORITHMS[key].__name__}: the advisor ranks it, "
              "and tests/test_advisor_calibrated.py requires its rows", flush=True)


def real_sets():
    """The public real sets: (name, X, k, bounds), with their bounds from the data's published ranges."""
    root = data_dir()
    out = []
    for name, k in (("franti_s1", 15), ("franti_s3", 15), ("franti_a3", 50), ("franti_unbalance", 8),
                    ("franti_birch1", 100)):
        X = pd.read_csv(root / f"{name}.csv.gz")[["x", "y"]].to_numpy(float)
        out.append((name, X, k))
    g = pd.read_csv(root / "gowalla_nyc_checkins.csv.gz", usecols=["longitude", "latitude"]).to_numpy(float)
    out.append(("gowalla_nyc", g, 10))
    t = pd.read_csv(root / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz",
                    usecols=["pickup_longitude", "pickup_latitude"]).to_numpy(float)
    t = t[((t >= (-74.1, 40.7)) & (t <= (-73.9, 40.9))).all(axis=1)]
    out.append(("nyc_taxi", t, 5))
    a = pd.read_csv(root / "adult.csv.gz").select_dtypes("number").dropna().to_numpy(float)
    out.append(("adult_numeric", a, 5))
    m = np.load(root / "mnist_784.npz")
    X = m[m.files[0]].reshape(len(m[m.files[0]]), -1).astype(float)[:20_000]
    from sklearn.decomposition import PCA
    out.append(("mnist_pca20", PCA(20, random_state=0).fit_transform(X), 10))
    # The box: a public range rounded outward (here from the published data, as the datasets' own
    # documentation gives it); the algorithms see the data scaled into [-1, 1]^d.
    return [(name, _to_unit_box(X), k) for name, X, k in out]


def _to_unit_box(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.clip((X - lo) / span * 2 - 1, -1, 1)


def _reference(X, k):
    from sklearn.cluster import KMeans
    km = KMeans(k, n_init=3, max_iter=100, random_state=0).fit(X)
    return float(km.inertia_)


def _fit(key, X, k, eps, seed, conn):
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    recorded = []

    def record_only(reg, *, stacklevel=3):   # the verdict is kept, the refusal is not enforced
        recorded.append(reg.status)
        return reg
    regime_module.enforce = record_only
    cls = dpcore.ALGORITHMS[key]
    kw = dict(bounds=(-1.0, 1.0), epsilon=eps, random_state=seed)
    if cls.needs_delta:
        kw["delta"] = DELTA
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = cls(k, **kw).fit(X)
        cost, status = inertia(X, est.cluster_centers_), "ok"
    except MemoryError:
        cost, status = np.nan, "error"
    except Exception as exc:                 # noqa: BLE001 - a calibration records every failure
        cost, status = np.nan, f"error: {type(exc).__name__}: {str(exc)[:80]}"
    conn.send((cost, status, recorded[0] if recorded else "ok", time.perf_counter() - t))


def warm_up(keys):
    """Compile every algorithm's numba kernels in this process, so the forked fits inherit them."""
    for d in (2, 5):
        X = mixture(3000, d, 3, 2.0, seed=0)
        for key in keys:
            cls = dpcore.ALGORITHMS["zcdp_lloyd" if key == TRIVIAL else key]
            kw = dict(bounds=(-1.0, 1.0), epsilon=1.0, random_state=0)
            if cls.needs_delta:
                kw["delta"] = DELTA
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cls(3, **kw).fit(X)
            except Exception:                # noqa: BLE001 - a refusal still compiled what ran before it
                pass


def run_all(X, k, eps_list, keys, timeout, seed):
    """{(key, eps): (cost, status, regime, seconds)}, two forked fits at a time."""
    ctx = mp.get_context("fork")
    todo = [(key, e) for e in eps_list for key in keys]
    running, out = [], {}
    while todo or running:
        while todo and len(running) < 2:
            key, e = todo.pop(0)
            a, b = ctx.Pipe(duplex=False)
            kk = 1 if key == TRIVIAL else k
            p = ctx.Process(target=_fit, args=("zcdp_lloyd" if key == TRIVIAL else key, X, kk, e, seed, b))
            p.start()
            running.append((p, a, key, e, time.perf_counter()))
        time.sleep(0.01)
        for item in list(running):
            p, a, key, e, t0 = item
            if a.poll():
                try:
                    out[(key, e)] = a.recv()
                except EOFError:             # the child died without a word (e.g. killed by the OS)
                    out[(key, e)] = (np.nan, "error: died", "?", time.perf_counter() - t0)
                p.join()
                running.remove(item)
            elif not p.is_alive():
                out[(key, e)] = (np.nan, "error: died", "?", time.perf_counter() - t0)
                running.remove(item)
            elif time.perf_counter() - t0 > timeout:
                p.kill()
                p.join()
                out[(key, e)] = (np.nan, "timeout", "?", timeout)
                running.remove(item)
                # Its other epsilons on these data are not tried: they would cost as much (the run
                # time of every algorithm here grows with n, d and k, not with epsilon).
                for other in [t for t in todo if t[0] == key]:
                    todo.remove(other)
                    out[other] = (np.nan, "timeout (not tried)", "?", 0.0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=15.0)
    ap.add_argument("--out", type=Path, default=CALIBRATION_PATH)
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--loo", action="store_true", help="print the leave-one-out validation of the stored table")
    ap.add_argument("--tight", action="store_true", help="append the tight-cluster supplement (separation 16)")
    ap.add_argument("--wide", action="store_true", help="append the wide-box supplement (separation 32; "
                    "kept apart from the package table: --out benchmarks/results/advisor_calibration_wide32.csv)")
    ap.add_argument("--mid", action="store_true", help="append the mid-dimension supplement (10^5 rows, "
                    "d 5 and 10, k 10-64, separations 1-16)")
    ap.add_argument("--equal", action="store_true", help="append the equal-sizes supplement (equal weights, "
                    "separations 1-16, source synthetic_equal)")
    ap.add_argument("--between", action="store_true", help="measure the equal-sizes supplement's cells (both "
                    "size laws) at the epsilons between the grid's (0.5)")
    ap.add_argument("--eight", action="store_true", help="append separation 8 at every mixture cell the table "
                    "holds at separation 4 (both size laws), at the grid's epsilons and 0.5")
    ap.add_argument("--twenty-five", action="store_true", help="append the d = 25 column (10^3-10^5 rows, "
                    "k 3-100, every separation, both size laws, the grid's epsilons and 0.5)")
    ap.add_argument("--skewed", action="store_true", help="append the skewed-sizes column (Dirichlet(0.5) "
                    "weights, d 2-10, k 10 and 30, every separation, the grid's epsilons and 0.5)")
    ap.add_argument("--held", type=Path, help="the advisor's figures on a CSV of calibration rows the package "
                    "table does not hold (a column measured with --out elsewhere), predicted from the whole table")
    ap.add_argument("--complete", action="store_true",
                    help="append every separation (1, 2, 4, 16) missing at an (n, d, k) of the grid, n <= 10^5")
    ap.add_argument("--add", metavar="KEY", help="measure one registry key on every data set the table holds "
                    "and append its rows (a new algorithm opting in to the calibration)")
    ap.add_argument("--every", type=int, default=1, help="with --add or --loo: one data set in N (a quick look; "
                    "--loo --every 16 is the check tests/test_advisor_calibrated.py made before issue 58)")
    ap.add_argument("--refit", default="", help="comma-separated keys to re-measure in place where EUGkM's "
                    "grid Lloyd runs on rows (e.g. eugkm,hybrid,dplloyd after a change to grid_kmeans)")
    args = ap.parse_args(argv)
    if args.loo:
        return print_loo(every=args.every)
    if args.held:
        return print_loo(args.held)
    if args.refit:
        return refit(args.out, args.refit.split(","), args.timeout)
    if args.add:
        return add_key(args.out, args.add, args.timeout, args.every)
    candidates = calibrated_classes()
    keys = candidates + [TRIVIAL]
    rows = []
    # (source, spec, separation, seed, fit_seed): the j-th data set of a run is drawn with seed
    # offset + j and fitted with random_state j; the mid supplement's seeds are fixed by mid_jobs.
    jobs = [("synthetic", (n, d, k), SEPARATIONS[i % 3], i, i) for i, (n, d, k) in enumerate(design(args.quick))]
    appending = (args.tight or args.wide or args.mid or args.complete or args.equal or args.between or args.eight
                 or args.twenty_five or args.skewed)
    epsilons = (tuple(sorted(EPSILONS + BETWEEN_EPSILONS)) if args.eight or args.twenty_five or args.skewed
                else BETWEEN_EPSILONS if args.between else EPSILONS)
    if appending and args.out.exists():
        rows = pd.read_csv(args.out).to_dict("records")
    if args.tight or args.wide:     # a supplement's separation on its sub-grid
        c, grid = TIGHT if args.tight else WIDE
        offset = 1000 if args.tight else 3000
        jobs = [("synthetic", (n, d, k), c, offset + j, j)
                for j, (n, d, k) in enumerate((n, d, k) for n, ds, ks in grid for d in ds for k in ks)]
    if args.mid or args.wide:       # the mid cells: separations 1-16 alone (--mid), or 32 beside the sub-grid (--wide)
        mid = [("synthetic", job[:3], job[3], job[4], job[5]) for job in mid_jobs() if (job[3] == MID[1]) == args.wide]
        jobs = jobs + mid if args.wide else mid
    if args.complete:               # every separation at every (n, d, k) up to 10^5 rows
        jobs = [(src, spec, sep, 2000 + j, j) for j, (src, spec, sep) in enumerate(complete_jobs(pd.DataFrame(rows)))]
    if args.equal:
        jobs = equal_jobs()
    if args.eight:
        jobs = eight_jobs(pd.DataFrame(rows))
    if args.twenty_five:
        jobs = twenty_five_jobs()
    if args.skewed:
        jobs = skewed_jobs()
    if args.between:                # data sets already in the table, at new epsilons
        jobs = between_jobs(pd.DataFrame(rows))
        print(f"{len(jobs)} data sets to measure at epsilon {BETWEEN_EPSILONS}", flush=True)
    elif appending:                 # only what the table does not hold yet
        have = {(r["source"], r["n"], r["d"], r["k"], r["separation"]) for r in rows}
        jobs = [job for job in jobs if (job[0], *job[1], job[2]) not in have]
        print(f"{len(jobs)} data sets to add", flush=True)
    elif not args.no_real:
        jobs += [(name, (X, k), np.nan, None, len(jobs) + i) for i, (name, X, k) in enumerate(real_sets())]
    t_all = time.perf_counter()
    warm_up(keys)
    for j, (source, spec, sep, seed, fit_seed) in enumerate(jobs):
        if source in MIXTURE_SOURCES:
            n, d, k = spec
            X = draw(source, n, d, k, sep, seed)
        else:
            X, k = spec
            n, d = X.shape
        ref = _reference(X, k)
        res = run_all(X, k, epsilons, keys, args.timeout, seed=fit_seed)
        for e in epsilons:
            triv = res[(TRIVIAL, e)][0] / ref
            for key in candidates:
                cost, status, reg, sec = res[(key, e)]
                rows.append(dict(source=source, n=n, d=d, k=k, separation=sep, epsilon=e, key=key,
                                 ratio=cost / ref, trivial_ratio=triv, status=status, regime=reg,
                                 seconds=round(sec, 3), seed=seed, fit_seed=fit_seed))
        done = pd.DataFrame(rows)
        last = done[done.source.eq(source) & done.n.eq(n) & done.d.eq(d) & done.k.eq(k)
                    & (done.separation.eq(sep) | (done.separation.isna() & pd.isna(sep)))]
        last = last[last.epsilon.isin(epsilons)]
        best = last.groupby("epsilon").ratio.min()
        print(f"[{j + 1}/{len(jobs)} {time.perf_counter() - t_all:6.0f}s] {source} n={n} d={d} k={k} c={sep}: "
              f"best ratio by eps {dict(best.round(2))}, trivial {dict(last.groupby('epsilon').trivial_ratio.first().round(2))}",
              flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        done.to_csv(args.out, index=False, float_format="%.5g")
    print(f"wrote {args.out} ({len(rows)} rows) in {time.perf_counter() - t_all:.0f} s")


def print_loo(table: Path | None = None, every: int = 1):
    """The leave-one-data-set-out table: per algorithm, and the first pick's quality (docs/guide/advisor.rst).

    With ``table`` (a CSV of rows the package table does not hold, e.g. the skewed column): the same
    figures for those rows, predicted from the whole package table, and the silent fits listed.
    ``every``: one synthetic data set in N per separation (:func:`~benchmarks.advisor_loo.leave_one_out`);
    every real set always.  The issue's floor (:func:`~benchmarks.advisor_loo.issue_floor`) is printed
    with whether each line is met."""
    from benchmarks.advisor_loo import issue_floor, leave_one_out, loo_summary
    from dpcore.advisor.plan import runnable
    loo = leave_one_out(allowed=runnable, advisor=True, every=every,
                        table=None if table is None else pd.read_csv(table))
    s = loo_summary(loo)
    print(f"{'calibration' if table is None else table.name}: {s['cells']} (data set, epsilon) cells, "
          f"{s['fits']} fits that ran")
    for what, col in (("first pick (first_pick)", "pick_measured"),
                      ("the advisor as shipped (advisor_plan: auto's read modelled)", "advisor_measured")):
        a = loo_summary(loo, col)
        print(f"{what} within 1.25x of the best measured answer (trivial included): {a['pick_within_1_25']:.1%} "
              f"of cells (goal: 10 of 12 = 83%); within 2x: {a['pick_within_2']:.1%}; worst that finished "
              f"{a['pick_worst']:.3g}x (goal < 2x); picks that did not finish in 15 s: {a['pick_unfinished']}")
    print(f"prediction error exp|log pred - log measured|: median {s['median_factor']:.2f}x, "
          f"90th percentile {s['p90_factor']:.2f}x")
    print(f"measured worse than trivial but not warned (silent garbage): {s['silent_garbage']}; "
          f"warned but measured better: {s['false_alarms']}")
    ok = loo[np.isfinite(loo.measured) & np.isfinite(loo.predicted)].copy()
    ok["factor"] = np.exp(np.abs(np.log(ok.predicted) - np.log(ok.measured)))
    by = ok.groupby("key").factor.agg(fits="size", median="median", p90=lambda v: np.quantile(v, 0.9))
    print("\nper algorithm (leave-one-data-set-out):")
    print(by.round(2).to_string())
    print("\nthe docs' list-table (first_pick, leave-one-out):\n" + rst_table(loo))
    if table is not None:
        return print_held(loo)
    floor = issue_floor(loo)
    print(f"\nissue 25's floor (every={every}):")
    for what, value, low, met in floor:
        print(f"  {what:<36} {value:6.1%}  floor {low:6.1%}  {'met' if met else 'NOT MET'}")
    print("floor met" if all(m for *_, m in floor) else "floor NOT met")
    real = loo[loo.separation == 0.0].drop_duplicates(["source", "epsilon"])
    print("\nreal sets, first pick vs best measured:")
    for r in real.itertuples():
        cell = loo[(loo.source == r.source) & (loo.epsilon == r.epsilon)]
        best = min(cell.measured.min(), r.trivial_measured)
        print(f"  {r.source:<18} eps {r.epsilon:<5g} pick {r.first_pick:<16} {r.pick_measured:8.3g}x  "
              f"best {best:8.3g}x  factor {r.pick_measured / best:5.2f}  advisor {r.advisor_pick:<16} "
              f"{r.advisor_measured / best:5.2f}")



def rst_table(loo: pd.DataFrame, pick: str = "pick_measured") -> str:
    """The rows of docs/guide/advisor.rst's leave-one-out list-table: per kind of data left out (real
    sets; each size law by separation; the epsilon-0.5 cells; separation 8; d = 25; all), the cells,
    the pick within 1.25x and 2x, picks that did not finish, the median prediction error and the
    silent fits."""
    from benchmarks.advisor_loo import loo_summary
    mix = loo.separation > 0
    parts = [("real sets", ~mix)]
    for source, label in (("synthetic", "mixtures"), (EQUAL_SOURCE, "equal sizes"), ("synthetic_skewed", "skewed sizes")):
        for c in sorted(loo.separation[mix & (loo.source == source)].unique()):
            note = " (overlapping)" if c == 1 and source == "synthetic" else " (far apart)" if c == 16 and source == "synthetic" else ""
            parts.append((f"{label}, c = {c:g}{note}", (loo.source == source) & (loo.separation == c)))
    parts += [("ε = 0.5 (the column)", mix & (loo.epsilon == 0.5)), ("separation 8 (``--eight``)", loo.separation == 8),
              ("d = 25 (``--twenty-five``)", loo.d == 25), ("skewed sizes (``--skewed``)", loo.source == "synthetic_skewed"),
              ("all", loo.separation >= 0)]
    lines = []
    for label, rows in parts:
        if not rows.any():
            continue
        a = loo_summary(loo[rows], pick)
        cells = [label, f"{a['cells']:,}", f"{a['pick_within_1_25']:.0%}".replace("%", " %"),
                 f"{a['pick_within_2']:.0%}".replace("%", " %"), str(a["pick_unfinished"]),
                 f"{a['median_factor']:.3g}×", f"{a['silent_garbage']} / {a['fits']:,}"]
        lines += ["   * - " + cells[0]] + ["     - " + c for c in cells[1:]]
    return "\n".join(lines)


def print_held(loo: pd.DataFrame) -> None:
    """Held-out rows by separation and epsilon: the advisor's share within 1.25x and 2x, and the silent fits."""
    from benchmarks.advisor_loo import pick_factors
    cells = pick_factors(loo, "advisor_measured")
    by = cells.groupby(["separation", "epsilon"]).factor.agg(
        cells="size", within_1_25=lambda f: (f <= 1.25).mean(), within_2=lambda f: (f <= 2).mean(), worst="max")
    print("\nthe advisor as shipped, by separation and epsilon:")
    print(by.round(2).to_string())
    print("\nits picks:", dict(cells.advisor_pick.value_counts()))
    meas = loo[np.isfinite(loo.measured)]
    silent = meas[(meas.measured > meas.trivial_measured) & (meas.trivial_factor <= WARN_SHARE)]
    print(f"\nsilent fits ({len(silent)}):")
    print(silent[["n", "d", "k", "separation", "epsilon", "key", "measured", "trivial_measured", "trivial_factor"]]
          .round(3).to_string(index=False))


if __name__ == "__main__":
    main()
