"""DPM: differentially private clustering through separation (Liebenow et al., ACM CCS 2024).

DPM builds a private binary space partition.  Starting from the whole public
box, each node is cut by an axis-aligned hyperplane chosen with the
exponential mechanism: candidate cuts lie at the centres of a public grid of
intervals along every axis, and a cut scores well when few points lie in its
interval (the cut runs through a gap between clusters, "emptiness") and
enough points lie on both sides ("centreness": the paper's central-quantile
preference).  Noisy counts of the two children decide whether to recurse: a
node whose child would hold too few points becomes a leaf.  A leaf's centre is
the Gaussian-noised mean of its points.  The number of leaves is data-driven.

What dpcore does differently from the paper and its public code
(``UzL-PrivSec/dp-mondrian-clustering``; both read, no code copied):

* **Scores in counts with sensitivity 2.**  The paper normalises emptiness
  and centreness by a noisy node size and bounds the sensitivity with a
  shifted noisy count (costing delta).  Here the score of the cut through
  interval ``j`` is ``-c_j - max(0, q n_hat - min(p_j, n_hat - p_j))``, with
  ``c_j`` the points in the interval, ``p_j`` the points below its centre and
  ``n_hat`` the node's released noisy count: one record moves ``c_j`` and
  ``p_j`` by at most 1 each, so the sensitivity is 2 with no delta, and a gap
  between balanced sides is preferred over any cut through a cluster's core
  however large the node (the paper's weighting favours near-median cuts at
  large nodes, which is what cuts clusters in two).
* **Interval width public**: ``n_bins`` intervals per axis over the public
  bounds (the paper spends 4 % of epsilon on estimating it).
* **Leaf means with the leaf's own sensitivity**: a leaf is a public box, so
  the sum of ``(x - box centre)`` has L2 sensitivity the box's half-diagonal;
  all leaves are released in one Gaussian draw (parallel composition; the
  public code draws each coordinate with the full budget, which composes to
  d times the stated epsilon).
* **A requested k** (the registry's protocol): more leaves than k are merged
  by weighted k-means on the released leaf centres and noisy counts
  (post-processing); fewer are repeated (heaviest first) to fill k rows.
* **One local Lloyd step** (``refine=True``): each point goes to its
  nearest merged centre and counts only if its offset lies in a box of
  half-width ``R_j`` derived from released values only (3 x the centre's
  own noise level plus 3 intervals); the sums of those offsets and their
  counts are released with Gaussian noise.  With ``R_j`` a few cluster widths instead of
  the whole domain the noise is about 20x smaller than the leaf means'.

Privacy: (epsilon, delta)-DP under add/remove-one neighbours.  Levels compose
sequentially, nodes of one level in parallel (disjoint); see :class:`DPM`.

References
----------
Liebenow, Schütt, Braun, Gehrke, Thaeter, Mohammadi (2024). DPM: Clustering Sensitive Data through
Separation. ACM CCS 2024 (arXiv:2307.02969).
McSherry & Talwar (2007) (exponential mechanism); Balle & Wang (2018) (analytic Gaussian);
McSherry (2009) (parallel composition).
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans as _SKKMeans
from sklearn.utils._param_validation import Interval

from ...utils.contributions import WEIGHT_BITS
from ...utils.fixedpoint import SUM_BITS, FixedPoint, quantize, weighted_label_sums
from ...utils.nearest import assign
from ...utils.validation import DELTA_REQUIRED
from ..base import DPClusterer, fit_doc
from ..parameters import share_tuple
from ..regime import check_fit

#: Default budget shares: (node counts, cut choices, leaf means, refinement step).
DEFAULT_SHARES = (0.05, 0.5, 0.15, 0.3)


def _leaf_sensitivity(lo: np.ndarray, hi: np.ndarray) -> float:
    """Half-diagonal of a box: the largest L2 norm of ``x - centre`` for x in it."""
    return max(float(np.linalg.norm((hi - lo) / 2.0)), 1e-12)


class DPM(DPClusterer):
    """DPM: private clustering by recursive low-density separation (Liebenow et al. 2024).

    Parameters
    ----------
    n_clusters : int, default 8
        k of the released centres (DPM's own leaf count is data-driven; see Notes).
    epsilon : float, default 1.0
    delta : float, default 1e-6
        For the Gaussian leaf means and refinement step.
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds; ``None`` warns (:class:`~dpcore.PrivacyLeakWarning`).
    n_bins : int, default 128
        Public intervals per axis: candidate cut positions and the width of the emptiness window.
    max_depth : int or None
        Levels of cuts; ``None``: ``ceil(log2 k) + 6``.
    min_balance : float in [0, 0.5), default 0.25
        ``q``: a cut leaving fewer than ``q`` of the node's points on one side is penalised.
    min_leaf : float or None
        A cut is rejected (the node is tried again one level down) when a child's noisy count
        falls below this, and a node below twice this is a leaf; ``None``: ``n_hat / (2 k)``
        (half the mean cluster size).
    budget_shares : 4 floats, default (0.05, 0.5, 0.15, 0.3)
        Budget shares of the node counts, the cut choices, the leaf means and the refinement
        step (``refine=False`` gives its share to the leaf means).
    refine : bool, default True
        Run the clipped Lloyd step after merging to k.
    refine_steps : int in [1, 10], default 1
        Clipped Lloyd steps run when ``refine`` is true; the refinement share of the
        budget is split evenly between them.
    n_samples : float or None
        Public dataset size (then the root count is not spent).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    leaf_centers_ : ndarray (m, d), data units, the released leaf means
    leaf_counts_ : ndarray (m,), their released noisy counts
    leaf_bounds_ : list of (lower, upper) arrays, the leaves' public boxes
    leaf_reliable_ : ndarray (m,) bool, leaves whose histogram peak stands 4 noise levels out (merged)
    n_leaves_ : int
    budget_ : BudgetLedger

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters.

    Notes
    -----
    A requested k is met by merging leaves with weighted k-means on their
    released centres (weights: noisy counts), or by repeating the heaviest
    leaves when there are fewer than k.  ``n_leaves_`` says which happened.

    **Privacy.** (epsilon, delta)-DP.  Level l's counts: every record is in one child, so
    one Laplace draw with sensitivity 1 per level (parallel composition).
    Level l's cuts: the nodes are disjoint, each cut is the exponential
    mechanism with score sensitivity 2 over a public candidate set (one
    ``parallel`` entry per level).  Every level is charged whether or not
    nodes remain, so the ledger does not depend on the data.  The leaf
    means: one record moves one leaf's normalised sum by at most 1 in L2
    (analytic Gaussian, sensitivity 1).  The refinement: one record moves
    one centre's (clipped offset / S, count) by at most sqrt(2).  The clip
    boxes, the merge and the padding use released values only.
    With ``contribution_bounding="weight"`` every count, histogram, cut score and sum weighs a row by
    its contribution weight in ``[0, 1]``; each is linear in the weights, so a unit whose weights sum to
    at most L moves it by at most L times one row's bound (triangle inequality), the sensitivity of L
    sampled rows (Amin et al. 2019).

    References
    ----------
    Liebenow et al. (2024), §4 (algorithm), §5 (privacy); see the module docstring.

    Examples
    --------
    A private release (``random_state=None``: fresh, unpredictable noise). The
    centres are noisy, so only their shape and the spent budget are shown:

    >>> import numpy as np
    >>> from dpcore.algorithms import DPM
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> est.cluster_centers_.shape
    (3, 2)
    >>> est.budget_.total()[0] <= est.epsilon
    True
    """

    key = "dpm"
    supports_weighting = True
    calibrated = True
    preview_checked = True   # its previews cover >= 70 % of real draws: tests/test_preview.py
    display_name = "DPM (separation)"
    reference = "Liebenow, Schütt, Braun, Gehrke, Thaeter, Mohammadi, ACM CCS 2024"
    summary = ("Splits the data recursively along low-density gaps chosen privately, then averages each "
               "part with noise; for many clusters in mid dimensions.")
    needs_delta = True
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "delta": [DELTA_REQUIRED],
        "n_bins": [Interval(Integral, 2, 4096, closed="both")],
        "max_depth": [Interval(Integral, 1, 30, closed="both"), None],
        "min_balance": [Interval(Real, 0, 0.5, closed="left")],
        "min_leaf": [Interval(Real, 1, None, closed="left"), None],
        "budget_shares": [share_tuple("budget_shares", ("counts", "cuts", "leaf means", "refinement"),
                                      last_may_be_zero=True)],
        "refine": ["boolean"],
        "refine_steps": [Interval(Integral, 1, 10, closed="both")],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, delta=1e-6, bounds=None, n_bins=64, max_depth=None,
                 min_balance=0.25, min_leaf=None, budget_shares=DEFAULT_SHARES, refine=True, refine_steps=1,
                 n_samples=None, random_state=None,
                 max_contributions=None, contribution_bounding="weight"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.min_balance = min_balance
        self.min_leaf = min_leaf
        self.budget_shares = budget_shares
        self.refine = refine
        self.refine_steps = refine_steps
        self.n_samples = n_samples
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """``budget_shares`` (normalised) of epsilon: node counts (with the root's noisy size unless
        ``n_samples`` is public, equal parts per level), cut choices, leaf means and refinement; delta
        half to the leaf means and half to the refinement (all to the leaf means without it).
        See :meth:`DPClusterer.budget_plan`."""
        s = np.asarray(self.budget_shares, dtype=float)
        s = s / s.sum()
        refine = bool(self.refine) and s[3] > 0
        eps, delta = float(self.epsilon), float(self.delta)
        depth = self._depth()
        counts = eps * s[0]
        plan: dict[str, tuple[float, float]] = {}
        if self.n_samples is None:
            plan["level #: dataset size"] = (counts / (depth + 1), 0.0)
            counts -= counts / (depth + 1)
        plan["level #: node counts"] = (counts, 0.0)
        plan["level #: cut choices"] = (eps * s[1], 0.0)
        if not refine:
            plan["leaf centres"] = (eps * (s[2] + s[3]), delta)
            return plan
        plan["leaf centres"] = (eps * s[2], delta / 2)
        plan["refinement"] = (eps * s[3], delta / 2)
        return plan

    def _depth(self) -> int:
        """The tree's depth: ``max_depth``, else ceil(log2 k) + 6 (public)."""
        k = int(self.n_clusters)
        return int(self.max_depth) if self.max_depth is not None else int(math.ceil(math.log2(max(k, 2)))) + 6

    @fit_doc('Release k private centres (and the leaf means they come from).')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, _ = self._begin_fit(X, privacy_id=privacy_id)
        k, (n, d) = int(self.n_clusters), X.shape
        # Weighted rows (contribution bounding by weighting): integer weights in units of 2^-WEIGHT_BITS.
        w = self._pop_row_weights()
        if w is not None:
            n = FixedPoint(np.array(int(w.sum()), dtype=np.int64), WEIGHT_BITS)
        s = np.asarray(self.budget_shares, dtype=float)
        s = s / s.sum()
        refine = bool(self.refine) and s[3] > 0
        if not refine:
            s = np.array([s[0], s[1], s[2] + s[3], 0.0])
        eps, delta = float(self.epsilon), float(self.delta)
        depth = self._depth()
        dom = self.bounds_
        lo, hi = dom.lower.astype(float), dom.upper.astype(float)
        nb = int(self.n_bins)
        width = (hi - lo) / nb
        # Interval index of every value (public grid): cut candidates and emptiness windows.
        B = np.clip(((X - lo) / width).astype(np.int64), 0, nb - 1)
        q = float(self.min_balance)

        eps_counts = eps * s[0]
        # The root's size: the public n_samples, or one level's part of the node-count budget.
        n_root, _ = self._public_or_noisy_size(n, noise, eps, share=s[0] / (depth + 1), name="level 0: dataset size")
        eps_level_count = eps_counts / (depth if self.n_samples is not None else depth + 1)
        check_fit(self, n=n_root, d=X.shape[1], epsilon=eps, delta=delta)    # the calibrated check (issue 25)
        min_leaf = float(self.min_leaf) if self.min_leaf is not None else n_root / (4 * k)
        eps_cut = eps * s[1] / depth

        # nodes: (indices, lower, upper, noisy count)
        frontier = [(np.arange(X.shape[0]), lo.copy(), hi.copy(), n_root)]
        leaves = []
        for level in range(1, depth + 1):
            # A node too small to hold two clusters' worth of points is a leaf (released count only).
            leaves += [nd for nd in frontier if nd[3] < 2 * min_leaf]
            frontier = [nd for nd in frontier if nd[3] >= 2 * min_leaf]
            cut_sources = noise.parallel(f"level {level}: cut choices (exponential mechanism)", eps_cut,
                                         len(frontier))
            cuts = []
            for (idx, nlo, nhi, n_hat), src in zip(frontier, cut_sources):
                cuts.append(self._choose_cut(X, B, idx, n_hat, q, nb, lo, width, src, eps_cut, nlo, nhi, w))
            # Children counts of every node at this level: one Laplace draw (each record is in one child).
            true_counts = []
            for (idx, *_), (a, pos) in zip(frontier, cuts):
                left = X[idx, a] < pos
                if w is None:
                    true_counts += [int(left.sum()), int(idx.size - left.sum())]
                else:
                    true_counts += [int(w[idx][left].sum()), int(w[idx][~left].sum())]
            counts_q = np.asarray(true_counts or [0], dtype=np.int64)
            # An empty level still spends (a discarded draw), so the ledger never depends on the data.
            noisy = noise.laplace(counts_q if w is None else FixedPoint(counts_q, WEIGHT_BITS), sensitivity=1.0,
                                  epsilon=eps_level_count, name=f"level {level}: node counts")
            nxt = []
            for i, ((idx, nlo, nhi, n_hat), (a, pos)) in enumerate(zip(frontier, cuts)):
                c0, c1 = noisy[2 * i], noisy[2 * i + 1]
                if min(c0, c1) < min_leaf:
                    # The cut only shaves a fringe off: keep the node whole and try again one level down.
                    nxt.append((idx, nlo, nhi, n_hat))
                    continue
                left = X[idx, a] < pos
                llo, lhi, rlo, rhi = nlo.copy(), nhi.copy(), nlo.copy(), nhi.copy()
                lhi[a] = min(lhi[a], pos)
                rlo[a] = max(rlo[a], pos)
                nxt += [(idx[left], llo, lhi, float(c0)), (idx[~left], rlo, rhi, float(c1))]
            frontier = nxt
        leaves += frontier

        # Leaf centres from noisy marginal histograms: a record adds 1 to one interval of each of the d
        # axes of its leaf, so the (leaves, d, n_bins) counts have L2 sensitivity sqrt(d) (one Gaussian draw).
        hist = np.zeros((len(leaves), d, nb), dtype=np.int64)
        for i, (idx, *_) in enumerate(leaves):
            for a in range(d):      # integer weights: their float sums are exact below 2^53
                hist[i, a] = np.bincount(B[idx, a], weights=None if w is None else w[idx], minlength=nb)
        eps_leaf = eps * s[2] if refine else noise.ledger.remaining()[0]
        delta_leaf = delta / 2 if refine else noise.ledger.remaining()[1]
        noisy_hist = noise.gaussian(hist if w is None else FixedPoint(hist, WEIGHT_BITS), sensitivity=math.sqrt(d),
                                    epsilon=eps_leaf, delta=delta_leaf,
                                    name="leaf centres: noisy marginal histograms", integer=True).astype(float)
        leaf_c = _histogram_centres(noisy_hist, lo, width)
        leaf_c = np.array([np.clip(c, a, b) for c, (_, a, b, _) in zip(leaf_c, leaves)])
        sigma_leaf = np.tile(width, (len(leaves), 1)).max(axis=1) / 2.0      # the histogram's resolution
        self.leaf_centers_ = leaf_c
        self.leaf_counts_ = np.array([c for *_, c in leaves])
        self.leaf_bounds_ = [(a, b) for _, a, b, _ in leaves]
        self.n_leaves_ = len(leaves)

        # A leaf whose histogram peak does not stand out of the noise in every axis has no reliable centre
        # (fringes cut off a cluster): it is left out of the merge unless fewer than k leaves would remain.
        sigma_h = _gaussian_sigma(eps_leaf, delta_leaf) * math.sqrt(d)
        snr = noisy_hist.max(axis=2).min(axis=1) / sigma_h
        keep = snr >= 4.0
        if keep.sum() < k:
            keep = np.zeros(len(leaves), bool)
            keep[np.argsort(-snr, kind="stable")[:k]] = True
        self.leaf_reliable_ = keep
        centres, err = self._merge_to_k(leaf_c[keep], self.leaf_counts_[keep], sigma_leaf[keep], k, noise.rng)
        if refine:
            steps = int(self.refine_steps)
            eps_ref, delta_ref = noise.ledger.remaining()
            for step in range(steps):
                last = step == steps - 1
                e = noise.ledger.remaining()[0] if last else eps_ref / steps
                dl = noise.ledger.remaining()[1] if last else delta_ref / steps
                centres, err = self._refine(X, centres, err, width, noise, eps_left=e, delta_left=dl, lo=lo, hi=hi,
                                            name=f"refinement {step + 1}: local sums and counts", weights=w)
        self.cluster_centers_ = centres
        return self

    @staticmethod
    def _choose_cut(X, B, idx, n_hat, q, nb, lo, width, src, eps_cut, nlo, nhi, weights=None):
        """One cut: exponential mechanism over (axis, interval) with the count score (sensitivity 2).

        Candidates are the interval centres strictly inside the node's public box (a cut outside it
        cannot split the node); excluding them depends on public values only.  ``weights``: the rows'
        contribution weights (units of ``2^-WEIGHT_BITS``), counted instead of 1 each.
        """
        d = X.shape[1]
        if idx.size:
            wi = None if weights is None else weights[idx] / float(1 << WEIGHT_BITS)
            counts = np.stack([np.bincount(B[idx, a], weights=wi, minlength=nb) for a in range(d)]).astype(float)
        else:
            counts = np.zeros((d, nb))
        below = np.cumsum(counts, axis=1) - counts / 2.0          # points below each interval's centre
        balance = np.minimum(below, n_hat - below)
        score = -counts - np.maximum(0.0, q * n_hat - balance)
        mids = lo[:, None] + (np.arange(nb)[None, :] + 0.5) * width[:, None]
        outside = (mids <= nlo[:, None]) | (mids >= nhi[:, None])
        # A node narrower than one interval has no candidate inside its box: then every candidate stays
        # (the cut leaves one child empty).  Decided on public and released values only, as the exclusion.
        if not outside.all():
            score[outside] = -np.inf
        j = src.exponential(score.ravel(), sensitivity=2.0, epsilon=eps_cut, name="cut")
        a, b = divmod(j, nb)
        return int(a), float(lo[a] + (b + 0.5) * width[a])

    @staticmethod
    def _merge_to_k(C, w, err, k, rng):
        """Weighted k-means on released leaf centres (post-processing); returns (k centres, their noise level)."""
        m = C.shape[0]
        weights = np.clip(w, 1.0, None)
        if m <= k:
            order = np.argsort(-weights, kind="stable")
            pick = np.concatenate([np.arange(m), order[np.arange(k - m) % m]]).astype(int)
            return C[pick], err[pick]
        km = _SKKMeans(n_clusters=k, n_init=50, random_state=int(rng.integers(2 ** 31 - 1)))
        km.fit(C, sample_weight=weights)
        lab = km.labels_
        # noise level of a merged centre: that of a weighted mean of independent leaf means
        e = np.array([math.sqrt(np.sum((weights[lab == j] * err[lab == j]) ** 2)) / weights[lab == j].sum()
                      if np.any(lab == j) else float(err.max()) for j in range(k)])
        return km.cluster_centers_, e

    @staticmethod
    def _refine(X, C, err, width, noise, *, eps_left, delta_left, lo, hi, name, weights=None):
        """One Lloyd step with offsets clipped to released-value boxes (Gaussian, L2 sensitivity sqrt 2).

        ``weights``: the rows' contribution weights (units of ``2^-WEIGHT_BITS``): weighted exact sums."""
        k, d = C.shape
        R = 3.0 * err[:, None] + 3.0 * width[None, :]          # (k, d) half-widths, from released values only
        S = np.linalg.norm(R, axis=1)                            # L2 bound of a clipped offset
        lab = assign(X, C)
        q = np.zeros((k, d + 1), dtype=object if weights is not None else np.int64)
        for j in range(k):
            mine = lab == j
            Z = X[mine] - C[j]
            # Only points inside the box count (a local mean): points of a cluster that lost its centre are
            # ignored instead of pulling this one towards them.  Each offset kept has L2 norm <= S_j.
            inside = (np.abs(Z) <= R[j]).all(axis=1)
            Z = Z[inside]
            # Exact sums on the public fixed-point grid (issue 29); the count joins them in fixed point.
            if weights is None:
                q[j, :d] = quantize(Z / S[j]).sum(axis=0)
                q[j, d] = Z.shape[0] << SUM_BITS
            else:
                wc, ws = weighted_label_sums(np.zeros(Z.shape[0], dtype=np.int64), quantize(Z / S[j]),
                                             weights[mine][inside], 1, weight_bits=WEIGHT_BITS)
                q[j, :d] = [int(v) for v in ws.q[0]]
                q[j, d] = int(wc.q[0]) << SUM_BITS
        bits = SUM_BITS + (0 if weights is None else WEIGHT_BITS)
        # One record moves one cluster's offsets' sum by a quantised vector of norm <= 1 + sqrt(d) 2^-(SUM_BITS+1)
        # and its count by 1.
        sens = math.hypot(1.0 + math.sqrt(d) * 2.0 ** -(SUM_BITS + 1), 1.0)
        if weights is not None and all(abs(int(v)) < 2 ** 62 for v in q.ravel()):
            q = q.astype(np.int64)
        noisy = noise.gaussian(FixedPoint(q, bits), sensitivity=sens, epsilon=eps_left, delta=delta_left, name=name)
        out = C.copy()
        ok = noisy[:, d] >= 1.0
        out[ok] = C[ok] + noisy[ok, :d] * S[ok, None] / noisy[ok, d:]
        # the new centres' own noise level (released scale over released counts) sizes the next clip box
        new_err = err.copy()
        new_err[ok] = _gaussian_sigma(eps_left, delta_left) * math.sqrt(2.0) * S[ok] / noisy[ok, d]
        return np.clip(out, lo, hi), new_err


def _histogram_centres(h: np.ndarray, lo: np.ndarray, width: np.ndarray, *, window: int = 2) -> np.ndarray:
    """Per axis, the weighted mean of the interval centres around the noisy histogram's peak (post-processing).

    Parameters
    ----------
    h : ndarray (m, d, n_bins), noisy counts
    lo, width : ndarray (d,)

    Returns
    -------
    ndarray (m, d), data units
    """
    m, d, nb = h.shape
    peak = h.argmax(axis=2)                                            # (m, d)
    offs = np.arange(-window, window + 1)
    cols = np.clip(peak[..., None] + offs, 0, nb - 1)                  # (m, d, 2w+1)
    w = np.clip(np.take_along_axis(h, cols, axis=2), 0.0, None)
    w[w.sum(axis=2) == 0, window] = 1.0
    mids = lo[None, :, None] + (cols + 0.5) * width[None, :, None]
    return (w * mids).sum(axis=2) / w.sum(axis=2)


def _gaussian_sigma(epsilon: float, delta: float) -> float:
    from ...privacy.calibration import analytic_gaussian_sigma
    return analytic_gaussian_sigma(1.0, epsilon, delta)
