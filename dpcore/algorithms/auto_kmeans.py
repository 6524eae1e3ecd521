"""``algorithm="auto"``: run the advisor's top candidates on shares of the budget and pick one privately.

Which algorithm is best depends on what is not public: how separated the clusters are decides
between DPM and zCDP-Lloyd in mid dimensions (issue 25).  The calibrated advisor
(:mod:`dpcore.advisor.model`) ranks the algorithms from public inputs; this estimator
runs its first ``n_candidates`` and lets the data choose among them, privately.

The procedure (one privacy unit = one row, or a person with at most L rows):

1. The dataset size: a public ``n_samples`` (free) or ``N + Lap(1/(n_share eps))``.
1b. With ``separation_share > 0`` (0.05 by default): a private read of the clusters' separation
   and sizes (:mod:`dpcore.advisor.separation_read`, two noisy histograms sharing
   ``separation_share eps_left``) narrows the hypotheses of step 2 to those within two doublings of
   the separation it names, of the size laws it does not rule out.
2. The candidates: at most ``n_candidates`` keys, the set whose predicted worst case over the
   clusters' separation (each of the calibration's separations a hypothesis) is best
   (:func:`dpcore.advisor.model.selection_plan`): the best key for overlapping clusters and
   the best for far-apart ones, when they differ enough to pay for the split (each member judged at
   :data:`~dpcore.advisor.model.SPLIT_MARGIN` of its share: a cut budget can cross a cliff).  Where one key will
   do, it is the advisor's single pick (:func:`dpcore.advisor.model.first_pick`, lowest
   predicted regret), as :func:`dpcore.evaluation.advise` names it.  Algorithms that need delta are
   skipped when ``delta = 0``.  Public and already-released inputs only.
3. Each candidate is fitted on the same rows with ``(eps_j, delta_c)``: the candidates share
   ``(1 - selection_share) eps_left`` equally, or two of them 2:1 or 3:1 where the plan predicts that
   hedges better (DPM loses accuracy faster than zCDP-Lloyd as epsilon falls); ``delta_c = delta / m``.
   Each is a complete estimator with its own ledger; here each is one ``composite`` entry of its share.
4. The score of candidate j is its clipped k-means cost on a public lattice,
   ``S_j = sum_i floor(2^20 min(1, min_c ||x_i - c||^2 / r^2))`` with ``r = D k^(-1/d)`` the
   diagonal of one of k equal cells tiling the box (``D`` the box's diagonal; every term in
   [0, 2^20], an exact int64 sum).  Adding one row raises every ``S_j`` by at most ``2^20``
   (``L 2^20`` for a unit of L rows) and never lowers one: a monotone score of that sensitivity.
   Capping at a cell rather than the whole box keeps the noise the same in rows' worth but makes
   each row count ``k^(2/d)`` times more: with tight clusters in few dimensions the box-capped
   cost was only tens of rows' worth and the selection released the Hybrid (2.5x non-private) over
   DPM (1.0x) in 5.7 % (eps 1) and 8.5 % (eps 2) of draws (3-d, 20 clusters); capped at a cell, in
   none (``benchmarks/advisor_selection.py``, exact release probabilities over ten seeds).
5. Permute-and-flip (McKenna & Sheldon 2020), the score ``-S_j``, ``selection_share eps_left``:
   the chosen candidate's centres are released, the others are discarded.

Privacy: by basic composition the fit is (eps, delta)-DP: the noisy size, m candidates at
``(eps_c, delta_c)`` and the selection at its share add up to the total, which the ledger
(``budget_``) shows entry by entry before anything is drawn beyond it.  The candidates' keys and
budgets are functions of public inputs, the released noisy size and the released separation read.  This is the simple
"compose everything" variant of private selection; Liu & Talwar (2019, STOC) and Papernot &
Steinke (2022, ICLR) give each candidate the whole budget at a constant-factor total, which pays
off for many candidates, not for the two or three the advisor narrows the choice to.

References
----------
McKenna, Sheldon (2020). Permute-and-flip: a new mechanism for differentially private selection. NeurIPS.
Liu, Talwar (2019). Private selection from private candidates. STOC.
Papernot, Steinke (2022). Hyperparameter tuning with Renyi differential privacy. ICLR.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..advisor.model import SELECTION_SHARE, predict
from ..advisor.plan import ALGORITHMS, advisor_ranking, auto_plan, read_matters
from ..advisor.separation_read import SEPARATION_SHARE, read_separation
from ..advisor.verdict import within_words
from ..exceptions import SeededNoiseWarning
from ..utils.validation import DELTA
from .base import DPClusterer, fit_doc
from .parameters import SHARE
from .regime import OutOfRegimeError, RegimeWarning

__all__ = ["AutoKMeans", "auto_plan", "clipped_cost_score", "release_probabilities", "SCORE_BITS"]

#: Bits of the score lattice: each row's clipped squared distance, over a cell's squared diagonal, is
#: floored to a multiple of 2^-20 (n up to 2^43 rows before an int64 sum could overflow).
SCORE_BITS = 20


def clipped_cost_score(X: np.ndarray, centers: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                       n_clusters: int = 1) -> int:
    """The selection score's exact integer cost ``sum_i floor(2^SCORE_BITS min(1, min_c ||x_i - c||^2 / r^2))``.

    ``r^2 = D^2 k^(-2/d)``: the squared diagonal of one of ``k = n_clusters`` equal cells tiling the
    box (``D`` the box's diagonal; ``k = 1`` caps at the whole box).  The cap is a function of public
    inputs only; a row farther than ``r`` from every centre counts as one lattice unit.

    Parameters
    ----------
    X : ndarray (n, d), rows already clipped to the box
    centers : ndarray (m, d); clipped to the box here
    lower, upper : ndarray (d,), the public box
    n_clusters : int >= 1, the public number of clusters the candidates were asked for

    Returns
    -------
    int, in ``[0, n 2^SCORE_BITS]``; one row moves it by at most ``2^SCORE_BITS``, never down.

    Raises
    ------
    ValueError
        If ``n_clusters < 1``.

    Notes
    -----
    **Privacy.** Sensitivity ``2^SCORE_BITS`` (one row's term), monotone: the score permute-and-flip
    uses in :class:`AutoKMeans`.  Source: the clipped-cost score of private selection (issue 25); the
    cell cap is this project's choice (module docstring, step 4).
    """
    from ..utils.nearest import assign
    if int(n_clusters) < 1:
        raise ValueError(f"n_clusters must be >= 1, got {n_clusters!r}")
    C = np.clip(np.asarray(centers, dtype=float), lower, upper)
    span = np.where(upper > lower, upper - lower, 1.0)
    Z, Cz = (X - lower) / span, (C - lower) / span          # the box as [0, 1]^d: D^2 becomes d
    labels = assign(Z, Cz)
    d = Z.shape[1]
    cells = float(int(n_clusters)) ** (2.0 / d)               # D^2 / r^2
    d2 = ((Z - Cz[labels]) ** 2).sum(axis=1) * (cells / d)
    q = np.floor(np.minimum(d2, 1.0) * (1 << SCORE_BITS)).astype(np.int64)
    return int(q.sum())


def release_probabilities(scores, epsilon: float, sensitivity: float = float(1 << SCORE_BITS)) -> np.ndarray:
    """The exact law of monotone permute-and-flip: the probability that each candidate is released.

    For analysis only (tests, ``benchmarks/advisor_selection.py``): it reads the exact scores, so
    what it returns is not private.  Candidate ``r`` is accepted when visited with probability
    ``exp(epsilon (q_r - q_max) / sensitivity)`` (McKenna & Sheldon 2020, Alg. 1, monotone score);
    every order of the candidates is enumerated.

    Parameters
    ----------
    scores : array (m,), higher is better (``-S_j`` in :class:`AutoKMeans`); m <= 8
    epsilon : float > 0, the selection's budget
    sensitivity : float > 0, one row's largest change of a score (default one lattice unit)

    Returns
    -------
    ndarray (m,), non-negative, summing to 1.

    Raises
    ------
    ValueError
        For more than 8 candidates (m! orders) or non-positive epsilon / sensitivity.
    """
    from itertools import permutations
    q = np.asarray(scores, dtype=float).ravel()
    if not 1 <= q.size <= 8 or not epsilon > 0 or not sensitivity > 0:
        raise ValueError("release_probabilities needs 1-8 scores and positive epsilon and sensitivity")
    p = np.exp(float(epsilon) * (q - q.max()) / float(sensitivity))
    out = np.zeros(q.size)
    orders = list(permutations(range(q.size)))
    for order in orders:                  # the best accepts with probability 1: each order ends
        reach = 1.0
        for r in order:
            out[r] += reach * p[r] / len(orders)
            reach *= 1.0 - p[r]
    return out


class AutoKMeans(DPClusterer):
    """Private selection among the advisor's top candidates: ``algorithm="auto"``.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        The total budget: noisy size, every candidate and the selection.
    delta : float in [0, 1), default 1e-6
        Split equally over the candidates that need it; 0 leaves only pure-epsilon candidates.
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds; they set every candidate's sensitivity and the score's lattice.
    n_candidates : int, default 3
        The most candidates that run (the plan may take fewer; 1 runs the plan's single key on the
        whole budget, no selection).
    selection_share : float in (0, 1), default 0.05 (:data:`~dpcore.advisor.model.SELECTION_SHARE`)
        Share of the budget (after the size) spent on the selection.  With the score capped at a
        cell, 5 % released a candidate more than 1.25x worse than the best fitted in at most 0.3 % of
        draws on the held-out cells of ``benchmarks/advisor_selection.py`` (the box-capped score at
        10 % in up to 8.5 %); leave-one-out and held-out, 5 % beat 10 % (more budget for the
        candidates).
    n_samples : float, optional
        A public dataset size (then nothing is spent on it).
    n_share : float in (0, 1), default 0.02
        Share of epsilon for the noisy size when ``n_samples`` is None.
    separation_share : float in [0, 1), default 0.05 (:data:`~dpcore.advisor.separation_read.SEPARATION_SHARE`)
        Share of the budget (after the size) for a private read of the clusters' separation and sizes
        that narrows the plan's hypotheses (:mod:`dpcore.advisor.separation_read`); 0 plans over every
        hypothesis from public inputs alone (``benchmarks/advisor_auto.py --separation`` measures both).
    random_state : None, int or numpy.random.Generator
        ``None`` (the only private setting) draws from OS entropy; candidates get their own.

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units: the chosen candidate's
    chosen_ : str, registry key of the chosen candidate
    candidates_ : list of dict
        One per candidate: ``key``, ``epsilon``, ``delta``, ``predicted_ratio`` (public), and
        ``regime`` (its verdict's status).  No candidate's centres or score are kept.
    selected_budget_ : BudgetLedger, the chosen candidate's own ledger (its steps within its share).
        The candidate estimators themselves are not kept: their exact diagnostics (e.g. ``n_clipped_``)
        are not part of the release.
    separation_ : dict or None
        The read (``statistic``, ``named``, ``laws``, ``hypotheses``, ``epsilon``: all released,
        see :func:`~dpcore.advisor.separation_read.read_separation`); None with ``separation_share=0``
        or where no read could change the plan (:meth:`read_matters`; its share goes to the candidates).
    budget_ : BudgetLedger: the size, one composite entry per candidate, the selection

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters.
    OutOfRegimeError
        No calibrated algorithm can run for these public inputs.

    Notes
    -----
    **Privacy.** (epsilon, delta)-DP by basic composition; see the module docstring.  Only the
    chosen candidate's centres are released; the candidates' list is public (advisor + noisy size).

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms.auto_kmeans import AutoKMeans
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(20_000, 2))
    >>> est = AutoKMeans(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape, est.budget_.total()[0] <= 1.0 + 1e-12
    ((3, 2), True)
    """

    key = "auto"
    weighting_refusal = ("its candidates include estimators that sample only, and its separation read counts "
                         "rows")
    display_name = "Auto (advisor's private pick)"
    reference = "Calibrated advisor + permute-and-flip over the candidates' clipped costs (McKenna & Sheldon 2020)"
    summary = ("Runs the advisor's best candidates for these public inputs on shares of the budget and "
               "releases the one whose noisy clipped cost is lowest.")
    # delta > 0 is not required: with delta = 0 only pure-epsilon candidates run (as Balcan et al.'s).
    needs_delta = False
    family = "centroids"

    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "delta": [DELTA],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "selection_share": [SHARE],
        # 0 turns the separation read off.
        "separation_share": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=1e-6, bounds=None, n_candidates=3,
                 selection_share=SELECTION_SHARE, n_samples=None, n_share=0.02, separation_share=SEPARATION_SHARE,
                 random_state=None, max_contributions=None, contribution_bounding="sample"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.n_candidates = n_candidates
        self.selection_share = selection_share
        self.n_samples = n_samples
        self.n_share = n_share
        self.separation_share = separation_share
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def plan(self, n: float, d: int, eps_left: float, hypotheses=None):
        """The candidates for a public or noisy size ``n``: ``[(key, eps_c, delta_c, prediction)]``.

        :func:`auto_plan` with at most ``n_candidates``: the set whose predicted worst case over the
        clusters' separation is best, or the advisor's single pick.  Public inputs only (the size, d,
        k, epsilon, delta, the privacy unit's L), and the hypotheses a released separation read
        leaves (None: all of them).
        """
        k, m = int(self.n_clusters), int(self.n_candidates)
        # A fit with a privacy unit plans at epsilon / L, as check_fit does (every sensitivity is L rows').
        L = self._rows_per_unit()
        delta = float(self.delta or 0.0)
        plan = auto_plan(n, d, k, eps_left / L, delta, max_candidates=m, selection_share=float(self.selection_share),
                         hypotheses=hypotheses)
        if plan.keys:
            size = len(plan.keys)
            return [(key, eps_c * L, delta / size if ALGORITHMS[key].needs_delta else 0.0,
                     predict(n, d, k, eps_c, keys=(key,))[0])
                    for key, eps_c in zip(plan.keys, plan.budgets())]
        raise OutOfRegimeError(f"no calibrated algorithm can run for about {n:,.0f} points, d = {d}, k = {k} at "
                               f"ε = {eps_left:.3g}: publish one centre at a DP mean (zcdp_lloyd with k = 1).")

    @fit_doc("Release the centres of the candidate chosen privately.", size=(20_000, 2))
    def fit(self, X, y=None, privacy_id=None):
        Xraw = X
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        dom = self.bounds_
        d = X.shape[1]
        n_est, eps_left = self._public_or_noisy_size(X.shape[0], noise, float(self.epsilon))
        self.separation_ = None
        plan = None
        if self._reads_separation(n_est, d, eps_left):
            eps_s = float(self.separation_share) * eps_left
            self.separation_ = read_separation(X, int(self.n_clusters), dom.lower, dom.upper, n_est, eps_s, noise,
                                               self._rows_per_unit())
            eps_left -= eps_s
        if plan is None:
            plan = self.plan(n_est, d, eps_left, None if self.separation_ is None else self.separation_["hypotheses"])
        seeds = self._child_seeds(len(plan))
        fitted, self.candidates_ = [], []
        for (key, eps_c, delta_c, pred), seed in zip(plan, seeds):
            noise.sub(f"candidate {len(fitted) + 1}: {key}", eps_c, delta_c)   # charged in full up front
            est = self.candidate(key, eps_c, delta_c, n_est, (dom.lower, dom.upper), seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SeededNoiseWarning)
                warnings.simplefilter("ignore", RegimeWarning)
                est.fit(Xraw, privacy_id=privacy_id)
            spent_e, spent_d = est.budget_.total()
            if spent_e > eps_c * (1 + 1e-9) or spent_d > delta_c * (1 + 1e-9) + 1e-300:
                raise RuntimeError(f"candidate {key} spent ({spent_e}, {spent_d}) beyond ({eps_c}, {delta_c})")
            fitted.append(est)
            self.candidates_.append(dict(key=key, epsilon=eps_c, delta=delta_c, predicted_ratio=pred.ratio,
                                         regime=getattr(getattr(est, "regime_", None), "status", "ok")))
        if len(fitted) == 1:
            j = 0
        else:
            scores = [-clipped_cost_score(X, est.cluster_centers_, dom.lower, dom.upper, int(self.n_clusters))
                      for est in fitted]
            j = noise.permute_and_flip(np.asarray(scores, dtype=float), sensitivity=float(1 << SCORE_BITS),
                                       epsilon=noise.ledger.remaining()[0], monotonic=True,
                                       name="selection (permute-and-flip on clipped costs)")
        chosen = fitted[j]
        self.chosen_ = plan[j][0]
        self.selected_budget_ = chosen.budget_
        self.cluster_centers_ = np.asarray(chosen.cluster_centers_, dtype=float)
        return self

    def _reads_separation(self, n: float, d: int, eps_left: float) -> bool:
        """Whether ``fit`` spends ``separation_share`` on the separation read (public inputs only)."""
        if float(self.separation_share) <= 0:
            return False
        if self.read_matters(n, d, eps_left):
            return True
        # read_matters decides at n to 3 significant figures: where the public plan changes within
        # that rounding, read after all.
        return [c[0] for c in self.plan(n, d, eps_left)] != [c[0] for c in self.plan(float(f"{float(n):.3g}"), d,
                                                                                          eps_left)]

    def _budget_plan(self, n_features: int, n: float | None = None, hypotheses=None) -> dict[str, tuple[float, float]]:
        """The noisy size (``n_share``), the separation read (``separation_share`` of the rest, when it
        could change the plan), the candidates' budgets of the advisor's plan and the selection among
        them (the rest; none for a single candidate).

        The candidates depend on the released separation read: pass its ``hypotheses``
        (``separation_["hypotheses"]`` of a fit) as well as the public or noisy size ``n``.
        See :meth:`DPClusterer.budget_plan`.
        """
        from ..advisor.separation_read import SIZE_SHARE
        plan, left = self._size_step()
        n_plan = self._planned_size(n)
        if self._reads_separation(n_plan, n_features, left):
            eps_s = float(self.separation_share) * left
            plan["separation read"] = (eps_s * (1.0 - SIZE_SHARE), 0.0)
            if SIZE_SHARE > 0:
                plan["size read"] = (eps_s * SIZE_SHARE, 0.0)
            left -= eps_s
        candidates = self.plan(n_plan, n_features, left, hypotheses)
        spent = sum(c[1] for c in candidates)
        plan["candidate"] = (spent, sum(c[2] for c in candidates))
        if len(candidates) > 1:
            plan["selection"] = (left - spent, 0.0)
        return plan

    def read_matters(self, n: float, d: int, eps_left: float) -> bool:
        """Whether the separation read could change the plan for a public or noisy size ``n`` and
        ``eps_left`` (after the size): :func:`~dpcore.advisor.plan.read_matters` at this
        estimator's parameters (epsilon per privacy unit).  ``fit`` skips a read that could not.  Public
        inputs only."""
        return read_matters(n, d, int(self.n_clusters), eps_left / self._rows_per_unit(), float(self.delta or 0.0),
                            max_candidates=int(self.n_candidates),
                            selection_share=float(self.selection_share),
                            separation_share=float(self.separation_share))

    def candidate(self, key: str, epsilon: float, delta: float, n_samples: float, bounds, random_state=None):
        """One candidate of the plan as ``fit`` runs it: an unfitted estimator of registry ``key``.

        ``epsilon`` / ``delta`` its share, ``n_samples`` the public or released size (the candidate
        spends nothing on it), ``bounds`` the public box; this estimator's ``n_clusters`` and privacy
        unit.  ``random_state`` None (OS entropy) for a release.
        """
        cls = ALGORITHMS[key]
        kw = dict(n_clusters=int(self.n_clusters), epsilon=epsilon, bounds=bounds, random_state=random_state,
                  max_contributions=self.max_contributions, contribution_bounding=self.contribution_bounding)
        if cls.needs_delta:
            kw["delta"] = delta
        if "n_samples" in cls().get_params():
            kw["n_samples"] = n_samples
        return cls(**kw)

    def _child_seeds(self, m: int) -> list:
        """Each candidate's random_state: None (OS entropy) for a private fit; spawned seeds in a simulation."""
        rs = self.random_state
        if rs is None:
            return [None] * m
        base = rs if isinstance(rs, np.random.Generator) else np.random.default_rng(rs)
        return [int(s) for s in base.integers(0, 2 ** 63 - 1, size=m)]

    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0, **params):
        """Auto's own rule: refuse only when no calibrated algorithm can run (public inputs only)."""
        from .regime import Regime
        ranking, triv, _ = advisor_ranking(n, d, k, epsilon, delta, with_pick=False)
        if not ranking:
            return Regime(cls.key, "refuse", f"no calibrated algorithm can run for about {n:,.0f} points, d = {d}, "
                          f"k = {k} at ε = {epsilon:.3g}.", None, {})
        # The plan fit() would make: the estimator's defaults overridden by the caller's parameters.
        defaults = cls().get_params()
        p = {**defaults, **{key: v for key, v in params.items() if key in defaults}}
        share = 0.0 if p["n_samples"] is not None else float(p["n_share"])
        left = epsilon * (1.0 - share)
        read = float(p["separation_share"]) > 0 and read_matters(
            n, d, k, left, delta, max_candidates=int(p["n_candidates"]), selection_share=float(p["selection_share"]),
            separation_share=float(p["separation_share"]))
        plan = auto_plan(n, d, k, left * (1.0 - float(p["separation_share"]) * read), delta,
                         max_candidates=int(p["n_candidates"]), selection_share=float(p["selection_share"]))
        # With a separation read the candidates depend on it: this is the plan over every hypothesis.
        before = " before a private read of the clusters' separation narrows them" if read else ""
        return Regime(cls.key, "ok", f"candidates {', '.join(plan.keys)}{before} ({within_words(plan.worst)}).", None,
                      dict(predicted_ratio=ranking[0].ratio, trivial_ratio=triv.ratio, candidates=plan.keys))

