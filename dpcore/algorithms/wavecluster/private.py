"""DP WaveCluster: PrivBasic, PrivQT, PrivTHR and PrivTHR_EM (Chen, Yu & Chirkova).

Each releases a noisy grid (or its significant cells) and runs WaveCluster's post-processing
(:mod:`.transform`) on it; the paper and the budget split of each are in the class docstrings.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ...privacy.accountant import split_budget
from ...utils.validation import EPSILON
from .._blocks.grid import eug_cells_per_dim, noisy_grid
from ..base import fit_doc
from ..parameters import SHARE
from ..traits import AuditCase, Control, PrivacyCase
from .transform import (
    MAX_CELLS,
    approximation_influence,
    quantize,
    threshold_rank,
    top_k_threshold,
    wavelet_approximation,
)
from .wavecluster import WaveCluster


class PrivQT(WaveCluster):
    """PrivQT: WaveCluster on a Laplace-noised count matrix (Chen et al. 2015, §4.2, Alg. 2).

    Parameters
    ----------
    epsilon : float, default 1.0
        Total budget (epsilon-DP), all spent on the count matrix.
    bounds : (lower, upper), data units
        Public box; ``None`` reads it from the data and warns
        (:class:`~dpcore.PrivacyLeakWarning`).
    num_grid, density_threshold, wavelet, connectivity
        As :class:`WaveCluster`; the paper reuses the non-private values.
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    As :class:`WaveCluster`; ``synopsis_.values`` holds the noisy transformed values (publishable).

    Raises
    ------
    ValueError
        Bad parameters or data.

    Notes
    -----
    **Privacy.** epsilon-DP.  Adding or removing one record changes one cell of the count
    matrix by 1, so ``M + Lap(1/epsilon)`` per cell is epsilon-DP (Laplace
    mechanism, parallel composition over disjoint cells; Chen et al. Thm. 1);
    everything after is post-processing.  This holds for every wavelet.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.2 (Alg. 2), §5.1.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import PrivQT
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivQT(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "privqt"
    display_name = "PrivQT"
    accepts_source = True
    supports_weighting = True
    reference = "Chen, Yu & Chirkova 2015, §4.2 (Alg. 2)"
    summary = "Laplace noise on the grid counts, then WaveCluster: noise turns about half the empty cells positive."
    private = True
    # ~5 ms a fit on a 16 x 16 grid: 800 CI runs a side.
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", dict(num_grid=16),
                                           ci_runs=800, n_runs=4000),),
                      structural=dict(num_grid=8), exact_sums=dict(num_grid=8), sources=dict(num_grid=16))
    _parameter_constraints = {**WaveCluster._parameter_constraints, "epsilon": [EPSILON]}

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """All of epsilon on the grid cell counts.  See :meth:`DPClusterer.budget_plan`."""
        return {"grid cell counts": (float(self.epsilon), 0.0)}

    def _noisy_transform(self, counts, noise, epsilon):
        # Lattice noise (integer=False), not integer noise: PrivTHR drops |Z'|/2 of the positive
        # noisy values because symmetric noise lifts half of the empty cells above 0; integer
        # noise at large epsilon leaves almost all of them at exactly 0 and nothing survives.
        # The fine lattice (<= 2^-10 of the noise scale) keeps that 1/2 and is still float-safe.
        # Weighted rows (contribution bounding by weighting): the exact fixed-point sums of the weights,
        # shifted onto an equally fine lattice; a unit moves them by at most its weights' sum, L.
        noisy = noise.laplace(counts, sensitivity=1.0, epsilon=epsilon, integer=False,
                              name="grid cell counts (quantisation)")
        return wavelet_approximation(noisy, self._wavelet_)

    @fit_doc('Release the private clusters of X.', example='epsilon=1.0, bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._prepare(X, privacy_id)
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, float(self.epsilon))
        S_noisy = np.sort(W_noisy[W_noisy > 0])
        k = threshold_rank(S_noisy.size, self.density_threshold)
        self._finish(X, W_noisy, top_k_threshold(S_noisy, k), k)
        return self


class PrivTHR(PrivQT):
    """PrivTHR: PrivQT plus a noisy count of non-positive values that prunes the noisy list (§4.3, Alg. 3).

    After the noisy count matrix (share ``quantization_share`` of epsilon),
    the count ``|Z|`` of non-positive values of the *true* transform gets
    Laplace noise (the rest of epsilon); about ``|Z|/2`` of them turn positive
    under symmetric noise, so the ``|Z'|/2`` smallest noisy positive values
    are removed before ``k' = ceil((1 - p) |S''|)`` and the threshold are computed.

    Parameters
    ----------
    epsilon : float, default 1.0
    quantization_share : float in (0, 1), default 0.9
        Fraction of epsilon for the count matrix; the paper's best split is
        90 % / 10 % (§6.4).
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus
    noisy_nonpositive_ : float
        The released ``|Z'|``.
    sensitivity_ : int
        Sensitivity used for ``|Z|`` (1 for Haar).

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition (Chen et al. Thm. 2): the count
    matrix is ``epsilon_1``-DP as in :class:`PrivQT`; ``|Z| = #values - |S|``
    changes by at most the number ``s`` of transformed values one cell moves
    (:func:`approximation_influence`: ``s = 1`` for Haar, the paper's value;
    ``(max_i nnz T[i, :])^d`` in general, from the filter ``dec_lo``), so
    ``|Z| + Lap(s / epsilon_2)`` is ``epsilon_2``-DP.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.3 (Alg. 3), §5.1 Thm. 2, §5.2.2, §6.4.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import PrivTHR
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivTHR(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "privthr"
    display_name = "PrivTHR"
    accepts_source = True
    supports_weighting = False
    weighting_refusal = ("its noisy count of non-positive wavelet values is not a sum over rows: a person's many "
                         "down-weighted rows could change many of those values, where L sampled rows change at "
                         "most L")
    reference = "Chen, Yu & Chirkova 2015, §4.3 (Alg. 3)"
    summary = ("PrivQT plus a noisy count of empty transformed cells, used to discard the noise-made "
               "positive values before the density threshold (90 % / 10 % budget).")
    controls = (Control("quantization_share", "Budget share for the grid counts (%)", bounds=(0.05, 0.95),
                        percent=True, help="The rest goes to the density threshold. The paper's best is the "
                                           "default: 90 % (PrivTHR), 70 % (PrivTHR_EM)."),)

    _parameter_constraints = {**PrivQT._parameter_constraints, "quantization_share": [SHARE]}

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", quantization_share=0.9, random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.quantization_share = quantization_share
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """``quantization_share`` of epsilon on the grid cell counts, the rest on the noisy count of
        non-positive transformed values.  See :meth:`DPClusterer.budget_plan`."""
        eps = float(self.epsilon)
        q = eps * float(self.quantization_share)
        return {"grid cell counts": (q, 0.0), "count of non-positive transformed values": (eps - q, 0.0)}

    @fit_doc('Release the private clusters of X (see the class docstring).', example='epsilon=1.0, bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._prepare(X, privacy_id)
        share = float(self.quantization_share)
        eps_q, _ = split_budget(float(self.epsilon), [share, 1.0 - share])
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, eps_q)
        counts = np.asarray(counts, dtype=float)    # row counts (sampling only: weighting is refused)
        # Lines 11-17: the noisy count of non-positive true transformed values.
        W_true = wavelet_approximation(counts, self._wavelet_)
        s, _ = approximation_influence(self._wavelet_, int(self.num_grid), X.n_features)
        z_noisy = float(noise.laplace(int((W_true <= 0).sum()), sensitivity=float(s),
                                      epsilon=noise.ledger.remaining()[0],
                                      name="count of non-positive transformed values"))
        # Lines 4-8: drop the |Z'|/2 smallest noisy positive values, then the threshold.
        S_noisy = np.sort(W_noisy[W_noisy > 0])
        n_drop = int(np.clip(round(z_noisy / 2.0), 0, S_noisy.size))
        S_kept = S_noisy[n_drop:]
        k = threshold_rank(S_kept.size, self.density_threshold)
        self.noisy_nonpositive_ = z_noisy
        self.sensitivity_ = s
        self._finish(X, W_noisy, top_k_threshold(S_kept, k), k)
        return self


class PrivTHREM(PrivQT):
    """PrivTHR_EM: the density threshold drawn by the exponential mechanism (§4.4, Alg. 4).

    After the noisy count matrix (share ``quantization_share`` of epsilon),
    the threshold value is chosen on the *true* transformed values: the sorted
    positive values ``x_1 <= ... <= x_m`` (clipped to ``value_cap``) cut
    ``(0, cap]`` into intervals; every ``x`` in an interval has the same rank
    ``rank(x) = #{i : x_i >= x}``, and the exponential mechanism with quality
    ``-|rank(x) - k|`` (``k = ceil((1 - p) m)``) picks an interval with
    probability proportional to its length times ``exp(eps_2 q / (2 Delta))``;
    the threshold is uniform inside it (Smith 2011).  Noisy values above the
    threshold are significant.

    Parameters
    ----------
    epsilon : float, default 1.0
    quantization_share : float in (0, 1), default 0.7
        Fraction of epsilon for the count matrix (the paper's 70 % / 30 %).
    value_cap : float or None, default None
        Public upper end of the threshold's range.  ``None`` uses the largest
        *noisy* transformed value, which is already released (post-processing).
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus ``sensitivity_`` (of the rank quality).

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition (Chen et al. Thm. 3).  Sensitivity
    ``Delta`` of ``q = -|rank(x) - k|``: one record moves at most ``s``
    transformed values (:func:`approximation_influence`).  When the filter
    weights are all non-negative (Haar) they all move the same way, so
    ``rank(x)`` and ``k`` change in the same direction, each by at most
    ``s`` (``k`` by ``ceil((1 - p) a) <= a`` when ``a`` values cross 0), and
    ``Delta = s`` (= 1 for Haar, the paper's value).  With signed filters
    (biorthogonal, Daubechies, ...) the two can move apart: ``Delta = 2 s``.
    Clipping to a public cap is order-preserving and keeps these bounds.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.4 (Alg. 4), §5.1 Thm. 3, §5.2.3; Smith (2011).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import PrivTHREM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivTHREM(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "privthr_em"
    display_name = "PrivTHR_EM"
    accepts_source = True
    supports_weighting = False
    weighting_refusal = ("its density threshold is a rank among the wavelet values: a person's many down-weighted "
                         "rows could move many of them, where L sampled rows move at most L")
    reference = "Chen, Yu & Chirkova 2015, §4.4 (Alg. 4)"
    summary = ("Laplace noise on the grid counts; the density threshold itself chosen privately by the "
               "exponential mechanism on the rank of the true values (70 % / 30 % budget).")
    controls = PrivTHR.controls     # the same split, its default (70 %) from this constructor
    # 3000 CI runs: this case caught threshold_rank_ counting TRUE values (fixed: counted on released ones).
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", dict(num_grid=16),
                                           ci_runs=3000, n_runs=4000),),
                      structural=dict(num_grid=8), exact_sums=dict(num_grid=8), sources=dict(num_grid=16))

    _parameter_constraints = {**PrivQT._parameter_constraints, "quantization_share": [SHARE],
                              "value_cap": [Interval(Real, 0, None, closed="neither"), None]}

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", quantization_share=0.7, value_cap=None, random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.quantization_share = quantization_share
        self.value_cap = value_cap
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """``quantization_share`` of epsilon on the grid cell counts, the rest on the density threshold
        (exponential mechanism).  See :meth:`DPClusterer.budget_plan`."""
        eps = float(self.epsilon)
        q = eps * float(self.quantization_share)
        return {"grid cell counts": (q, 0.0), "density threshold": (eps - q, 0.0)}

    @fit_doc('Release the private clusters of X (see the class docstring).', example='epsilon=1.0, bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._prepare(X, privacy_id)
        share = float(self.quantization_share)
        eps_q, _ = split_budget(float(self.epsilon), [share, 1.0 - share])
        counts = self._counts(X)
        W_noisy = self._noisy_transform(counts, noise, eps_q)
        cap = float(self.value_cap) if self.value_cap is not None else float(W_noisy.max())
        s, nonneg = approximation_influence(self._wavelet_, int(self.num_grid), X.n_features)
        delta_q = s if nonneg else 2 * s
        self.sensitivity_ = delta_q
        if cap <= 0:
            # No positive released value: nothing can be significant whatever the threshold.
            self._finish(X, W_noisy, math.inf, 0)
            return self
        W_true = wavelet_approximation(counts, self._wavelet_)
        x = W_true[W_true > 0]
        m = x.size
        k = threshold_rank(m, self.density_threshold)
        # The continuous exponential mechanism over the intervals between the sorted true values
        # in [0, cap], score -|rank - k| (rank = values >= the threshold), base measure the
        # interval length: the exponential-mechanism quantile at q = (m - k) / m.
        threshold = noise.quantile(x, (m - k) / m if m else 0.0, lower=0.0, upper=cap,
                                   sensitivity=float(delta_q), epsilon=noise.ledger.remaining()[0],
                                   name="density threshold (exponential mechanism)")
        threshold = np.nextafter(threshold, math.inf)
        # The rank is counted among the *released* values: counting the true values above
        # the threshold and would leak them (the privacy audit measured eps >= 2.5 at eps = 1).
        self._finish(X, W_noisy, threshold, int(((W_noisy >= threshold) & (W_noisy > 0)).sum()))
        return self


class PrivBasic(WaveCluster):
    """PrivBasic: WaveCluster on synthetic data from an epsilon-DP grid synopsis (§4.1, Alg. 1).

    The public box is cut into the uniform grid of Qardaji et al. (2013)
    (``m = (N eps / theta)^(2 / (2 + d))`` cells per dimension, theta = 10,
    i.e. ``sqrt(N eps / 10)`` in 2-D), each count gets ``Lap(1/eps)``;
    negative counts become 0, the rest are rounded, and that many points are
    drawn uniformly in each cell.  WaveCluster with the given parameters then
    runs on the synthetic points.  (The paper used Qardaji's *adaptive* grid;
    this implementation uses their uniform grid, the synopsis of EUGkM.)

    Parameters
    ----------
    epsilon : float, default 1.0
    theta : float, default 10
        The constant of the uniform-grid size rule.
    n_samples : float or None
        Public dataset size for the size rule; ``None`` spends ``n_share`` of
        epsilon on ``N + Lap(.)`` (ledger entry "dataset size").
    n_share : float, default 0.02
    bounds, num_grid, density_threshold, wavelet, connectivity, random_state
        As :class:`PrivQT`.

    Attributes
    ----------
    As :class:`WaveCluster`, plus ``synthetic_size_`` and ``synopsis_cells_per_dim_``.

    Notes
    -----
    **Privacy.** epsilon-DP: the synopsis counts have sensitivity 1 (each record is in one
    cell); the optional noisy size is a second Laplace release; the rounding,
    sampling (data-independent randomness) and clustering are post-processing.

    References
    ----------
    Chen, Yu, Chirkova (2015), §4.1 (Alg. 1); Qardaji, Yang, Li (2013), §IV (uniform grid).

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import PrivBasic
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = PrivBasic(epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape[1] == X.shape[1]
    True
    >>> est.n_clusters_ == len(est.cluster_centers_)
    True
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "privbasic"
    display_name = "PrivBasic"
    accepts_source = True
    supports_weighting = True
    reference = "Chen, Yu & Chirkova 2015, §4.1 (Alg. 1); synopsis: Qardaji et al. 2013 uniform grid"
    summary = ("Publishes a noisy grid synopsis, draws synthetic points from it (negative counts become 0), "
               "then runs WaveCluster on them.")
    private = True
    # ~5 ms a fit on a 16 x 16 grid: 800 CI runs a side.
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", dict(num_grid=16),
                                           ci_runs=800, n_runs=4000),),
                      structural=dict(num_grid=8), exact_sums=dict(num_grid=8), sources=dict(num_grid=16))

    _parameter_constraints = {**WaveCluster._parameter_constraints, "epsilon": [EPSILON],
                              "theta": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, *, epsilon=1.0, bounds=None, num_grid=40, density_threshold=0.1, wavelet="haar",
                 connectivity="full", theta=10.0, n_samples=None, n_share=0.02, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        super().__init__(epsilon=epsilon, bounds=bounds, num_grid=num_grid, density_threshold=density_threshold,
                         wavelet=wavelet, connectivity=connectivity, random_state=random_state)
        self.theta = theta
        self.n_samples = n_samples
        self.n_share = n_share
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size (``n_share``, none with a public ``n_samples``), then the synopsis grid's cell
        counts.  See :meth:`DPClusterer.budget_plan`."""
        plan, left = self._size_step()
        return {**plan, "synopsis grid cell counts": (left, 0.0)}

    @fit_doc('Release the private clusters of X (see the class docstring).', example='epsilon=1.0, bounds=(0, 1)')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, n = self._prepare(X, privacy_id)
        d = X.n_features
        n_est, eps_left = self._public_or_noisy_size(n, noise, float(self.epsilon))
        m_syn = eug_cells_per_dim(n_est, eps_left, d, theta=float(self.theta), max_cells=MAX_CELLS)
        counts, _ = noisy_grid(X, m_syn, noise, noise.ledger.remaining()[0],
                               name="synopsis grid cell counts", domain=self.bounds_)
        # Synthetic data (post-processing): non-negative rounded counts, uniform inside each cell.
        reps = np.rint(np.clip(counts.ravel(), 0, None)).astype(np.intp)
        cells = np.repeat(np.arange(reps.size), reps)
        idx = np.stack(np.unravel_index(cells, counts.shape), axis=1) if d > 1 else cells[:, None]
        U_syn = (idx + noise.rng.random(idx.shape)) / m_syn
        self.synthetic_size_ = int(cells.size)
        self.synopsis_cells_per_dim_ = int(m_syn)
        W = wavelet_approximation(quantize(U_syn, int(self.num_grid)), self._wavelet_)
        S = np.sort(W[W > 0])
        k = threshold_rank(S.size, self.density_threshold)
        self._finish(X, W, top_k_threshold(S, k), k)
        return self
