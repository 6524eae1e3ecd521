"""Every privacy map and measure conversion in one place, next to the mechanisms that use them.

* sensitivity and epsilon checks shared by the mechanisms;
* the power-of-two lattice that real-valued queries are rounded onto (:func:`_lattice`);
* zCDP <-> (epsilon, delta): :func:`zcdp_rho`, :func:`zcdp_delta` (Canonne, Kamath & Steinke
  2020, Cor. 13);
* Gaussian calibration: :func:`discrete_gaussian_sigma` (proved for the discrete Gaussian through
  its zCDP bound) and :func:`analytic_gaussian_sigma` (Balle & Wang 2018, Thm. 8, for reference).

OpenDP keeps a privacy map beside each measurement; so do we: a mechanism in
:mod:`dpcore.privacy.mechanisms` calls the map here that turns its (epsilon, delta) and
sensitivity into the noise scale it samples.

References
----------
Bun & Steinke (2016), "Concentrated differential privacy: simplifications, extensions, and lower bounds", TCC.
Canonne, Kamath, Steinke (2020), "The discrete Gaussian for differential privacy", NeurIPS.
Balle & Wang (2018), "Improving the Gaussian mechanism for differential privacy", ICML.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .samplers import LATTICE_BITS


def _check_sensitivity(sensitivity) -> float:
    s = float(sensitivity)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"sensitivity must be a positive finite number, got {sensitivity}")
    return s


def _check_epsilon(epsilon) -> float:
    e = float(epsilon)
    if not (math.isfinite(e) and e > 0):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    return e


# -- calibration ------------------------------------------------------------------------------
def _pow2_floor(x: float) -> float:
    """Largest power of two <= x (x > 0)."""
    return math.ldexp(1.0, math.frexp(x)[1] - 1)


def _lattice(fine_as: float, *, finest: float = 0.0) -> float:
    """Power-of-two lattice step ``gamma = pow2floor(fine_as) / 2^LATTICE_BITS``, at least ``finest``.

    A function of public inputs only (the noise scale and the sensitivity per coordinate a caller
    passes as ``fine_as``): the step, and with it the noise scale and the ledger, never depends on
    the values being released (issue 29: it used to coarsen when ``max|values|`` was large, so one
    record could change the ledger).  Values too large for int64 on this lattice are carried as
    Python integers instead.
    """
    gamma = _pow2_floor(fine_as) * 2.0 ** -LATTICE_BITS
    return max(gamma, finest)


#: The grid of Renyi orders ``a`` of :func:`_zcdp_log_delta` and its two terms that do not depend on
#: ``(rho, epsilon)``, computed once: a Gaussian's calibration evaluates the bound a dozen times (a
#: root search), and building the grid was most of a small zCDP fit.  The same arrays as before, the
#: same operations in the same order: the same bits.
_ZCDP_A = 1.0 + np.geomspace(1e-6, 1e9, 6001)
_ZCDP_A1 = _ZCDP_A - 1
_ZCDP_LOG_A1 = np.log(_ZCDP_A1)
_ZCDP_TAIL = _ZCDP_A * np.log1p(-1.0 / _ZCDP_A)


def _zcdp_log_delta(rho: float, epsilon: float) -> float:
    with np.errstate(over="ignore", under="ignore"):
        log_d = _ZCDP_A1 * (_ZCDP_A * rho - epsilon) - _ZCDP_LOG_A1 + _ZCDP_TAIL
    return min(float(np.min(log_d)), 0.0)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """delta of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Canonne, Kamath & Steinke (2020), Cor. 13:
    ``delta = inf_{a > 1} exp((a - 1)(a rho - epsilon)) / (a - 1) * (1 - 1/a)^a``.
    The infimum is taken over a fine geometric grid of ``a``; any ``a``
    gives a valid bound, so the grid only makes it (very slightly) conservative.
    """
    return math.exp(_zcdp_log_delta(float(rho), float(epsilon)))


def discrete_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma for which the discrete Gaussian is (epsilon, delta)-DP (L2 ``sensitivity``).

    The discrete Gaussian ``N_Z(0, sigma^2)^m`` added to an integer-valued
    query with L2 sensitivity ``Delta`` satisfies ``Delta^2 / (2 sigma^2)``-zCDP
    (Canonne, Kamath & Steinke 2020, Thm. 14: the Renyi divergence between
    discrete Gaussians with integer means ``mu, nu`` is at most
    ``alpha |mu - nu|^2 / (2 sigma^2)``, as for the continuous one), which
    implies (epsilon, :func:`zcdp_delta`)-DP.  We calibrate through that bound
    rather than Balle & Wang's analytic formula (which is exact only for the
    continuous Gaussian): it is proved for the discrete distribution we
    sample, at the price of ~5-15 % more noise.  sigma scales linearly with
    ``Delta``.
    """
    sensitivity = _check_sensitivity(sensitivity)
    eps = _check_epsilon(epsilon)
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")

    def gap(log_s):   # in units of sensitivity 1
        return _zcdp_log_delta(1.0 / (2.0 * math.exp(2 * log_s)), eps) - math.log(delta)

    lo, hi = -20.0, 1.0
    while gap(hi) > 0:
        hi += 2.0
    return sensitivity * math.exp(optimize.brentq(gap, lo, hi, xtol=1e-10)) * (1 + 1e-9)


def analytic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma making the *continuous* Gaussian mechanism (epsilon, delta)-DP.

    Balle & Wang (2018), Thm. 8: the mechanism with L2 sensitivity ``Delta``
    is (epsilon, delta)-DP iff
    ``Phi(Delta/(2s) - eps*s/Delta) - e^eps * Phi(-Delta/(2s) - eps*s/Delta) <= delta``.
    The left side decreases in ``s``; solved by Brent's method.  Kept as the
    reference the discrete calibration (:func:`discrete_gaussian_sigma`) is
    compared with; :meth:`NoiseSource.gaussian` does not use it.

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


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho such that rho-zCDP implies (epsilon, delta)-DP.

    Inverse of :func:`dpcore.privacy.calibration.zcdp_delta` (Canonne, Kamath & Steinke
    2020, Cor. 13, the tightest standard conversion), found by bisection in
    ``log rho``.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)

    Returns
    -------
    float > 0
    """
    # _zcdp_log_delta works in log space: delta underflows at large epsilon.
    epsilon, delta = float(epsilon), float(delta)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    if not (0.0 < delta < 1.0):
        raise ValueError(f"zero-concentrated DP needs 0 < delta < 1 to convert to (epsilon, delta), got {delta}")
    target = math.log(delta)

    def gap(t):                                        # increasing in t = log rho
        return _zcdp_log_delta(math.exp(t), epsilon) - target

    hi = math.log(max(epsilon, 1.0))
    while gap(hi) < 0:
        hi += 2.0
    lo = hi - 2.0
    while gap(lo) >= 0:
        lo -= 2.0
    rho = math.exp(optimize.brentq(gap, lo, hi, xtol=1e-12)) * (1 - 1e-9)   # the safe side of the root
    while gap(math.log(rho)) > 0:
        rho *= 1 - 1e-6
    return rho
