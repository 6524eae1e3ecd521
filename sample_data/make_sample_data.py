"""Make the two small synthetic data sets shipped in ``sample_data/``.

Deterministic: fixed seeds, fixed output formatting (no pandas float
formatting), so running it again gives byte-identical files.

``s1_like.csv``
    15 Gaussian clusters, 5,000 points in 2-D, columns ``x,y,label``, in the
    style of Fränti & Virmajoki's S1 benchmark: integer coordinates inside the
    public box ``[0, 1_000_000]^2`` (S1's own scale), cluster centres on a
    jittered 4 x 4 grid (one cell left empty) inside ``[100_000, 900_000]^2``,
    standard deviations 25,000 to 45,000 so the clusters overlap a little.
    ``label`` is the generating cluster, 1..15.
``spirals.csv``
    3 interleaved noisy spirals, 6,000 points in 2-D, columns ``x,y,label``,
    inside the public box ``[-10, 10]^2`` (rounded to 1e-4). ``label`` 1..3.

Points that a Gaussian would put outside the box are rejected and redrawn
(never clipped), so every point lies inside the documented box.

Usage::

    python sample_data/make_sample_data.py            # writes next to this script
    python sample_data/make_sample_data.py --out DIR  # writes into DIR
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 20160101          # any fixed number; changing it changes the committed files
S1_BOX = (0, 1_000_000)  # public box of s1_like, both coordinates
S1_N, S1_K = 5000, 15
SPIRAL_BOX = (-10.0, 10.0)  # public box of spirals, both coordinates
# 2,000 points an arm, 3/4 of a turn, noise 0.25: dense enough for a grid to keep the arms apart, at ε = 1
# too (1,500 points on 1¼ turns, noise 0.35, merged into one cluster even without privacy; issue 56).
SPIRAL_N_PER_ARM, SPIRAL_ARMS = 2000, 3


def _inside(P: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return ((P >= lo) & (P <= hi)).all(axis=1)


def make_s1_like(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return integer points (5000, 2) and labels 1..15."""
    grid = np.linspace(150_000, 850_000, 4)
    cells = np.array([(gx, gy) for gx in grid for gy in grid])  # 16 grid cells
    cells = cells[rng.permutation(16)[:S1_K]]                   # leave one empty
    centres = cells + rng.uniform(-60_000, 60_000, size=cells.shape)
    sds = rng.uniform(25_000, 45_000, size=S1_K)
    sizes = np.full(S1_K, S1_N // S1_K)
    sizes[: S1_N - sizes.sum()] += 1
    pts, labs = [], []
    for j in range(S1_K):  # loop over clusters, not points
        draw = np.rint(rng.normal(centres[j], sds[j], size=(2 * sizes[j], 2)))
        draw = draw[_inside(draw, *S1_BOX)][: sizes[j]]
        assert len(draw) == sizes[j]
        pts.append(draw)
        labs.append(np.full(sizes[j], j + 1))
    return np.concatenate(pts).astype(np.int64), np.concatenate(labs)


def make_spirals(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Return points (6000, 2) rounded to 1e-4 and labels 1..3."""
    pts, labs = [], []
    for j in range(SPIRAL_ARMS):
        t = rng.uniform(0.0, 1.0, size=2 * SPIRAL_N_PER_ARM)
        theta = np.pi / 3 + t * 1.5 * np.pi          # three quarters of a turn
        r = 2.0 + 6.5 * t
        phase = 2 * np.pi * j / SPIRAL_ARMS
        P = np.c_[r * np.cos(theta + phase), r * np.sin(theta + phase)]
        P = np.round(P + rng.normal(0.0, 0.25, size=P.shape), 4)
        P = P[_inside(P, *SPIRAL_BOX)][:SPIRAL_N_PER_ARM]
        assert len(P) == SPIRAL_N_PER_ARM
        pts.append(P)
        labs.append(np.full(SPIRAL_N_PER_ARM, j + 1))
    return np.concatenate(pts), np.concatenate(labs)


def _write(path: Path, X: np.ndarray, labels: np.ndarray, fmt: str) -> None:
    lines = ["x,y,label"]
    lines += [f"{fmt.format(a)},{fmt.format(b)},{int(c)}" for (a, b), c in zip(X.tolist(), labels.tolist())]
    path.write_bytes(("\n".join(lines) + "\n").encode("ascii"))


def main(out: Path) -> list[Path]:
    """Write ``s1_like.csv`` and ``spirals.csv`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    X, y = make_s1_like(rng)
    s1 = out / "s1_like.csv"
    _write(s1, X, y, "{:d}")
    X, y = make_spirals(rng)
    sp = out / "spirals.csv"
    _write(sp, X, y, "{:.4f}")
    return [s1, sp]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args()
    for p in main(args.out):
        print(p, p.stat().st_size, "bytes")
