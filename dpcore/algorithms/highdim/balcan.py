"""High-dimensional DP k-means: Balcan et al. (2017) with all of Edler's (2023) corrections.

The pipeline of Edler (2023), Appendix A ("all modifications applied"):

1. **Projection** (Alg. 8 l. 3, 7): a Johnson–Lindenstrauss map to
   ``p = floor(ln(n) / 2)`` dimensions, ``Y = (X - lower) G^T / sqrt(d)`` with
   ``G`` a standard Gaussian ``p x d`` matrix (divided by ``sqrt(d)``, not
   ``sqrt(p)``: the §4.3 fix, so each projected coordinate has spread at most
   the per-dimension range ``r``).
2. **candidate** (Alg. 9): ``T = 3`` randomly shifted initial cubes
   ``[-r + s, r + s]^p`` (``s ~ U(-r, r)`` per dimension), each handed to
   **private_partition** (Alg. 10) with ``epsilon/3`` and ``delta/3``;
   each run keeps only the deepest levels that reach ``k`` centres (l. 23).
3. **localswap** (Alg. 11): ``T = min(k, 20)`` swaps, each chosen by
   permute-and-flip, then one of the swap sets chosen the same way.
4. **recover** (Alg. 12) and three **private k-means** steps (Alg. 13), each a
   noisy count and a noisy sum per cluster; the centre is noisy sum / noisy count.
5. **Selection** (Alg. 8 l. 15): one of the three k-means outputs by permute-and-flip.

Budget split (Edler §5.2): 0.7 / 0.01 / 0.04 / 0.2 / 0.05.

Corrections applied (Edler §4.3, §4.4) and where this module goes further
---------------------------------------------------------------------------
- No step spends beyond its share: each candidate run is a ledger reservation of
  exactly ``epsilon_candidate / 3`` and spends ``2 eps'`` on each of the
  ``floor(ln n)`` released levels (``<= 2 eps' ln n``); the ledger refuses more.
- The cube side length is local to each partition run (the ``partition.m`` bug).
- Data divided by ``sqrt(d)`` after the projection, not ``sqrt(p)``.
- Noisy counts are used in the centre (Chaturvedi et al. 2021), never the true count.
- Selection sensitivity uses the l2 diameter of the whole domain (§4.4), and the
  per-point losses are clipped at it, so the bound holds for every input.
- **Beyond the thesis**: Alg. 12/13 add ``Lap(2 r / (eps * n_noisy))`` to each
  of the d coordinates of the true mean.  That charges one coordinate's
  sensitivity for a d-coordinate release (a factor d/2 overspend: 392 on MNIST).
  Here the whole cluster-sum vector gets Laplace noise calibrated to its L1
  sensitivity (``sum_j (upper_j - lower_j)``), so the release really is
  epsilon-DP; on 784-dimensional data this costs much utility, see the
  benchmarks.
- Empty children of an active cube are also activated with probability
  ``1/2 exp(-eps' gamma)`` (Alg. 10 visits every child), drawn without
  materialising the ``2^p`` children.

References
----------
Balcan, Dick, Liang, Mou, Zhang (2017). Differentially private clustering in
high-dimensional Euclidean spaces. ICML, PMLR 70:322-331.
Edler (2023). Practicability of differentially private clustering algorithms
(thesis), §4.2-§5.4 and Appendix A, Algorithms 8-13.
McKenna & Sheldon (2020). Permute-and-flip.
Chaturvedi, Nguyen, Xu (2021). Differentially private k-means via exponential
mechanism and max cover (the recover noise bug).
"""
from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval

from ...privacy.mechanisms import NoiseSource
from ...utils.fixedpoint import SUM_BITS, label_sums
from ...utils.nearest import assign
from ...utils.validation import Checked
from ..base import DPClusterer, fit_doc
from ..parameters import share_tuple
from ..regime import check_fit
from ..traits import AuditCase, PrivacyCase

#: Edler (2023) §5.2: candidate, localswap, recover, private k-means, selection.
DEFAULT_SHARES = (0.7, 0.01, 0.04, 0.2, 0.05)


def _check_failure_probability(delta) -> None:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not (0 < float(delta) < 1):
        raise ValueError(f"delta is the failure probability of Balcan et al. and must be in (0, 1), "
                         f"e.g. 0.1; got {delta!r}")


# --------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------
def jl_project(X: np.ndarray, lower: np.ndarray, p: int, rng: np.random.Generator):
    """Johnson–Lindenstrauss projection of Edler (2023) Alg. 8 l. 7.

    Parameters
    ----------
    X : ndarray (n, d), data units
    lower : ndarray (d,), public lower bounds (the projection is of ``X - lower``)
    p : int, target dimension
    rng : numpy.random.Generator (data-independent randomness)

    Returns
    -------
    Y : ndarray (n, p), ``(X - lower) G^T / sqrt(d)``
    G : ndarray (p, d), the standard Gaussian matrix used

    Notes
    -----
    **Privacy.** Uses no privacy budget: ``G`` is drawn independently of the data, and ``Y``
    is never released.
    """
    d = X.shape[1]
    G = rng.standard_normal((p, d))
    Y = (X @ G.T - lower @ G.T) / math.sqrt(d)
    return Y, G


def private_partition(Y: np.ndarray, k: int, lo: np.ndarray, side: float, noise: NoiseSource, *,
                      epsilon: float, delta: float, n_levels: int, log_n: float, label: str = ""):
    """Private recursive partition of one shifted cube (Edler 2023, Alg. 10).

    Parameters
    ----------
    Y : ndarray (n, p), projected data
    k : int, number of clusters (for the candidate reduction, l. 23)
    lo : ndarray (p,), lower corner of the initial cube
    side : float, its side length (local to this call: the §4.3 fix)
    noise : NoiseSource, capped at ``epsilon`` by the caller
    epsilon, delta : this run's budget and failure probability
    n_levels : int
        ``floor(ln n)``: the number of levels whose activation decisions are
        released (the loop of Alg. 10 runs while ``depth <= ln n``; the
        decisions of its last pass are never appended to C).
    log_n : float, ``ln n`` of the public or noisy dataset size (it sets gamma too)

    Returns
    -------
    centres : ndarray (m, p), the cube centres of the deepest levels that
        together reach ``k`` (Alg. 10 l. 23), or all centres when fewer exist.
    n_per_level : list of int, active cubes per level (diagnostics).

    Notes
    -----
    **Privacy.** ``eps' = epsilon / (2 ln n)`` (l. 4).  A child cube is activated with
    probability ``1/2 exp(-eps'(gamma - c))`` if its count ``c <= gamma`` and
    ``1 - 1/2 exp(eps'(gamma - c))`` otherwise (l. 17-20): exactly the event
    ``c + Lap(1/eps') > gamma``, which is how it is drawn (``noise.laplace_above``
    with sensitivity 2 and budget ``2 eps'``).  Replacing one record changes
    the counts of at most two cubes of a level by 1 (L1 sensitivity 2), so a
    level costs ``2 eps'`` and the ``floor(ln n)`` released levels at most
    ``epsilon``.  Empty children are activated with the same formula at
    ``c = 0`` (a Binomial draw of how many, then which: identical in
    distribution to thresholding one Laplace draw per empty child), so no
    cube is treated differently for being empty and the release is pure DP.
    """
    p = Y.shape[1]
    eps_p = epsilon / (2.0 * log_n)                     # Alg. 10 l. 4
    # Alg. 10 l. 5 (Edler §5.4: 1/eps'); n = e^log_n, the public or noisy size, never len(Y).
    gamma = (log_n - math.log(delta)) / eps_p
    rng = noise.rng
    n_child = 1 << p
    centres = [(lo + side / 2.0)[None, :]]
    # Points inside the initial cube, and the active cube each belongs to.
    inside = np.all((Y >= lo) & (Y < lo + side), axis=1)
    pts = np.flatnonzero(inside)
    owner = np.zeros(pts.size, dtype=np.int64)          # index into the active list
    active_c = centres[0].copy()                        # (a, p) centres of active cubes
    cur_side = side
    bit_w = (1 << np.arange(p, dtype=np.int64))
    for level in range(1, n_levels + 1):
        if active_c.shape[0] == 0:
            break
        a = active_c.shape[0]
        half = cur_side / 4.0                            # child centre offset
        cur_side /= 2.0
        # child bit pattern of each point inside an active cube (hash of the cube coordinates)
        bits = (Y[pts] >= active_c[owner]).astype(np.int64) @ bit_w
        key = owner * n_child + bits
        ukey, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        # empty children of each active cube are thresholded too, without being materialised
        n_empty = n_child - np.bincount(ukey // n_child, minlength=a)
        keep, extra = noise.laplace_above(cnt, threshold=gamma, sensitivity=2.0,
                                          epsilon=2.0 * eps_p, n_zeros=n_empty,
                                          name=f"{label}level {level}: cube activations")
        extra_keys = []
        # which empty children: uniform among them (exchangeable; see NoiseSource.laplace_above)
        for parent in np.flatnonzero(extra):             # rare: expected << 1 per level
            taken = set((ukey[ukey // n_child == parent] % n_child).tolist())
            free = np.array([b for b in range(n_child) if b not in taken], dtype=np.int64)
            chosen = rng.choice(free, size=int(extra[parent]), replace=False)
            extra_keys.extend((parent * n_child + chosen).tolist())
        new_keys = np.concatenate([ukey[keep], np.asarray(extra_keys, dtype=np.int64)])
        parent_of = new_keys // n_child
        child_bits = (new_keys % n_child)[:, None] >> np.arange(p)[None, :] & 1
        active_c = active_c[parent_of] + half * (2.0 * child_bits - 1.0)
        # re-home points: those in kept non-empty children keep going
        new_index = np.full(ukey.size, -1, dtype=np.int64)
        new_index[np.flatnonzero(keep)] = np.arange(int(keep.sum()))
        nxt = new_index[inv]
        sel = nxt >= 0
        pts, owner = pts[sel], nxt[sel]
        if active_c.shape[0]:
            centres.append(active_c.copy())
    # Alg. 10 l. 23: the deepest levels, back until at least k centres.
    out, total = [], 0
    for lev in reversed(centres):
        out.append(lev)
        total += lev.shape[0]
        if total >= k:
            break
    return np.concatenate(out[::-1], axis=0), [c.shape[0] for c in centres]


def _swap_losses(D: np.ndarray, S: np.ndarray) -> tuple[float, np.ndarray]:
    """Loss of centre set ``S`` and of every single swap, from clipped distances.

    Parameters
    ----------
    D : ndarray (m, n), clipped squared distances candidate -> point
    S : ndarray (k,) int, current candidate indices

    Returns
    -------
    loss : float
    after : ndarray (k, m): loss after replacing slot i by candidate j.
    """
    sub = D[S]                                            # (k, n)
    if S.size == 1:
        base = np.full((1, D.shape[1]), np.inf, dtype=D.dtype)
        loss = float(sub[0].sum(dtype=np.float64))
    else:
        part = np.argpartition(sub, 1, axis=0)
        i1 = part[0]
        d1 = np.take_along_axis(sub, part[:1], axis=0)[0]
        d2 = np.take_along_axis(sub, part[1:2], axis=0)[0]
        loss = float(d1.sum(dtype=np.float64))
        base = np.where(np.arange(S.size)[:, None] == i1[None, :], d2[None, :], d1[None, :])
    after = np.empty((S.size, D.shape[0]))
    for i in range(S.size):                                # loop over k slots, not points
        after[i] = np.minimum(base[i][None, :], D).sum(axis=1, dtype=np.float64)
    return loss, after


def localswap(cand: np.ndarray, Y: np.ndarray, k: int, noise: NoiseSource, *, epsilon: float,
              clip: float, n_swaps: int):
    """Private local search over the candidates (Edler 2023, Alg. 11 with Listings 5.1-5.2).

    Parameters
    ----------
    cand : ndarray (m, p), candidate centres (already private), ``m >= k``
    Y : ndarray (n, p), projected data
    epsilon : float, the localswap share
    clip : float
        ``B``: each point's squared distance is clipped at ``B`` (the squared
        l2 diameter of the projected domain), so one record moves any loss by
        at most ``B``.
    n_swaps : int, ``T = min(k, 20)``

    Returns
    -------
    ndarray (k,) int, indices into ``cand``.

    Notes
    -----
    **Privacy.** ``T + 1`` permute-and-flip selections of ``epsilon / (T + 1)`` each, with
    the thesis's sensitivity ``2 B`` (a swap's gain is a difference of two
    losses; replacing one record moves it by at most ``2 B``).  The thesis
    gives each selection ``epsilon / (2 (T + 1))``, leaving half of the share
    unspent; the factor 2 of the exponential mechanism is already inside
    permute-and-flip's ``exp(eps q / (2 Delta))``.
    """
    m = cand.shape[0]
    # float32 halves memory and time; losses are summed in float64.
    D = np.empty((m, Y.shape[0]), dtype=np.float32)
    for j in range(m):                                     # loop over candidates, vectorised over points
        diff = Y - cand[j]
        D[j] = np.minimum(np.einsum("ij,ij->i", diff, diff), clip)
    eps_sel = epsilon / (n_swaps + 1)
    S = noise.rng.choice(m, size=k, replace=False)        # Alg. 11 l. 3 (data-independent)
    sets = [S.copy()]
    for t in range(n_swaps):
        loss, after = _swap_losses(D, S)
        util = -(after - loss)
        util[:, S] = -np.inf                               # y ranges over candidates \ current
        if not np.isfinite(util).any():                    # m == k: nothing to swap in
            break
        idx = noise.permute_and_flip(util.ravel(), sensitivity=2.0 * clip, epsilon=eps_sel,
                                     name=f"localswap: swap {t + 1}")
        i, j = divmod(idx, m)
        S = S.copy()
        S[i] = j
        sets.append(S.copy())
    losses = np.array([float(np.minimum.reduce(D[s_], axis=0).sum(dtype=np.float64)) for s_ in sets])
    eps_final = noise.ledger.remaining()[0]
    t = noise.permute_and_flip(-losses, sensitivity=2.0 * clip, epsilon=eps_final,
                               name="localswap: choose one swap set")
    return sets[t]


def noisy_means(X: np.ndarray, labels: np.ndarray, k: int, center: np.ndarray, width: np.ndarray,
                noise: NoiseSource, *, epsilon: float, label: str) -> np.ndarray:
    """One noisy-mean release per cluster (Edler 2023, Alg. 12/13, corrected).

    Parameters
    ----------
    X : ndarray (n, d), data units, inside the box
    labels : ndarray (n,) int in [0, k)
    center, width : ndarray (d,), box centre and widths (public)
    epsilon : float, split equally between counts and sums (as Alg. 12 l. 7/13)

    Returns
    -------
    ndarray (k, d): ``center + noisy_sum / max(noisy_count, 1)``, clipped to the box.

    Notes
    -----
    **Privacy.** epsilon-DP under replace-one neighbours.  Counts: two clusters change by
    1 (L1 sensitivity 2, ``Lap(2 / (epsilon/2))`` = Alg. 12 l. 7).  Sums of
    ``x - center``: two clusters change by a vector in the box shifted to its
    centre, L1 norm at most ``sum(width) / 2`` each, so sensitivity
    ``sum(width)``.  The noisy count is the divisor (never the true count: the
    Chaturvedi et al. bug), and a noisy count below 1 becomes 1 (Alg. 12 l. 8-9).
    """
    n, d = X.shape
    # Exact sums of x - center on the public fixed-point grid (issue 29), in units of the box's largest
    # half-width; a quantised coordinate may exceed its own by half a grid step, so two rows add d 2^-SUM_BITS.
    scale = float(np.max(width)) / 2.0
    counts, sums = label_sums(labels, X - center[None, :], k, scale=scale)
    eps_c = epsilon / 2.0
    eps_s = epsilon - eps_c
    n_counts = noise.laplace(counts, sensitivity=2.0, epsilon=eps_c, name=f"{label}: cluster counts",
                             integer=True)
    n_sums = noise.laplace(sums, sensitivity=float(np.sum(width)) / scale + d * 2.0 ** -SUM_BITS, epsilon=eps_s,
                           name=f"{label}: cluster sums") * scale
    n_counts = np.maximum(n_counts, 1.0)
    Z = center[None, :] + n_sums / n_counts[:, None]
    return np.clip(Z, center - width / 2, center + width / 2)


# --------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------
class BalcanKMeans(DPClusterer):
    """Private k-means for high-dimensional data (Balcan et al. 2017 as corrected by Edler 2023).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total privacy budget.
    delta : float in (0, 1), default 0.1
        The *failure probability* of Balcan et al. and Edler (Alg. 10 l. 5:
        ``gamma = (1/eps') ln(n / delta)``).  It is not a privacy parameter:
        the release is pure epsilon-DP.  Smaller delta means a higher
        threshold ``gamma`` (fewer, surer cubes).
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds of the data (MNIST: ``(0, 255)``).  They set the range
        ``r`` (root-mean-square width), the noise scales and the sensitivities.
        ``None`` reads them from the data (:class:`~dpcore.PrivacyLeakWarning`).
    budget_shares : 5 floats, default (0.7, 0.01, 0.04, 0.2, 0.05)
        Shares of epsilon for candidate, localswap, recover, the private
        k-means steps and the final selection (Edler §5.2); normalised to sum 1.
    n_candidate_runs : int, default 3
        Randomly shifted initial cubes (Alg. 9 l. 4).
    n_lloyd : int, default 3
        Private k-means steps (Alg. 8 l. 11).
    n_samples : float or None, default None
        A public dataset size for ``p``, ``gamma`` and the number of levels.
        ``None`` spends ``n_share`` of epsilon on ``n + Lap(.)`` first (ledger
        entry "dataset size"): under add/remove-one neighbours, as everywhere
        in dpcore, n is private (the privacy audit certified that ``gamma_``
        computed from the true n leaks it).
    n_share : float, default 0.02
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    projection_dim_ : int, ``p = floor(ln(n) / 2)`` (at least 1, at most d)
    gamma_ : float, the activation threshold of each partition run
    candidates_ : ndarray (m, p), the candidate set in the projected space
    candidate_levels_ : list of lists, active cubes per level per run
    lowdim_centers_ : ndarray (k, p), localswap's output
    center_sets_ : list of ndarray (k, d), data units, the sets the final
        selection chose from (one per private k-means step)
    selected_set_ : int
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters, with a sentence saying what to change.

    Notes
    -----
    The thesis's MNIST figures (about 1.88e11 at epsilon = 1) come from
    per-coordinate noise in recover / private k-means, which spends about
    d/2 times the stated budget.  With the noise calibrated to the whole
    vector, as here, the mean of a 784-dimensional cluster needs far more
    budget; see ``benchmarks/balcan_mnist.py`` for measured figures.  Measured
    on full MNIST (k = 10, epsilon = 1, median of 5 runs,
    ``benchmarks/highdim_mnist.py``): inertia 5.57e11, against 2.40e11 for one
    centre at the (DP) mean, 1.78e11 for non-private k-means++ and 1.82e11 for
    :class:`dpcore.algorithms.highdim.zcdp_lloyd.ZCDPLloyd` at (1, 1e-6)-DP.  This class is kept
    as the faithful reproduction; use zCDP-Lloyd for a useful release.

    **Privacy.** epsilon-DP (pure, as Edler claims for the corrected algorithm) under
    add/remove-one neighbours.  Balcan et al. and Edler assume replace-one
    neighbours with n public; here n (which sets ``p``, ``gamma`` and the
    number of levels) is a public ``n_samples`` or a noisy count, and every
    sensitivity below covers add/remove as well as replace.  After the
    optional noisy count, sequential composition over: 3 candidate runs (``0.7 eps / 3`` each),
    localswap (``0.01 eps``), recover (``0.04 eps``), ``n_lloyd`` steps
    (``0.2 eps / n_lloyd`` each) and the selection (the rest, ``0.05 eps``);
    see each function's Privacy section for the sensitivities.

    References
    ----------
    Edler (2023), Appendix A, Algorithms 8-13; §4.2-§5.4.
    Balcan, Dick, Liang, Mou, Zhang (2017), ICML.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import BalcanKMeans
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = BalcanKMeans(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "balcan"
    weighting_refusal = ("its weighted form (cube counts, swap losses and final sums, all sums over rows) is not "
                         "implemented")
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "Balcan et al. (high-dim.)"
    reference = "Balcan et al. 2017; Edler 2023, Appendix A, Alg. 8-13"
    summary = ("Projects to a few dimensions, finds dense cubes privately, picks k of their centres, "
               "then maps back with noisy means and three private Lloyd steps.")
    needs_delta = False
    family = "centroids"
    high_dimensional = True
    colour = "#ff7f0e"
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", dict(delta=1e-3)),),
                      structural=dict(delta=1e-3), exact_sums=dict(delta=1e-3))

    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        # Not a privacy parameter here (the release is pure epsilon-DP): the analysis' failure probability.
        "delta": [Checked(_check_failure_probability, "a failure probability in (0, 1)")],
        "budget_shares": [share_tuple("budget_shares", ("candidate", "localswap", "recover", "k-means",
                                                        "selection"))],
        "n_candidate_runs": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_lloyd": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=0.1, bounds=None,
                 budget_shares=DEFAULT_SHARES, n_candidate_runs=3, n_lloyd=3, n_samples=None, n_share=0.02,
                 random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.budget_shares = budget_shares
        self.n_candidate_runs = n_candidate_runs
        self.n_lloyd = n_lloyd
        self.n_samples = n_samples
        self.n_share = n_share
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size, then the rest split by ``budget_shares`` (normalised) over the candidate runs,
        localswap, recover, the private k-means steps and the final selection (Edler 2023, §5.2).
        See :meth:`DPClusterer.budget_plan`."""
        plan, left = self._size_step()
        shares = np.asarray(self.budget_shares, dtype=float)
        steps = ("candidate run", "localswap", "recover", "private k-means step", "final selection")
        return {**plan, **{step: (left * s, 0.0) for step, s in zip(steps, shares / shares.sum())}}

    @fit_doc('Release k private centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        shares = np.asarray(self.budget_shares, dtype=float)
        shares = shares / shares.sum()
        delta = float(self.delta)
        dom = self.bounds_
        d = X.shape[1]
        k = int(self.n_clusters)
        n, eps = self._public_or_noisy_size(X.shape[0], noise, float(self.epsilon))
        check_fit(self, n=n, d=d, epsilon=eps, delta=float(self.delta))    # the calibrated check (issue 25)
        n = max(n, 3.0)  # the rules below need ln n > 1
        rng = noise.rng
        width = dom.width
        center = dom.center
        log_n = math.log(n)
        diam = float(np.linalg.norm(width))                 # l2 diameter of the box (§4.4)
        r = diam / math.sqrt(d)                             # per-dimension range (= width if uniform)
        e_cand, e_ls, e_rec, e_km, _ = (eps * s for s in shares)

        # 1. projection (Alg. 8 l. 3, 7)
        p = int(min(max(math.floor(log_n / 2.0), 1), d))
        Y, G = jl_project(X, dom.lower, p, rng)

        # 2. candidate (Alg. 9): T shifted cubes, each a reservation of e_cand / T
        T = int(self.n_candidate_runs)
        n_levels = max(int(math.floor(log_n)), 1)
        cands, levels = [], []
        for t in range(T):
            e_run = e_cand / T
            sub = noise.sub(f"candidate run {t + 1}", e_run)
            shift = rng.uniform(-r, r, size=p)              # Alg. 9 l. 8-9
            lo = -r + shift
            C, per_level = private_partition(Y, k, lo, 2.0 * r, sub, epsilon=e_run, delta=delta / T,
                                             n_levels=n_levels, log_n=log_n)
            cands.append(C)
            levels.append(per_level)
        cand = np.concatenate(cands, axis=0)
        if cand.shape[0] < k:
            # Too few cubes were dense enough: pad with data-independent points of the first cube.
            extra = rng.uniform(-r, r, size=(k - cand.shape[0], p))
            cand = np.concatenate([cand, extra], axis=0)
        eps_p = (e_cand / T) / (2.0 * log_n)
        self.gamma_ = math.log(n / (delta / T)) / eps_p

        # 3. localswap (Alg. 11) with losses clipped at the squared diameter of the projected box
        g_norm = float(np.linalg.norm(G, 2))
        clip = (g_norm * diam / math.sqrt(d)) ** 2
        ls = noise.sub("localswap", e_ls)
        S = localswap(cand, Y, k, ls, epsilon=e_ls, clip=clip, n_swaps=min(k, 20))
        low = cand[S]

        # 4. recover (Alg. 12) and private k-means (Alg. 13)
        lab = assign(Y, low)
        Z = noisy_means(X, lab, k, center, width, noise, epsilon=e_rec, label="recover")
        sets = []
        n_lloyd = int(self.n_lloyd)
        for it in range(n_lloyd):
            lab = assign(X, Z)
            Z = noisy_means(X, lab, k, center, width, noise, epsilon=e_km / n_lloyd,
                            label=f"private k-means step {it + 1}")
            sets.append(Z)

        # 5. final selection (Alg. 8 l. 15): permute-and-flip on the k-means loss,
        #    sensitivity 2 * diam^2 (§4.4: the l2 diameter of the whole domain).
        losses = np.array([_clipped_loss(X, Zs, diam ** 2) for Zs in sets])
        e_sel = noise.ledger.remaining()[0]
        j = noise.permute_and_flip(-losses, sensitivity=2.0 * diam ** 2, epsilon=e_sel,
                                   name="final selection of a centre set")

        self.projection_dim_ = p
        self.candidates_ = cand
        self.candidate_levels_ = levels
        self.lowdim_centers_ = low
        self.center_sets_ = sets
        self.selected_set_ = int(j)
        self.cluster_centers_ = sets[j]
        return self


def _clipped_loss(X: np.ndarray, Z: np.ndarray, cap: float) -> float:
    """k-means loss with each point's squared distance capped at ``cap`` (bounded sensitivity)."""
    _, d2 = assign(X, Z, return_distances=True)
    return float(np.minimum(d2, cap).sum())
