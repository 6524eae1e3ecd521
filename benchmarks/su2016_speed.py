"""Time and peak memory of DPLloyd, EUGkM and Hybrid at N = 10^5, 10^6, 10^7 2-D points.

The points are resampled from the real NYC taxi pickups.  Targets (issue 2, 2-core machine):
DPLloyd (k = 5, 5 iterations) on 10^7 points under 2 s; EUGkM at epsilon = 0.5 on 10^7 under 3 s.
Also: a new epsilon on already-loaded 10^6 points redraws in under 0.5 s (issue 8).

    python -m benchmarks.su2016_speed [--sizes 1e5 1e6 1e7]
"""
from __future__ import annotations

import argparse

import dpcore
from benchmarks._common import TAXI_BOUNDS, resample, taxi_points, timed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e5, 1e6, 1e7])
    args = ap.parse_args(argv)
    base = taxi_points()
    cases = [("dplloyd", dict(n_iter=5, epsilon=1.0)), ("dplloyd", dict(epsilon=1.0)),
             ("eugkm", dict(epsilon=0.5)), ("hybrid", dict(epsilon=0.5))]
    print(f"{'algorithm':<22}{'N':>12}{'fit s':>10}{'peak MB':>10}")
    for n in map(int, args.sizes):
        X = resample(base, n)
        for key, kw in cases:
            est = dpcore.ALGORITHMS[key](5, bounds=TAXI_BOUNDS, random_state=0, **kw)
            _, dt, mb = timed(est.fit, X)
            label = key + (f" t={kw['n_iter']}" if "n_iter" in kw else "")
            print(f"{label:<22}{n:>12,}{dt:>10.2f}{mb:>10.0f}", flush=True)
        del X


if __name__ == "__main__":
    main()
