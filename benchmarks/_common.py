"""Helpers shared by the benchmark scripts: real data, resampling to a size, time and peak memory."""
from __future__ import annotations

import os
import resource
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TAXI_BOUNDS = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))


def best_of(fn, repeat: int) -> float:
    """The fastest of ``repeat`` calls of ``fn()``, wall seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def data_dir() -> Path:
    path = Path(os.environ.get("DPCORE_DATA", REPO.parent / "shared" / "data"))
    if not path.is_dir():
        raise SystemExit(f"real data folder {path} not found: set DPCORE_DATA")
    return path


def taxi_points() -> np.ndarray:
    """The real taxi pickups inside the Feldman et al. box (about 181k rows)."""
    import pandas as pd
    X = pd.read_csv(data_dir() / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz",
                    usecols=["pickup_longitude", "pickup_latitude"]).to_numpy(float)
    lo, hi = TAXI_BOUNDS
    return X[((X >= lo) & (X <= hi)).all(axis=1)]


def resample(X: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """n rows drawn with replacement from X (scales the real sample up for speed tests)."""
    return X[np.random.default_rng(seed).integers(0, len(X), size=n)]


class PeakRSS:
    """Context manager measuring the peak resident memory growth (MB) of a block, by polling /proc."""

    def __enter__(self):
        self.base = self._rss()
        self.peak = self.base
        self._stop = False
        self._t = threading.Thread(target=self._poll, daemon=True)
        self._t.start()
        return self

    def _poll(self):
        while not self._stop:
            self.peak = max(self.peak, self._rss())
            time.sleep(0.005)

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()

    def __exit__(self, *exc):
        self._stop = True
        self._t.join()
        self.peak = max(self.peak, self._rss())
        self.mb = (self.peak - self.base) / 2 ** 20


def timed(fn, *args, **kwargs):
    """(result, seconds, peak extra MB) of one call."""
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        dt = time.perf_counter() - t0
    return out, dt, mem.mb
