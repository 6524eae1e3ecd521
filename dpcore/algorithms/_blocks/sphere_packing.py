"""Shared block: data-independent initial centres by sphere packing (Su et al. 2016, §4.1.1)."""
from __future__ import annotations

import numpy as np


def sphere_packing_centers(n_clusters: int, d: int, rng: np.random.Generator, *, r: float = 1.0,
                           max_tries: int = 100, n_search: int = 30) -> np.ndarray:
    """Data-independent initial centres by sphere packing (Su et al. 2016, §4.1.1).

    For a radius ``a`` the centres are drawn one by one, uniformly in the box
    shrunk by ``a`` on each side, and each must lie at least ``2a`` from every
    earlier one; a centre that fails ``max_tries`` times means ``a`` is too
    large.  A binary search finds the largest feasible ``a``; the centres of
    the last successful attempt are returned.

    Parameters
    ----------
    n_clusters : int
    d : int
    rng : numpy.random.Generator
    r : float, default 1
        Half-width of the normalised domain ``[-r, r]^d``.

    Returns
    -------
    ndarray (n_clusters, d) in ``[-r, r]^d``.

    Notes
    -----
    **Privacy.** Uses no data: costs no budget.
    """

    def attempt(a):
        lo, hi = -r + a, r - a
        if hi < lo:
            return None
        centers = np.empty((n_clusters, d))
        for j in range(n_clusters):
            cand = rng.uniform(lo, hi, size=(max_tries, d))
            if j:
                d2 = ((cand[:, None, :] - centers[None, :j, :]) ** 2).sum(-1)
                ok = np.flatnonzero((d2 >= (2 * a) ** 2).all(axis=1))
                if ok.size == 0:
                    return None
                cand = cand[ok]
            centers[j] = cand[0]
        return centers

    lo_a, hi_a = 0.0, r
    best = attempt(0.0)
    for _ in range(n_search):
        mid = (lo_a + hi_a) / 2
        got = attempt(mid)
        if got is None:
            hi_a = mid
        else:
            lo_a, best = mid, got
    return best
