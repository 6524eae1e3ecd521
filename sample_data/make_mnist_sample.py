"""Make ``sample_data/mnist_sample.npz``: 15,000 real MNIST digits for the app's offline default.

Source: the team's copy of OpenML dataset 554 ``mnist_784`` (LeCun, Cortes &
Burges, "The MNIST database of handwritten digits"; CC BY-SA 3.0), i.e. the
file ``mnist_784.npz`` of ``../shared/data`` (70,000 x 784 grey levels 0..255,
``X`` uint8, ``y`` the digit).  We keep a uniform random subset of 15,000 rows
(fixed seed, rows kept in file order), stored as uint8 with zlib compression
(about 2.5 MB), with the same keys ``X`` and ``y``.

Usage::

    python sample_data/make_mnist_sample.py [--source ../shared/data/mnist_784.npz] [--out DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 784          # any fixed number; changing it changes the committed file
N_ROWS = 15_000     # the most that keeps the file under 3 MB


def make(source: Path, out: Path) -> Path:
    with np.load(source) as z:
        X, y = z["X"], z["y"]
    if X.shape[1] != 784 or X.dtype != np.uint8:
        raise ValueError(f"{source} is not the 70,000 x 784 uint8 MNIST file")
    idx = np.sort(np.random.default_rng(SEED).choice(X.shape[0], N_ROWS, replace=False))
    path = out / "mnist_sample.npz"
    np.savez_compressed(path, X=X[idx], y=np.asarray(y)[idx].astype(np.uint8))
    return path


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=here.parent.parent / "shared" / "data" / "mnist_784.npz")
    ap.add_argument("--out", type=Path, default=here)
    a = ap.parse_args()
    path = make(a.source, a.out)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
