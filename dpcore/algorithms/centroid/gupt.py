"""GkM and GkM-3K: k-means in GUPT's sample-and-aggregate framework (Su et al. 2016, §4.1.2, §5.2).

The data (normalised to ``[-1, 1]^d`` with the public bounds) are split into
``l`` disjoint blocks; k-means runs on every block; the ``l`` sets of ``k``
centres are put in a common order, clipped into a privately estimated output
range ``[min_i, max_i]`` per dimension, averaged, and perturbed with Laplace
noise of scale ``2 (max_i - min_i) k d / (l epsilon)`` (Eq. 3).  Half of the
budget estimates the output range, half pays for the noise.

``GkM`` uses ``l = N^0.4`` blocks (GUPT's analysis); ``GkM3K`` uses blocks of
``3k`` points, ``l = N / (3k)``, the variant Su et al. found much better (§5.2).

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §4.1.2 (Eq. 3),
§5.1 (Table 1), §5.2.
Mohan, Thakurta, Shi, Song, Culler (2012). GUPT: privacy preserving data analysis made easy. SIGMOD.
Smith (2011). Privacy-preserving statistical estimation with optimal convergence rates. STOC.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn import config_context as sklearn_config
from sklearn.cluster import KMeans as _SKKMeans
from sklearn.utils._param_validation import StrOptions

from ...privacy.mechanisms import NoiseSource
from ...utils.fixedpoint import FixedPoint, quantize
from .._blocks.sphere_packing import sphere_packing_centers
from ..base import DPClusterer, fit_doc
from ..regime import check_fit
from ..traits import CI_RUNS_SLOW, AuditCase, PrivacyCase

#: Above this many blocks, the per-block k-means is the vectorised batched Lloyd below
#: (scikit-learn costs about 15 ms a call, i.e. ~50 s for GkM-3K's 3,000+ blocks on Adult).
SKLEARN_MAX_BLOCKS = 100


def block_kmeans(Z: np.ndarray, block: np.ndarray, n_blocks: int, k: int, rng: np.random.Generator, *,
                 solver: str = "auto", max_iter: int = 50) -> np.ndarray:
    """k-means run separately on each block.

    Parameters
    ----------
    Z : ndarray (n, d), normalised data in ``[-1, 1]^d``
    block : ndarray (n,) int in ``[0, n_blocks)``, the block of every row
    n_blocks, k : int
    rng : numpy.random.Generator
        Initial centres only (non-private randomness).
    solver : {"auto", "sklearn", "batched"}
        ``"sklearn"``: :class:`sklearn.cluster.KMeans` (k-means++, one run) per
        block.  ``"batched"``: Lloyd's algorithm on all blocks at once, seeded
        with ``k`` distinct random points of the block (Forgy, as SciPy's
        ``kmeans`` that Su et al.'s GkM called, §5.1).  ``"auto"``: sklearn up
        to :data:`SKLEARN_MAX_BLOCKS` blocks, batched beyond.

    Returns
    -------
    ndarray (n_blocks, k, d).  A block with fewer than ``k`` distinct rows fills
    the missing centres with the domain centre 0 (a function of that block
    only, so the sensitivity argument of Eq. 3 is unchanged).
    """
    n, d = Z.shape
    sizes = np.bincount(block, minlength=n_blocks)
    if solver == "auto":
        solver = "sklearn" if n_blocks <= SKLEARN_MAX_BLOCKS else "batched"
    out = np.zeros((n_blocks, k, d))
    if solver == "sklearn":
        order = np.argsort(block, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        # The parameters are fixed here and Z is finite (normalised into [-1, 1]^d): scikit-learn's
        # checks of both are a third of a small block's k-means (the privacy audit fits thousands of
        # 20-row data sets).  Skipping them changes no centre: the same k-means runs on the same rows.
        with sklearn_config(skip_parameter_validation=True, assume_finite=True):
            for b in range(n_blocks):
                pts = Z[order[starts[b]:starts[b + 1]]]
                kk = min(k, np.unique(pts, axis=0).shape[0]) if pts.shape[0] else 0
                if kk == 0:
                    continue
                km = _SKKMeans(n_clusters=kk, n_init=1, random_state=int(rng.integers(2 ** 31 - 1))).fit(pts)
                out[b, :kk] = km.cluster_centers_
        return out
    if solver != "batched":
        raise ValueError(f"solver must be 'auto', 'sklearn' or 'batched', got {solver!r}")
    # Forgy seeding: the first k rows of each block in a random order.
    key = rng.random(n)
    order = np.lexsort(np.stack([key, np.asarray(block, dtype=float)]))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n) - starts[block[order]]
    seed = rank < k
    out[block[seed], rank[seed]] = Z[seed]
    valid = np.arange(k)[None, :] < np.minimum(sizes, k)[:, None]  # (n_blocks, k)
    for _ in range(max_iter):
        C = out[block]                                   # (n, k, d)
        D = ((Z[:, None, :] - C) ** 2).sum(-1)
        D[~valid[block]] = np.inf
        lab = D.argmin(1)
        flat = block * k + lab
        cnt = np.bincount(flat, minlength=n_blocks * k).reshape(n_blocks, k)
        sums = np.stack([np.bincount(flat, weights=Z[:, i], minlength=n_blocks * k) for i in range(d)], 1)
        sums = sums.reshape(n_blocks, k, d)
        new = out.copy()
        ok = cnt > 0
        new[ok] = sums[ok] / cnt[ok][:, None]
        if np.allclose(new, out, atol=1e-9, rtol=0):
            out = new
            break
        out = new
    return out


def align_blocks(centres: np.ndarray, reference: np.ndarray, how: str = "match") -> np.ndarray:
    """Put every block's ``k`` centres in a common order before averaging.

    k-means returns its centres in an arbitrary order, so averaging centre
    ``j`` across blocks is meaningless until the blocks are aligned.  Su et al.
    (§4.1.2) and GUPT's paper do not say how GUPT's k-means does it.  To keep
    Eq. 3's sensitivity, the order of a block must depend on that block only
    (and on public values): one record then still changes one block's output.

    Parameters
    ----------
    centres : ndarray (l, k, d)
    reference : ndarray (k, d)
        Public, data-independent centres (sphere packing).
    how : {"match", "sort"}
        ``"match"``: the minimum-cost one-to-one matching of the block's
        centres to the reference (Hungarian algorithm, squared distances).
        ``"sort"``: lexicographic order of the coordinates.

    Returns
    -------
    ndarray (l, k, d), reordered.
    """
    if how == "sort":
        idx = np.lexsort(centres.transpose(2, 0, 1)[::-1], axis=-1)
        return np.take_along_axis(centres, idx[..., None], axis=1)
    if how != "match":
        raise ValueError(f"align must be 'match' or 'sort', got {how!r}")
    out = np.empty_like(centres)
    cost = ((centres[:, :, None, :] - reference[None, None, :, :]) ** 2).sum(-1)  # (l, k, k)
    for b in range(centres.shape[0]):
        rows, cols = linear_sum_assignment(cost[b])
        out[b, cols] = centres[b, rows]
    return out


def gupt_aggregate(Z: np.ndarray, k: int, n_blocks: int, epsilon: float, noise: NoiseSource, *,
                   range_quantiles=(0.05, 0.95), align: str = "match", solver: str = "auto",
                   r: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The GkM core on normalised data (Su et al. 2016, Eq. 3).

    Parameters
    ----------
    Z : ndarray (n, d) in ``[-r, r]^d``
    k, n_blocks : int
    epsilon : float
        Budget of this step; half estimates the output range, half the noise.
    noise : NoiseSource
    range_quantiles : (float, float)
        The quantiles of the block outputs taken as ``min_i`` and ``max_i``.

    Returns
    -------
    centres : ndarray (k, d), normalised, clipped to ``[-r, r]^d``
    ranges : ndarray (d, 2), the private ``[min_i, max_i]``

    Notes
    -----
    **Privacy.** ``epsilon``-DP.  Rows go to blocks independently and uniformly at random
    (``noise.rng``), so adding or removing a record changes the contents of
    exactly one block and nothing else; every step below is a function of the
    blocks taken one at a time, except the two private releases:

    * Output range (``epsilon / 2``): for each dimension ``i`` the lower and
      upper quantile of the ``l k`` values ``o_i^{b,j}`` by the exponential
      mechanism (:meth:`NoiseSource.quantile`) on the public range
      ``[-r, r]``.  One block moves ``k`` of those values, so a rank changes by
      at most ``k``: sensitivity ``k``; ``2 d`` queries of ``epsilon / (4 d)``.
      Because the search range is the public domain, the estimates always lie
      in it: this is the fix of Su et al. ("bound min_i and max_i to be within
      the data domain"), built in.
    * Noise (``epsilon / 2``): with every block output clipped into
      ``[min_i, max_i]``, one block changes the average of coordinate
      ``(j, i)`` by at most ``w_i / l`` (``w_i = max_i - min_i``).  Scaling
      coordinate ``i`` by ``1 / w_i`` makes the L1 sensitivity of the whole
      ``k d`` vector ``k d / l``; Laplace with ``epsilon / 2`` on the scaled
      vector is noise ``Lap(2 w_i k d / (l epsilon))`` on coordinate ``i``:
      exactly Eq. 3.
    """
    n, d = Z.shape
    rng = noise.rng
    block = np.asarray(rng.integers(n_blocks, size=n))
    outs = block_kmeans(Z, block, n_blocks, k, rng, solver=solver)
    reference = sphere_packing_centers(k, d, rng, r=r)
    outs = align_blocks(outs, reference, align)
    q_lo, q_hi = (float(q) for q in range_quantiles)
    if not 0.0 <= q_lo < q_hi <= 1.0:
        raise ValueError(f"range_quantiles must satisfy 0 <= low < high <= 1, got {range_quantiles!r}")
    eps_range = epsilon / 2
    eps_q = eps_range / (2 * d)
    ranges = np.empty((d, 2))
    for i in range(d):
        vals = outs[:, :, i].ravel()
        low = noise.quantile(vals, q_lo, lower=-r, upper=r, epsilon=eps_q, sensitivity=k,
                             name=f"output range, dimension {i + 1}: lower quantile")
        high = noise.quantile(vals, q_hi, lower=-r, upper=r, epsilon=eps_q, sensitivity=k,
                              name=f"output range, dimension {i + 1}: upper quantile")
        ranges[i] = sorted((low, high))
    lo, hi = ranges[:, 0], ranges[:, 1]
    avg = noisy_block_average(outs, lo, hi, noise, epsilon=noise.ledger.remaining()[0],
                              name=f"averaged centres of {n_blocks} blocks")
    return np.clip(avg, -r, r), ranges


def noisy_block_average(outs: np.ndarray, lo: np.ndarray, hi: np.ndarray, noise: NoiseSource, *,
                        epsilon: float, name: str) -> np.ndarray:
    """The noisy mean of the blocks' outputs clipped to the released range (Su et al. 2016, Eq. 3).

    Parameters
    ----------
    outs : ndarray (n_blocks, k, d), the aligned block outputs
    lo, hi : ndarray (d,), the released output range
    noise : NoiseSource
    epsilon : float
    name : str, the ledger entry

    Returns
    -------
    ndarray (k, d), in the units of ``outs``

    Notes
    -----
    **Privacy.** epsilon-DP.  Each coordinate is scaled to ``[0, 1]`` by the released range and
    quantised to the public fixed-point grid (0 and 1 are grid points); the noised query is the exact
    integer sum over blocks (issue 29).  One record changes one block, i.e. each of the ``k d``
    coordinates of the sum by at most 1: L1 sensitivity ``k d``; the mean is that noisy sum over the
    public number of blocks, Eq. 3's ``Lap(k d / (l epsilon))`` on the scaled mean.
    """
    n_blocks, k, d = outs.shape
    width = np.maximum(hi - lo, 1e-12)
    scaled = (np.clip(outs, lo, hi) - lo) / width            # (n_blocks, k, d) in [0, 1]
    total = FixedPoint(quantize(scaled).sum(axis=0))
    noisy = noise.laplace(total, sensitivity=float(k * d), epsilon=epsilon, name=name) / n_blocks
    return lo + noisy * width


class GkM(DPClusterer):
    """GUPT's sample-and-aggregate k-means, GkM (Su et al. 2016, §4.1.2, Eq. 3).

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total budget (epsilon-DP).
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    n_samples : float or None, default None
        A public dataset size N for the number of blocks.  Under add/remove
        neighbours N is private, so ``None`` first spends ``n_share`` of
        epsilon on ``N + Lap(1/(n_share epsilon))`` (ledger entry "dataset size").
    n_share : float, default 0.02
    range_quantiles : (float, float), default (0.05, 0.95)
        Quantiles of the block outputs used as ``[min_i, max_i]`` (our choice:
        GUPT's exact percentiles are not given in the papers).
    align : {"match", "sort"}, default "match"
        How block centres are put in a common order (:func:`align_blocks`).
    solver : {"auto", "sklearn", "batched"}, default "auto"
        Per-block k-means (:func:`block_kmeans`).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    n_blocks_ : int, the number of blocks l
    output_range_ : ndarray (d, 2), data units, the private ``[min_i, max_i]``
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters.

    Notes
    -----
    **Privacy.** epsilon-DP (see :func:`gupt_aggregate` for the sensitivity derivation);
    the dataset size, when not public, costs ``n_share * epsilon``.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import GkM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = GkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "gkm"
    weighting_refusal = ("each of its blocks runs k-means on its own rows and the blocks' centres are averaged: a "
                         "person's many down-weighted rows fall into many blocks and can change each block's "
                         "centres, where L sampled rows change at most L blocks")
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "GkM (GUPT)"
    reference = "Su et al. 2016, §4.1.2 (Eq. 3); Mohan et al. 2012 (GUPT)"
    summary = "Sample-and-aggregate: k-means on N^0.4 data blocks, centres averaged plus Laplace noise."
    colour = "#9467bd"
    # Every row goes to a random block (a draw whose size is the data's): the exact-sums audit cannot
    # couple two fits, and checks the block average's sensitivity in a test of its own.
    # CI audit size: traits.CI_RUNS_SLOW (why: PrivacyCase.ci_runs); the benchmark keeps n_runs.
    audit = AuditCase(privacy=(PrivacyCase("two groups, record added at the far corner", ci_runs=CI_RUNS_SLOW),),
                      slow=True, coupled=False)
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        # 0 <= low < high <= 1 is a rule between the two numbers: gupt_aggregate checks it.
        "range_quantiles": ["array-like"],
        "align": [StrOptions({"match", "sort"})],
        "solver": [StrOptions({"auto", "sklearn", "batched"})],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, n_samples=None, n_share=0.02,
                 range_quantiles=(0.05, 0.95), align="match", solver="auto", random_state=None,
                 max_contributions=None, contribution_bounding="sample"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_samples = n_samples
        self.n_share = n_share
        self.range_quantiles = range_quantiles
        self.align = align
        self.solver = solver
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size, then half of the rest on the output range (2 d noisy quantiles) and half on
        the averaged block centres (:func:`gupt_aggregate`).  See :meth:`DPClusterer.budget_plan`."""
        plan, left = self._size_step()
        return {**plan, "output range": (left / 2, 0.0), "averaged centres": (left / 2, 0.0)}

    def _n_blocks(self, n_est: float, k: int) -> int:
        """l = N^0.4 (GUPT), rounded, at least 1."""
        return max(1, int(round(n_est ** 0.4)))

    @fit_doc('Release k private centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        dom = self.bounds_
        Z = dom.normalize(X)
        k = int(self.n_clusters)
        n_est, eps_left = self._public_or_noisy_size(X.shape[0], noise, float(self.epsilon))
        check_fit(self, n=n_est, d=Z.shape[1], epsilon=eps_left)    # the calibrated check (issue 25)
        n_blocks = self._n_blocks(n_est, k)
        centres, ranges = gupt_aggregate(Z, k, n_blocks, eps_left, noise, range_quantiles=self.range_quantiles,
                                         align=self.align, solver=self.solver)
        self.cluster_centers_ = dom.denormalize(centres)
        self.output_range_ = np.stack([dom.denormalize(ranges[:, 0]), dom.denormalize(ranges[:, 1])], axis=1)
        self.n_blocks_ = n_blocks
        return self


class GkM3K(GkM):
    """GkM with blocks of 3k points, GkM-3K (Su et al. 2016, §4.1.2 end, §5.2).

    Identical to :class:`GkM` except ``l = N / (3k)`` blocks (Table 1: 111
    blocks on S1).  With rows sent to blocks independently at random, block
    sizes are random with mean ``3k``.

    Parameters
    ----------
    n_clusters, epsilon, bounds, n_samples, n_share, range_quantiles, align, solver, random_state
        As :class:`GkM`.

    Notes
    -----
    Attributes, Raises and the privacy argument: as :class:`GkM`.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import GkM3K
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = GkM3K(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "gkm3k"
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "GkM-3K"
    reference = "Su et al. 2016, §4.1.2 and §5.2 (blocks of 3k points)"
    summary = "GkM with many small blocks of 3k points each: less noise, better averaged centres."
    colour = "#8c564b"

    def _n_blocks(self, n_est: float, k: int) -> int:
        """l = N / (3k), rounded, at least 1."""
        return max(1, int(round(n_est / (3 * k))))
