"""PrivTree's rule (Zhang, Xiao & Xie 2016, Alg. 2) on the lattice: the calibration and the tree walk.

:meth:`dpcore.privacy.mechanisms.NoiseSource.privtree` draws the noise and spends; this module holds
what it needs beside the draw: the public calibration (:func:`privtree_plan`) and the walk from the
root that asks the mechanism for each level's decisions (:func:`privtree_leaves`).

The rule
--------
The tree is the full ``beta = 2^d``-ary tree of dyadic cells of the box: level ``l`` has ``2^l``
cells a dimension.  From the root down, a node ``v`` at depth ``l`` is split when its *biased count*
``b(v) = max(theta - delta, c(v) - l delta)`` plus noise exceeds ``theta``; otherwise it is a leaf, as
is every reached node of the last level.

Privacy
-------
epsilon-DP (Zhang et al. 2016, Thm. 3.1 with fanout ``beta``) for the scale
``lambda = (2 beta - 1) / ((beta - 1) epsilon)`` and the decay ``delta = lambda ln(beta)``: a row lies
in one node per level, and along that path the biased counts fall by at least ``delta`` a level while
above the floor ``theta - delta``, so the privacy losses of the decisions form a geometric series of
ratio ``1 / beta`` plus at most two full terms.  Here the noise is the discrete Laplace on the
power-of-two lattice ``gamma`` the other mechanisms use (no float Laplace): ``theta`` is rounded to it
and ``delta`` rounded *up* to it (a faster decay only shrinks the series), the counts are integers
(on every such lattice), so the biased counts are exact lattice points, and the tail of the
two-sided geometric, ``P[Z >= a] = q^a / (1 + q)``, has the exponential form the paper's Lemma uses.
For a privacy unit of L rows the scale is L times larger: a row costs ``epsilon / L`` and a unit
``epsilon`` (group privacy).  Only reached nodes are decided; the leaves are a function of those
decisions.

Weighted rows
-------------
With contribution bounding by weighting (:func:`dpcore.utils.contributions.contribution_weights`)
the counts are sums of row weights ``w`` in ``[0, 1]``, exact multiples of ``2^-B``
(a :class:`~dpcore.utils.fixedpoint.FixedPoint` of ``B`` bits).  The lattice is then at most
``2^-B``, so every biased count is still an exact lattice point (no rounding).  A row of weight
``w`` shifts each biased count on its path by ``s = w`` at most (the floor ``theta - delta`` only
clips), and each decision's privacy loss is at most ``w`` times its loss at a shift of 1: a split
(``P[Z > a - s] / P[Z > a] <= e^(s / lambda)``) by ``w / lambda``, a leaf (loss
``<= C(a) (e^(s / lambda) - 1)``, ``C`` the factor of the paper's geometric series) by
``w C(a) (e^(1 / lambda) - 1)`` since ``e^(s / lambda) - 1`` is convex in ``s`` and 0 at 0.  So the
paper's bound for one row (Thm. 3.1) becomes ``w epsilon / L`` for a row of weight ``w`` at the
scale above; adding a unit's rows one at a time (each row's weight is fixed by its own unit's row
count), a unit whose weights sum to at most ``L`` costs at most ``epsilon``.  (Amin et al. 2019 bound
a unit's weights; this is the same argument for PrivTree's non-linear decisions.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..utils.fixedpoint import FixedPoint
from .calibration import _check_epsilon, _lattice
from .lattice import _check_scale, _sampled
from .samplers import discrete_laplace


@dataclass(frozen=True)
class PrivTreePlan:
    """The public calibration of one PrivTree: everything in lattice units except ``lam`` and ``gamma``."""

    lam: float          # the noise scale lambda, in counts
    gamma: float        # the lattice step
    t: float            # the scale in lattice units
    decay: int          # delta, lattice units (rounded up)
    threshold: int      # theta, lattice units
    per_unit: int       # a count of 1, lattice units


def privtree_plan(d: int, epsilon: float, unit: float, theta: float, *, coarsest: float = 1.0) -> PrivTreePlan:
    """Scale, lattice and decay for fanout ``2^d``, budget ``epsilon`` and a row's weight ``unit`` (L).

    ``coarsest``: the largest lattice step allowed (a power of two): ``2^-B`` for counts of weights
    that are multiples of ``2^-B``, so that they lie on the lattice exactly (public: B is a constant).
    """
    beta = 2 ** int(d)
    lam = unit * (2 * beta - 1) / ((beta - 1) * epsilon)
    gamma = min(_lattice(lam), float(coarsest))
    return PrivTreePlan(lam=lam, gamma=gamma, t=lam / gamma, decay=math.ceil(lam * math.log(beta) / gamma),
                        threshold=int(round(float(theta) / gamma)), per_unit=int(round(1.0 / gamma)))


def tree_levels(n_nodes: int, d: int) -> list[int]:
    """Nodes per level of a full ``2^d``-ary tree of ``n_nodes`` nodes (levels 0..J); ValueError otherwise."""
    sizes: list[int] = []
    while sum(sizes) < n_nodes:
        sizes.append(2 ** (len(sizes) * d))
    if d < 1 or sum(sizes) != n_nodes:
        raise ValueError(f"values must hold the levels 0..J of a 2^{d}-ary tree, got {n_nodes} nodes")
    return sizes


def privtree_leaves(counts: np.ndarray, d: int, plan: PrivTreePlan,
                    decide: Callable[[np.ndarray], np.ndarray], *, per_count: int | None = None) -> np.ndarray:
    """Walk the tree from the root; ``decide(biased)`` (the mechanism) says which reached nodes split.

    Parameters
    ----------
    counts : ndarray of int, every node's exact count, level after level (see ``NoiseSource.privtree``)
    d : int
    plan : PrivTreePlan
    decide : callable, biased counts in lattice units (int64) -> bool (split)
    per_count : int, optional
        Lattice units per unit of ``counts`` (default ``plan.per_unit``: whole counts); for fixed-point
        counts of ``B`` bits, ``2^-B / gamma``.

    Returns
    -------
    ndarray of bool, shape of ``counts``: the leaves.
    """
    sizes = tree_levels(counts.size, d)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    offsets = np.stack(np.unravel_index(np.arange(2 ** d), (2,) * d), axis=1)    # (beta, d)
    leaf = np.zeros(counts.size, dtype=bool)
    active = np.zeros(1, dtype=np.int64)
    for lv in range(len(sizes)):
        if active.size == 0:
            break
        if lv == len(sizes) - 1:
            leaf[starts[lv] + active] = True
            break
        c = counts[starts[lv] + active].astype(np.int64)
        scale = plan.per_unit if per_count is None else int(per_count)
        biased = np.maximum(plan.threshold - plan.decay, c * scale - lv * plan.decay)
        split = np.asarray(decide(biased), dtype=bool)
        leaf[starts[lv] + active[~split]] = True
        side = 2 ** lv
        parents = np.stack(np.unravel_index(active[split], (side,) * d), axis=1)
        kids = (2 * parents[:, None, :] + offsets[None, :, :]).reshape(-1, d)
        active = np.sort(np.ravel_multi_index(tuple(kids.T), (2 * side,) * d)).astype(np.int64)
    return leaf


class PrivTreeMechanism:
    """The PrivTree mechanism of :class:`~dpcore.privacy.mechanisms.NoiseSource` (a base of it; kept here
    beside its rule so that the noise module stays one readable page)."""

    rng: np.random.Generator

    def _unit(self, sensitivity) -> float:  # pragma: no cover - NoiseSource's
        raise NotImplementedError

    def _spend(self, name, epsilon, delta, mechanism, sensitivity, granularity=None, sampler=None):  # pragma: no cover
        raise NotImplementedError

    def _noised(self, k, bound: float, norm: str):  # pragma: no cover - NoiseSource's
        raise NotImplementedError

    def privtree(self, values, *, d: int, epsilon: float, name: str, theta: float = 0.0) -> np.ndarray:
        """PrivTree's split decisions over a count pyramid (Zhang, Xiao & Xie 2016, Alg. 2): the leaves.

        Parameters
        ----------
        values : ndarray of int or FixedPoint, shape (sum over l = 0..J of 2^(l d),)
            Exact counts of every node of the full ``2^d``-ary tree of dyadic cells, level after
            level from the root, each level in C order of its ``(2^l,) * d`` grid; a
            :class:`~dpcore.utils.fixedpoint.FixedPoint` for sums of row weights in ``[0, 1]``
            (contribution bounding by weighting: see "Weighted rows" in :mod:`dpcore.privacy.privtree`).
        d : int >= 1
        epsilon : float > 0
            The cost of the whole tree, recorded once.
        name : str
        theta : float, default 0, the split threshold.

        Returns
        -------
        ndarray of bool, shape of ``values``: True at the leaves of the released tree.

        Notes
        -----
        **Privacy.** epsilon-DP with integer noise on a power-of-two lattice; the rule, the
        calibration and the argument are in :mod:`dpcore.privacy.privtree`.  Spends before it
        draws, as every mechanism of :class:`~dpcore.privacy.mechanisms.NoiseSource`.
        """
        epsilon = _check_epsilon(epsilon)
        fixed = isinstance(values, FixedPoint)
        tree_levels(values.size if fixed else np.size(values), int(d))   # the shape is checked before anything is spent
        unit = self._unit(1.0)
        # Weighted counts (multiples of 2^-bits): a lattice at least that fine holds them exactly.
        plan = privtree_plan(int(d), epsilon, unit, theta, coarsest=2.0 ** -values.bits if fixed else 1.0)
        _check_scale(plan.t, "PrivTree's discrete Laplace")
        self._spend(name, epsilon, 0.0, "privtree (discrete laplace on a lattice)", unit, plan.gamma,
                    _sampled("laplace", plan.t, plan.gamma))

        def decide(biased: np.ndarray) -> np.ndarray:
            biased = self._noised(biased, unit * plan.per_unit, "l1")   # one row moves one node a level
            return biased + discrete_laplace(self.rng, plan.t, biased.shape) > plan.threshold

        if fixed:
            if values.q.dtype == object:
                raise ValueError("PrivTree's weighted counts must fit in int64")
            return privtree_leaves(values.q, int(d), plan, decide,
                                   per_count=int(round(2.0 ** -values.bits / plan.gamma)))
        return privtree_leaves(np.asarray(values), int(d), plan, decide)
