"""zCDP-Lloyd: private Lloyd iterations with Gaussian noise for high-dimensional data.

Why this family.  In high dimension the Laplace noise of DPLloyd (Su et al.
2016) and of Balcan et al.'s recover step grows with the L1 sensitivity of a
d-dimensional sum, ``d`` times the per-coordinate range.  The Gaussian
mechanism needs only the L2 sensitivity, ``sqrt(d)`` times it, and Gaussian
steps compose additively in zero-concentrated DP (Bun & Steinke 2016), so many
cheap Lloyd steps fit in one budget.  On MNIST (n = 70,000, d = 784, epsilon = 1,
delta = 1e-6) a cluster of 7,000 images gets noise of about 8 grey levels per
pixel on its mean in the last steps; what remains is the initialisation, which
must not look at the data except through the same noisy steps.

The algorithm (one fit):

1. **The DP mean** (step 0): the noisy count and noisy centred sum of all rows
   give one centre, the private mean (``mean_``).
2. **Splitting initialisation** (Linde, Buzo & Gray 1980, "LBG"): while fewer
   than k centres exist, split the centres with the largest noisy counts (all of
   them while doubling, the largest ``k - m`` at the last level) into
   ``c +/- s u`` with ``u`` a random unit vector (data-independent) and
   ``s = split_scale * R``, then run ``n_iter_per_split`` noisy Lloyd steps.
3. **Refinement**: ``n_final_iter`` noisy Lloyd steps with all k centres.

Each noisy Lloyd step assigns the rows to the current (already private)
centres and releases, per cluster, ``count + N_Z(0, 1/(2 rho_c))`` and
``sum(x - c0) + N_Z(0, R^2/(2 rho_s))`` per coordinate (discrete Gaussian
noise through :meth:`dpcore.NoiseSource.gaussian_zcdp`; the sums on a fine
public lattice); the new centre is
``c0 + noisy_sum / noisy_count`` clipped to the box (the noisy count, never
the true one, is the divisor).  A cluster whose noisy count is below
``min_count`` keeps its previous centre (post-processing).

Budget.  The grant (epsilon, delta) becomes ``rho = zcdp_rho(epsilon, delta)``
(Canonne, Kamath & Steinke 2020, Cor. 13).  Step 1 (the mean) gets
``mean_share`` of it; later step ``i`` gets ``rho_i`` proportional to
``w_i``, the number of centres it releases: steps with more, smaller clusters
need more accuracy.  Within a step the counts get ``rho_c = rho_i / (1 +
sqrt(d))`` and the sums the rest: this minimises the centre's squared error
``d R^2 / rho_s + R^2 / rho_c`` (both over ``2 count^2``) under ``rho_c +
rho_s = rho_i``.

Alternatives considered.  Balcan et al. (2017) with Edler's (2023)
corrections (``dpcore.algorithms.highdim.balcan``, the faithful reproduction) spends most of its
budget on a low-dimensional candidate search and its Laplace means cost d/2
times more in 784 dimensions: 5.6e11 on MNIST, worse than the trivial 2.40e11.
Google's private LSH-tree coresets (Chang, Ghazi, Kumar, Manurangsi 2021,
``google/differential-privacy`` ``learning/clustering``) end with the same
noisy-average step as here; a splitting initialisation from the DP mean
reached the issue's target without a second data structure, so it was kept
(measured in ``benchmarks/highdim_mnist.py``).

References
----------
Lloyd (1982). Least squares quantization in PCM. IEEE Trans. Inf. Theory 28(2).
Linde, Buzo, Gray (1980). An algorithm for vector quantizer design. IEEE Trans. Commun. 28(1) (splitting).
Blum, Dwork, McSherry, Nissim (2005). Practical privacy: the SuLQ framework. PODS (noisy counts and sums).
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.1.1 (DPLloyd).
Bun & Steinke (2016). Concentrated differential privacy: simplifications, extensions, and lower
bounds. TCC, Prop. 1.6 (Gaussian mechanism), Lemma 2.3 (composition).
Canonne, Kamath, Steinke (2020). The discrete Gaussian for differential privacy. NeurIPS, Thm. 14, Cor. 13.
James & Stein (1961). Estimation with quadratic loss (the shrinkage of the final centres).
Chang, Ghazi, Kumar, Manurangsi (2021), the private LSH-tree coresets of Google's "Practical
differentially private clustering" library (the alternative named above; not used here).
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ...privacy.accountant import ZCDPLedger
from ...privacy.calibration import zcdp_rho
from ...privacy.mechanisms import NoiseSource
from ...utils.contributions import WEIGHT_BITS
from ...utils.fixedpoint import SUM_BITS, quantize, quantized_label_sums, weighted_label_sums
from ...utils.validation import DELTA_REQUIRED
from ..base import DPClusterer, fit_doc
from ..parameters import SHARE
from ..regime import check_fit
from ..traits import AuditCase, PrivacyCase

#: Default share of rho for step 1, the DP mean (``mean_share``; it decides nothing by itself: 2 % is
#: plenty at n in the thousands).
MEAN_SHARE = 0.02
#: Candidate (steps per split, final steps) for ``"auto"``, longest first.
AUTO_CHOICES = ((2, 4), (1, 3), (1, 2), (1, 1))
#: ``"auto"`` keeps the longest schedule whose final per-coordinate noise on a centre of n/k rows
#: stays below this fraction of the coordinate's half-range (calibrated on MNIST subsets of 10k-70k rows).
AUTO_NOISE_RATIO = 0.1


def split_schedule(n_clusters: int, n_iter_per_split: int, n_final_iter: int) -> list[int]:
    """Number of centres released by each noisy Lloyd step after the DP mean, in order.

    ``[2, 2, 4, 4, 8, 8, 10, 10, 10, 10, 10, 10]`` for k = 10 with 2 steps per
    split and 4 final steps: each doubling (capped at k) runs
    ``n_iter_per_split`` steps, and the last level ``n_final_iter`` more.
    For k = 1 only the final steps remain.
    """
    sched, m = [], 1
    while m < n_clusters:
        m = min(2 * m, n_clusters)
        sched += [m] * n_iter_per_split
    return sched + [n_clusters] * n_final_iter


def step_rhos(rho_rest: float, schedule) -> np.ndarray:
    """Per-step zCDP ``rho_i`` proportional to the centres released; ``sum rho_i = rho_rest``."""
    w = np.asarray(schedule, dtype=float)
    return rho_rest * w / w.sum()


def final_noise_ratio(schedule, n_est: float, d: int, rho_rest: float, count_share: float) -> float:
    """Predicted noise std of one coordinate of a final centre over the coordinate's half-range.

    A final centre averages about ``n_est / k`` rows; its sum gets noise
    ``R / sqrt(2 rho_s)`` per coordinate with ``rho_s = (1 - count_share) rho_k``
    and ``rho_k = rho_rest k / sum(schedule)``; the half-range of a coordinate is
    ``R / sqrt(d)`` for a cube.  (R cancels.)
    """
    k = schedule[-1]
    rho_s = rho_rest * k / float(sum(schedule)) * (1.0 - count_share)
    return math.sqrt(d) / (math.sqrt(2.0 * rho_s) * max(n_est, 1.0) / k)


def auto_schedule(n_clusters: int, n_est: float, d: int, rho_rest: float, count_share: float) -> list[int]:
    """The ``"auto"`` schedule: the longest of ``AUTO_CHOICES`` whose :func:`final_noise_ratio` is at most
    ``AUTO_NOISE_RATIO``, else the shortest (post-processing of a released or public size ``n_est``)."""
    for ips, fin in AUTO_CHOICES:
        sched = split_schedule(n_clusters, ips, fin)
        if final_noise_ratio(sched, n_est, d, rho_rest, count_share) <= AUTO_NOISE_RATIO:
            return sched
    return sched


def predicted_mse(n: float, d: int, k: int, epsilon: float, delta: float, *, r: float = 1.0) -> float:
    """Predicted squared error of one final zCDP-Lloyd centre, data normalised to ``[-r, r]^d``.

    The noise of the last step alone (clusters of ``n / k`` rows; the error of
    the initialisation is not modelled): ``d R^2 / (2 rho_s) / (n / k)^2`` with
    ``R = r sqrt(d)``, the schedule :func:`auto_schedule` picks and ``rho_s`` the
    last step's share for the sums.  Same units as the Su et al. (2016, §6)
    predictions in :mod:`dpcore.evaluation`.
    """
    count_share = 1.0 / (1.0 + math.sqrt(d))
    rho_rest = zcdp_rho(epsilon, delta) * (1.0 - MEAN_SHARE)
    sched = auto_schedule(k, n, d, rho_rest, count_share)
    rho_s = rho_rest * k / float(sum(sched)) * (1.0 - count_share)
    return d * (r * math.sqrt(d)) ** 2 / (2.0 * rho_s) / max(n / k, 1.0) ** 2


def james_stein(centers: np.ndarray, mean: np.ndarray, noise_var, lower, upper) -> np.ndarray:
    """Shrink each noisy centre towards the DP mean (positive-part James-Stein).

    ``c' = m + max(0, 1 - d v / ||c - m||^2) (c - m)`` with ``v`` the centre's
    per-coordinate noise variance, public (``R^2 / (2 rho_s) / noisy_count^2``).
    Post-processing of released values: costs no privacy.

    References
    ----------
    James & Stein (1961). Estimation with quadratic loss. Proc. 4th Berkeley Symp. 1:361-379.
    """
    D = centers - mean[None, :]
    norm2 = np.maximum(np.einsum("ij,ij->i", D, D), 1e-300)
    f = np.clip(1.0 - centers.shape[1] * noise_var / norm2, 0.0, 1.0)
    return np.clip(mean[None, :] + f[:, None] * D, lower, upper)


def cluster_counts_sums(Z: np.ndarray, centers: np.ndarray, *, scale: float, quantized: np.ndarray | None = None,
                        weights: np.ndarray | None = None):
    """Nearest-centre partition of ``Z`` and each cluster's exact count and coordinate sum.

    ``Z`` and ``centers`` are float32 in the same (centred) units: one matrix product assigns (each
    row's label depends on that row and the released centres only).  The sums are exact
    (:func:`dpcore.utils.fixedpoint.label_sums`): every row's ``Z / scale`` is quantised to the public
    fixed-point grid and the integers are summed, so a neighbouring dataset moves them by at most one
    row's (quantised) contribution, whatever the summation order (issue 29: float32 running sums let
    one row move a sum by 64x its sensitivity).

    Parameters
    ----------
    Z : ndarray (n, d) float32
    centers : ndarray (m, d)
    scale : float
        Public: ``|Z| / scale <= 1`` coordinate-wise (the box's largest half-width).
    quantized : ndarray (n, d) of int, optional
        ``quantize_rows(Z, scale)``, computed once by the caller for all steps; None: computed here.
    weights : ndarray (n,) of int, optional
        Contribution weights in units of ``2^-WEIGHT_BITS`` (:func:`~dpcore.utils.contributions.contribution_weights`):
        weighted counts and sums (:func:`~dpcore.utils.fixedpoint.weighted_label_sums`).

    Returns
    -------
    counts : ndarray (m,) int64, or FixedPoint (m,) of the weights' sums
    sums : FixedPoint (m, d), in units of ``scale``
    """
    m = centers.shape[0]
    cc = np.einsum("ij,ij->i", centers, centers)
    labels = np.argmin(cc[None, :] - 2.0 * (Z @ centers.T), axis=1)
    q = quantize_rows(Z, scale) if quantized is None else quantized
    if weights is not None:
        return weighted_label_sums(labels, q, weights, m, weight_bits=WEIGHT_BITS)
    return quantized_label_sums(labels, q, m)


def quantize_rows(Z: np.ndarray, scale: float) -> np.ndarray:
    """The rows' fixed-point coordinates ``quantize(Z / scale)`` as int32 (``|q| <= 2^SUM_BITS``): computed
    once a fit, the exact per-cluster sums of every Lloyd step are sums of these integers."""
    return quantize(Z / scale).astype(np.int32)


def _box_scale(lower: np.ndarray, upper: np.ndarray) -> float:
    """Public: the centred box's largest half-width, the unit of the exact sums."""
    return float(np.max(np.maximum(np.abs(lower), np.abs(upper))))


def gaussian_lloyd_step(Z: np.ndarray, centers: np.ndarray, noise: NoiseSource, *, rho: float, radius: float,
                        lower: np.ndarray, upper: np.ndarray, count_share: float, min_count: float, label: str,
                        quantized: np.ndarray | None = None, weights: np.ndarray | None = None):
    """One noisy Lloyd step with Gaussian noise on counts and centred sums.

    Parameters
    ----------
    Z : ndarray (n, d) float32, rows minus the public box centre (inside the box)
    centers : ndarray (m, d), current private centres, same centred units
    noise : NoiseSource on a ZCDPLedger
    rho : float, this step's zCDP budget
    radius : float, public bound on ``||z||_2`` (the box's half-diagonal)
    lower, upper : ndarray (d,), the public box in centred units
    count_share : float in (0, 1), share of ``rho`` for the counts
    min_count : float, noisy count below which a centre is kept as it was
    label : str, prefix of the ledger entries
    quantized : ndarray (n, d) int, optional: :func:`quantize_rows` of ``Z`` at the box's scale, computed once
    weights : ndarray (n,) int, optional: contribution weights (units of ``2^-WEIGHT_BITS``), see Notes

    Returns
    -------
    new_centers : ndarray (m, d)
    noisy_counts : ndarray (m,)

    Notes
    -----
    **Privacy.** ``rho``-zCDP under add/remove-one neighbours.  Adding or removing a record
    changes one cluster's count by 1 (L2 sensitivity 1) and one cluster's exact fixed-point
    sum by a vector of norm at most ``radius`` plus the grid's rounding (``sqrt(d) 2^-25`` of the
    box's largest half-width; the clusters are disjoint, fixed by released centres): the counts
    are ``rho_c``-zCDP and the sums ``rho_s``-zCDP
    (discrete Gaussian, CKS 2020 Thm. 14) with ``rho_c + rho_s = rho``.  With contribution weights the
    counts and sums are exact fixed-point sums of ``w`` and ``w q``; a unit's weights sum to at most L,
    so by the triangle inequality it moves the counts by at most L and the sums by at most L times one
    row's norm in L2, the sensitivities (times L, ``NoiseSource.contribution_factor``) of L sampled rows
    (Amin et al. 2019).
    """
    d = centers.shape[1]
    scale = _box_scale(lower, upper)
    counts, sums = cluster_counts_sums(Z, centers.astype(np.float32), scale=scale, quantized=quantized,
                                       weights=weights)
    n_counts = noise.gaussian_zcdp(counts, sensitivity=1.0, rho=rho * count_share, integer=True,
                                   name=f"{label}: cluster counts").astype(float)
    # A quantised row's norm exceeds its own by at most sqrt(d) half a grid step: the L2 sensitivity of the
    # exact fixed-point sums, in units of ``scale``.
    sens = radius / scale + math.sqrt(d) * 2.0 ** -(SUM_BITS + 1)
    n_sums = noise.gaussian_zcdp(sums, sensitivity=sens, rho=rho * (1.0 - count_share),
                                 name=f"{label}: cluster sums") * scale
    new = np.array(centers, dtype=float)
    ok = n_counts >= max(float(min_count), 1.0)
    new[ok] = n_sums[ok] / n_counts[ok, None]
    return np.clip(new, lower, upper), n_counts


class ZCDPLloyd(DPClusterer):
    """Private k-means for high-dimensional data: LBG splitting + Lloyd steps with Gaussian noise in zCDP.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
    delta : float in (0, 1), default 1e-6
        (epsilon, delta)-DP; choose delta well below 1/n.
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds of the data (MNIST: ``(0, 255)``).  They set the
        sensitivity: ``R = ||upper - lower||_2 / 2``, the largest distance of a
        row from the box centre.  ``None`` reads them from the data
        (:class:`~dpcore.PrivacyLeakWarning`).
    n_iter_per_split : int or "auto", default "auto"
        Noisy Lloyd steps after each split.
    n_final_iter : int or "auto", default "auto"
        Noisy Lloyd steps once all k centres exist.  ``"auto"`` (both must
        then be "auto") picks from ``AUTO_CHOICES`` = (2, 4), (1, 3), (1, 2),
        (1, 1) the longest schedule whose predicted noise on a final centre
        coordinate is below ``AUTO_NOISE_RATIO`` (0.1) of its half-range, using
        the noisy count released with the DP mean (no extra budget); else the
        shortest.  MNIST at n = 70,000, epsilon = 1 gets (2, 4).
    split_scale : float, default 0.005
        Children of a split centre lie ``split_scale * R`` from it.
    min_count : float, default 10
        A cluster whose noisy count is below this keeps its previous centre
        (its noisy mean would be mostly noise).
    mean_share : float in (0, 1), default 0.02
        The share of the zCDP budget rho spent on step 1, the DP mean.
    shrink : bool, default True
        Shrink the final centres towards the DP mean by positive-part
        James-Stein (:func:`james_stein`; post-processing, free).
    random_state : None, int or numpy.random.Generator
        ``None`` (the only private setting) draws from OS entropy.

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    mean_ : ndarray (d,), the DP mean released by step 1 (the trivial one-centre answer)
    n_samples_estimate_ : float
        The dataset size the fit planned with (the schedule, the calibrated check): the DP mean's noisy
        count, released by step 1.  Never the true size.  Its plan does not depend on it.
    n_iter_ : int, number of noisy Lloyd steps, the DP mean's included
    schedule_ : list of int, centres released per step (the DP mean's 1 first)
    rho_ : float, the zCDP budget ``zcdp_rho(epsilon, delta)``
    step_rhos_ : ndarray with one entry per step (length ``n_iter_``): each step's rho
    noisy_counts_ : ndarray (k,), the last step's noisy cluster sizes (released)
    budget_ : ZCDPLedger, one entry per released count vector and sum matrix

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters, with a sentence saying what to change.

    Notes
    -----
    MNIST (70,000 x 784, k = 10, epsilon = 1, delta = 1e-6): median inertia
    about 1.81e11 over 5 runs, against 1.785e11 for non-private k-means++ and
    2.40e11 for the one-centre mean (``benchmarks/highdim_mnist.py``).  With
    fewer rows per cluster the noise grows as k / n; compare with ``mean_``
    before publishing.

    **Privacy.** (epsilon, delta)-DP under add/remove-one neighbours.  Every step is a
    Gaussian mechanism on counts (L2 sensitivity 1) and sums of ``x - box
    centre`` (L2 sensitivity R, the box's half-diagonal: ``255 * sqrt(784) / 2
    = 3570`` on MNIST), ``rho_i``-zCDP; the partition a step sums over is fixed
    by centres already released, splits use data-independent random
    directions, and the schedule depends only on released noisy counts.  By
    adaptive composition the fit is ``sum rho_i = rho``-zCDP (Bun & Steinke
    2016, Lemma 2.3), and ``rho = zcdp_rho(epsilon, delta)`` makes that
    (epsilon, delta)-DP (Canonne, Kamath & Steinke 2020, Cor. 13).  Noise is
    integer (discrete Gaussian) on counts and on sums rounded to a public
    lattice, so no floating-point noise leaks the true values.
    The dataset size n is never used except through the noisy counts.

    References
    ----------
    See the module docstring: Lloyd 1982; Linde, Buzo & Gray 1980; Blum et al.
    2005; Bun & Steinke 2016; Canonne, Kamath & Steinke 2020; James & Stein 1961.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import ZCDPLloyd
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = ZCDPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "zcdp_lloyd"
    supports_weighting = True
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "zCDP-Lloyd (high-dimensional)"
    reference = "Lloyd steps with Gaussian noise composed in zCDP (Bun & Steinke 2016); LBG splitting init"
    summary = ("Starts from the DP mean, splits centres LBG-style and refines them with noisy Lloyd steps; "
               "Gaussian noise on counts and sums, composed in zero-concentrated DP.")
    needs_delta = True
    family = "centroids"
    high_dimensional = True
    colour = "#7b3294"
    mse_formula = "its last step's noise"
    # (epsilon, delta)-DP: the claim the privacy audit checks is the estimator's own delta.
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", dict(delta=1e-3),
                                           delta=1e-3),))
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "delta": [DELTA_REQUIRED],
        "n_iter_per_split": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_final_iter": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "split_scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "min_count": [Interval(numbers.Real, 0, None, closed="left")],
        "shrink": ["boolean"],
        "mean_share": [SHARE],
    }


    @classmethod
    def formula_mse(cls, n: float, d: int, k: int, epsilon: float, *, t: int, delta: float, r: float, rho: float,
                    theta: float) -> float | None:
        """:func:`predicted_mse`: its last step's Gaussian noise, beside Su et al.'s formulas (Laplace noise
        grows with d, Gaussian noise with sqrt(d)).

        Returns
        -------
        float
        """
        return predicted_mse(n, d, k, epsilon, delta, r=r)
    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=1e-6, bounds=None, n_iter_per_split="auto",
                 n_final_iter="auto", split_scale=0.005, min_count=10.0, shrink=True, mean_share=MEAN_SHARE,
                 random_state=None, max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.n_iter_per_split = n_iter_per_split
        self.n_final_iter = n_final_iter
        self.split_scale = split_scale
        self.min_count = min_count
        self.shrink = shrink
        self.mean_share = mean_share
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _check_params(self) -> bool:
        """The rule between the two schedule parameters (each one's own range is a constraint); True for
        the automatic schedule."""
        auto = [isinstance(getattr(self, n), str) for n in ("n_iter_per_split", "n_final_iter")]
        if any(auto) and not all(auto):
            raise ValueError("n_iter_per_split and n_final_iter must both be 'auto' or both whole numbers >= 1")
        return all(auto)

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """``mean_share`` of the zCDP budget rho on the DP mean (step 1), the rest on the splitting and
        Lloyd steps.  The ledger shows each Gaussian step's (epsilon, delta) in proportion to its rho,
        so the plan splits (epsilon, delta) in the same proportions.
        See :meth:`DPClusterer.budget_plan`."""
        eps, delta, share = float(self.epsilon), float(self.delta), float(self.mean_share)
        return {"step # (the mean)": (eps * share, delta * share),
                "step": (eps - eps * share, delta - delta * share)}

    @fit_doc('Release k private centres (and the DP mean).')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        weights = self._pop_row_weights()
        auto = self._check_params()
        # Every step is Gaussian: the estimator's ledger composes them in zCDP.
        self.budget_ = ZCDPLedger(float(self.epsilon), float(self.delta))
        noise = noise.with_ledger(self.budget_)
        dom = self.bounds_
        k, d = int(self.n_clusters), X.shape[1]
        origin = dom.center
        lower, upper = dom.lower - origin, dom.upper - origin     # the box in centred units
        Z = (X - origin).astype(np.float32)
        del X
        radius = float(np.linalg.norm(dom.width)) / 2.0           # max ||x - origin|| over the box
        count_share = 1.0 / (1.0 + math.sqrt(d))
        # The rows' fixed-point coordinates, once for all steps (each step sums them under new labels).
        step = dict(radius=radius, lower=lower, upper=upper, count_share=count_share,
                    min_count=float(self.min_count), quantized=quantize_rows(Z, _box_scale(lower, upper)),
                    weights=weights)
        rho = self.budget_.rho_total

        # step 1: the DP mean (one "current centre" at the origin: every row is in its cluster)
        rho0 = rho * float(self.mean_share)
        C, counts = gaussian_lloyd_step(Z, np.zeros((1, d)), noise, rho=rho0, label="step 1 (the mean)", **step)
        self.mean_ = C[0] + origin
        self.n_samples_estimate_ = float(counts[0])
        check_fit(self, n=self.n_samples_estimate_, d=d, epsilon=float(self.epsilon), delta=float(self.delta))
        rho_rest = self.budget_.rho_remaining()
        if auto:   # post-processing of the released noisy count
            sched = auto_schedule(k, counts[0], d, rho_rest, count_share)
        else:
            sched = split_schedule(k, int(self.n_iter_per_split), int(self.n_final_iter))
        rhos = step_rhos(rho_rest, sched)
        rng = noise.rng
        offset = float(self.split_scale) * radius
        for i, m in enumerate(sched):
            if m > C.shape[0]:
                # LBG split of the m - |C| largest clusters (by noisy count) along random directions
                split = np.argsort(-counts, kind="stable")[:m - C.shape[0]]
                u = rng.standard_normal((split.size, d))
                u *= offset / np.linalg.norm(u, axis=1, keepdims=True)
                C = np.concatenate([C, np.clip(C[split] + u, lower, upper)], axis=0)
                C[split] = np.clip(C[split] - u, lower, upper)
            e = rhos[i] if i < len(sched) - 1 else self.budget_.rho_remaining()   # last step: what is left
            C, counts = gaussian_lloyd_step(Z, C, noise, rho=e, label=f"step {i + 2} ({m} centres)", **step)
        if self.shrink:
            var = radius ** 2 / (2.0 * rhos[-1] * (1.0 - count_share)) / np.maximum(counts, 1.0) ** 2
            C = james_stein(C, self.mean_ - origin, var, lower, upper)

        self.cluster_centers_ = C + origin
        self.noisy_counts_ = counts
        self.schedule_ = [1] + list(sched)
        self.n_iter_ = len(self.schedule_)
        self.rho_ = rho
        self.step_rhos_ = np.concatenate([[rho0], rhos])
        return self
