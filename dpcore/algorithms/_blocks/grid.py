"""Shared block: the noisy uniform grid of EUGkM (Su et al. 2016, §4.2, Eq. 4).

Its size ``M = (N epsilon / theta)^(2d / (2 + d))`` cells (:func:`eug_cells_per_dim`) and one noisy
count per cell (:func:`noisy_grid`, parallel composition over disjoint cells).  Used by EUGkM, the
Hybrid, DPLloyd's grid start and PrivBasic.
"""
from __future__ import annotations

import math

import numpy as np

from ...privacy.mechanisms import NoiseSource
from ...sources import DataSource
from ...utils.fixedpoint import FixedPoint
from ..regime import (
    GRID_MAX_CELLS_FAST,
    GRID_MAX_PASS_WORK,
    GRID_REFUSE,
    GRID_REFUSE_HARD,
    GRID_ROW_PASS_CELLS,
    GRID_SMALL,
    GRID_WARN,
    Regime,
    grid_noise_ratio,
)

#: Rows per chunk when counting points into cells.
_GRID_CHUNK = 1 << 18


#: Cap on the number of grid cells, so memory stays bounded in high dimension (8 bytes a cell).
MAX_CELLS = 1 << 22


def grid_cells(n: float, d: int, epsilon: float, *, theta: float = 10.0) -> float:
    """Eq. 4 (Su et al. 2016): the number of EUG cells ``M = (N eps / theta)^(2d / (2 + d))``, continuous, >= 1.

    Returns
    -------
    float
        The formulas' M (Eqs. 9, 10, 12); the grid a fit builds is :func:`eug_cells_per_dim`'s.
    """
    return max(n * epsilon / theta, 1.0) ** (2 * d / (2 + d))


def eug_cells_per_dim(n: float, epsilon: float, d: int, *, theta: float = 10.0,
                      max_cells: int = MAX_CELLS) -> int:
    """Cells per dimension of the EUG grid: ``round(M^(1/d))`` with M from Eq. 4.

    Parameters
    ----------
    n : float
        Dataset size (public or noisy).
    epsilon : float
        Budget of the cell counts.
    d : int
    theta : float, default 10

    Returns
    -------
    int >= 1, reduced if needed so that the grid has at most ``max_cells`` cells.
    """
    log_m_total = (2 * d / (2 + d)) * math.log(max(n * epsilon / theta, 1.0))
    m = max(1, int(round(math.exp(log_m_total / d))))
    while m > 1 and d * math.log(m) > math.log(max_cells):
        m -= 1
    return m


def max_cells_per_dim(d: int, max_cells: int = MAX_CELLS) -> int:
    """The most cells per dimension :func:`eug_cells_per_dim` can return: its cap for ``max_cells`` (public).

    Returns
    -------
    int >= 1: the largest m with ``d log m <= log max_cells`` (the same test as :func:`eug_cells_per_dim`).
    """
    m = max(1, int(math.floor(max_cells ** (1.0 / d))))
    while m > 1 and d * math.log(m) > math.log(max_cells):
        m -= 1
    while d * math.log(m + 1) <= math.log(max_cells):
        m += 1
    return m


def noisy_grid(Z: np.ndarray, m: int, noise: NoiseSource, epsilon: float, *, r: float = 1.0,
               name: str = "grid cell counts", domain=None) -> tuple[np.ndarray, np.ndarray]:
    """Count points in an ``m^d`` uniform grid over ``[-r, r]^d`` and add ``Lap(1/epsilon)``.

    Parameters
    ----------
    Z : ndarray (n, d) in ``[-r, r]^d``, or in data units when ``domain`` is given (normalised
        chunk by chunk, r = 1)
    m : int, cells per dimension
    noise : NoiseSource
    epsilon : float

    Returns
    -------
    counts : ndarray, shape (m,)*d (flat when d > 32), signed noisy counts
    edges : ndarray (m + 1,), the normalised cell edges (same in every dimension)

    Notes
    -----
    **Privacy.** epsilon-DP: each point is in exactly one cell (sensitivity 1, parallel composition).
    """
    if isinstance(Z, DataSource):   # exact grid_counts where the data live (domain required, r = 1)
        d = Z.n_features
        counts = Z.grid_counts(domain, (m,) * d)
        if isinstance(counts, FixedPoint):   # weighted rows (contribution bounding by weighting): exact weights
            noisy = noise.laplace(FixedPoint(counts.q.ravel(), counts.bits), sensitivity=1.0, epsilon=epsilon,
                                  name=name)
        else:
            noisy = noise.laplace(counts.ravel().astype(float), sensitivity=1.0, epsilon=epsilon, name=name,
                                  integer=True)
        return (noisy.reshape((m,) * d) if d <= 32 else noisy), np.linspace(-r, r, m + 1)
    n, d = Z.shape
    counts = np.zeros(m ** d)
    strides = (m ** np.arange(d - 1, -1, -1, dtype=np.int64)).astype(float)
    # Chunks keep the temporaries in cache; cell numbers are exact in float64 (M <= 2^22).
    for s in range(0, n, _GRID_CHUNK):
        z = Z[s:s + _GRID_CHUNK] if domain is None else domain.normalize(Z[s:s + _GRID_CHUNK])
        cell = (z + r) * (m / (2 * r))
        np.floor(cell, out=cell)
        np.clip(cell, 0, m - 1, out=cell)
        flat = (cell @ strides).astype(np.intp)  # C-order cell number
        counts += np.bincount(flat, minlength=m ** d)
    noisy = noise.laplace(counts, sensitivity=1.0, epsilon=epsilon, name=name, integer=True)
    return (noisy.reshape((m,) * d) if d <= 32 else noisy), np.linspace(-r, r, m + 1)


def grid_regime(key: str, n: float, d: int, k: int, epsilon: float, *, theta: float = 10.0,
                max_cells: int = MAX_CELLS) -> Regime:
    """Su et al. (2016) §6.2's regime for a noisy grid of Eq. 4's size on ``epsilon``: EUGkM's rule.

    Refuses when the grid's expected noise mass exceeds the data's (:func:`~dpcore.algorithms.regime.grid_noise_ratio`
    above ``GRID_REFUSE``) or when k-means over it cannot finish in seconds; warns above ``GRID_WARN``
    or with at most 2 cells per dimension in d > 2.

    Parameters
    ----------
    key : str
        Registry key the verdict is for (``"eugkm"``, ``"hybrid"``, or DPLloyd asking about its start).
    n, d, k, epsilon : public inputs (n public or noisy), epsilon the grid's share.
    theta, max_cells : EUGkM's parameters.

    Returns
    -------
    Regime
    """
    m = eug_cells_per_dim(n, epsilon, d, theta=theta, max_cells=max_cells)
    cells = float(m) ** d
    ratio = grid_noise_ratio(n, epsilon, cells)
    figs = dict(cells_per_dim=m, cells=cells, noise_ratio=ratio, epsilon_grid=epsilon)
    where = (f"{m}^{d} = {cells:,.0f} grid cells for about {n:,.0f} points at ε = {epsilon:.3g}: the grid's noise "
             f"mass is {ratio:.0%} of the data's (Su et al. 2016, Eq. 4 and §6.2)")
    if cells > GRID_MAX_CELLS_FAST:
        return Regime(key, "refuse", f"{where}, and k-means over that many noisy cells cannot finish in "
                      f"seconds; use fewer columns.", None, figs)
    # Large grids run Lloyd on the grid's rows, m^(d-1) rows times k^2 centre pairs a pass (grid_kmeans).
    work = float(m) ** (d - 1) * float(k) ** 2 if cells > GRID_ROW_PASS_CELLS else 0.0
    figs["pass_work"] = work
    if work > GRID_MAX_PASS_WORK:
        return Regime(key, "refuse", f"{where}, and each k-means pass over them with k = {k} centres weighs "
                      f"{work:.2g} (row, centre pair) intervals: the fit cannot finish in seconds; use fewer "
                      "columns or clusters.", None, figs)
    if ratio > GRID_REFUSE and cells > GRID_SMALL:
        return Regime(key, "refuse", f"{where}; above {GRID_REFUSE:.0%} the synopsis is mostly noise and "
                      f"k-means on it places centres in empty space (a larger ε or fewer columns help).", None, figs,
                      utility_only=ratio <= GRID_REFUSE_HARD)
    if ratio > GRID_WARN:     # (a small grid over few points is warned, not refused: cheap and bounded)
        return Regime(key, "warn", f"{where}; above {GRID_WARN:.0%} k-means on the synopsis often keeps "
                      "centres in empty space.", None, figs, utility_only=True)
    if m <= 2 and d > 2:
        return Regime(key, "warn", f"{where}; with {m} cells per dimension the grid cannot resolve clusters "
                      f"(bias bound d r²/M^(2/d) = {d / m ** 2:.2g}, Eq. 10).", None, figs, utility_only=True)
    return Regime(key, "ok", f"{where}: inside the regime.", None, figs)
