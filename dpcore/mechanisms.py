"""The one noise module: every privacy-consuming random draw in dpcore is here.

A :class:`NoiseSource` couples a :class:`numpy.random.Generator` with a
:class:`~dpcore.accountant.BudgetLedger`.  Each mechanism first *spends* its
(epsilon, delta) on the ledger (which refuses overspending before anything is
drawn), then draws.  Grep for ``NoiseSource`` to find every place an estimator
spends privacy; data-independent randomness (random initial centres, random
shifts, shuffles) uses ``NoiseSource.rng`` directly and costs nothing.

All mechanisms are vectorised: one call perturbs a whole array.

References
----------
Dwork, McSherry, Nissim, Smith (2006), "Calibrating noise to sensitivity" (Laplace).
McSherry & Talwar (2007), "Mechanism design via differential privacy" (exponential).
McKenna & Sheldon (2020), "Permute-and-Flip: a new mechanism for differentially private selection".
Balle & Wang (2018), "Improving the Gaussian mechanism for differential privacy", Thm. 8 (analytic Gaussian).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .accountant import BudgetLedger


def _check_sensitivity(sensitivity) -> float:
    s = float(sensitivity)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"sensitivity must be a positive finite number, got {sensitivity}")
    return s


class NoiseSource:
    """Random generator + budget ledger: the only way dpcore draws privacy noise.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness (seeded by the estimator's ``random_state``).
    ledger : BudgetLedger
        Where each mechanism records its cost; it raises
        :class:`~dpcore.exceptions.BudgetExceededError` before a draw that
        would overspend.
    prefix : str, default ""
        Prepended to every entry name (used by :meth:`sub`).
    """

    def __init__(self, rng: np.random.Generator, ledger: BudgetLedger, prefix: str = ""):
        if not isinstance(rng, np.random.Generator):
            raise TypeError("NoiseSource needs a numpy.random.Generator")
        self.rng = rng
        self.ledger = ledger
        self.prefix = prefix

    def _spend(self, name, epsilon, delta, mechanism, sensitivity):
        self.ledger.spend(self.prefix + name, epsilon, delta, mechanism=mechanism, sensitivity=sensitivity)

    # -- additive noise ---------------------------------------------------
    def laplace(self, values, *, sensitivity: float, epsilon: float, name: str) -> np.ndarray:
        """Laplace mechanism: ``values + Lap(sensitivity / epsilon)`` element-wise.

        Parameters
        ----------
        values : array-like, any shape
            The true answers of one query whose L1 sensitivity (over the whole
            array, under add/remove-one-record neighbours) is ``sensitivity``.
        sensitivity : float > 0
        epsilon : float > 0
        name : str
            Ledger entry name.

        Returns
        -------
        ndarray of float, same shape as ``values``.

        Privacy
        -------
        epsilon-DP (Dwork et al. 2006).
        """
        sensitivity = _check_sensitivity(sensitivity)
        self._spend(name, epsilon, 0.0, "laplace", sensitivity)
        values = np.asarray(values, dtype=float)
        return values + self.rng.laplace(0.0, sensitivity / float(epsilon), size=values.shape)

    def laplace_above(self, values, *, threshold: float, sensitivity: float, epsilon: float, name: str,
                      n_zeros=None):
        """Which of ``values + Lap(sensitivity / epsilon)`` exceed ``threshold`` (only the decisions are released).

        With ``n_zeros``, also how many of ``n_zeros[g]`` further values equal
        to 0 in each group ``g`` would exceed it, drawn exactly as
        ``Binomial(n_zeros[g], P[Lap > threshold])`` without materialising them:
        the sparse form of thresholding a huge, mostly empty histogram (e.g. the
        2^p children of a cube).  Which zero entries are the hits is uniform
        among them (they are exchangeable), so a caller may pick them uniformly.

        Parameters
        ----------
        values : array-like, any shape
        threshold : float
        sensitivity : float > 0, L1 sensitivity of the whole (implicit) vector
        epsilon : float > 0
        name : str
        n_zeros : array-like of int, optional

        Returns
        -------
        above : ndarray of bool, shape of ``values``
        zero_hits : ndarray of int (shape of ``n_zeros``) or None

        Privacy
        -------
        epsilon-DP: post-processing of the Laplace mechanism on the full vector
        (explicit values and implicit zeros).
        """
        sensitivity = _check_sensitivity(sensitivity)
        self._spend(name, epsilon, 0.0, "laplace (thresholded)", sensitivity)
        b = sensitivity / float(epsilon)
        values = np.asarray(values, dtype=float)
        above = values + self.rng.laplace(0.0, b, size=values.shape) > threshold
        if n_zeros is None:
            return above, None
        t = float(threshold)
        p_zero = 0.5 * math.exp(-t / b) if t >= 0 else 1.0 - 0.5 * math.exp(t / b)
        return above, self.rng.binomial(np.asarray(n_zeros, dtype=np.int64), p_zero)

    def gaussian(self, values, *, sensitivity: float, epsilon: float, delta: float, name: str) -> np.ndarray:
        """Analytic Gaussian mechanism: ``values + N(0, sigma^2)`` element-wise.

        ``sigma`` is the smallest noise level for which the mechanism is
        (epsilon, delta)-DP given the L2 ``sensitivity`` (Balle & Wang 2018,
        Thm. 8); valid for every epsilon > 0, unlike the classic
        ``sqrt(2 ln(1.25/delta))`` bound which needs epsilon < 1.

        Returns
        -------
        ndarray of float, same shape as ``values``.
        """
        sensitivity = _check_sensitivity(sensitivity)
        if not (0 < float(delta) < 1):
            raise ValueError(f"the Gaussian mechanism needs 0 < delta < 1, got {delta}")
        sigma = analytic_gaussian_sigma(sensitivity, epsilon, delta)
        self._spend(name, epsilon, delta, "gaussian", sensitivity)
        values = np.asarray(values, dtype=float)
        return values + self.rng.normal(0.0, sigma, size=values.shape)

    # -- selection --------------------------------------------------------
    def exponential(self, scores, *, sensitivity: float, epsilon: float, name: str,
                    monotonic: bool = False, log_base_measure=None) -> int:
        """Exponential mechanism: pick index ``i`` with probability proportional to
        ``mu_i * exp(epsilon * scores[i] / (2 * sensitivity))``.

        Parameters
        ----------
        scores : array-like (m,)
            Quality of each candidate (higher is better); ``-inf`` excludes one.
        sensitivity : float > 0
            Largest change of any score between neighbouring datasets.
        epsilon : float > 0
        monotonic : bool, default False
            If every score moves in the same direction when a record is
            added, the factor 2 can be dropped (McSherry & Talwar 2007).
        log_base_measure : array-like (m,), optional
            ``log mu_i``, a data-independent base measure (e.g. the length of
            an interval when candidates stand for intervals).

        Returns
        -------
        int, the selected index.

        Privacy
        -------
        epsilon-DP.  Sampled with the Gumbel-max trick (exact).
        """
        sensitivity = _check_sensitivity(sensitivity)
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0 or not np.any(np.isfinite(scores)):
            raise ValueError("the exponential mechanism needs at least one candidate with a finite score")
        self._spend(name, epsilon, 0.0, "exponential", sensitivity)
        factor = 1.0 if monotonic else 2.0
        logits = float(epsilon) * scores / (factor * sensitivity)
        if log_base_measure is not None:
            logits = logits + np.asarray(log_base_measure, dtype=float).ravel()
        logits = np.where(np.isfinite(scores), logits, -np.inf)
        return int(np.argmax(logits + self.rng.gumbel(size=logits.shape)))

    def permute_and_flip(self, scores, *, sensitivity: float, epsilon: float, name: str,
                         monotonic: bool = False) -> int:
        """Permute-and-flip selection (McKenna & Sheldon 2020, Alg. 1).

        Visits the candidates in a random order and accepts candidate ``r``
        with probability ``exp(epsilon * (q_r - q_max) / (2 * sensitivity))``;
        never worse in expected score than the exponential mechanism.

        Parameters and privacy as :meth:`exponential` (epsilon-DP).

        Returns
        -------
        int, the selected index.
        """
        sensitivity = _check_sensitivity(sensitivity)
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0 or not np.any(np.isfinite(scores)):
            raise ValueError("permute-and-flip needs at least one candidate with a finite score")
        self._spend(name, epsilon, 0.0, "permute_and_flip", sensitivity)
        factor = 1.0 if monotonic else 2.0
        q = np.where(np.isfinite(scores), scores, -np.inf)
        p_accept = np.exp(float(epsilon) * (q - q.max()) / (factor * sensitivity))
        # The best candidate accepts with probability 1, so one pass over a
        # random permutation always stops; draw it all at once.
        order = self.rng.permutation(q.size)
        accept = self.rng.random(q.size) < p_accept[order]
        return int(order[np.argmax(accept)])

    def quantile(self, values, q: float, *, lower: float, upper: float, epsilon: float, name: str,
                 sensitivity: float = 1.0) -> float:
        """Private ``q``-quantile of ``values`` in the public range ``[lower, upper]`` (Smith 2011).

        The values are clipped to ``[lower, upper]`` and sorted, ``z_1 <= ... <= z_m``,
        splitting the range into ``m + 1`` intervals; interval ``j`` (``j`` values
        below it) scores ``-|j - q m|`` and is chosen by the exponential mechanism
        with base measure its length; the output is uniform in the chosen interval.
        The output is always inside ``[lower, upper]``.

        Parameters
        ----------
        values : array-like (m,)
        q : float in [0, 1]
        lower, upper : float, public, ``lower < upper``
        epsilon : float > 0
        name : str
            Ledger entry name.
        sensitivity : float, default 1
            Largest change of the rank of any threshold between neighbouring
            datasets: 1 when each record contributes one value; ``k`` when one
            record can move ``k`` of the values (e.g. one block's ``k`` centres
            in sample-and-aggregate).

        Returns
        -------
        float

        Privacy
        -------
        epsilon-DP: the score of every interval changes by at most ``sensitivity``
        (exponential mechanism, McSherry & Talwar 2007).

        References
        ----------
        Smith (2011), "Privacy-preserving statistical estimation with optimal
        convergence rates", STOC (the exponential-mechanism quantile).
        """
        lower, upper, q = float(lower), float(upper), float(q)
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            raise ValueError(f"quantile needs finite public bounds lower < upper, got ({lower}, {upper})")
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1], got {q}")
        z = np.sort(np.clip(np.asarray(values, dtype=float).ravel(), lower, upper))
        m = z.size
        edges = np.concatenate([[lower], z, [upper]])
        lengths = np.diff(edges)
        scores = -np.abs(np.arange(m + 1) - q * m)
        with np.errstate(divide="ignore"):
            log_len = np.log(lengths)
        j = self.exponential(scores, sensitivity=sensitivity, epsilon=epsilon, name=name,
                             log_base_measure=log_len)
        return float(self.rng.uniform(edges[j], edges[j + 1]))

    # -- composition ------------------------------------------------------
    def sub(self, name: str, epsilon: float, delta: float = 0.0) -> "NoiseSource":
        """Reserve ``(epsilon, delta)`` as one entry and return a source capped at it.

        For composite steps (e.g. one SMALL-BALL call) whose inner draws are
        themselves mechanisms: the parent ledger records a single entry
        charged in full up front; the child's own ledger (``.ledger``)
        details the inner steps and refuses to exceed the reservation.
        """
        self._spend(name, epsilon, delta, "composite", None)
        child = BudgetLedger(epsilon, delta)
        return NoiseSource(self.rng, child, prefix=f"{self.prefix}{name} / ")

    def parallel(self, name: str, epsilon: float, n: int) -> list["NoiseSource"]:
        """Charge ``epsilon`` once and return ``n`` sources each capped at ``epsilon``.

        For ``n`` mechanisms that read disjoint parts of the data (e.g. one
        draw per cluster, the clusters fixed by already-released centres):
        by parallel composition (McSherry 2009, Thm. 4) their joint cost is
        ``epsilon``, not ``n * epsilon``.  The caller is responsible for the
        disjointness; each child ledger details its own draws.
        """
        self._spend(name, epsilon, 0.0, "composite (parallel)", None)
        return [NoiseSource(self.rng, BudgetLedger(epsilon), prefix=f"{self.prefix}{name} / part {i + 1} / ")
                for i in range(int(n))]


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP.

    Balle & Wang (2018), Thm. 8: the mechanism with L2 sensitivity ``Delta``
    is (epsilon, delta)-DP iff
    ``Phi(Delta/(2s) - eps*s/Delta) - e^eps * Phi(-Delta/(2s) - eps*s/Delta) <= delta``.
    The left side decreases in ``s``; solved by Brent's method.

    Returns
    -------
    float, sigma in the units of the query.
    """
    eps = float(epsilon)
    delta = float(delta)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    cdf = special.ndtr

    def gap(s):
        a = sensitivity / (2 * s)
        b = eps * s / sensitivity
        # e^eps * Phi(-a-b) computed in log space to avoid overflow at large eps.
        second = math.exp(eps + special.log_ndtr(-a - b)) if (-a - b) > -40 else 0.0
        return cdf(a - b) - second - delta

    lo, hi = 1e-12 * sensitivity, sensitivity
    while gap(hi) > 0:
        hi *= 2
    if gap(lo) <= 0:
        return lo
    return float(optimize.brentq(gap, lo, hi, xtol=1e-12 * sensitivity, rtol=1e-12))
