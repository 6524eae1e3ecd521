"""Convergent private k-means: KMeans-Guarantee (Lu & Shen 2020) and SubClustering (Joshi & Thakkar 2022).

Both run Lloyd-style iterations in the normalised domain ``[-1, 1]^d``.  At
step ``t`` the points are assigned to the previous *private* centres
``c_hat^(t-1)``; for cluster ``i`` with points ``C_i`` and Lloyd centre
``m_i`` (their mean) the **convergent zone** (Joshi & Thakkar, Definition 3)
is the ball ``||s - m_i|| < ||c_hat_i^(t-1) - m_i||``: any new centre inside it
is closer to ``m_i`` than the old one, the invariant of Lemma 1 that makes the
iteration converge.  A **sampling zone** inside it is chosen, and the new
centre is drawn there by the exponential mechanism.  After the last step the
centres get Laplace noise.

Making it differentially private
--------------------------------
The papers do not give the quality functions, their sensitivities or how the
zones can be built without releasing ``m_i`` (the exact mean of private
points).  We use one identity that makes the zones private by construction:
for a candidate ``c`` the *cost improvement*

    q_i(c) = sum_{x in C_i} ( ||x - c_hat_i||^2 - ||x - c||^2 ) = |C_i| ( ||c_hat_i - m_i||^2 - ||c - m_i||^2 )

is positive exactly on the convergent zone.  So the exponential mechanism
with score ``q_i`` over public candidates concentrates on the convergent zone
(and the more points, the sharper), and no zone is ever released.  The
candidates are data-independent random points in the ball ``B(c_hat_i, R_t)``
(public centre and radius ``R_t = R_0 gamma^(t-1)``).  Sensitivity: one
record ``x`` changes ``q_i(c)`` by
``|(c - c_hat)·(2x - c - c_hat)| <= ||c - c_hat|| (||x - c|| + ||x - c_hat||) <= R_t · 2 D``
with ``D = 2 sqrt(d)`` the domain's diameter, and also by at most ``D^2 = 4d``
(both squared distances lie in ``[0, D^2]``): ``Delta_t = min(4 R_t sqrt(d), 4 d)``.
Clusters are disjoint given the public previous centres (parallel
composition), so a step costs its budget once.

Weighted rows (``contribution_bounding="weight"``): every sum over a cluster's rows (the cost
improvement, the sub-clusters' sizes, the final counts and coordinate sums) weighs row ``x`` by its
contribution weight ``w_x`` in ``[0, 1]``.  Each is linear in the weights, so a unit whose weights sum
to at most L moves it by at most L times one row's bound (triangle inequality), the sensitivity of L
sampled rows (Amin et al. 2019); the sub-cluster sizes still all move the same way (monotonic).

References
----------
Lu, Shen (2020). Differentially private k-means clustering with convergence guarantee. IEEE TDSC.
Joshi, Thakkar (2022). k-Means SubClustering: a differentially private algorithm with improved clustering
quality. CIKM-PAS workshop, CEUR-WS Vol-3318 paper 5: §4.1 (Definitions 3-4, Lemma 1), §4.2,
Algorithms 1-2, Eq. 1 (CostGap).
McSherry, Talwar (2007). Mechanism design via differential privacy (monotonic exponential mechanism).
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.utils._param_validation import Interval

from ...privacy.accountant import split_budget
from ...privacy.mechanisms import NoiseSource
from ...utils.contributions import WEIGHT_BITS
from ...utils.fixedpoint import FixedPoint, label_sums, quantize, weighted_label_sums
from ...utils.nearest import assign
from .._blocks.lloyd import noisy_counts_and_sums
from .._blocks.sphere_packing import sphere_packing_centers
from ..base import DPClusterer, fit_doc
from ..parameters import SHARE
from ..regime import check_fit
from ..traits import CI_RUNS_SLOW, AuditCase, PrivacyCase


def _ball_candidates(centre: np.ndarray, radius: float, n: int, rng: np.random.Generator,
                     orientation: np.ndarray | None = None, r: float = 1.0) -> np.ndarray:
    """``n`` uniform points of the ball ``B(centre, radius)`` (or of its half facing ``orientation``),
    clipped to ``[-r, r]^d``, plus ``centre`` itself as the last row.

    Clipping onto the box (which contains ``centre``) never moves a point
    farther from ``centre``, so every candidate stays within ``radius``.
    Uses no data.
    """
    d = centre.size
    v = rng.normal(size=(n, d))
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-300)
    if orientation is not None:
        v *= np.where(v @ orientation < 0, -1.0, 1.0)[:, None]   # angle to the controller in [-pi/2, pi/2]
    rho = radius * rng.random(n) ** (1.0 / d)
    pts = np.clip(centre + rho[:, None] * v, -r, r)
    return np.vstack([pts, centre[None, :]])


def _improvement(points: np.ndarray, old: np.ndarray, cands: np.ndarray,
                 weights: np.ndarray | None = None) -> np.ndarray:
    """``q(c) = sum_x w_x (||x - old||^2 - ||x - c||^2)`` for every candidate ``c`` (vectorised; ``w = 1``
    without ``weights``, else the rows' contribution weights in ``[0, 1]``)."""
    if points.shape[0] == 0:
        return np.zeros(cands.shape[0])
    if weights is None:
        n, s = points.shape[0], points.sum(axis=0)
    else:
        n, s = float(weights.sum()), weights @ points
    return 2.0 * (cands - old) @ s - n * (np.einsum("ij,ij->i", cands, cands) - old @ old)


def _lloyd_candidates(cands: np.ndarray, n_groups: int, rng: np.random.Generator, n_iter: int = 10):
    """Split public candidate points into ``n_groups`` by a few Lloyd iterations (no data).

    The groups start at ``n_groups`` candidates drawn without replacement; ties go to the first group; an empty
    group keeps its centre.  Returns ``(labels (n,), centres (g, d))``.  Compiled below 8 dimensions (SubClustering
    runs it once per centre and step: about half a fit's time in Python), with the same sums in the same order as
    numpy's (which sums 8 or more terms pairwise: the numpy loop stays there, so a seed gives the same result).
    """
    g = min(n_groups, cands.shape[0])
    centres = cands[rng.choice(cands.shape[0], size=g, replace=False)]
    if cands.shape[1] < 8:
        return _lloyd_candidates_kernel(np.ascontiguousarray(cands, dtype=np.float64),
                                        np.array(centres, dtype=np.float64), int(n_iter))
    return _lloyd_candidates_numpy(cands, centres, n_iter)


def _lloyd_candidates_numpy(cands: np.ndarray, centres: np.ndarray, n_iter: int):
    """The loop of :func:`_lloyd_candidates` in numpy (from 8 dimensions on; the compiled kernel's specification)."""
    g = centres.shape[0]

    def nearest(c):
        # Few public candidates and groups: one broadcast beats assign()'s chunked loop, ties to the first group.
        return ((cands[:, None, :] - c[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)

    for _ in range(n_iter):
        lab = nearest(centres)
        # Every group's mean at once (a loop over groups was most of a fit's time on small data).
        counts = np.bincount(lab, minlength=g)
        sums = np.stack([np.bincount(lab, weights=cands[:, i], minlength=g) for i in range(cands.shape[1])], axis=1)
        kept = counts > 0
        centres[kept] = sums[kept] / counts[kept, None]
    return nearest(centres), centres


@numba.njit(cache=True, nogil=True)
def _nearest_group(P, C, lab):  # pragma: no cover - compiled
    n, d = P.shape
    for i in range(n):
        best, arg = np.inf, 0
        for j in range(C.shape[0]):
            s = 0.0
            for a in range(d):
                t = P[i, a] - C[j, a]
                s += t * t
            if s < best:
                best, arg = s, j
        lab[i] = arg


@numba.njit(cache=True, nogil=True)
def _lloyd_candidates_kernel(P, C, n_iter):  # pragma: no cover - compiled
    """The loop of :func:`_lloyd_candidates`: nearest group (ties to the first), then each non-empty group's mean,
    its coordinates summed in the candidates' order as ``np.bincount`` sums them."""
    n, d = P.shape
    g = C.shape[0]
    lab = np.empty(n, dtype=np.int64)
    counts = np.empty(g, dtype=np.int64)
    sums = np.empty((g, d))
    for _ in range(n_iter):
        _nearest_group(P, C, lab)
        counts[:] = 0
        sums[:] = 0.0
        for i in range(n):
            counts[lab[i]] += 1
            for a in range(d):
                sums[lab[i], a] += P[i, a]
        for j in range(g):
            if counts[j] > 0:
                for a in range(d):
                    C[j, a] = sums[j, a] / counts[j]
    _nearest_group(P, C, lab)
    return lab, C


class KMeansGuarantee(DPClusterer):
    """Differentially private k-means with convergence guarantee (Lu & Shen 2020), as Joshi &
    Thakkar (2022, §4.1, Definitions 3-4, Lemma 1) describe it: the baseline "KMeans-Guarantee".

    Per step and cluster: a uniformly random **orientation controller** ``u``
    (Definition 4) picks the sampling zone, the half of the ball
    ``B(c_hat^(t-1), R_t)`` whose directions make an angle in ``[-pi/2, pi/2]``
    with ``u``; the new centre is drawn among public random candidates of that
    zone by the exponential mechanism on the cost improvement (positive exactly
    inside the convergent zone; see the module docstring).  After ``n_iter``
    steps, a Laplace-noised Lloyd update (noisy cluster sums / noisy counts,
    as DPLloyd) releases the final centres.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total budget (epsilon-DP) = epsilon_exp + epsilon_lap.
    bounds : (lower, upper), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    lap_share : float in (0, 1), default 0.5
        epsilon_lap / epsilon: the share of the final Laplace step; the rest,
        epsilon_exp, is split equally over the ``n_iter`` exponential-mechanism steps.
    n_iter : int, default 10
        Lloyd steps (Algorithm 1 line 2 leaves it open).
    n_candidates : int, default 100
        Public candidates per cluster and step.
    radius : float, default 0.25
        ``R_0`` as a fraction of the normalised domain's diameter ``2 sqrt(d)``.
    radius_decay : float, default 0.75
        ``gamma``: ``R_t = R_0 gamma^(t-1)``.
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    init_centers_ : ndarray (k, d), data units (sphere packing: data-independent)
    n_iter_ : int
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters.

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition: ``n_iter`` steps of
    ``epsilon_exp / n_iter`` (one exponential-mechanism draw per cluster,
    clusters disjoint, sensitivity ``Delta_t`` of the module docstring; the
    score can move either way, so the usual factor 2 is kept), then the
    Laplace step with ``epsilon_lap`` (counts and coordinate sums, L1
    sensitivity ``d + 1`` in ``[-1, 1]^d``).  Algorithm 1 line 1 draws the
    initial centres from the data, which is not private; we use the
    data-independent sphere packing of Su et al. (2016, §4.1.1).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import KMeansGuarantee
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = KMeansGuarantee(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "kmeans_guarantee"
    supports_weighting = True
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "KMeans-Guarantee"
    reference = "Lu & Shen 2020, as described by Joshi & Thakkar 2022 §4.1"
    summary = ("Lloyd steps whose new centres are sampled by the exponential mechanism in a random "
               "half of the convergent zone; Laplace noise at the end.")
    # CI audit size: traits.CI_RUNS_SLOW (why: PrivacyCase.ci_runs); the benchmark keeps n_runs.
    colour = "#7f7f7f"
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", ci_runs=CI_RUNS_SLOW),))
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "lap_share": [SHARE],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        # A fraction of the domain diameter, and the factor it shrinks by each iteration.
        "radius": [Interval(Real, 0, 1, closed="right")],
        "radius_decay": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, lap_share=0.5, n_iter=10, n_candidates=100,
                 radius=0.25, radius_decay=0.75, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.lap_share = lap_share
        self.n_iter = n_iter
        self.n_candidates = n_candidates
        self.radius = radius
        self.radius_decay = radius_decay
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    # -- the step that differs between the two algorithms ----------------------
    def _sample_centre(self, pts, old, radius, sens, eps, noise: NoiseSource, label, weights=None):
        rng = noise.rng
        u = rng.normal(size=old.size)
        u /= max(np.linalg.norm(u), 1e-300)
        cands = _ball_candidates(old, radius, int(self.n_candidates), rng, orientation=u)
        j = noise.exponential(_improvement(pts, old, cands, weights), sensitivity=sens, epsilon=eps, name=label)
        return cands[j]

    def _spends_per_step(self) -> int:
        return 1

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """``1 - lap_share`` of epsilon over the iterations' exponential-mechanism draws (equal parts),
        ``lap_share`` on the final noisy counts and sums (Algorithm 1 line 12).
        See :meth:`DPClusterer.budget_plan`."""
        eps = float(self.epsilon)
        lap = eps * float(self.lap_share)
        return {"iteration": (eps - lap, 0.0), "final centres": (lap, 0.0)}

    @fit_doc('Release k private centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        weights = self._pop_row_weights()
        w = None if weights is None else weights / float(1 << WEIGHT_BITS)     # exact: dyadic in [0, 1]
        dom = self.bounds_
        Z = dom.normalize(X)
        k, d = int(self.n_clusters), X.shape[1]
        T = int(self.n_iter)
        eps_exp, eps_lap = split_budget(float(self.epsilon), [1 - self.lap_share, self.lap_share])
        init = sphere_packing_centers(k, d, noise.rng)
        centres = init.copy()
        diam = 2.0 * math.sqrt(d)
        radius = float(self.radius) * diam
        for t in range(T):
            e_t = eps_exp / T
            sens = min(2.0 * radius * diam, diam ** 2)
            labels = assign(Z, centres)
            new = centres.copy()
            # The k draws of a step read disjoint clusters (fixed by the public previous centres):
            # parallel composition, one charge of e_t per step.
            parts = noise.parallel(f"iteration {t + 1}: new centres (one draw per cluster)", e_t, k)
            for i in range(k):
                mine = labels == i
                new[i] = self._sample_centre(Z[mine], centres[i], radius, sens, e_t, parts[i], f"centre {i + 1}",
                                             None if w is None else w[mine])
            centres = new
            radius *= float(self.radius_decay)
        centres = self._final_laplace(Z, centres, noise, weights)
        # No size was released before: the calibrated check (issue 25) reads the final noisy counts'
        # total, so it can only warn, after the fit.
        check_fit(self, n=float(np.maximum(self.noisy_counts_, 0).sum()), d=d, epsilon=float(self.epsilon))
        self.init_centers_ = dom.denormalize(init)
        self.cluster_centers_ = dom.denormalize(centres)
        self.n_iter_ = T
        return self

    def _final_laplace(self, Z, centres, noise: NoiseSource, weights=None):
        """Laplace step (Algorithm 1 line 12): noisy sums / noisy counts of the final clusters.

        L1 sensitivity ``d + 1`` (one count and ``d`` coordinates in [-1, 1]).
        A cluster whose noisy count is below 1 keeps its (already private) centre.
        ``weights``: contribution weights (int, units of ``2^-WEIGHT_BITS``): weighted exact sums.
        """
        k, d = centres.shape
        labels = assign(Z, centres)
        counts: np.ndarray | FixedPoint
        if weights is None:
            counts, sums = label_sums(labels, Z, k)      # exact sums on the public fixed-point grid (issue 29)
        else:
            counts, sums = weighted_label_sums(labels, quantize(Z), weights, k, weight_bits=WEIGHT_BITS)
        n_counts, n_sums = noisy_counts_and_sums(counts, sums, noise, sensitivity=d + 1.0,
                                                 epsilon=noise.ledger.remaining()[0],
                                                 name="final centres: cluster counts and sums")
        self.noisy_counts_ = np.asarray(n_counts, dtype=float)
        out = centres.copy()
        ok = n_counts >= 1.0
        out[ok] = n_sums[ok] / n_counts[ok, None]
        return np.clip(out, -1.0, 1.0)


class SubClustering(KMeansGuarantee):
    """k-Means SubClustering (Joshi & Thakkar 2022, Algorithms 1-2).

    As :class:`KMeansGuarantee`, except for the sampling zone (Algorithm 2):
    the public candidates of the whole ball ``B(c_hat^(t-1), R_t)`` are split
    into ``internalK`` sub-clusters (Lloyd on the candidates); one sub-cluster
    is chosen with a probability increasing in the number of the cluster's
    points it attracts (the points nearest each sub-centre), and the new
    centre is drawn in it by the exponential mechanism on the cost improvement.

    Parameters
    ----------
    internalK : int, default 5
        Sub-clusters per cluster (the paper's choice, §6.1).
    selection_share : float in (0, 1), default 0.3
        Share of each step's budget spent choosing the sub-cluster.
    n_clusters, epsilon, bounds, lap_share, n_iter, n_candidates, radius, radius_decay, random_state
        As :class:`KMeansGuarantee`; its attributes and Raises apply too.

    Notes
    -----
    **Privacy.** epsilon-DP.  The paper picks the sub-cluster with probability
    *proportional* to its size, which is not differentially private (a
    sub-cluster with 0 points can never be chosen, one with 1 point can).  We
    use the exponential mechanism with score the size instead: one record
    changes one size by 1 (sensitivity 1, and monotonic: every size moves the
    same way, so ``exp(eps * size)``).  Each step spends
    ``selection_share * epsilon_exp / n_iter`` on that choice and the rest on the
    centre draw (sensitivity ``Delta_t``); clusters are disjoint.  The
    sub-clusters are computed from public candidates, not from the private
    points of the convergent zone as in Algorithm 2 line 2 (releasing a
    sub-cluster of private points is not private).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import SubClustering
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = SubClustering(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "subcluster"
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "SubClustering"
    reference = "Joshi & Thakkar 2022, Algorithms 1-2"
    summary = ("KMeans-Guarantee whose sampling zone is the sub-cluster of the convergent zone "
               "that attracts most points, chosen privately.")
    colour = "#bcbd22"
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", ci_runs=1500, n_runs=4000),),
                      slow=True)
    _parameter_constraints = {
        **KMeansGuarantee._parameter_constraints,
        "internalK": [Interval(Integral, 1, None, closed="left")],
        "selection_share": [SHARE],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, lap_share=0.5, n_iter=10, n_candidates=100,
                 radius=0.25, radius_decay=0.75, internalK=5, selection_share=0.3, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        super().__init__(n_clusters, epsilon=epsilon, bounds=bounds, lap_share=lap_share, n_iter=n_iter,
                         n_candidates=n_candidates, radius=radius, radius_decay=radius_decay,
                         random_state=random_state)
        self.internalK = internalK
        self.selection_share = selection_share
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _sample_centre(self, pts, old, radius, sens, eps, noise: NoiseSource, label, weights=None):
        rng = noise.rng
        cands = _ball_candidates(old, radius, int(self.n_candidates), rng)
        groups, sub_centres = _lloyd_candidates(cands, int(self.internalK), rng)
        g = sub_centres.shape[0]
        sizes = (np.bincount(assign(pts, sub_centres), weights=weights, minlength=g).astype(float)
                 if pts.shape[0] else np.zeros(g))
        e_sel = eps * float(self.selection_share)
        chosen = noise.exponential(sizes, sensitivity=1.0, epsilon=e_sel, monotonic=True,
                                   name=f"{label}: sub-cluster choice")
        zone = cands[groups == chosen]
        j = noise.exponential(_improvement(pts, old, zone, weights), sensitivity=sens, epsilon=eps - e_sel,
                              name=f"{label}: centre in the sub-cluster")
        return zone[j]
