"""PGkM: PrivGene's genetic algorithm applied to k-means (Su et al. 2016, §4.1.3).

A pool of 200 candidate centre sets (each a vector of ``k d`` coordinates in
the normalised domain ``[-1, 1]^d``) evolves for ``max{8, x N epsilon / m'}``
rounds.  Each round the exponential mechanism picks ``m' = 10`` candidates
with the best fitting score (minus the non-normalised NICV, i.e. the k-means
cost); the next pool is made from them by one-point crossover and
single-coordinate mutation.

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.1.3, §5.3.
Zhang, Xiao, Yang, Zhang, Winslett (2013). PrivGene: differentially private model fitting using genetic
algorithms. SIGMOD.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.utils._param_validation import Interval

from ...utils.contributions import WEIGHT_BITS
from ...utils.fixedpoint import FixedPoint
from ..base import DPClusterer, fit_doc
from ..regime import Regime, check_fit
from ..traits import CI_RUNS_SLOW, AuditCase, PrivacyCase

#: x and m' of Su et al. §4.1.3 ("empirically set to 1.25e-3 and 10").
X_FACTOR = 1.25e-3
N_SELECTED = 10
N_CANDIDATES = 200
#: Refuse above this many distance evaluations (n x candidates x k x d x rounds), about 10 s here.
PGKM_MAX_WORK = 4e9
MIN_ROUNDS = 8


def pgkm_rounds(n: float, epsilon: float, *, x: float = X_FACTOR, m_selected: int = N_SELECTED,
                min_rounds: int = MIN_ROUNDS) -> int:
    """Number of rounds ``max{8, x N epsilon / m'}`` (Su et al. 2016, §4.1.3), rounded down."""
    return int(max(min_rounds, math.floor(x * n * epsilon / m_selected)))


@numba.njit(cache=True, nogil=True)
def _candidate_cost(Z, pool, c, w):  # pragma: no cover - compiled
    """Sum over the rows of ``Z`` of the squared distance to the nearest centre of candidate ``c``, each
    times its weight ``w`` (an empty ``w``: every row weighs 1)."""
    n, d = Z.shape
    weighted = w.shape[0] > 0
    k = pool.shape[1]
    total = 0.0
    for i in range(n):
        best = np.inf
        for j in range(k):
            t = 0.0
            for q in range(d):
                u = Z[i, q] - pool[c, j, q]
                t += u * u
            if t < best:
                best = t
        total += best * w[i] if weighted else best
    return total


@numba.njit(parallel=True, cache=True, nogil=True)
def _costs_parallel(Z, pool, w, out):  # pragma: no cover - compiled
    for c in numba.prange(pool.shape[0]):
        out[c] = _candidate_cost(Z, pool, c, w)


@numba.njit(cache=True, nogil=True)
def _costs_serial(Z, pool, w, out):  # pragma: no cover - compiled
    for c in range(pool.shape[0]):
        out[c] = _candidate_cost(Z, pool, c, w)


#: Below this many distance evaluations (rows x candidates x k) one thread does it: waking numba's
#: thread pool costs more than the work (the privacy audits fit PGkM thousands of times on 20 rows).
_PARALLEL_WORK = 1 << 22


def candidate_costs(Z: np.ndarray, pool: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """k-means cost (sum of squared distances to the nearest centre) of each candidate.

    Parameters
    ----------
    Z : ndarray (n, d)
    pool : ndarray (m, k, d)
    weights : ndarray (n,) of float in ``[0, 1]``, optional
        The rows' contribution weights (``contribution_bounding="weight"``): a weighted cost.

    Returns
    -------
    ndarray (m,), each ``>= 0``.  One compiled pass over the rows per candidate, the squared
    distances summed coordinate by coordinate (no ``|z|^2 - 2 z.c + |c|^2`` cancellation); about
    20x faster than the (rows, m k) distance matrix it replaces.
    """
    Z = np.ascontiguousarray(Z, dtype=float)
    pool = np.ascontiguousarray(pool, dtype=float)
    out = np.empty(pool.shape[0])
    kernel = _costs_parallel if Z.shape[0] * pool.shape[0] * pool.shape[1] >= _PARALLEL_WORK else _costs_serial
    w = np.zeros(0) if weights is None else np.ascontiguousarray(weights, dtype=float)
    kernel(Z, pool, w, out)
    return out


def crossover_mutate(parents: np.ndarray, n_children: int, scale: float, rng: np.random.Generator,
                     r: float = 1.0) -> np.ndarray:
    """Offspring by one-point crossover and single-coordinate mutation (Su et al. §4.1.3).

    Pairs of distinct parents (uniformly at random) are flattened to vectors
    of length ``l = k d``; a cut ``0 < l_bar < l`` is drawn and the tails
    swapped, giving two children; each child then gets ``U(-scale, scale)``
    added to one random coordinate, clipped to ``[-r, r]``.

    Parameters
    ----------
    parents : ndarray (m', k, d)
    n_children : int (even)
    scale : float, the mutation half-width
    rng : numpy.random.Generator (non-private: it never sees the data)

    Returns
    -------
    ndarray (n_children, k, d)
    """
    m, k, d = parents.shape
    L = k * d
    flat = parents.reshape(m, L)
    n_pairs = (n_children + 1) // 2
    if m >= 2:
        a = rng.integers(m, size=n_pairs)
        b = (a + rng.integers(1, m, size=n_pairs)) % m      # a different parent
    else:
        a = b = np.zeros(n_pairs, dtype=int)
    pa, pb = flat[a], flat[b]
    if L >= 2:
        cut = rng.integers(1, L, size=n_pairs)
        tail = np.arange(L)[None, :] >= cut[:, None]
        c1 = np.where(tail, pb, pa)
        c2 = np.where(tail, pa, pb)
    else:
        c1, c2 = pa.copy(), pb.copy()
    kids = np.concatenate([c1, c2])[:n_children]
    j = rng.integers(L, size=n_children)
    kids[np.arange(n_children), j] += rng.uniform(-scale, scale, size=n_children)
    return np.clip(kids, -r, r).reshape(n_children, k, d)


class PGkM(DPClusterer):
    """PrivGene k-means, PGkM (Su et al. 2016, §4.1.3; Zhang et al. 2013).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total budget (epsilon-DP).
    bounds : (lower, upper), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    n_candidates : int, default 200
        Pool size (§4.1.3).
    n_selected : int, default 10
        m', candidates selected per round.
    x : float, default 1.25e-3
        The factor of the round count ``max{8, x N epsilon / m'}``.
    n_rounds : int or None, default None
        Override the round rule (for experiments).
    mutation_scale : float, default 0.5
        Initial mutation half-width in the normalised domain (half the
        domain's half-width); it is halved every round (our choice: the papers
        do not give PrivGene's schedule).
    n_samples : float or None, default None
        A public dataset size for the round rule; ``None`` spends ``n_share``
        of epsilon on a noisy count (ledger entry "dataset size").
    n_share : float, default 0.02
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    n_rounds_ : int
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters.

    Notes
    -----
    **Privacy.** epsilon-DP.  The initial pool and every crossover and mutation use no data.
    The only data access is the selection: each round has ``epsilon' / n_rounds``
    (``epsilon'`` what is left after the optional noisy count; sequential
    composition), split over its ``m'`` draws of the exponential mechanism; on
    the score ``-cost(C) = -sum_x min_j ||x - c_j||^2`` in the normalised
    domain ``[-1, 1]^d``.  Adding or removing one record changes every
    candidate's cost by its squared distance to the nearest centre, at most
    the squared diameter of the domain, ``(2)^2 d = 4 d``: sensitivity ``4 d``.
    The change has the same sign for every candidate (adding a record never
    lowers a cost), so the score is monotonic and the exponential mechanism
    may use ``exp(eps * score / Delta)`` instead of ``/ (2 Delta)``
    (McSherry & Talwar 2007).  Selection is without replacement (chosen
    candidates are excluded from the next draw of the round).  The last round
    releases a single centre set, so it makes one draw with the whole round's
    budget (our choice; the papers do not say how the output is picked).
    With ``contribution_bounding="weight"`` the cost weighs each row by its contribution weight in
    ``[0, 1]``: a unit whose weights sum to at most L moves every cost by at most ``4 d L``, in the
    same direction (weights are non-negative), the sensitivity of L sampled rows (Amin et al. 2019);
    the noisy size is the weights' exact sum plus noise.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import PGkM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "pgkm"
    supports_weighting = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py (20 draws)
    calibrated = True
    display_name = "PGkM (PrivGene)"
    reference = "Su et al. 2016, §4.1.3; Zhang et al. 2013 (PrivGene)"
    summary = "Genetic algorithm: exponential-mechanism selection of candidate centre sets, crossover, mutation."
    colour = "#e377c2"
    # CI audit size: traits.CI_RUNS_SLOW (why: PrivacyCase.ci_runs); the benchmark keeps n_runs.
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", ci_runs=CI_RUNS_SLOW),))

    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "n_selected": [Interval(Integral, 1, None, closed="left")],
        "x": [Interval(Real, 0, None, closed="neither")],
        "n_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "mutation_scale": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, n_candidates=N_CANDIDATES,
                 n_selected=N_SELECTED, x=X_FACTOR, n_rounds=None, mutation_scale=0.5, n_samples=None,
                 n_share=0.02, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_candidates = n_candidates
        self.n_selected = n_selected
        self.x = x
        self.n_rounds = n_rounds
        self.mutation_scale = mutation_scale
        self.n_samples = n_samples
        self.n_share = n_share
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0,
               n_candidates: int = N_CANDIDATES, n_rounds: int | None = None, x: float = X_FACTOR,
               n_selected: int = N_SELECTED, **params) -> Regime:
        """Su et al. (2016, §5) run PrivGene on small data: refuse when its candidate scoring cannot finish.

        Parameters
        ----------
        n, d, k, epsilon, delta
            Public inputs (``n`` public or noisy); see :meth:`DPClusterer.regime`.
        n_candidates, n_rounds, x, n_selected
            The estimator's parameters (``n_rounds=None``: :func:`pgkm_rounds`).
        **params
            Ignored.

        Returns
        -------
        Regime
        """
        m = int(n_candidates)
        rounds = n_rounds or pgkm_rounds(n, epsilon, x=float(x), m_selected=int(n_selected))
        work = float(n) * m * k * d * rounds
        figs = dict(rounds=rounds, work=work)
        if work > PGKM_MAX_WORK:
            return Regime(cls.key, "refuse", f"PrivGene scores {m} candidate centre sets on every point in each "
                          f"of {rounds} rounds ({work:.2g} distance terms for about {n:,.0f} points, d = {d}, "
                          f"k = {k}); Su et al. (2016, §5) run it on small data only: use a sample.", None, figs)
        return Regime(cls.key, "ok", "small enough for PrivGene's candidate scoring.", None, figs)

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size (when ``n_rounds`` is None), then t rounds in equal parts: every round but the
        last splits its part over ``n_selected`` selections, the last makes one final selection.
        t is ``n_rounds`` or the rule of §4.1.3 at the public or noisy size ``n``.
        See :meth:`DPClusterer.budget_plan`."""
        plan: dict[str, tuple[float, float]]
        if self.n_rounds is not None:
            plan, left, t = {}, float(self.epsilon), int(self.n_rounds)
        else:
            plan, left = self._size_step()
            t = pgkm_rounds(self._planned_size(n), left, x=float(self.x), m_selected=int(self.n_selected))
        if t > 1:
            plan["round"] = (left * (t - 1) / t, 0.0)
        plan["round #: final selection"] = (left / t, 0.0)
        return plan

    @fit_doc('Release k private centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, n = self._begin_fit(X, privacy_id=privacy_id)
        weights = self._pop_row_weights()
        if weights is not None:      # weighted rows: the size is the weights' exact sum (fixed point)
            n = FixedPoint(np.array(int(weights.sum()), dtype=np.int64), WEIGHT_BITS)
            weights = weights / float(1 << WEIGHT_BITS)          # exact: dyadic in [0, 1]
        m, m_sel = self.n_candidates, self.n_selected
        if m_sel > m:   # a rule between two parameters: no single constraint says it
            raise ValueError(f"n_selected ({m_sel}) cannot exceed n_candidates ({m})")
        dom = self.bounds_
        Z = dom.normalize(X)
        k, d = int(self.n_clusters), X.shape[1]
        eps = float(self.epsilon)
        if self.n_rounds is None:
            n_est, eps_left = self._public_or_noisy_size(n, noise, eps)
            t = pgkm_rounds(n_est, eps_left, x=float(self.x), m_selected=int(m_sel))
            check_fit(self, n=n_est, d=d, epsilon=eps_left, n_candidates=int(m), n_rounds=t)
        else:
            t, eps_left = int(self.n_rounds), eps
            if self.n_samples is not None:   # a public size costs nothing: the check reads it (n_samples_estimate_)
                n_pub, _ = self._public_or_noisy_size(n, noise, eps)
                check_fit(self, n=n_pub, d=d, epsilon=eps, n_candidates=int(m), n_rounds=t)
        rng = noise.rng
        sens = 4.0 * d
        per_round = eps_left / t
        pool = rng.uniform(-1.0, 1.0, size=(m, k, d))   # 200 random centre sets (§4.1.3)
        scale = float(self.mutation_scale)
        for rnd in range(t):
            scores = -candidate_costs(Z, pool, weights)
            # The last round releases one centre set, so it makes one selection with the round's budget.
            n_pick = m_sel if rnd < t - 1 else 1
            chosen = []
            for s in range(n_pick):
                last = rnd == t - 1
                e = noise.ledger.remaining()[0] if last else per_round / n_pick
                masked = scores.copy()
                masked[chosen] = -np.inf
                label = f"round {rnd + 1}: selection {s + 1} of {n_pick}" if not last else \
                    f"round {rnd + 1}: final selection"
                chosen.append(noise.exponential(masked, sensitivity=sens, epsilon=e, monotonic=True, name=label))
            parents = pool[chosen]
            if rnd < t - 1:
                pool = crossover_mutate(parents, m, scale, rng)
                scale /= 2
        self.cluster_centers_ = dom.denormalize(parents[0])
        self.n_rounds_ = t
        return self
