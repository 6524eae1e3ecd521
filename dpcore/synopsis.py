"""Released, data-like objects: what an estimator publishes besides centres.

Every synopsis is differentially private on its own (it is produced by the
estimator's noise steps and recorded in its ledger), so it may be shown,
exported and re-analysed freely.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def grid_points(axes: list) -> np.ndarray:
    """All points of the product grid ``axes[0] x axes[1] x ...`` as rows (M, d), in C order.

    Works for any number of dimensions (numpy's ``meshgrid``/``ravel_multi_index``
    stop at 32), as long as M itself fits in memory.
    """
    sizes = np.array([len(a) for a in axes], dtype=np.int64)
    total = int(np.prod(sizes))
    strides = np.ones(len(axes), dtype=np.int64)
    for i in range(len(axes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    digits = (np.arange(total, dtype=np.int64)[:, None] // strides[None, :]) % sizes[None, :]
    return np.stack([np.asarray(a, dtype=float)[digits[:, i]] for i, a in enumerate(axes)], axis=1)


@dataclass
class GridSynopsis:
    """Uniform-grid synopsis (Su et al. 2016, §4.2): cell edges and signed noisy counts.

    Attributes
    ----------
    edges : list of d ndarrays
        ``edges[i]`` has ``shape[i] + 1`` increasing cell boundaries, data units.
    counts : ndarray, shape ``tuple(len(e) - 1 for e in edges)`` (flat, in C order, when d > 32,
        beyond numpy's array dimensions)
        Noisy counts, kept signed and unrounded: negative cells cancel
        positive noise in the weighted Lloyd step.
    """

    edges: list
    counts: np.ndarray
    kind: str = field(default="grid", init=False)

    @property
    def shape(self) -> tuple:
        return tuple(len(e) - 1 for e in self.edges)

    def cell_centers(self) -> np.ndarray:
        """Centres of all cells, (M, d), in C order matching ``counts.ravel()``."""
        return grid_points([(e[:-1] + e[1:]) / 2 for e in self.edges])

    def to_dict(self) -> dict:
        return {"kind": self.kind, "edges": [e.tolist() for e in self.edges],
                "counts": self.counts.tolist()}


@dataclass
class CoresetSynopsis:
    """Weighted private coreset (Feldman et al. 2017): points (m, d) and positive weights (m,)."""

    points: np.ndarray
    weights: np.ndarray
    kind: str = field(default="coreset", init=False)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "points": self.points.tolist(), "weights": self.weights.tolist()}


@dataclass
class WaveletGridSynopsis:
    """WaveCluster result grid: cell edges and a cluster id per cell (-1: not significant).

    Attributes
    ----------
    edges : list of d ndarrays (data units)
    labels : ndarray of int, the grid's shape
    values : ndarray or None
        The (noisy) transformed values the labels came from, if released.
    """

    edges: list
    labels: np.ndarray
    values: np.ndarray | None = None
    kind: str = field(default="wavelet_grid", init=False)

    @property
    def shape(self) -> tuple:
        return tuple(len(e) - 1 for e in self.edges)

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "edges": [e.tolist() for e in self.edges], "labels": self.labels.tolist()}
        if self.values is not None:
            out["values"] = self.values.tolist()
        return out
