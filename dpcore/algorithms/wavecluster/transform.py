"""WaveCluster's grid machinery: quantisation, the wavelet approximation, thresholds and connected cells.

Sheikholeslami, Chatterjee & Zhang (1998) §4; shared by the non-private WaveCluster and the private
variants of Chen, Yu & Chirkova.  PyWavelets computes the transform, SciPy labels connected cells.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pywt
from scipy import ndimage

#: Cap on the number of quantisation cells (8 bytes each), as in :mod:`dpcore.algorithms._blocks.grid`.
MAX_CELLS = 1 << 22


#: PyWavelets extension mode: keeps one transformed value per block of 2^d cells.
MODE = "periodization"


# ---------------------------------------------------------------------------
# parameter checks
# ---------------------------------------------------------------------------
def check_wavelet(wavelet) -> pywt.Wavelet:
    """Return the PyWavelets discrete wavelet named ``wavelet``.

    Raises
    ------
    ValueError
        If the name is not a discrete wavelet of PyWavelets (``pywt.wavelist(kind="discrete")``).
    """
    if isinstance(wavelet, pywt.Wavelet):
        return wavelet
    names = pywt.wavelist(kind="discrete")
    if not isinstance(wavelet, str) or wavelet not in names:
        raise ValueError(f"wavelet must be a discrete wavelet name such as 'haar', 'bior2.2', 'db2' or 'sym4' "
                         f"(see pywt.wavelist(kind='discrete')), got {wavelet!r}")
    return pywt.Wavelet(wavelet)


# ---------------------------------------------------------------------------
# the WaveCluster steps
# ---------------------------------------------------------------------------
def quantize(U: np.ndarray, num_grid: int) -> np.ndarray:
    """Count matrix of points in ``[0, 1]^d`` on a ``num_grid^d`` grid (step 1).

    Parameters
    ----------
    U : ndarray (n, d), unit coordinates (data mapped affinely from the public box)
    num_grid : int

    Returns
    -------
    ndarray float, shape ``(num_grid,) * d``: the (true) count of each cell.
    """
    n, d = U.shape
    idx = cell_index(U, num_grid)
    flat = np.ravel_multi_index(tuple(idx.T), (num_grid,) * d) if d > 1 else idx[:, 0]
    return np.bincount(flat, minlength=num_grid ** d).astype(float).reshape((num_grid,) * d)


def cell_index(U: np.ndarray, num_grid: int) -> np.ndarray:
    """Integer cell index (n, d) of each row of unit coordinates ``U`` (the upper edge goes in the last cell)."""
    idx = np.floor(U * num_grid).astype(np.intp)
    np.clip(idx, 0, num_grid - 1, out=idx)
    return idx


@lru_cache(maxsize=64)
def _approx_matrix(wavelet_name: str, num_grid: int) -> np.ndarray:
    """1-D approximation matrix ``T`` (num_grid, m_out): row i = transform of the unit impulse at i."""
    T = pywt.dwt(np.eye(num_grid), wavelet_name, mode=MODE, axis=1)[0]
    T[np.abs(T) < 1e-12] = 0.0
    return T


@lru_cache(maxsize=64)
def _alignment_shift(wavelet_name: str, num_grid: int) -> int:
    """Offset between transformed index ``u`` and the cell block ``(2u, 2u + 1)`` it is centred on."""
    T = _approx_matrix(wavelet_name, num_grid)
    m_out = T.shape[1]
    i = 2 * (m_out // 2) if 2 * (m_out // 2) < num_grid else 0
    u = int(np.argmax(np.abs(T[i])))
    return (u - i // 2) % m_out


def approximation_influence(wavelet, num_grid: int, d: int) -> tuple[int, bool]:
    """How many level-1 approximation values one grid cell can move, and in which direction.

    Parameters
    ----------
    wavelet : str or pywt.Wavelet
    num_grid : int
        Cells per dimension.
    d : int
        Dimension.

    Returns
    -------
    s : int
        ``(max_i nnz(T[i, :]))^d`` where ``T`` is the 1-D approximation matrix
        (periodic extension): the largest number of transformed values that
        change when one cell count changes.
    nonnegative : bool
        True when every weight in ``T`` is >= 0 (Haar; not the biorthogonal
        or Daubechies filters, whose ``dec_lo`` has negative taps): adding a
        point then never decreases a transformed value.

    Notes
    -----
    The d-D transform is separable, so the weight of cell ``(i_1..i_d)`` in
    value ``(u_1..u_d)`` is ``prod_j T[i_j, u_j]``; it is non-zero exactly when
    every factor is.  For Haar, ``T[i, u] = 1/sqrt(2)`` iff ``u = floor(i/2)``,
    hence ``s = 1`` (Chen et al. §4.3).
    """
    w = check_wavelet(wavelet)
    T = _approx_matrix(w.name, int(num_grid))
    per_dim = int((T != 0).sum(axis=1).max())
    return per_dim ** int(d), bool((T >= 0).all())


def wavelet_approximation(counts: np.ndarray, wavelet) -> np.ndarray:
    """Level-1 approximation sub-band of the (noisy) count matrix (step 2).

    Parameters
    ----------
    counts : ndarray, shape ``(m,) * d``
    wavelet : str or pywt.Wavelet

    Returns
    -------
    ndarray, shape ``(ceil(m / 2),) * d``; value ``u`` is centred on cells
    ``2u, 2u + 1`` of each axis (the periodic transform is rolled so).
    For Haar it is the block sum divided by ``2^(d/2)`` (a 2x2 block sum / 2 in 2-D).
    """
    w = check_wavelet(wavelet)
    d = counts.ndim
    W = pywt.dwtn(counts, w, mode=MODE)["a" * d]
    shift = _alignment_shift(w.name, counts.shape[0])
    if shift:
        W = np.roll(W, -shift, axis=tuple(range(d)))
    return W


def threshold_rank(n_positive: float, density_threshold: float) -> int:
    """``k = ceil((1 - p) |S|)``: how many of the largest positive values are significant.

    With ``p = 0.1`` and ``|S| = 159`` (the spiral set, num_grid 40) this is the
    paper's ``k = 144`` (Chen et al. §6.2).
    """
    n_positive = max(float(n_positive), 0.0)
    return int(min(math.ceil((1.0 - float(density_threshold)) * n_positive - 1e-9), n_positive))


def top_k_threshold(sorted_positive: np.ndarray, k: int) -> float:
    """The ``k``-th largest of an ascending array (``inf`` when ``k <= 0``: nothing significant)."""
    if k <= 0 or sorted_positive.size == 0:
        return math.inf
    return float(sorted_positive[-min(k, sorted_positive.size)])


def label_significant(significant: np.ndarray, connectivity: str = "full") -> tuple[np.ndarray, int]:
    """Connected components of significant cells (step 4).

    Parameters
    ----------
    significant : ndarray of bool, the transformed grid's shape
    connectivity : {"full", "face"}
        ``"full"``: cells that touch by a face, edge or corner are adjacent (8
        neighbours in 2-D; MATLAB's ``bwlabel`` default, which gives the
        paper's 3 spirals); ``"face"``: only cells sharing a face (4 in 2-D).

    Returns
    -------
    labels : ndarray of int, same shape, cluster id per cell, ``-1`` if not significant
    n_clusters : int
    """
    d = significant.ndim
    structure = ndimage.generate_binary_structure(d, d if connectivity == "full" else 1)
    lab, n = ndimage.label(significant, structure=structure)
    return lab.astype(np.intp) - 1, int(n)
