"""SMALL-BALL = GOOD-RADIUS then GOOD-CENTER (Feldman et al. 2017, Alg. 2; Nissim, Stemmer & Vadhan 2016).

The two private steps of each round of PRIVATE-K-MEAN, on the points snapped to the grid; the
concrete choices and why they keep the proof are in :mod:`.private_kmeans`'s docstring.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ...privacy.mechanisms import NoiseSource
from ...utils.fixedpoint import SUM_BITS, FixedPoint, quantize
from .plan import CoresetPlan


# ---------------------------------------------------------------------------
# The working point set: occupied grid cells with multiplicities
# ---------------------------------------------------------------------------
class _CellSet:
    """Occupied cells (u, d) of the grid with their multiplicities; points in one cell are identical."""

    def __init__(self, cells: np.ndarray, mult: np.ndarray, side: int):
        self.cells = cells
        self.mult = mult
        self.side = side
        self.d = cells.shape[1]

    @property
    def n(self) -> int:
        return int(self.mult.sum())

    def prefix_sums(self) -> np.ndarray:
        """Summed-area table S of shape (side+1,)*d: S[i] = points with every coordinate < i (§4.3)."""
        d, side = self.d, self.side
        dtype = np.int32 if self.n < 2 ** 31 - 1 else np.int64
        S = np.zeros((side + 1,) * d, dtype=dtype)
        S[tuple(self.cells.T + 1)] = self.mult
        for ax in range(d):
            np.cumsum(S, axis=ax, out=S)
        return S

    def remove_nearest(self, center: np.ndarray, m: int) -> int:
        """Delete the ``m`` points nearest (Euclidean) to ``center`` (Alg. 1 lines 10–11); return how many."""
        d2 = ((self.cells - center) ** 2).sum(axis=1)
        order = np.argsort(d2, kind="stable")
        csum = np.cumsum(self.mult[order])
        m = int(min(m, csum[-1] if csum.size else 0))
        if m <= 0:
            return 0
        j = int(np.searchsorted(csum, m))  # cells order[:j] go entirely, order[j] partly
        take = m - (int(csum[j - 1]) if j > 0 else 0)
        self.mult[order[j]] -= take
        self.mult[order[:j]] = 0
        keep = self.mult > 0
        self.cells, self.mult = self.cells[keep], self.mult[keep]
        return m


def radius_profile(cs: _CellSet, radii: np.ndarray, t: int) -> np.ndarray:
    """``L(r, P)`` of Feldman et al. Alg. 2 line 2 for every candidate radius (L-infinity balls).

    ``L(r, P)`` is the largest mean of ``min(B_r(x_j, P), t)`` over ``t``
    distinct points ``x_j`` of P (points of one cell are distinct records).

    Returns
    -------
    ndarray (T,) float, non-decreasing in r.
    """
    S = cs.prefix_sums()
    if cs.cells.shape[0] == 0:
        return np.zeros(len(radii))
    # One compiled pass per radius, the ball counts and their top-t mean fused, in integers (the numpy version, kept
    # in tests/test_coreset.py as the reference, was ~1 s of a coreset preview's 2.8 s).
    strides = np.array([S.strides[ax] // S.itemsize for ax in range(S.ndim)], dtype=np.int64)
    return _profile_kernel(S.ravel(), strides, int(cs.side), np.ascontiguousarray(cs.cells, dtype=np.int64),
                           np.ascontiguousarray(cs.mult, dtype=np.int64), np.asarray(radii, dtype=np.int64), int(t))


@numba.njit(cache=True, nogil=True)
def _profile_kernel(S, strides, side, cells, mult, radii, t):  # pragma: no cover - compiled
    """``L(r, P)`` for each radius: per occupied cell its L-infinity ball count from the summed-area table
    ``S`` (flat; inclusion-exclusion over the 2^d corners, clipped to the grid), capped at ``t``, and the mean of
    the ``t`` largest with multiplicity (zeros padding), in exact integers."""
    u, d = cells.shape
    out = np.empty(radii.shape[0])
    h = np.zeros(t + 1, dtype=np.int64)
    for ri in range(radii.shape[0]):
        r = radii[ri]
        h[:] = 0
        for i in range(u):
            b = 0
            for corner in range(1 << d):
                idx = 0
                sign = 1
                for ax in range(d):
                    if corner >> ax & 1:
                        c = min(max(cells[i, ax] + r + 1, 0), side)
                    else:
                        c = min(max(cells[i, ax] - r, 0), side)
                        sign = -sign
                    idx += c * strides[ax]
                b += sign * S[idx]
            h[min(b, t)] += mult[i]
        taken = 0
        total = 0
        for v in range(t, -1, -1):
            m = h[v]
            if taken + m >= t:
                total += (t - taken) * v
                taken = t
                break
            total += m * v
            taken += m
        out[ri] = total / t
    return out


def good_radius(cs: _CellSet, t: int, plan: CoresetPlan, noise: NoiseSource) -> int:
    """GOOD-RADIUS (Feldman et al. Alg. 2 after Nissim et al. 2016): a private radius for t points.

    Parameters
    ----------
    cs : the remaining points
    t : int
        Target count ``w + Delta``.
    plan : CoresetPlan
    noise : NoiseSource
        Charged ``plan.eps_radius`` (one exponential-mechanism entry).

    Returns
    -------
    int, an L-infinity radius in grid cells.

    Notes
    -----
    Alg. 2 line 4 selects with RecConcave (Beimel et al. 2013), whose point is
    a ``log*`` instead of ``log`` dependence on the number ``T`` of radii.
    With the geometric candidate set ``T`` is about 100, so ``ln T < 5``,
    while RecConcave's quality promise carries the factor
    ``8^(log* T) 36 log* T`` (>= 4600 for T >= 17); its own base case is the
    exponential mechanism used here, which is therefore both valid and far
    less noisy at these sizes.  ``Q`` is quasi-concave for every data set
    (``L`` is non-decreasing in r), as RecConcave requires; the exponential
    mechanism does not need it.

    **Privacy.** ``eps_radius``-DP.  Under add/remove-one neighbours every ``B_r(x, P)``
    moves by at most 1 and one point may enter or leave the chosen ``t``, so
    ``L(r, P)`` moves by less than 2 and ``Q(r) = 1/2 min(t - L(r-1),
    L(r) - t + Delta)`` by at most 1 (Alg. 2 line 3).  The candidate radii
    are public, so the exponential mechanism with sensitivity 1 is
    ``eps_radius``-DP (McSherry & Talwar 2007).
    """
    L = radius_profile(cs, plan.radii, t)
    L_prev = np.concatenate([[0.0], L[:-1]])
    Q = 0.5 * np.minimum(t - L_prev, L - t + plan.slack)
    j = noise.exponential(Q, sensitivity=1.0, epsilon=plan.eps_radius,
                          name="GOOD-RADIUS: ball radius (exponential mechanism on Q)")
    return int(plan.radii[j])


def good_center(cs: _CellSet, radius: int, plan: CoresetPlan, noise: NoiseSource, *,
                box_factor: float = 2.0) -> np.ndarray:
    """GOOD-CENTER (after Nissim et al. 2016): a private centre of a ball of the given radius.

    1. Partition the grid into boxes of side ``l = ceil(box_factor (2r + 1))``
       cells with a uniformly random offset (data-independent, ``noise.rng``):
       the box-partition locality-sensitive hash; with ``box_factor >= 2``
       also the ``2^d - 1`` copies shifted by ``l/2`` in any subset of the
       coordinates, so that a cube of side ``2r + 1`` lies inside one box of
       one of the partitions (proof in :func:`plan_coreset`).
    2. Choose a heavy box with the exponential mechanism over *all* boxes of
       all partitions (a public candidate set), the score being the box's count.
    3. Release the Gaussian noisy sum and count of the points in that box and
       return their ratio, clipped to the box.

    Parameters
    ----------
    cs : the remaining points
    radius : int, L-infinity radius in grid cells (from :func:`good_radius`)
    plan : CoresetPlan
    noise : NoiseSource
        The source reserved for this SMALL-BALL call: the heavy box costs
        ``plan.eps_box`` and the noisy average takes the epsilon left in it
        and ``plan.delta_average``.
    box_factor : float

    Returns
    -------
    ndarray (d,), grid coordinates (float).

    Notes
    -----
    NSV's GoodCenter first projects (Johnson–Lindenstrauss) and hashes with
    LSH, then finds a heavy bucket with a stability-based choice, then bounds
    the bucket's points axis by axis after a random rotation before averaging;
    in the low dimension used here the projection is unnecessary, the box
    partition is the LSH, and the box itself bounds the points, so the
    average needs no further bounding step.  Choosing among all boxes (the
    grid is public and finite) replaces the stability-based choice and costs
    no delta.

    **Privacy.** Step 2: each record is in one box of each partition, so adding or removing
    one changes each count by at most 1 and all counts move in the same direction: the monotone
    exponential mechanism with sensitivity 1 is ``eps_box``-DP.
    Step 3: with the box fixed, the query ``(sum of (x - b) / R, count)``
    (``b`` the box centre, ``R = (l - 1) sqrt(d) / 2`` bounding ``|x - b|``)
    has L2 sensitivity ``sqrt(2)`` (computed exactly: offsets on the public fixed-point grid, which
    adds at most ``sqrt(d) 2^-(SUM_BITS+1)`` to a point's norm); the Gaussian mechanism makes it
    ``(eps_average, delta')``-DP.  Together ``(eps_box + eps_average,
    delta')``-DP by composition.
    """
    d, side = cs.d, cs.side
    ell = int(math.ceil(box_factor * (2 * radius + 1)))
    shift = noise.rng.integers(0, ell, size=d)
    # With box_factor >= 2 the 2^d partitions shifted by 0 or l/2 per coordinate guarantee that the
    # ball lies inside one box of one of them (plan_coreset, "t_min"); otherwise the single partition.
    half = ell // 2 if box_factor >= 2 else 0
    offsets = (np.array(np.unravel_index(np.arange(2 ** d), (2,) * d)).T * half if half
               else np.zeros((1, d), dtype=np.int64))
    nb = (side - 1 + int(shift.max()) + half) // ell + 1
    per = nb ** d
    counts = np.concatenate([np.bincount(np.ravel_multi_index(tuple(((cs.cells + shift + o) // ell).T), (nb,) * d),
                                         weights=cs.mult, minlength=per) for o in offsets])
    j = noise.exponential(counts, sensitivity=1.0, epsilon=plan.eps_box, monotonic=True,
                          name="GOOD-CENTER: heavy box (exponential mechanism on counts)")
    o = offsets[j // per]
    j_box = j % per
    flat = np.ravel_multi_index(tuple(((cs.cells + shift + o) // ell).T), (nb,) * d)
    jvec = np.array(np.unravel_index(j_box, (nb,) * d))
    lo = jvec * ell - shift - o
    b = lo + (ell - 1) / 2.0
    R = max((ell - 1) * math.sqrt(d) / 2.0, 1e-12)
    inside = flat == j_box
    m = cs.mult[inside].astype(np.int64)
    # Exact sums (issue 29): each point's offset from the box centre, over R (norm <= 1), quantised to the
    # public fixed-point grid and summed with its multiplicity in int64; the count joins them in fixed point.
    q = quantize((cs.cells[inside] - b) / R)
    query = FixedPoint(np.concatenate([(m[:, None] * q).sum(axis=0), [int(m.sum()) << SUM_BITS]]))
    # One point moves the offsets' sum by a quantised vector of norm <= 1 + sqrt(d) 2^-(SUM_BITS+1), the count by 1.
    sens = math.hypot(1.0 + math.sqrt(d) * 2.0 ** -(SUM_BITS + 1), 1.0)
    # The last step takes what is left of this call's reservation, so rounding never strands budget.
    eps_a = noise.ledger.remaining()[0]
    noisy = noise.gaussian(query, sensitivity=sens, epsilon=eps_a, delta=plan.delta_average,
                           name="GOOD-CENTER: noisy average of the box")
    count = noisy[-1]
    center = b + R * noisy[:-1] / count if count >= 1.0 else b.copy()
    center = np.clip(center, lo, lo + ell - 1)
    return np.clip(center, 0, side - 1)
