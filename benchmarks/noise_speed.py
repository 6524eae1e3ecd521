"""Throughput of the noise module's samplers (values per second on one core).

Every sampler draws from the generator a private release uses (``check_random_state(None)``:
AES-128-CTR with AES-NI, else ChaCha20, keyed from OS entropy).  Target (issue 12): at
least 10^7 values/s for each of discrete Laplace, discrete Gaussian, lattice Laplace and
lattice Gaussian, so a 5 x 10^5-cell grid redraws in well under a slider step.  The
candidate bit generators are measured too (64-bit words/s): that measurement chose the
default.  CPU time of this process (best of ``--repeat``), so a busy shared machine
inflates the figures less than wall time would.

    python -m benchmarks.noise_speed [--n 1e7] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from dpcore.privacy.accountant import BudgetLedger
from dpcore.privacy.mechanisms import NoiseSource
from dpcore.privacy.rng import check_random_state
from dpcore.privacy.samplers import discrete_gaussian, discrete_laplace

TARGET = 1e7


def best_rate(fn, n: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return n / max(best, 1e-9)


def bit_generators():
    from randomgen import AESCounter, ChaCha
    return [("AESCounter (AES-128-CTR)", AESCounter()), ("ChaCha20", ChaCha(rounds=20)),
            ("PCG64 (numpy default; predictable)", np.random.PCG64())]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=float, default=1e7, help="values per measurement")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n, rep = int(args.n), args.repeat

    print("Random bit generators (64-bit words per second, one core)")
    for name, bg in bit_generators():
        print(f"  {name:<40}{best_rate(lambda bg=bg: bg.random_raw(n), n, rep):>12.3g}")
    print(f"  {'os.urandom':<40}{best_rate(lambda: np.frombuffer(os.urandom(8 * n), np.uint64), n, rep):>12.3g}")

    rng = check_random_state(None)
    print(f"\nSamplers (values per second, one core; generator {type(rng.bit_generator).__name__}; "
          f"target >= {TARGET:.0e})")
    reals = np.random.default_rng(0).uniform(-1, 1, n)
    counts = np.random.default_rng(0).integers(0, 50, n)

    def source(eps=1.0, delta=0.0):
        return NoiseSource(rng, BudgetLedger(eps, delta))

    rows = [
        ("discrete Laplace, scale 1 (counts, eps = 1)", lambda: discrete_laplace(rng, 1.0, n)),
        ("discrete Laplace, scale 1000 (counts, eps = 0.001)", lambda: discrete_laplace(rng, 1000.0, n)),
        ("discrete Gaussian, sigma 4", lambda: discrete_gaussian(rng, 4.0, n)),
        ("discrete Gaussian, sigma 10^4", lambda: discrete_gaussian(rng, 1e4, n)),
        ("NoiseSource.laplace on int counts", lambda: source().laplace(counts, sensitivity=1.0, epsilon=1.0,
                                                                        name="c")),
        ("lattice Laplace (NoiseSource.laplace, reals)", lambda: source().laplace(reals, sensitivity=2.0,
                                                                                   epsilon=1.0, name="s")),
        ("lattice Gaussian (NoiseSource.gaussian, reals)", lambda: source(1.0, 1e-6).gaussian(
            reals, sensitivity=2.0, epsilon=1.0, delta=1e-6, name="s")),
        ("for comparison: numpy float Laplace (unsafe)", lambda: rng.laplace(0.0, 1.0, n)),
    ]
    worst = float("inf")
    for name, fn in rows:
        rate = best_rate(fn, n, rep)
        flag = ""
        if not name.startswith("for comparison"):
            worst = min(worst, rate)
            flag = "ok" if rate >= TARGET else "BELOW TARGET"
        print(f"  {name:<50}{rate:>12.3g}  {flag}", flush=True)
    print(f"\nslowest safe sampler: {worst:.3g} values/s ({'meets' if worst >= TARGET else 'misses'} the 10^7 target)")


if __name__ == "__main__":
    main()
