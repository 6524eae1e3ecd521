"""Shared block: DPLloyd's noisy Lloyd iterations and the journal version's iteration rule (Su et al. 2016
§4.1.1, §6.1; 2017).

* :func:`noisy_lloyd_step`: one noisy update (the Hybrid's refining iteration);
* :func:`noisy_lloyd`: t of them on a budget, the last one taking what the ledger has left;
* :func:`auto_schedule` and :func:`iteration_plan`: how many iterations, and the count/sum split;
* :func:`lloyd_regime`: the iteration rule's regime (whether the budget buys one accurate iteration);
* :class:`NoisyLloyd`: the whole estimator frame (a size, the regime, a start, the iterations) that
  DPLloyd and its variants subclass, each declaring only its start (:meth:`NoisyLloyd._start`).

The advisor and the regime rules read the same budget rule (:func:`auto_schedule`).
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ...privacy.mechanisms import NoiseSource
from ...sources import DataSource
from ...utils.fixedpoint import FixedPoint
from ...utils.nearest import cluster_sums
from ..base import DPClusterer, fit_doc
from ..regime import Regime, check_fit

#: The normalised coordinate of a typical centroid, |S_i| / (2 r C), that Su et al. (2017) fix
#: when choosing the iteration count and split (the value IBM diffprivlib also uses).
RHO = 0.225


#: The per-iteration MSE target of the journal version's iteration rule.  With MSE of all k
#: centroids 2 k^3 (d + c)^3 / (N eps_t)^2 (derivation in :func:`auto_schedule`), this threshold
#: gives the 500 = 2 / 0.004 that appears in the published rule.
MSE_TARGET = 0.004


MIN_ITER, MAX_ITER = 2, 7


def auto_schedule(n: float, d: int, k: int, epsilon: float, *, r: float = 1.0, rho: float = RHO):
    """Number of iterations and per-iteration split of the journal version (Su et al. 2017).

    Derivation (from the error analysis of §6.1, Eq. 6).  In one iteration
    with budget ``eps_t`` give each dimension's sums ``eps_s`` (sensitivity
    ``r`` each, so ``d * eps_s`` for the whole sum vector) and the counts
    ``eps_c``, so ``d * eps_s + eps_c = eps_t``.  With ``C ~ N/k`` and
    ``|o_i| ~ 2 rho r`` the MSE of one centre is
    ``(k/N)^2 * d * (2 r^2/eps_s^2 + (2 rho r)^2 * 2/eps_c^2)``.  Minimising
    under the constraint (Lagrange) gives ``eps_c / eps_s = cbrt(4 d rho^2) =: c``,
    hence ``eps_s = eps_t / (d + c)`` and ``eps_c = c * eps_t / (d + c)``; the
    minimum MSE over the ``k`` centres is ``2 k^3 (d + c)^3 r^2 / (N eps_t)^2``.
    Asking it to stay below ``MSE_TARGET = 0.004`` needs
    ``eps_t >= eps_m = sqrt(500 k^3 (d + c)^3 / N^2)``; the number of
    iterations is ``floor(epsilon / eps_m)`` clamped to ``[2, 7]``.

    Parameters
    ----------
    n : float
        Dataset size (public or noisy).
    d, k : int
    epsilon : float
        Total budget for the iterations.

    Returns
    -------
    n_iter : int
    count_share, sum_share : float
        Fractions of each iteration's budget for the counts and for the whole
        sum vector; they add up to 1.
    """
    c = np.cbrt(4 * d * rho ** 2)
    eps_m = _eps_per_iteration_target(n, d, k, r=r, rho=rho)
    n_iter = int(max(min(epsilon / eps_m, MAX_ITER), MIN_ITER))
    return n_iter, c / (d + c), d / (d + c)


def _eps_per_iteration_target(n: float, d: int, k: int, *, r: float = 1.0, rho: float = RHO) -> float:
    """``eps_m = sqrt(500 k^3 (d + c)^3 / N^2)``: one iteration's budget for the MSE target (:func:`auto_schedule`)."""
    c = np.cbrt(4 * d * rho ** 2)
    return float(math.sqrt(2 / MSE_TARGET * k ** 3 * (d + c) ** 3 / max(n, 1.0) ** 2) * r)


def noisy_counts_and_sums(counts: np.ndarray | FixedPoint, sums: FixedPoint, noise: NoiseSource, *,
                          sensitivity: float, epsilon: float, name: str) -> tuple[np.ndarray, np.ndarray]:
    """One Laplace query over every cluster's count and exact coordinate sums together (one ledger entry).

    Parameters
    ----------
    counts : ndarray (k,) of int, or FixedPoint (k,) of weighted counts (contribution bounding by weighting)
    sums : FixedPoint (k, d), exact sums of quantised coordinates
    noise : NoiseSource
    sensitivity : float
        L1 sensitivity of the joint query in the sums' units (``d r + 1`` for one record's count and
        coordinates in ``[-r, r]``).
    epsilon : float
    name : str

    Returns
    -------
    (noisy_counts (k,), noisy_sums (k, d)) : float arrays

    Notes
    -----
    **Privacy.** epsilon-DP: the counts join the sums in fixed point (``count * 2^bits``), so the
    whole query is exact integers and one record moves it by at most ``sensitivity`` in L1.
    """
    if isinstance(counts, FixedPoint):   # weighted counts: on the sums' finer grid
        c = np.asarray(counts.q, dtype=np.int64) << (sums.bits - counts.bits)
    else:
        c = np.asarray(counts, dtype=np.int64) << sums.bits
    joint = np.concatenate([c[:, None].astype(sums.q.dtype), sums.q], axis=1)
    noisy = noise.laplace(FixedPoint(joint, sums.bits), sensitivity=sensitivity, epsilon=epsilon, name=name)
    return noisy[:, 0], noisy[:, 1:]


def noisy_lloyd_step(Z, centers: np.ndarray, noise: NoiseSource, *, epsilon: float,
                     count_share: float | None = None, r: float = 1.0, label: str = "iteration",
                     domain=None) -> np.ndarray:
    """One DPLloyd update on normalised data (Su et al. 2016, §4.1.1, Eq. 2 with noise).

    Parameters
    ----------
    Z : ndarray (n, d) in ``[-r, r]^d``, or in data units when ``domain`` is given
    centers : ndarray (k, d), the current (private) centres, normalised
    noise : NoiseSource
    epsilon : float
        This iteration's budget.
    count_share : float or None
        ``None``: the paper's single query with L1 sensitivity ``d r + 1``
        covering counts and sums together (one ledger entry).  A number in
        (0, 1): that fraction to the counts (sensitivity 1) and the rest to
        the sums (sensitivity ``d r``), two entries.
    label : str
        Prefix of the ledger entries.
    domain : Domain, optional
        Normalise ``Z`` chunk by chunk with it (r = 1), instead of a normalised copy.

    Returns
    -------
    ndarray (k, d): noisy sum / noisy count, clipped to the domain; a cluster
    whose noisy count is below 1 gets a fresh uniform centre (post-processing).

    Notes
    -----
    **Privacy.** ``epsilon``-DP: adding or removing a point changes one count by 1 and one
    sum vector by at most ``d r`` in L1; clusters are disjoint (parallel composition).
    """
    k, d = centers.shape
    # Exact sums (issue 29): counts as integers, coordinate sums in fixed point on the public grid, so the
    # noised query's input moves by at most its sensitivity between neighbours, whatever the summation order.
    if isinstance(Z, DataSource):   # exact cluster_sums where the data live (domain required)
        counts, sums = Z.cluster_sums(centers, domain)
    else:
        counts, sums = cluster_sums(Z, centers, domain=domain, exact=True)
    if count_share is None:
        n_counts, n_sums = noisy_counts_and_sums(counts, sums, noise, sensitivity=d * r + 1.0, epsilon=epsilon,
                                                 name=f"{label}: cluster counts and sums")
    else:
        eps_c = epsilon * count_share
        eps_s = epsilon - eps_c
        n_counts = noise.laplace(counts, sensitivity=1.0, epsilon=eps_c, name=f"{label}: cluster counts",
                                 integer=True)
        n_sums = noise.laplace(sums, sensitivity=d * r, epsilon=eps_s, name=f"{label}: cluster sums")
    new = centers.copy()
    ok = n_counts >= 1.0
    new[ok] = n_sums[ok] / n_counts[ok, None]
    if not ok.all():
        # A noisy count below 1 carries no usable information about where the cluster is; a
        # centre left in an empty region would stay there, so it is redrawn uniformly in the
        # domain (data-independent, costs nothing) and may capture points next iteration.
        new[~ok] = noise.rng.uniform(-r, r, size=(int((~ok).sum()), d))
    return np.clip(new, -r, r)


def noisy_lloyd(X, init: np.ndarray, noise: NoiseSource, *, n_iter: int, epsilon: float,
                count_share: float | None = None, domain=None, label: str = "iteration") -> np.ndarray:
    """DPLloyd's iterations (Su et al. 2016, §4.1.1): ``n_iter`` noisy Lloyd steps on ``epsilon`` in equal parts.

    The last step takes what the ledger has left (``noise.ledger.remaining()``), so rounding never
    strands or overdraws budget: call it last, when the iterations are all that is left to spend.

    Parameters
    ----------
    X : ndarray (n, d) or DataSource
        Normalised rows, or rows in data units (or a source) with ``domain``.
    init : ndarray (k, d)
        The start, normalised to ``[-1, 1]^d``: public or already private.
    noise : NoiseSource
    n_iter : int
        t, public (:func:`iteration_plan`).
    epsilon : float
        The iterations' whole budget.
    count_share : float or None
        Each iteration's split (:func:`noisy_lloyd_step`); None: the paper's one joint query.
    domain : Domain, optional
        The public box, when ``X`` is in data units.
    label : str, default "iteration"
        Ledger entries are named ``"<label> <i>: ..."``.

    Returns
    -------
    ndarray (k, d), normalised: the released centres.

    Notes
    -----
    **Privacy.** ``epsilon``-DP by sequential composition of the t steps (each ``epsilon / t``-DP).
    """
    t = int(n_iter)
    centers = np.asarray(init, dtype=float)
    for it in range(t):
        e = noise.ledger.remaining()[0] if it == t - 1 else epsilon / t
        centers = noisy_lloyd_step(X, centers, noise, epsilon=e, count_share=count_share,
                                   label=f"{label} {it + 1}", domain=domain)
    return centers


def iteration_plan(n_iter, n: float | None, d: int, k: int, epsilon: float) -> tuple[int, float | None]:
    """The number of iterations t and each iteration's count share, from public inputs.

    Parameters
    ----------
    n_iter : int or "auto"
        A fixed t (the paper's single joint query per iteration: no split), or ``"auto"``: the journal
        rule (:func:`auto_schedule` at the public or noisy size ``n``).
    n : float or None
        The public or noisy size (needed by ``"auto"``).
    d, k : int
    epsilon : float
        The iterations' budget.

    Returns
    -------
    (t, count_share) : int, float or None
    """
    if isinstance(n_iter, str):
        if n is None:
            raise ValueError("n_iter='auto' needs the public or noisy dataset size")
        t, count_share, _ = auto_schedule(n, d, k, epsilon)
        return t, count_share
    return int(n_iter), None


def lloyd_regime(key: str, *, n: float, d: int, k: int, epsilon: float, rho: float = RHO) -> Regime:
    """Su et al. (2017): enough budget for at least one iteration at the journal rule's accuracy target.

    Parameters
    ----------
    key : str
        The registry key the verdict is for.
    n, d, k, epsilon
        Public inputs (``n`` public or noisy; ``epsilon`` the iterations' budget).
    rho : float
        The normalised centroid coordinate of the iteration rule.

    Returns
    -------
    Regime
        ``"warn"`` (never a refusal) when ``epsilon`` buys less than one such iteration.
    """
    eps_m = _eps_per_iteration_target(n, d, k, rho=float(rho))
    affordable = epsilon / eps_m
    t = auto_schedule(n, d, k, epsilon)[0]
    figs = dict(eps_per_iteration_target=eps_m, affordable_iterations=affordable, n_iter=t)
    if affordable < 1.0:
        return Regime(key, "warn",
                      f"ε = {epsilon:.3g} buys {affordable:.2g} iterations at the accuracy Su et al. (2017) ask "
                      f"of one ({eps_m:.3g} each for about {n:,.0f} points, d = {d}, k = {k}): even the minimum "
                      f"of {MIN_ITER} iterations leaves the centres noisy.", None, figs, utility_only=True)
    return Regime(key, "ok", f"ε = {epsilon:.3g} buys {affordable:.3g} iterations at Su et al. (2017)'s "
                  "accuracy target: inside the regime.", None, figs)


class NoisyLloyd(DPClusterer):
    """The frame of DPLloyd and its variants: a size, the regime rule, a start, then the noisy iterations.

    ``fit`` buys the dataset size (``n_iter="auto"``: the public ``n_samples`` or a noisy count),
    asks the class's regime (:func:`lloyd_regime`), takes the start from :meth:`_start` (which may
    spend a share of the budget) and runs :func:`noisy_lloyd` on the rest.  A variant subclasses it
    with a ``key`` and the declarations of :class:`~dpcore.algorithms.base.DPClusterer`, and
    overrides :meth:`_start` (and :meth:`_start_plan` when its start spends budget); DPLloyd is one.

    Parameters
    ----------
    n_clusters : int, default 8
    epsilon : float, default 1.0
        Total privacy budget (epsilon-DP).
    bounds : (lower, upper), scalars or arrays (d,), data units
        Public bounds of the data domain. ``None`` reads them from the data
        (:class:`~dpcore.PrivacyLeakWarning`).
    n_iter : int or "auto", default "auto"
        An integer t runs t iterations with the paper's noise ``Lap((d r + 1) t / epsilon)`` on every
        count and coordinate sum.  ``"auto"``: the journal version (Su et al. 2017), t in [2, 7] and
        the count/sum split from N, d, k and epsilon (:func:`auto_schedule`).
    n_samples : float or None, default None
        A public dataset size used by ``n_iter="auto"``.  ``None`` spends ``n_share`` of epsilon on
        a noisy count first (ledger entry "dataset size").
    n_share : float, default 0.02
        The budget share for that noisy count.
    random_state : None, int or numpy.random.Generator
    assignment : {"auto", "cells", "rows"}, default "auto"
        How each Lloyd step assigns the data to centres on a source (:mod:`dpcore.sources.cells`):
        ``"cells"`` reads the data once per fit, ``"rows"`` once per iteration; ``"auto"``: cells up
        to 2 dimensions.  Chosen from d alone (public); the guarantee and the ledger are the same.

    Attributes
    ----------
    cluster_centers_ : ndarray (k, d), data units
    init_centers_ : ndarray (k, d), data units
    n_iter_ : int
    count_share_ : float or None
    budget_ : BudgetLedger
    regime_ : dpcore.algorithms.regime.Regime or None
        The iteration rule's verdict (``n_iter="auto"`` only).

    Raises
    ------
    ValueError, TypeError
        Bad data or parameters (see :mod:`dpcore.utils.validation`).

    Notes
    -----
    **Privacy.** epsilon-DP by sequential composition: the size (``n_share``), the start (what
    :meth:`_start` spends) and t iterations, each ``(d r + 1)``-sensitive in L1 over its joint count
    and sum query (or split into counts, sensitivity 1, and sums, ``d r``).
    """

    accepts_source = True
    supports_weighting = True
    _parameter_constraints = {
        **DPClusterer._parameter_constraints,
        "n_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(self, n_clusters=8, *, epsilon=1.0, bounds=None, n_iter="auto", n_samples=None, n_share=0.02,
                 random_state=None, max_contributions=None, contribution_bounding="sample", assignment="auto"):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_iter = n_iter
        self.n_samples = n_samples
        self.n_share = n_share
        self.random_state = random_state
        self.max_contributions = max_contributions
        self.contribution_bounding = contribution_bounding
        self.assignment = assignment

    @classmethod
    def regime(cls, *, n: float, d: int, k: int, epsilon: float, delta: float = 0.0, rho: float = RHO,
               **params) -> Regime:
        """Su et al. (2017)'s iteration rule (:func:`lloyd_regime`): a warning when ε buys under one iteration.

        Parameters
        ----------
        n, d, k, epsilon, delta
            Public inputs (``n`` public or noisy); see :meth:`DPClusterer.regime`.
        rho : float
            The normalised centroid coordinate of the iteration rule.
        **params
            Ignored.

        Returns
        -------
        Regime
        """
        return lloyd_regime(cls.key, n=n, d=d, k=k, epsilon=epsilon, rho=rho)

    @fit_doc('Release k private centres.')
    def fit(self, X, y=None, privacy_id=None):
        X, noise, n = self._begin_fit(X, privacy_id=privacy_id, assignment=self.assignment)
        k, d = int(self.n_clusters), X.n_features
        eps = float(self.epsilon)
        self.regime_ = None
        n_est = None
        if isinstance(self.n_iter, str):   # "auto": the iteration rule needs a size
            n_est, eps = self._public_or_noisy_size(n, noise, eps)
            check_fit(self, n=n_est, d=d, epsilon=eps)
        init, eps = self._start(X, noise, n_est, eps)
        t, count_share = iteration_plan(self.n_iter, n_est, d, k, eps)
        centers = noisy_lloyd(X, init, noise, n_iter=t, epsilon=eps, count_share=count_share, domain=self.bounds_)
        self.init_centers_ = self.bounds_.denormalize(init)
        self.cluster_centers_ = self.bounds_.denormalize(centers)
        self.n_iter_ = t
        self.count_share_ = count_share
        return self

    def _start(self, X, noise: NoiseSource, n_est: float | None, epsilon: float) -> tuple[np.ndarray, float]:
        """The initial centres, normalised (k, d), and the budget left for the iterations.

        Override it: a data-independent start draws from ``noise.rng`` and returns ``epsilon``
        unchanged; a start that reads the data spends through ``noise`` and returns what is left (and
        declares that share in :meth:`_start_plan`).  ``n_est`` is the public or noisy size (None
        with a fixed ``n_iter``).

        Returns
        -------
        (centres (k, d) normalised, epsilon left) : ndarray, float
        """
        raise NotImplementedError(f"{type(self).__name__} declares no start: define _start")

    def _start_plan(self, n_features: int, n: float | None, epsilon: float) -> dict[str, tuple[float, float]]:
        """What :meth:`_start` spends, ``{step: (epsilon, delta)}`` out of ``epsilon`` (none by default)."""
        return {}

    def _budget_plan(self, n_features: int, n: float | None = None) -> dict[str, tuple[float, float]]:
        """The noisy size (``n_share``; none with a public ``n_samples`` or a fixed ``n_iter``), the start's
        steps (:meth:`_start_plan`) and the iterations (the rest, in equal parts).
        See :meth:`DPClusterer.budget_plan`."""
        if isinstance(self.n_iter, str):
            plan, left = self._size_step()
        else:
            plan, left = {}, float(self.epsilon)
        start = self._start_plan(n_features, n, left)
        plan.update(start)
        left -= sum(e for e, _ in start.values())
        plan["iteration"] = (left, 0.0)
        return plan
