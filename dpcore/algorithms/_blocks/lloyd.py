"""Shared block: one noisy Lloyd step and the journal version's iteration rule (Su et al. 2016 §4.1.1, §6.1; 2017).

Used by DPLloyd (every iteration) and the Hybrid (its refining iteration); the advisor and the
regime rules read the same budget rule (:func:`auto_schedule`).
"""
from __future__ import annotations

import math

import numpy as np

from ...privacy.mechanisms import NoiseSource
from ...sources import DataSource
from ...utils.fixedpoint import FixedPoint
from ...utils.nearest import cluster_sums

#: The normalised coordinate of a typical centroid, |S_i| / (2 r C), that Su et al. (2017) fix
#: when choosing the iteration count and split (the value IBM diffprivlib also uses).
RHO = 0.225


#: The per-iteration MSE target of the journal version's iteration rule.  With MSE of all k
#: centroids 2 k^3 (d + c)^3 / (N eps_t)^2 (derivation in :func:`auto_schedule`), this threshold
#: gives the 500 = 2 / 0.004 that appears in the published rule.
MSE_TARGET = 0.004


MIN_ITER, MAX_ITER = 2, 7


def auto_schedule(n: float, d: int, k: int, epsilon: float, *, r: float = 1.0, rho: float = RHO):
    """Number of iterations and per-iteration split of the journal version (Su et al. 2017).

    Derivation (from the error analysis of §6.1, Eq. 6).  In one iteration
    with budget ``eps_t`` give each dimension's sums ``eps_s`` (sensitivity
    ``r`` each, so ``d * eps_s`` for the whole sum vector) and the counts
    ``eps_c``, so ``d * eps_s + eps_c = eps_t``.  With ``C ~ N/k`` and
    ``|o_i| ~ 2 rho r`` the MSE of one centre is
    ``(k/N)^2 * d * (2 r^2/eps_s^2 + (2 rho r)^2 * 2/eps_c^2)``.  Minimising
    under the constraint (Lagrange) gives ``eps_c / eps_s = cbrt(4 d rho^2) =: c``,
    hence ``eps_s = eps_t / (d + c)`` and ``eps_c = c * eps_t / (d + c)``; the
    minimum MSE over the ``k`` centres is ``2 k^3 (d + c)^3 r^2 / (N eps_t)^2``.
    Asking it to stay below ``MSE_TARGET = 0.004`` needs
    ``eps_t >= eps_m = sqrt(500 k^3 (d + c)^3 / N^2)``; the number of
    iterations is ``floor(epsilon / eps_m)`` clamped to ``[2, 7]``.

    Parameters
    ----------
    n : float
        Dataset size (public or noisy).
    d, k : int
    epsilon : float
        Total budget for the iterations.

    Returns
    -------
    n_iter : int
    count_share, sum_share : float
        Fractions of each iteration's budget for the counts and for the whole
        sum vector; they add up to 1.
    """
    c = np.cbrt(4 * d * rho ** 2)
    eps_m = _eps_per_iteration_target(n, d, k, r=r, rho=rho)
    n_iter = int(max(min(epsilon / eps_m, MAX_ITER), MIN_ITER))
    return n_iter, c / (d + c), d / (d + c)


def _eps_per_iteration_target(n: float, d: int, k: int, *, r: float = 1.0, rho: float = RHO) -> float:
    """``eps_m = sqrt(500 k^3 (d + c)^3 / N^2)``: one iteration's budget for the MSE target (:func:`auto_schedule`)."""
    c = np.cbrt(4 * d * rho ** 2)
    return float(math.sqrt(2 / MSE_TARGET * k ** 3 * (d + c) ** 3 / max(n, 1.0) ** 2) * r)


def noisy_counts_and_sums(counts: np.ndarray | FixedPoint, sums: FixedPoint, noise: NoiseSource, *,
                          sensitivity: float, epsilon: float, name: str) -> tuple[np.ndarray, np.ndarray]:
    """One Laplace query over every cluster's count and exact coordinate sums together (one ledger entry).

    Parameters
    ----------
    counts : ndarray (k,) of int, or FixedPoint (k,) of weighted counts (contribution bounding by weighting)
    sums : FixedPoint (k, d), exact sums of quantised coordinates
    noise : NoiseSource
    sensitivity : float
        L1 sensitivity of the joint query in the sums' units (``d r + 1`` for one record's count and
        coordinates in ``[-r, r]``).
    epsilon : float
    name : str

    Returns
    -------
    (noisy_counts (k,), noisy_sums (k, d)) : float arrays

    Notes
    -----
    **Privacy.** epsilon-DP: the counts join the sums in fixed point (``count * 2^bits``), so the
    whole query is exact integers and one record moves it by at most ``sensitivity`` in L1.
    """
    if isinstance(counts, FixedPoint):   # weighted counts: on the sums' finer grid
        c = np.asarray(counts.q, dtype=np.int64) << (sums.bits - counts.bits)
    else:
        c = np.asarray(counts, dtype=np.int64) << sums.bits
    joint = np.concatenate([c[:, None].astype(sums.q.dtype), sums.q], axis=1)
    noisy = noise.laplace(FixedPoint(joint, sums.bits), sensitivity=sensitivity, epsilon=epsilon, name=name)
    return noisy[:, 0], noisy[:, 1:]


def noisy_lloyd_step(Z, centers: np.ndarray, noise: NoiseSource, *, epsilon: float,
                     count_share: float | None = None, r: float = 1.0, label: str = "iteration",
                     domain=None) -> np.ndarray:
    """One DPLloyd update on normalised data (Su et al. 2016, §4.1.1, Eq. 2 with noise).

    Parameters
    ----------
    Z : ndarray (n, d) in ``[-r, r]^d``, or in data units when ``domain`` is given
    centers : ndarray (k, d), the current (private) centres, normalised
    noise : NoiseSource
    epsilon : float
        This iteration's budget.
    count_share : float or None
        ``None``: the paper's single query with L1 sensitivity ``d r + 1``
        covering counts and sums together (one ledger entry).  A number in
        (0, 1): that fraction to the counts (sensitivity 1) and the rest to
        the sums (sensitivity ``d r``), two entries.
    label : str
        Prefix of the ledger entries.
    domain : Domain, optional
        Normalise ``Z`` chunk by chunk with it (r = 1), instead of a normalised copy.

    Returns
    -------
    ndarray (k, d): noisy sum / noisy count, clipped to the domain; a cluster
    whose noisy count is below 1 gets a fresh uniform centre (post-processing).

    Notes
    -----
    **Privacy.** ``epsilon``-DP: adding or removing a point changes one count by 1 and one
    sum vector by at most ``d r`` in L1; clusters are disjoint (parallel composition).
    """
    k, d = centers.shape
    # Exact sums (issue 29): counts as integers, coordinate sums in fixed point on the public grid, so the
    # noised query's input moves by at most its sensitivity between neighbours, whatever the summation order.
    if isinstance(Z, DataSource):   # exact cluster_sums where the data live (domain required)
        counts, sums = Z.cluster_sums(centers, domain)
    else:
        counts, sums = cluster_sums(Z, centers, domain=domain, exact=True)
    if count_share is None:
        n_counts, n_sums = noisy_counts_and_sums(counts, sums, noise, sensitivity=d * r + 1.0, epsilon=epsilon,
                                                 name=f"{label}: cluster counts and sums")
    else:
        eps_c = epsilon * count_share
        eps_s = epsilon - eps_c
        n_counts = noise.laplace(counts, sensitivity=1.0, epsilon=eps_c, name=f"{label}: cluster counts",
                                 integer=True)
        n_sums = noise.laplace(sums, sensitivity=d * r, epsilon=eps_s, name=f"{label}: cluster sums")
    new = centers.copy()
    ok = n_counts >= 1.0
    new[ok] = n_sums[ok] / n_counts[ok, None]
    if not ok.all():
        # A noisy count below 1 carries no usable information about where the cluster is; a
        # centre left in an empty region would stay there, so it is redrawn uniformly in the
        # domain (data-independent, costs nothing) and may capture points next iteration.
        new[~ok] = noise.rng.uniform(-r, r, size=(int((~ok).sum()), d))
    return np.clip(new, -r, r)
