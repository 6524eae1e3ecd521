"""Nearest-centre kernels: labels, per-cluster counts and sums, inertia.

Below both the sources (whose in-memory aggregates use them) and the algorithms (whose Lloyd
steps do), so neither has to import the other.  Vectorised over points and chunked so that
10^7 points never need an (n, k) matrix in memory at once.
"""
from __future__ import annotations

import numpy as np

from .fixedpoint import FixedPoint, quantize

# Rows per chunk: (chunk, k) temporaries stay cache-sized while per-call overhead stays small.
_CHUNK = 1 << 16
# Below this many dimensions and centres, distances are accumulated centre by centre on columns.
_LOW_D, _FEW_K = 4, 32


class _Scratch:
    """Per-call chunk buffers, reused across chunks.

    A fresh numpy array of a chunk's size is a new memory mapping whose pages
    fault on first touch; reusing buffers made DPLloyd on 10^7 points ~2x faster.
    """

    def __init__(self, d: int, m: int):
        self.cols = np.empty((d, m))
        self.lab = np.empty(m, dtype=np.intp)
        self.dist = np.empty(m)
        self.t = np.empty(m)
        self.u = np.empty(m)

    def columns(self, x: np.ndarray, domain=None) -> np.ndarray:
        """Copy rows ``x`` (m, d) into unit-stride columns (d, m), normalised by ``domain`` if given."""
        cols = self.cols[:, :x.shape[0]]
        np.copyto(cols, x.T)
        if domain is not None:
            cols -= domain.center[:, None]
            cols *= (2.0 / domain.width)[:, None]
        return cols

    def nearest(self, cols: np.ndarray, C: np.ndarray):
        """Labels and squared distances (views into the buffers) of column-major points."""
        m = cols.shape[1]
        lab, dist, tt, uu = self.lab[:m], self.dist[:m], self.t[:m], self.u[:m]
        dist.fill(np.inf)
        for j in range(C.shape[0]):
            np.subtract(cols[0], C[j, 0], out=tt)
            tt *= tt
            for i in range(1, cols.shape[0]):
                np.subtract(cols[i], C[j, i], out=uu)
                uu *= uu
                tt += uu
            lab[tt < dist] = j
            np.minimum(dist, tt, out=dist)
        return lab, dist


def _check_centers(X, centers):
    C = np.asarray(centers, dtype=float)
    if C.ndim != 2 or C.shape[1] != X.shape[1] or C.shape[0] == 0:
        raise ValueError(f"centers must have shape (k, {X.shape[1]}) with k >= 1, got {C.shape}")
    return C


def assign(X, centers, *, return_distances: bool = False):
    """Nearest centre of every point.

    Chunked so that 10^7 points never need an (n, k) matrix at once.  In low
    dimension with few centres (the maps' case) distances are accumulated
    centre by centre on unit-stride columns; otherwise the
    ``|x|^2 - 2 x.c + |c|^2`` expansion uses one matrix product per chunk.
    (scikit-learn's ``pairwise_distances_argmin`` was measured 5-50x slower
    on the many small calls of Lloyd-style loops, from its per-call set-up.)

    Parameters
    ----------
    X : ndarray (n, d)
    centers : ndarray (k, d), same units as X

    Returns
    -------
    labels : ndarray (n,) int
    sq_distances : ndarray (n,) float, only if ``return_distances``
        Squared Euclidean distance to the nearest centre.

    Raises
    ------
    ValueError
        If ``centers`` is empty or its width differs from X's.
    """
    X = np.asarray(X, dtype=float)
    C = _check_centers(X, centers)
    n, d = X.shape
    labels = np.empty(n, dtype=np.intp)
    best = np.empty(n, dtype=float) if return_distances else None
    if d <= _LOW_D and C.shape[0] <= _FEW_K:
        scratch = _Scratch(d, min(n, _CHUNK))
        for s in range(0, n, _CHUNK):
            lab, dist = scratch.nearest(scratch.columns(X[s:s + _CHUNK]), C)
            labels[s:s + _CHUNK] = lab
            if best is not None:
                best[s:s + _CHUNK] = dist
    else:
        cc = np.einsum("ij,ij->i", C, C)
        for s in range(0, n, _CHUNK):
            x = X[s:s + _CHUNK]
            D = cc[None, :] - 2.0 * (x @ C.T)
            lab = D.argmin(axis=1)
            labels[s:s + _CHUNK] = lab
            if best is not None:
                best[s:s + _CHUNK] = np.maximum(D[np.arange(x.shape[0]), lab] + np.einsum("ij,ij->i", x, x), 0.0)
    return (labels, best) if return_distances else labels


def cluster_sums(X, centers, sample_weight=None, *, domain=None, exact: bool = False):
    """Per-cluster (weighted) counts and coordinate sums for the nearest-centre partition.

    One chunked pass fuses :func:`assign` with the sums, so each chunk is read
    while it is still in cache: the Lloyd update of DPLloyd (Su et al. 2016,
    Eq. 2) and of weighted Lloyd on a grid synopsis (§4.2).

    Parameters
    ----------
    X : ndarray (n, d)
    centers : ndarray (k, d)
    sample_weight : ndarray (n,), optional (may be negative: noisy cell counts)
    domain : dpcore.utils.domain.Domain, optional
        When given, X is in data units and ``centers``, the counts and the sums
        are in the domain's ``[-1, 1]^d`` normalisation; chunks are normalised
        on the fly, so no normalised copy of X is ever allocated.
    exact : bool, default False
        Sums that will be noised: each normalised coordinate is quantised to the public
        fixed-point grid (:func:`dpcore.utils.fixedpoint.quantize`) and the sums are exact
        integers, whatever the order of the rows (issue 29).  Needs ``X`` normalised (or
        ``domain``) and clipped, and no weights.

    Returns
    -------
    counts : ndarray (k,) float (int64 when ``exact``), the number (or total weight) of points per cluster
    sums : ndarray (k, d) float, their coordinate sums (weighted); a
        :class:`~dpcore.utils.fixedpoint.FixedPoint` when ``exact``
    """
    X = np.asarray(X, dtype=float)
    C = _check_centers(X, centers)
    n, d = X.shape
    k = C.shape[0]
    if exact and sample_weight is not None:
        raise ValueError("exact sums are for noised queries over rows: no sample_weight")
    counts = np.zeros(k, dtype=np.int64 if exact else float)
    sums = np.zeros((k, d), dtype=np.int64 if exact else float)
    w_all = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    low = d <= _LOW_D and k <= _FEW_K
    scratch = _Scratch(d, min(n, _CHUNK)) if low else None
    for s in range(0, n, _CHUNK):
        w = None if w_all is None else w_all[s:s + _CHUNK]
        if scratch is not None:
            cols = scratch.columns(X[s:s + _CHUNK], domain)
            lab, _ = scratch.nearest(cols, C)
        else:
            x = X[s:s + _CHUNK] if domain is None else domain.normalize(X[s:s + _CHUNK])
            lab, cols = assign(x, C), x.T
        if exact:
            # Chunk sums of integers below 2^(SUM_BITS + 16) < 2^53: exact in float64, then added in int64.
            counts += np.bincount(lab, minlength=k)
            for i in range(d):
                sums[:, i] += np.bincount(lab, weights=quantize(cols[i]), minlength=k).astype(np.int64)
            continue
        counts += np.bincount(lab, weights=w, minlength=k)
        for i in range(d):
            sums[:, i] += np.bincount(lab, weights=cols[i] if w is None else cols[i] * w, minlength=k)
    return (counts, FixedPoint(sums)) if exact else (counts, sums)


def inertia(X, centers, sample_weight=None) -> float:
    """Sum of squared distances of points to their nearest centre (scikit-learn's ``inertia_``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Points, in data units.
    centers : ndarray of shape (n_clusters, n_features)
        Centres, in data units.
    sample_weight : ndarray of shape (n_samples,), optional
        Weight of each point (default 1).

    Returns
    -------
    float, in squared data units.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.metrics import inertia
    >>> X = np.array([[0.0, 0.0], [0.0, 2.0], [4.0, 0.0], [4.0, 2.0]])
    >>> centers = np.array([[0.0, 1.0], [4.0, 1.0]])
    >>> inertia(X, centers)
    4.0
    """
    _, d2 = assign(X, centers, return_distances=True)
    if sample_weight is None:
        return float(d2.sum())
    return float(np.dot(np.asarray(sample_weight, dtype=float), d2))


