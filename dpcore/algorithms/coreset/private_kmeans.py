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
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans as _SKKMeans
from sklearn.utils._param_validation import Interval, StrOptions

from ...privacy.mechanisms import NoiseSource
from ...synopsis import CoresetSynopsis
from ...utils.validation import DELTA_REQUIRED, Checked
from ..base import DPClusterer, fit_doc
from ..parameters import UNSPENT, share_tuple
from ..regime import OutOfRegimeError, Regime, check_fit
from ..traits import AuditCase
from .plan import CONSTANTS, DEFAULT_SPLIT, MAX_GRID_CELLS, CoresetPlan, grid_side, min_feasible_epsilon, plan_coreset
from .small_ball import _CellSet, good_center, good_radius

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


def _check_constants(constants) -> None:
    if not (isinstance(constants, str) and constants in CONSTANTS):
        raise ValueError('constants must be "proved" or "paper_experiments" (the paper\'s experimental '
                         f'constants: no proof), got {constants!r}')


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
    budget_shares : (float, float, float), default (0.3, 0.45, 0.25)
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
    >>> from dpcore.algorithms import PrivateKMeans
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(50_000, 1))
    >>> est = PrivateKMeans(n_clusters=2, epsilon=2.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (2, 1)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "coreset"
    weighting_refusal = ("GOOD-RADIUS averages the ball counts of its t best-covered points: each of a person's "
                         "many down-weighted rows can enter or leave those t, where L sampled rows change at "
                         "most L of them")
    calibrated = True
    display_name = "Private coreset"
    reference = "Feldman, Xiang, Zhu, Rus 2017, Alg. 1; SMALL-BALL of Nissim, Stemmer, Vadhan 2016"
    summary = ("Releases a small weighted private coreset (ball centres found one by one), "
               "then runs ordinary k-means on it.")
    needs_delta = True
    colour = "#17becf"
    audit = AuditCase(
        privacy=("PRIVATE-K-MEAN is infeasible on a few dozen records at epsilon <= 1 (Feldman et al. 2017, "
                 "Alg. 1 line 2 needs about 2e4 points): no tiny neighbouring datasets exist for it"),
        # Rounds need thousands of points' worth of budget: a public size and a large epsilon let them run
        # on tiny data (7 rounds for k = 2; k >= 4 is infeasible, which exercises InfeasibleBudgetError).
        structural=dict(epsilon=100.0, delta=1e-6, n_samples=2000, n_init=1),
        exact_sums=dict(epsilon=20.0, delta=1e-6, n_init=1), slow=True, n_clusters=2,
        k_above_n=dict(epsilon=300.0))
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "delta": [DELTA_REQUIRED],
        "beta": [Interval(Real, 0, 1, closed="neither")],
        "budget_shares": [share_tuple("budget_shares", ("radius", "box", "average"))],
        "radius_growth": [Interval(Real, 1, None, closed="neither")],
        "box_factor": [Interval(Real, 1, None, closed="left")],
        "budget": [StrOptions({"paper", "schedule"})],
        # The sentence says what "paper_experiments" means (no proof): a Checked constraint keeps it.
        "constants": [Checked(_check_constants, '"proved" or "paper_experiments"')],
        "n_init": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=1e-8, bounds=None, beta=0.1, budget_shares=DEFAULT_SPLIT,
                 radius_growth=1.1, box_factor=2.0, budget="paper", constants="proved", n_samples=None,
                 n_share=0.02, n_init=10, random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.beta = beta
        self.budget_shares = budget_shares
        self.radius_growth = radius_growth
        self.box_factor = box_factor
        self.budget = budget
        self.constants = constants
        self.n_samples = n_samples
        self.n_share = n_share
        self.n_init = n_init
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _expected_failed_checks(self) -> dict[str, str]:
        reason = ("PRIVATE-K-MEAN (Feldman et al. 2017, Alg. 1 line 2) needs more points than scikit-learn's "
                  "check data (tens to hundreds of rows) before its first round at any allowed epsilon; it "
                  "refuses with InfeasibleBudgetError naming the smallest epsilon that works")
        return {**super()._expected_failed_checks(), **{name: reason for name in _CORESET_INFEASIBLE_CHECKS}}

    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0, n_share: float = 0.0,
               **params) -> Regime:
        """Feldman et al. (2017), Alg. 1 line 2: more than ``t_min`` points before the first round; a grid that fits.

        Parameters
        ----------
        n, d, k, epsilon, delta
            Public inputs (``n`` public or noisy); see :meth:`DPClusterer.regime`.
        n_share : float
            Share of the total already spent on a noisy size (to state the total epsilon needed).
        **params
            The plan's parameters (``beta``, ``budget_shares``, ``radius_growth``, ``budget``, ``constants``,
            ``box_factor``); others are ignored.

        Returns
        -------
        Regime
        """
        side = grid_side(n, d)
        names = ("beta", "budget_shares", "radius_growth", "budget", "constants", "box_factor")
        kw = {key: params[key] for key in names if key in params}
        if "budget_shares" in kw:   # plan_coreset calls one round's shares its split
            kw["split"] = kw.pop("budget_shares")
        share = float(n_share)
        if float(side) ** d > MAX_GRID_CELLS:
            return Regime(cls.key, "refuse", f"the grid |X|^d = {side}^{d} is too large for prefix-sum counting "
                          f"(Feldman et al. 2017, §4.3): PRIVATE-K-MEAN is a low-dimensional algorithm.", None,
                          dict(side=side))
        plan = plan_coreset(n, k, d, epsilon, delta, **kw)
        figs = dict(t_min=plan.t_min, rounds=plan.n_rounds, side=side)
        if plan.n_rounds == 0:
            eps_min = min_feasible_epsilon(n, k, d, delta, n_share=share, **kw)
            need = f"about {eps_min:.3g}" if math.isfinite(eps_min) else "more than any allowed epsilon"
            return Regime(cls.key, "refuse",
                          f"epsilon={epsilon / (1 - share):.3g} is too small for about {n:,.0f} points and k={k}: "
                          "PRIVATE-K-MEAN needs "
                          f"more than t_min = {plan.t_min:,} points before its first round (Feldman et al. 2017, "
                          f"Alg. 1 line 2; Table 2). The smallest epsilon that works here is {need} (delta = "
                          f"{delta:g}, d = {d}). Use a larger epsilon, fewer clusters or more data.", None, figs)
        covered = sum(plan.weights) / max(n, 1.0)
        figs["covered"] = covered
        if covered < 0.5:
            return Regime(cls.key, "warn", f"the coreset will represent only {covered:.0%} of about {n:,.0f} "
                          f"points (t_min = {plan.t_min:,}, Alg. 1): the rest is additive error.", None, figs,
                          utility_only=True)
        return Regime(cls.key, "ok", f"the coreset represents {covered:.0%} of the points: inside the regime.",
                      None, figs)

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size (``n_share``, none with a public ``n_samples``), then every SMALL-BALL round
        of :func:`~dpcore.algorithms.coreset.plan.plan_coreset` at the public or noisy size ``n`` (its
        (epsilon', delta') each; ``budget_shares`` shares them between radius, box and average inside a round).
        With ``budget="paper"`` (Alg. 1 line 1) the rounds are provisioned for the worst case
        ``8 k ln(n) / 3`` rounds and fewer run: the plan's ``"unspent"`` step is the budget the fit
        leaves unused by design.  See :meth:`DPClusterer.budget_plan`."""
        size, left = self._size_step()
        plan = plan_coreset(self._planned_size(n), int(self.n_clusters), n_features, left, float(self.delta),
                            beta=float(self.beta), split=self.budget_shares, radius_growth=float(self.radius_growth),
                            budget=self.budget, box_factor=float(self.box_factor), constants=self.constants)
        rounds = (len(plan.weights) * plan.eps_round, len(plan.weights) * plan.delta_round)
        out = {**size, "round": rounds}
        if left - rounds[0] > 1e-12 * left or float(self.delta) - rounds[1] > 1e-12 * float(self.delta):
            out[UNSPENT + " (rounds provisioned by Alg. 1 line 1 that do not run)"] = (left - rounds[0],
                                                                                    float(self.delta) - rounds[1])
        return out

    @fit_doc("Release the private coreset and k centres computed from it.",
             example="n_clusters=2, epsilon=2.0, bounds=(0, 1)", size=(50_000, 1))
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        k, d = int(self.n_clusters), X.shape[1]
        eps_total, delta_total = float(self.epsilon), float(self.delta)
        share = 0.0 if self.n_samples is not None else float(self.n_share)
        n_est, eps_left = self._public_or_noisy_size(X.shape[0], noise, eps_total)
        # Feasibility (Alg. 1 line 2) and the grid's size, on the public/noisy size only (dpcore.algorithms.regime).
        check_fit(self, n=n_est, d=d, epsilon=eps_left, delta=delta_total, beta=float(self.beta),
                  budget_shares=self.budget_shares, radius_growth=float(self.radius_growth), budget=self.budget,
                  n_share=share,
                  box_factor=float(self.box_factor), constants=self.constants)
        plan = plan_coreset(n_est, k, d, eps_left, delta_total, beta=float(self.beta), split=self.budget_shares,
                            radius_growth=float(self.radius_growth), budget=self.budget,
                            box_factor=float(self.box_factor), constants=self.constants)
        self.plan_ = plan
        if not plan.weights:
            # No round planned: the regime rule refuses such a plan before any spend (check_fit), so
            # only a caller that bypasses it (the advisor's calibration) gets here.
            raise OutOfRegimeError("PRIVATE-K-MEAN planned no SMALL-BALL round (n below t_min, Alg. 1 line 2): "
                                   "there is no coreset to place centres on.")
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
