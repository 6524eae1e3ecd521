"""PRIVATE-K-MEAN's plan: grid size, t_min, rounds and weights from public inputs only (Feldman et al. 2017).

How many rounds run, with which budget and weight, is a function of n (public or noisy), k, d,
epsilon and delta: Alg. 1 line 1-2, Thm. 3.6, §5.2 (the grid), and the constants argued in
:mod:`.private_kmeans`.  Nothing here reads the data.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...utils.validation import MAX_EPSILON

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
    # Python ints and a float: numpy integers (a size read from a table) overflow at 2^63 here.
    side, d, n = 2, int(d), float(n)
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
        within R rounds; when it stops after r < R rounds, the plan at
        ``eps / r`` (same r rounds, more budget each): the whole budget is spent
        on the rounds that run (same guarantee).
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
                if 0 < plan.n_rounds < R:
                    # Fewer rounds run than the budget was divided by: the rounds that run share all of it
                    # (issue 65: 0.0392 of ε = 1 was never spent).  More budget per round only lowers t_min,
                    # so at eps / r all r rounds still run, and the cap at r stops the schedule there.
                    plan = plan_coreset(n, k, d, epsilon, delta, beta=beta, split=split, radius_growth=radius_growth,
                                        n_rounds=plan.n_rounds, box_factor=box_factor, constants=constants)
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
