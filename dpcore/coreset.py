"""Private coresets for k-means: PRIVATE-K-MEAN of Feldman, Xiang, Zhu and Rus (2017).

The data are snapped to the grid ``X^d`` of §3 (``|X|`` the smallest power of
two with ``|X|^d > n``, §5.2).  Algorithm 1 then repeats, while more than
``t_min`` points remain: SMALL-BALL finds the centre ``c`` of a ball holding
about ``w = 3n/(8k)`` of the remaining points, the ``w`` points nearest to
``c`` are removed, and ``(c, w)`` joins the coreset.  Each SMALL-BALL call is
``(eps', delta')``-DP with ``eps' = 3 eps / (8 k ln n)`` (Alg. 1 line 1); a
non-private weighted k-means on the released coreset gives the centres.

SMALL-BALL is GOOD-RADIUS followed by GOOD-CENTER, both from Nissim, Stemmer
and Vadhan (2016).  The concrete, implementable choices made here (each keeps
the privacy proof intact; see :func:`good_radius` and :func:`good_center`):

* GOOD-RADIUS (Feldman et al. Alg. 2) scores radii with the paper's
  ``L(r, P)`` and quality ``Q(r) = 1/2 min(t - L(r-1), L(r) - t + Delta)``,
  counting with L-infinity balls on prefix sums (§4.3, any d), over a public
  geometric set of candidate radii, and selects with the exponential
  mechanism (the base case of RecConcave) instead of RecConcave's recursion.
* GOOD-CENTER partitions the grid into randomly shifted boxes twice the
  chosen ball's side (the box-partition LSH) and its ``2^d`` copies shifted
  by half a box, picks a heavy box with the (monotone) exponential mechanism
  over *all* boxes of all copies, and releases the Gaussian noisy average of
  the points in it.

Constants and feasibility (issue 16).  Privacy never depends on the
constants: they only fix, from public values, how many rounds run.  What they
guarantee is each round's utility with probability ``1 - beta'``, and
``t_min`` is the size below which that guarantee fails.  At k = 5, n = 10^5
(d = 2, delta = n^-1.5) the binding term is GOOD-CENTER's heavy box
(:func:`plan_coreset`): with a single partition the ball can be cut into
``2^d`` pieces, so ``w_i >= 2^(d+1) ln(3B/beta') / eps_b`` was needed and the
smallest feasible epsilon was 7.1.  The half-shifted partitions keep one box
holding the whole ball at the price of ``d ln 2`` in the logarithm, and the
bound becomes ``2 ln(3 B 2^d / beta') / eps_b``: 1.91 at k = 5 (1.94 with the
2 % noisy size), 7.9 at k = 10, with Alg. 1 line 1's budget rule.  What
remains between that and the paper's Table 2 (0.8 and 3.5) is the factor 2
of "at least half the heaviest box" and the slack: the paper's implementation
used ``Delta = 8`` (§4, footnote 3), offered as ``constants="paper_experiments"``
(it reproduces Table 2 within 10 %: 0.89 and 3.7) **without proof**.  Tighter
*proved* figures need a tighter composition than Thm. 3.2's sum over
``8 k ln(n) / 3`` rounds: ``budget="schedule"`` divides by the rounds that
actually run (k = 5, n = 10^5, epsilon = 2: 25 rounds covering 86 % of the
points, against 1 round and 8 % with Alg. 1 line 1); advanced or zCDP
composition of the rounds (Dwork, Rothblum, Vadhan 2010; Bun & Steinke 2016)
would gain a further factor of about 3 but needs a ledger that composes other
than by summation, which dpcore's does not yet do.

References
----------
Feldman, Xiang, Zhu, Rus (2017). Coresets for differentially private k-means clustering and
applications to privacy in mobile sensor networks. IPSN '17. §3 (Alg. 1, Thm. 3.6), §4 (Alg. 2,
§4.3 prefix sums), §5.2 (grid size), §5.4 (error), Table 2.
Nissim, Stemmer, Vadhan (2016). Locating a small cluster privately. PODS '16 (GoodRadius, GoodCenter).
Beimel, Nissim, Stemmer (2013). Private learning and sanitization: pure vs. approximate
differential privacy. APPROX-RANDOM '13 (RecConcave).
McSherry, Talwar (2007). Mechanism design via differential privacy (exponential mechanism).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
from sklearn.cluster import KMeans as _SKKMeans

from .base import DPClusterer
from .dplloyd import public_or_noisy_size
from .privacy.mechanisms import NoiseSource
from .regime import check_fit
from .synopsis import CoresetSynopsis
from .utils.validation import MAX_EPSILON

#: Largest number of grid cells (|X|^d) the prefix-sum counting may allocate (4 bytes a cell).
MAX_GRID_CELLS = 1 << 27
#: Default split of each SMALL-BALL budget: (radius, heavy box, noisy average).
DEFAULT_SPLIT = (0.3, 0.45, 0.25)
#: ``constants=``: "proved" keeps every round's utility guarantee (this module's derivations);
#: "paper_experiments" uses Feldman et al.'s implementation values (Delta = 8, §4 footnote 3) and no
#: pigeonhole factor in t_min, which reproduces their Table 2 within about 10 % but has NO PROOF.
CONSTANTS = ("proved", "paper_experiments")
#: The slack Delta of Feldman et al.'s implementation (§4, footnote 3).
PAPER_EXPERIMENTS_SLACK = 8


# ---------------------------------------------------------------------------
# Public parameter rules (data-independent)
# ---------------------------------------------------------------------------
def grid_side(n: float, d: int) -> int:
    """``|X|``: the smallest power of two with ``|X|^d > n`` (Feldman et al. §5.2).

    Parameters
    ----------
    n : float
        Dataset size (public or a noisy release).
    d : int

    Returns
    -------
    int >= 2
    """
    side = 2
    while side ** d <= n:
        side *= 2
    return side


def radius_candidates(side: int, growth: float = 1.1) -> np.ndarray:
    """The public candidate L-infinity radii of GOOD-RADIUS, in grid cells.

    ``0, 1, 2, ...`` then ``floor(growth^j)``, up to ``side - 1`` (a ball of that
    radius covers the whole grid).  Replacing Alg. 2's ``{0, 1, ..., |X| sqrt(d)}``
    by this geometric set loses at most a factor ``growth`` in the radius and
    shrinks the candidate count from ``|X|`` to ``O(log |X| / log growth)``,
    which both speeds up line 1–2 and shortens the selection's ``log T`` term.

    Returns
    -------
    ndarray (T,) of increasing ints.
    """
    if not growth > 1:
        raise ValueError(f"radius_growth must be > 1, got {growth}")
    top = max(side - 1, 1)
    j = np.arange(int(math.ceil(math.log(top) / math.log(growth))) + 2)
    r = np.floor(growth ** j).astype(np.int64)
    r = np.unique(np.concatenate([[0], np.minimum(r, top)]))
    return r


@dataclass
class CoresetPlan:
    """Everything Algorithm 1 fixes before looking at the points (all data-independent).

    Attributes
    ----------
    n : int
        The dataset size the plan is for (public, or the noisy release).
    side : int
        ``|X|``.
    eps_round, delta_round, beta_round : float
        ``eps'``, ``delta'``, ``beta'`` of Alg. 1 line 1.
    eps_radius, eps_box, eps_average, delta_average : float
        The split of one SMALL-BALL call.
    radii : ndarray (T,)
        Candidate radii (grid cells).
    slack : int
        ``Delta`` of Alg. 1 line 5 / Alg. 2 line 3: SMALL-BALL looks for
        ``t = w + Delta`` points.
    box_min : float
        Fewest points a round must remove for GOOD-CENTER's guarantee.
    sizes, weights : list of int
        ``n_i`` before round i and ``w_i`` removed in round i.
    t_min : int
        The smallest ``n_i`` for which a round still runs is ``t_min + 1``.
    """

    n: int
    d: int
    k: int
    side: int
    eps_round: float
    delta_round: float
    beta_round: float
    eps_radius: float
    eps_box: float
    eps_average: float
    delta_average: float
    radii: np.ndarray
    slack: int
    box_min: float
    sizes: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    t_min: int = 0
    uncapped_rounds: int = 0

    @property
    def n_rounds(self) -> int:
        return len(self.weights)


def _round_feasible(n_i: int, w_i: int, plan: CoresetPlan) -> bool:
    return w_i >= plan.box_min and w_i + plan.slack <= n_i and w_i >= 1


def plan_coreset(n: float, k: int, d: int, epsilon: float, delta: float, *, beta: float = 0.1,
                 split=DEFAULT_SPLIT, radius_growth: float = 1.1, budget: str = "paper",
                 n_rounds: int | None = None, box_factor: float = 2.0, constants: str = "proved") -> CoresetPlan:
    """Fix the budget, the slack ``Delta``, ``t_min`` and the round schedule of Algorithm 1.

    Parameters
    ----------
    n : float
        Public or noisy dataset size.
    k : int
    d : int
    epsilon, delta : float
        The budget for the rounds (after any noisy-size release).
    beta : float, default 0.1
        Failure probability of the whole run (Alg. 1 input).
    split : (float, float, float)
        Shares of each round's epsilon for the radius, the heavy box and the noisy average.
    radius_growth : float
    budget : "paper" or "schedule", default "paper"
        ``"paper"``: ``eps' = 3 eps / (8 k ln n)`` (Alg. 1 line 1), which
        provisions for the worst-case ``8 k ln(n) / 3`` rounds although the
        loop stops at ``t_min`` much earlier.  ``"schedule"``: the schedule is
        data-independent, so the budget is divided by the number of rounds
        that actually run: the smallest R whose plan at ``eps / R`` stops
        within R rounds (same guarantee, more budget per round).
    n_rounds : int, optional
        Internal: plan with ``eps' = eps / n_rounds`` (and delta, beta likewise).
    box_factor : float, default 2
        GOOD-CENTER's box side over the ball's diameter; at 2 or more the
        ``2^d`` half-shifted partitions apply (see *t_min* below).
    constants : "proved" or "paper_experiments", default "proved"
        ``"paper_experiments"``: ``Delta = 8`` (Feldman et al. §4, footnote 3)
        and ``t_min`` from ``w_i >= ln(3B/beta') / eps_b`` (a non-empty heavy
        box, without the factor 2 of "at least half the heaviest"): this
        reproduces the paper's Table 2 within about 10 % but **has no proof**
        of any round's utility (privacy is unaffected: constants only decide
        how many rounds run, from public values).

    Returns
    -------
    CoresetPlan

    Notes
    -----
    *Budget* (Alg. 1 line 1): ``eps' = 3 eps / (8 k ln n)`` and ``delta'``,
    ``beta'`` likewise.  Each round removes ``w_i = ceil(3 n_i / (8k))``
    points, so ``n_i <= n (1 - 3/(8k))^i`` and, as ``-ln(1 - x) >= x``, at most
    ``1 + 8 k ln(n) / 3`` rounds run; the schedule is also capped at
    ``floor(eps / eps')`` rounds so the sum never exceeds ``(eps, delta)``.

    *Slack* ``Delta`` (the constant of Alg. 2 line 3 for our selection): the
    exponential mechanism over ``T`` radii with sensitivity-1 quality returns,
    with probability ``1 - beta'/3``, a radius whose quality is within
    ``(2/eps_r) ln(3T/beta')`` of the best; the best is at least ``Delta/4``
    (the first radius with ``L >= t - Delta/2``).  So ``Delta = (8/eps_r)
    ln(3T/beta')`` guarantees the chosen radius has ``Q > 0``, i.e. a ball of
    that radius around some point holds more than ``t - Delta = w`` points
    while no ball of the previous candidate radius around a point holds ``t``.

    *t_min*: a round needs ``w_i + Delta <= n_i`` and GOOD-CENTER's heavy box
    must stand out.  With ``box_factor >= 2`` GOOD-CENTER scores the boxes of
    ``2^d`` partitions, the random one shifted by ``0`` or ``l/2`` in each
    coordinate: an L-infinity ball of side ``2r + 1 <= l/2`` avoids, in every
    coordinate, the boundaries of one of the two 1-d offsets (consecutive
    boundaries of the two are ``l/2`` apart), so it lies inside one box of
    one of the ``2^d`` partitions, and the heaviest box holds ``>= w_i``.
    Each record is in one box per partition, so every count moves by at most
    1 and all in the same direction: the monotone exponential mechanism over
    the ``B = 2^d (|X|/2 + 3)^d`` boxes stays ``eps_b``-DP and returns, with
    probability ``1 - beta'/3``, a box within ``ln(3B/beta')/eps_b`` of the
    heaviest, at least half of it when ``w_i >= 2 ln(3B/beta') / eps_b``.
    (With one partition the ball can be cut into ``2^d`` pieces and the bound
    is ``2^(d+1) ln(3B/beta') / eps_b``: 4 times larger in 2-d; this is what
    made k = 5, n = 10^5 infeasible below epsilon = 7.1.)  ``t_min`` is the
    largest size at which a round fails these tests.
    """
    if budget not in ("paper", "schedule"):
        raise ValueError(f'budget must be "paper" or "schedule", got {budget!r}')
    if constants not in CONSTANTS:
        raise ValueError(f'constants must be "proved" or "paper_experiments", got {constants!r}')
    n = max(int(round(float(n))), 1)
    log_n = math.log(max(n, 3))
    if budget == "schedule" and n_rounds is None:
        r_max = int(math.floor(8.0 * k * log_n / 3.0)) + 1
        for R in range(1, r_max + 1):
            plan = plan_coreset(n, k, d, epsilon, delta, beta=beta, split=split, radius_growth=radius_growth,
                                n_rounds=R, box_factor=box_factor, constants=constants)
            if plan.uncapped_rounds <= R or R == r_max:
                return plan
    side = grid_side(n, d)
    denom = 8.0 * k * log_n / 3.0 if n_rounds is None else float(n_rounds)
    eps_r = epsilon / denom
    delta_r = delta / denom
    beta_r = beta / denom
    s = np.asarray(split, dtype=float)
    s = s / s.sum()
    eps_radius, eps_box = eps_r * s[0], eps_r * s[1]
    eps_avg = eps_r - eps_radius - eps_box
    radii = radius_candidates(side, radius_growth)
    if constants == "paper_experiments":
        slack = PAPER_EXPERIMENTS_SLACK
        box_min = math.log(3 * (side / 2 + 2) ** d / beta_r) / eps_box
    else:
        slack = int(math.ceil(8.0 / eps_radius * math.log(3 * radii.size / beta_r)))
        if box_factor >= 2:
            box_min = 2 * math.log(3 * 2 ** d * (side / 2 + 3) ** d / beta_r) / eps_box
        else:
            box_min = 2 ** (d + 1) * math.log(3 * (side / 2 + 2) ** d / beta_r) / eps_box
    plan = CoresetPlan(n=n, d=d, k=k, side=side, eps_round=eps_r, delta_round=delta_r, beta_round=beta_r,
                       eps_radius=eps_radius, eps_box=eps_box, eps_average=eps_avg, delta_average=delta_r,
                       radii=radii, slack=slack, box_min=box_min)
    # t_min: the largest size whose round would fail.  Feasibility is monotone in n (w_i and
    # n_i - w_i are non-decreasing in n_i), so an exponential then binary search finds it.
    def feasible(m):
        return _round_feasible(m, int(math.ceil(3 * m / (8 * k))), plan)
    hi = 1
    while not feasible(hi):
        hi *= 2
    lo = hi // 2  # infeasible (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    plan.t_min = lo
    max_rounds = int(math.floor(epsilon / eps_r * (1 + 1e-12))) if n_rounds is None else int(n_rounds)
    n_i = n
    while n_i > plan.t_min and len(plan.weights) <= max_rounds:
        w_i = int(math.ceil(3 * n_i / (8 * k)))
        plan.sizes.append(n_i)
        plan.weights.append(w_i)
        n_i -= w_i
    plan.uncapped_rounds = len(plan.weights)
    del plan.sizes[max_rounds:], plan.weights[max_rounds:]
    return plan


def min_feasible_epsilon(n: float, k: int, d: int = 2, delta: float = 1e-8, *, beta: float = 0.1,
                         n_share: float = 0.0, split=DEFAULT_SPLIT, radius_growth: float = 1.1,
                         budget: str = "paper", rtol: float = 1e-3, box_factor: float = 2.0,
                         constants: str = "proved", min_rounds: int = 1) -> float:
    """Smallest total epsilon for which PRIVATE-K-MEAN runs at least one round (Feldman et al. Table 2).

    Parameters
    ----------
    n : float
        Dataset size.
    k : int
        Number of clusters.
    d : int, default 2
    delta : float, default 1e-8
    beta : float, default 0.1
    n_share : float, default 0
        Share of epsilon spent on a noisy dataset size first (the estimator's
        ``n_share`` when no public ``n_samples`` is given).
    split, radius_growth, budget, box_factor, constants
        As :class:`PrivateKMeans`.
    rtol : float
        Relative precision of the bisection.
    min_rounds : int, default 1
        Rounds that must run (1: the paper's "runs at all").

    Returns
    -------
    float
        The smallest epsilon (to ``rtol``) with ``n > t_min``; ``inf`` if even
        :data:`~dpcore.utils.validation.MAX_EPSILON` is not enough.

    Notes
    -----
    Feasibility is monotone in epsilon (``t_min`` is proportional to
    ``1/eps'`` up to logarithms of data-independent quantities), so a
    bisection in log-space finds the threshold.
    """
    def ok(eps):
        return plan_coreset(n, k, d, eps * (1 - n_share), delta, beta=beta, split=split,
                            radius_growth=radius_growth, budget=budget, box_factor=box_factor,
                            constants=constants).n_rounds >= min_rounds

    hi = MAX_EPSILON
    if not ok(hi):
        return math.inf
    lo = 1e-6
    if ok(lo):
        return lo
    while hi / lo > 1 + rtol:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


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

    def ball_counts(self, S: np.ndarray, r: int) -> np.ndarray:
        """``B_r(x, P)`` for every occupied cell x: points within L-infinity distance r (§4.3).

        Inclusion–exclusion over the ``2^d`` corners of the box ``[x - r, x + r]``.
        """
        side = self.side
        lo = np.clip(self.cells - r, 0, side)
        hi = np.clip(self.cells + r + 1, 0, side)
        out = np.zeros(self.cells.shape[0], dtype=np.int64)
        flatS = S.ravel()
        shape = S.shape
        for corner in range(1 << self.d):
            idx = []
            sign = 1
            for ax in range(self.d):
                if corner >> ax & 1:
                    idx.append(hi[:, ax])
                else:
                    idx.append(lo[:, ax])
                    sign = -sign
            out += sign * flatS[np.ravel_multi_index(tuple(idx), shape)]
        return out

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


def _top_t_mean(values: np.ndarray, mult: np.ndarray, t: int) -> float:
    """``L``: mean of the ``t`` largest ``min(B, t)`` over the points (with multiplicity), zeros padding."""
    v = np.minimum(values, t)
    h = np.bincount(v, weights=mult, minlength=t + 1)[::-1]  # mass at value t, t-1, ..., 0
    vals = np.arange(t, -1, -1, dtype=float)
    cm = np.cumsum(h)
    j = int(np.searchsorted(cm, t))
    if j >= cm.size:
        return float(np.dot(h, vals)) / t
    above = float(cm[j - 1]) if j > 0 else 0.0
    return (float(np.dot(h[:j], vals[:j])) + (t - above) * vals[j]) / t


def radius_profile(cs: _CellSet, radii: np.ndarray, t: int) -> np.ndarray:
    """``L(r, P)`` of Feldman et al. Alg. 2 line 2 for every candidate radius (L-infinity balls).

    ``L(r, P)`` is the largest mean of ``min(B_r(x_j, P), t)`` over ``t``
    distinct points ``x_j`` of P (points of one cell are distinct records).

    Returns
    -------
    ndarray (T,) float, non-decreasing in r.
    """
    S = cs.prefix_sums()
    return np.array([_top_t_mean(cs.ball_counts(S, int(r)), cs.mult, t) for r in radii])


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
    has L2 sensitivity ``sqrt(2)``; the analytic Gaussian mechanism makes it
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
    m = cs.mult[inside].astype(float)
    query = np.concatenate([(m[:, None] * (cs.cells[inside] - b)).sum(axis=0) / R, [m.sum()]])
    # The last step takes what is left of this call's reservation, so rounding never strands budget.
    eps_a = noise.ledger.remaining()[0]
    noisy = noise.gaussian(query, sensitivity=math.sqrt(2.0), epsilon=eps_a, delta=plan.delta_average,
                           name="GOOD-CENTER: noisy average of the box")
    count = noisy[-1]
    center = b + R * noisy[:-1] / count if count >= 1.0 else b.copy()
    center = np.clip(center, lo, lo + ell - 1)
    return np.clip(center, 0, side - 1)


# ---------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------
#: scikit-learn estimator checks that fit on tens of rows, where PRIVATE-K-MEAN is infeasible at any epsilon.
_CORESET_INFEASIBLE_CHECKS = (
    "check_dict_unchanged", "check_dont_overwrite_parameters", "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf", "check_estimators_overwrite_params",
    "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_1sample",
    "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent", "check_fit_score_takes_y",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance", "check_n_features_in",
    "check_n_features_in_after_fitting", "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input", "check_transformer_data_not_an_array", "check_transformer_general",
    "check_transformer_preserve_dtypes")


class PrivateKMeans(DPClusterer):
    """PRIVATE-K-MEAN: a private weighted coreset, then k-means on it (Feldman et al. 2017, Alg. 1).

    Parameters
    ----------
    n_clusters : int, default 8
        k.
    epsilon : float, default 1.0
        Total budget.
    delta : float, default 1e-8
        Total delta; choose it much smaller than 1/n (§5.1).
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds; the grid ``X^d`` spans them.  ``None`` warns
        (:class:`~dpcore.PrivacyLeakWarning`).
    beta : float, default 0.1
        Failure probability of the utility guarantee; enters ``Delta`` and
        ``t_min`` through ``beta' = 3 beta / (8 k ln n)``.
    split : (float, float, float), default (0.3, 0.45, 0.25)
        Shares of each SMALL-BALL budget for the radius, the heavy box and
        the noisy average.
    radius_growth : float, default 1.1
        Ratio of successive candidate radii (:func:`radius_candidates`).
    box_factor : float, default 2.0
        GOOD-CENTER box side over the ball's diameter.
    budget : "paper" or "schedule", default "paper"
        Per-round budget: Alg. 1 line 1, or the total divided by the number of
        rounds the (data-independent) schedule actually runs
        (:func:`plan_coreset`).  Both are (epsilon, delta)-DP.
    constants : "proved" or "paper_experiments", default "proved"
        Constants of the round schedule (see :func:`plan_coreset`):
        ``"paper_experiments"`` reproduces the paper's Table 2 but has no proof
        of utility.  Privacy is the same either way.
    n_samples : float or None, default None
        A public dataset size.  ``None`` spends ``n_share`` of epsilon on
        ``n + Lap(.)`` first (ledger entry "dataset size"): under
        add/remove-one neighbours n is private, and the grid, ``t_min``, the
        weights and the schedule all depend on it.
    n_share : float, default 0.02
    n_init : int, default 10
        Restarts of the final (non-private) weighted k-means on the coreset.
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    synopsis_ : CoresetSynopsis
        The private coreset: ``points`` (m, d) in data units, ``weights`` (m,) > 0.
    coreset_size_ : int
    plan_ : CoresetPlan
        Grid side, per-round budget, ``Delta``, ``t_min``, the schedule.
    radii_ : ndarray (m,)
        The released L-infinity radius of each round, in data units (first dimension's scale).
    n_estimate_ : float
    budget_ : BudgetLedger
        One entry per SMALL-BALL call ("round i: SMALL-BALL"), plus "dataset size".

    Raises
    ------
    InfeasibleBudgetError
        When ``n <= t_min`` (not even one round), naming the smallest epsilon
        that would work (:func:`min_feasible_epsilon`).
    ValueError, TypeError
        Bad data or parameters.

    Notes
    -----
    Points are snapped to the nearest vertex of the ``|X|^d`` grid (§5.1);
    neighbours are counted with L-infinity balls on a summed-area table
    (§4.3, extended to any d by inclusion–exclusion; the table has
    ``(|X|+1)^d < (2^d n + 1)`` cells, refused above
    :data:`MAX_GRID_CELLS`).  The points left after the last round are not
    represented (Alg. 1), which is the additive error ``O(t_min)``.

    *Empty rounds.*  When the size used for the plan (the noisy count, or a
    declared ``n_samples``) exceeds the true n, the points can run out before
    the planned rounds do.  Those rounds still run, spend their ``(eps',
    delta')`` and publish what their mechanisms draw on the empty set:
    GOOD-RADIUS selects a radius from the all-zero profile (every ``L(r) = 0``),
    GOOD-CENTER picks a box from all-zero counts and releases the Gaussian
    noise on a zero sum and count; with a noisy count below 1 the centre is
    that box's centre (a data-independent point).  The weight is the planned
    ``w_i``, a public number.  This is private for the same reason as any
    round: the remaining sets of neighbouring data sets are neighbours (one
    of them may be empty, the other hold one point), and the mechanisms are
    DP for every pair of neighbours, the empty set included.  Stopping
    instead would make the number of rounds, ``coreset_size_`` and the
    ledger a deterministic function of n (issue #19: n = 6797 vs 6798 with
    ``n_samples=20000``, epsilon = 20, k = 2 gave 2 vs 3 points).

    **Privacy.** (epsilon, delta)-DP under add/remove-one neighbours.  The noisy size (if
    any) costs ``n_share * epsilon``; the rest buys the rounds at
    ``eps' = 3 eps / (8 k ln n)`` and ``delta' = 3 delta / (8 k ln n)`` each.
    Round i is ``(eps', delta')``-DP given the earlier outputs
    (:func:`good_radius`, :func:`good_center`); the weights ``w_i`` and the
    number of rounds come from the (public or noisy) size only, so
    ``coreset_size_ == plan_.n_rounds``, the synopsis shapes ``(m, d)`` and
    ``(m,)`` and the ledger's entries are functions of public inputs and of
    the released noisy size, never of the data.  Removing the
    ``w_i`` points nearest the released centre from neighbouring data sets
    leaves neighbouring data sets (Feldman et al. Thm. 3.6 (i)), so by
    adaptive sequential composition the coreset is ``(eps, delta)``-DP, and
    the k-means on it is post-processing.  Each round is one ledger entry
    reserved with ``noise.sub``; its inner steps cannot exceed it.

    References
    ----------
    Feldman et al. (2017), Alg. 1, Alg. 2, §4.3, §5; Nissim, Stemmer, Vadhan (2016).

    Examples
    --------
    The coreset needs tens of thousands of points before its first round:

    >>> import numpy as np
    >>> from dpcore.coreset import PrivateKMeans
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(50_000, 1))
    >>> est = PrivateKMeans(n_clusters=2, epsilon=2.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (2, 1)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    display_name = "Private coreset (PRIVATE-K-MEAN)"
    reference = "Feldman, Xiang, Zhu, Rus 2017, Alg. 1; SMALL-BALL of Nissim, Stemmer, Vadhan 2016"
    summary = ("Releases a small weighted private coreset (ball centres found one by one), "
               "then runs ordinary k-means on it.")
    needs_delta = True

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=1e-8, bounds=None, beta=0.1, split=DEFAULT_SPLIT,
                 radius_growth=1.1, box_factor=2.0, budget="paper", constants="proved", n_samples=None,
                 n_share=0.02, n_init=10, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.beta = beta
        self.split = split
        self.radius_growth = radius_growth
        self.box_factor = box_factor
        self.budget = budget
        self.constants = constants
        self.n_samples = n_samples
        self.n_share = n_share
        self.n_init = n_init
        self.random_state = random_state

    def _check_params(self):
        if not (isinstance(self.beta, numbers.Real) and 0 < self.beta < 1):
            raise ValueError(f"beta must be in (0, 1), got {self.beta!r}")
        try:
            s = np.asarray(self.split, dtype=float)
        except (TypeError, ValueError):
            s = np.array([])
        if s.shape != (3,) or not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise ValueError(f"split must be three positive shares (radius, box, average), got {self.split!r}")
        if not (isinstance(self.radius_growth, numbers.Real) and self.radius_growth > 1):
            raise ValueError(f"radius_growth must be a number > 1, got {self.radius_growth!r}")
        if not (isinstance(self.box_factor, numbers.Real) and self.box_factor >= 1):
            raise ValueError(f"box_factor must be a number >= 1, got {self.box_factor!r}")
        if self.budget not in ("paper", "schedule"):
            raise ValueError(f'budget must be "paper" or "schedule", got {self.budget!r}')
        if self.constants not in CONSTANTS:
            raise ValueError('constants must be "proved" or "paper_experiments" (the paper\'s experimental '
                             f'constants: no proof), got {self.constants!r}')
        if not (isinstance(self.n_init, numbers.Integral) and self.n_init >= 1):
            raise ValueError(f"n_init must be a positive whole number, got {self.n_init!r}")

    def _expected_failed_checks(self) -> dict[str, str]:
        reason = ("PRIVATE-K-MEAN (Feldman et al. 2017, Alg. 1 line 2) needs more points than scikit-learn's "
                  "check data (tens to hundreds of rows) before its first round at any allowed epsilon; it "
                  "refuses with InfeasibleBudgetError naming the smallest epsilon that works")
        return {**super()._expected_failed_checks(), **{name: reason for name in _CORESET_INFEASIBLE_CHECKS}}

    def fit(self, X, y=None):
        """Release the private coreset and k centres computed from it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data in data units. Values outside the public ``bounds`` are clipped to them
            and counted in ``n_clipped_``.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : PrivateKMeans
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            Bad data or parameters, with a sentence saying what to fix
            (see :mod:`dpcore.utils.validation`); a :class:`~dpcore.sources.DataSource`
            is a TypeError (this algorithm needs the rows in memory).

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.coreset import PrivateKMeans
        >>> X = np.random.default_rng(0).uniform(0, 1, size=(50_000, 1))
        >>> est = PrivateKMeans(n_clusters=2, epsilon=2.0, bounds=(0, 1))
        >>> est.fit(X) is est
        True
        """
        X, noise = self._begin_fit(X)
        self._check_params()
        k, d = int(self.n_clusters), X.shape[1]
        eps_total, delta_total = float(self.epsilon), float(self.delta)
        share = 0.0 if self.n_samples is not None else float(self.n_share)
        n_est, eps_left = public_or_noisy_size(X.shape[0], self.n_samples, self.n_share, eps_total, noise)
        self.n_estimate_ = n_est
        # Feasibility (Alg. 1 line 2) and the grid's size, on the public/noisy size only (dpcore.regime).
        check_fit(self, "coreset", n=n_est, d=d, epsilon=eps_left, delta=delta_total, beta=float(self.beta),
                  split=self.split, radius_growth=float(self.radius_growth), budget=self.budget, n_share=share,
                  box_factor=float(self.box_factor), constants=self.constants)
        plan = plan_coreset(n_est, k, d, eps_left, delta_total, beta=float(self.beta), split=self.split,
                            radius_growth=float(self.radius_growth), budget=self.budget,
                            box_factor=float(self.box_factor), constants=self.constants)
        self.plan_ = plan
        dom = self.bounds_
        side = plan.side
        U = (X - dom.lower) / dom.width
        cells_all = np.rint(U * (side - 1)).astype(np.int64)
        np.clip(cells_all, 0, side - 1, out=cells_all)
        flat = np.ravel_multi_index(tuple(cells_all.T), (side,) * d)
        del cells_all, U
        counts = np.bincount(flat, minlength=side ** d)
        occ = np.flatnonzero(counts)
        cs = _CellSet(np.stack(np.unravel_index(occ, (side,) * d), axis=1).astype(np.int64),
                      counts[occ].astype(np.int64), side)
        del counts, flat

        centers, weights, radii = self._run_rounds(cs, plan, noise)

        C = np.array(centers, dtype=float).reshape(-1, d) / (side - 1)  # unit cube [0, 1]^d of §3
        W = np.array(weights, dtype=float)
        pts = dom.lower + C * dom.width
        self.synopsis_ = CoresetSynopsis(points=pts, weights=W)
        self.coreset_size_ = int(W.size)
        self.radii_ = np.array(radii, dtype=float) / (side - 1) * dom.width[0]
        self.cluster_centers_ = dom.lower + self._weighted_kmeans(C, W, k, noise.rng) * dom.width
        return self

    def _run_rounds(self, cs: _CellSet, plan: CoresetPlan, noise: NoiseSource):
        """Alg. 1 lines 3-11: one SMALL-BALL call per planned round, removing ``w_i`` points each time.

        Returns
        -------
        centers : list of ndarray (d,), grid coordinates
        weights : list of float, the planned ``w_i``
        radii : list of int, grid cells

        Notes
        -----
        **Privacy.** Every round of ``plan.weights`` runs and reserves ``(plan.eps_round,
        plan.delta_round)``, whatever the data: the number of rounds and the
        ledger are functions of the plan (public or noisy size) only.
        """
        centers, weights, radii = [], [], []
        for i, w_i in enumerate(plan.weights):
            # Every planned round runs, even on an empty remainder (the noisy or declared size
            # overestimated n): stopping early would publish, through coreset_size_ and the ledger,
            # exactly when the data ran out, i.e. n (issue #19).  An empty round is the same
            # mechanism on the empty set: see "Empty rounds" in the class docstring.
            sub = noise.sub(f"round {i + 1}: SMALL-BALL", plan.eps_round, plan.delta_round)
            t = int(w_i + plan.slack)
            r = good_radius(cs, t, plan, sub)
            c = good_center(cs, r, plan, sub, box_factor=float(self.box_factor))
            cs.remove_nearest(c, w_i)
            centers.append(c)
            weights.append(float(w_i))
            radii.append(r)
        return centers, weights, radii

    def _weighted_kmeans(self, C: np.ndarray, W: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        """Alg. 1 line 12: non-private weighted k-means on the released coreset (post-processing)."""
        m = C.shape[0]
        if m <= k:
            # Fewer coreset points than clusters: every point is its own centre; repeat to fill k rows.
            return C[np.arange(k) % m]
        seed = int(rng.integers(2 ** 31 - 1))
        km = _SKKMeans(n_clusters=k, n_init=int(self.n_init), random_state=seed)
        km.fit(C, sample_weight=W)
        return km.cluster_centers_
