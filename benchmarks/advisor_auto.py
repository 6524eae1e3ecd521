"""``algorithm="auto"`` against the advisor's single pick and the best single key, at the same total epsilon (issue 25).

Data: DPM's 10-d benchmark (``make_blobs(10**5, 10, centers=64, center_box=(-100, 100),
random_state=42)``, bounds +-100, k = 64: issue 16's ``synth_10d``) and ten held-out Gaussian
mixtures drawn like the calibration suite's but with seeds and (n, d, k, c) it never used (four of
them shaped like the issue's held-out real sets, three with 2,000-5,000 rows, three with equal
cluster sizes).  For each (data,
epsilon): the median over ``--seeds`` of the k-means cost ratio to non-private k-means for auto
(total epsilon, delta = 1e-6), for the advisor's first pick (a key, or auto), and for the keys
the advisor ranks in its top four, auto's candidates, DPM, zCDP-Lloyd and DPLloyd, each alone at
the whole epsilon ("best key" is the best of those; a fit over 30 s counts as no answer).

    python -m benchmarks.advisor_auto [--seeds 5] [--quick] [--margin M] [--separation S]
    python -m benchmarks.advisor_auto --separation 0.05 --stored benchmarks/results/advisor_auto.txt
    python -m benchmarks.advisor_auto --separation 0.05 --stored ... [--cells M] [--oracle-sizes] [--size-share S]
    DPCORE_DATA=../shared/data python -m benchmarks.advisor_auto --real [--margin M] [--separation S]

``--real``: ``auto`` on the calibration's real sets (scaled into the unit box as calibrated) at its
four epsilons against the calibration table's best key there (the plans are in-sample: the sets
are in the package table).  ``--margin`` sets :data:`dpcore.advisor.model.SPLIT_MARGIN` for
the run (1 judges a split's members at their shares, the rule before it).  ``--separation`` gives
auto that share of its budget for a private read of the clusters' separation
(:mod:`dpcore.advisor.separation_read`; 0, the default, plans from public inputs alone).  ``--stored``
fits auto only and takes each cell's best key and its median from an earlier run's output (the
keys' seeds are the same, so their medians are too).  Two experiments on the read (results in
``benchmarks/results/advisor_auto_experiments.txt``): ``--cells M`` gives the read's grid about M
cells per cluster (:data:`dpcore.advisor.separation_read.CELLS_PER_CLUSTER`, 4); ``--oracle-sizes``
tells auto each case's true size law (the read keeps only that law's hypotheses): what a perfect
read of the sizes could buy, an oracle no release has; ``--size-share S`` gives the read's size
histogram that share of its budget (:data:`dpcore.advisor.separation_read.SIZE_SHARE`, 0.5; 0 reads the
separation only, as before stop 54; also with ``--real``).

Seeds: ``--first-seed S`` fits seeds S .. S + seeds - 1 (0 by default).  The best of several keys'
medians is biased low (each median is noisy and the least is kept), so ``--selected PATH`` takes
each cell's best key from an earlier run on other seeds and measures it on these too (columns
``selected``, ``sel x``, ``auto/sel``): selection and measurement on separate seeds.  ``--part i/m``
runs the i-th of m interleaved shares of the cases (one process per core)::

    python -m benchmarks.advisor_auto --seeds 15 --first-seed 5 --separation 0.05 \
        --selected benchmarks/results/advisor_auto.txt --part 1/2     (and 2/2; advisor_auto_fresh.txt)
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import dpcore  # noqa: E402
from dpcore import evaluation as E  # noqa: E402
from dpcore.metrics import inertia  # noqa: E402

from .advisor_calibration import mixture  # noqa: E402

#: The held-out mixtures, each ``(n, d, k, c, seed[, equal])``: seeds and shapes the calibration never used.
HELD = [(30_000, 8, 12, 2.0, 101), (30_000, 20, 6, 1.0, 102), (50_000, 3, 20, 4.0, 103),
        # a second group shaped like the real sets (16-d with 26 clusters, 11-d, 2-D with
        # 16 clusters) and one between the regimes (12-d, 40 clusters, c = 8)
        (100_000, 12, 40, 8.0, 104), (20_000, 16, 26, 1.5, 105), (10_000, 11, 6, 1.0, 106),
        (50_000, 2, 16, 3.0, 107),
        # a third group with few rows, where the selection's noise (about 1 / (0.05 eps) rows' worth
        # of the clipped cost) is no longer small beside the differences between candidates
        (2_000, 2, 5, 2.0, 108), (5_000, 5, 10, 4.0, 109), (3_000, 8, 4, 16.0, 110),
        # a fourth group with equal cluster sizes (make_blobs-like), one of them beyond the
        # calibration's separations like synth_10d
        (60_000, 6, 24, 8.0, 111, True), (40_000, 14, 32, 24.0, 112, True), (20_000, 4, 8, 2.0, 113, True)]
SYNTH_10D = "synth_10d (DPM's 64 blobs)"


def held_name(n: int, d: int, k: int, c: float, seed: int, *equal: bool) -> str:
    """A held-out mixture's name in the printed tables, from its entry of :data:`HELD`."""
    return f"held-out mixture n={n} d={d} k={k} c={c:g}" + (" equal" if equal else "")


def held_specs() -> dict:
    """Each held-out mixture's name in the printed tables and its entry of :data:`HELD`."""
    return {held_name(*spec): spec for spec in HELD}


def truth(name: str) -> tuple[float, str]:
    """A case's true separation and size law ``(c, "equal" | "unequal")``: what no public input says.

    ``synth_10d``'s 64 blobs (unit spread, centres uniform in a box of side 200, in 10-d) are equal-sized and far
    beyond every calibrated separation: counted as the largest, c = 16.
    """
    if name == SYNTH_10D:
        return 16.0, "equal"
    n, d, k, c, seed, *equal = held_specs()[name]
    return c, "equal" if any(equal) else "unequal"


def shapes() -> dict:
    """Each case's name and public shape ``(n, d, k)``, without drawing the data."""
    return {SYNTH_10D: (100_000, 10, 64), **{name: spec[:3] for name, spec in held_specs().items()}}


def cases(quick: bool):
    from sklearn.datasets import make_blobs
    X, _ = make_blobs(100_000, 10, centers=64, center_box=(-100, 100), random_state=42)
    out = [(SYNTH_10D, X, 64, (-100.0, 100.0))]
    for name, (n, d, k, c, seed, *equal) in list(held_specs().items())[: 1 if quick else None]:
        out.append((name, mixture(n, d, k, c, seed, equal=any(equal)), k, (-1.0, 1.0)))
    return out


#: A fit slower than this (seconds) counts as no answer, as in the calibration (EUGkM's 10-d grids).
TIME_LIMIT = 30


def _alarm(signum, frame):
    raise TimeoutError


#: ``AutoKMeans``'s parameters in this run (``--separation``).
AUTO_PARAMS: dict = {}


def fit(key, X, k, eps, bounds, seed):
    cls = dpcore.ALGORITHMS[key]
    kw = dict(epsilon=eps, bounds=bounds, random_state=seed, **(AUTO_PARAMS if key == "auto" else {}))
    if cls.needs_delta:
        kw["delta"] = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(TIME_LIMIT)
        try:
            return cls(k, **kw).fit(X)
        except Exception:                 # noqa: BLE001 - a refusal or a timeout counts as no answer
            return None
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


#: ``--oracle-sizes``: the size law of the case being fitted ({} when off).
ORACLE: dict = {}


def _read_with_oracle(read):
    """``read_separation`` whose plausible hypotheses keep only :data:`ORACLE`'s size law (when set)."""
    def wrapped(*args, **kwargs):
        out = read(*args, **kwargs)
        if ORACLE:
            out = {**out, "hypotheses": tuple(h for h in out["hypotheses"] if h[1] == ORACLE["sizes"])}
        return out
    return wrapped


def chosen(fits) -> str:
    """The keys auto released over its seeds, then in brackets each plan it ran ("dpm+zcdp_lloyd"):
    the chosen key alone does not say whether it ran on the whole budget or on a share of it."""
    plans = sorted({"+".join(c["key"] for c in e.candidates_) for e in fits})
    return f"{','.join(sorted({e.chosen_ for e in fits}))} [{' '.join(plans)}]"


def real(seeds: int) -> None:
    """``auto`` (median of ``seeds``) on each real set and calibrated epsilon, beside the table's best key
    (both over the calibration's own non-private reference cost)."""
    from dpcore.advisor.model import calibration

    from .advisor_calibration import _reference, real_sets
    cal = calibration()
    print(f"{'data':<18} {'eps':>5} {'auto':>7} {'table best':>16} {'best x':>7} {'auto/best':>9}  auto chose [plans]")
    for name, X, k in real_sets():
        ref = _reference(X, k)
        for eps in (0.05, 0.25, 1.0, 5.0):
            at = cal[(cal.source == name) & (cal.epsilon == eps)]
            best = at.loc[at.ratio.astype(float).idxmin()]
            ests = [fit("auto", X, k, eps, (-1.0, 1.0), s) for s in range(seeds)]
            auto = float(np.median([inertia(X, e.cluster_centers_) / ref for e in ests]))
            chose = chosen(ests)
            print(f"{name:<18} {eps:>5g} {auto:>7.3g} {best.key:>16} {float(best.ratio):>7.3g} "
                  f"{auto / float(best.ratio):>9.2f}  {chose}", flush=True)


def _stored_rows(path):
    """``(data, eps, columns after eps)`` of an earlier run's first table (the one above any second header)."""
    seen = False
    for line in Path(path).read_text().splitlines():
        if line.startswith("#") and seen:
            return
        if line.startswith(("#", "data ")) or len(line) < 47:
            continue
        seen = True
        eps, *rest = line[46:].split()
        yield line[:46].rstrip(), float(eps), rest


def stored_auto(path) -> dict:
    """``{(data, eps): auto's median}`` from an earlier run's printed table."""
    return {(name, eps): float(rest[0]) for name, eps, rest in _stored_rows(path)}


def stored_best(path) -> dict:
    """``{(data, eps): (best key, its median)}`` from an earlier run's printed table."""
    return {(name, eps): (rest[3], float(rest[4])) for name, eps, rest in _stored_rows(path)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--margin", type=float, default=None)
    ap.add_argument("--separation", type=float, default=None, help="auto's separation_share")
    ap.add_argument("--stored", default=None, help="an earlier run's output: fit auto only")
    ap.add_argument("--cells", type=int, default=None, help="the read's grid cells per cluster")
    ap.add_argument("--oracle-sizes", action="store_true", help="auto's read keeps the true size law only")
    ap.add_argument("--size-share", type=float, default=None, help="the read's share for its size histogram")
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    ap.add_argument("--selected", default=None,
                    help="an earlier run's output (other seeds): measure its best key of each cell on these seeds")
    ap.add_argument("--part", default=None, help="i/m: the i-th of m interleaved shares of the cases (1-based)")
    args = ap.parse_args(argv)
    if args.size_share is not None:
        from dpcore.advisor import separation_read as sep
        sep.SIZE_SHARE = args.size_share
    if args.oracle_sizes and args.real:
        ap.error("--oracle-sizes needs the held-out mixtures' known size laws (not --real)")
    if args.cells is not None:
        from dpcore.advisor import separation_read as separation
        separation.CELLS_PER_CLUSTER = args.cells
    if args.oracle_sizes:
        from dpcore.algorithms import auto_kmeans as selection
        selection.read_separation = _read_with_oracle(selection.read_separation)
    if args.separation is not None:
        AUTO_PARAMS["separation_share"] = args.separation
    if args.margin is not None:
        from dpcore.advisor import model as calibrated
        calibrated.SPLIT_MARGIN = args.margin
    if args.real:
        return real(args.seeds)
    from sklearn.cluster import KMeans
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    selected = stored_best(args.selected) if args.selected else {}
    sel_head = f" {'selected':>16} {'sel x':>8} {'auto/sel':>8}" if selected else ""
    print(f"{'data':<46} {'eps':>5} {'auto':>8} {'pick':>16} {'pick x':>8} {'best key':>16} {'best x':>8} "
          f"{'auto/best':>9}{sel_head}  auto chose [plans]")
    part, parts = (int(x) for x in args.part.split("/")) if args.part else (1, 1)
    for name, X, k, bounds in cases(args.quick)[part - 1::parts]:
        if args.oracle_sizes:
            ORACLE["sizes"] = truth(name)[1]
        ref = KMeans(k, n_init=3, random_state=0).fit(X).inertia_
        lo, hi = bounds
        Xn = (X - lo) / (hi - lo) * 2 - 1
        for eps in (0.5, 1.0, 2.0):
            adv = E.advise(len(X), X.shape[1], k, eps, delta=1e-6)
            stored = stored_best(args.stored).get((name, eps)) if args.stored else None
            keys = [] if stored else list(dict.fromkeys([p.key for p in adv.ranking[:4]] + list(adv.plan.keys)
                                      + ["dpm", "zcdp_lloyd", "dplloyd"]
                                      + [selected[(name, eps)][0]] * ((name, eps) in selected)))
            med = {}
            t = time.perf_counter()
            for key in keys:
                r = [fit(key, Xn, k, eps, (-1.0, 1.0), seeds[0])]
                if r[0] is not None:              # a refusal or a timeout is not tried again
                    r += [fit(key, Xn, k, eps, (-1.0, 1.0), s) for s in seeds[1:]]
                med[key] = np.median([inertia(Xn, e.cluster_centers_) * ((hi - lo) / 2) ** 2 / ref if e else np.inf
                                      for e in r])
            autos = [fit("auto", Xn, k, eps, (-1.0, 1.0), s) for s in seeds]
            auto = np.median([inertia(Xn, e.cluster_centers_) * ((hi - lo) / 2) ** 2 / ref for e in autos])
            chose = chosen(autos)
            med["auto"] = auto
            if stored:
                med[stored[0]] = stored[1]
            best = min((key for key in med if key != "auto"), key=med.get)
            # The best of several keys' medians is biased low (each median is noisy, the least is
            # kept); a key chosen on other seeds and measured on these is not.
            sel = selected.get((name, eps), ("-",))[0]
            sel_cols = (f" {sel:>16} {med.get(sel, np.nan):>8.3g} {auto / med.get(sel, np.nan):>8.2f}"
                        if selected else "")
            print(f"{name:<46} {eps:>5g} {auto:>8.3g} {adv.best:>16} {med.get(adv.best, np.nan):>8.3g} "
                  f"{best:>16} {med[best]:>8.3g} {auto / med[best]:>9.2f}{sel_cols}  {chose} "
                  f"({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
