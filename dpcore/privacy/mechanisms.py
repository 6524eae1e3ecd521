"""The one noise module: every privacy-consuming random draw in dpcore is here.

A :class:`NoiseSource` couples a :class:`numpy.random.Generator` with a
:class:`~dpcore.privacy.accountant.BudgetLedger`.  Each mechanism first *spends* its
(epsilon, delta) on the ledger (which refuses overspending before anything is
drawn), then draws.  Grep for ``NoiseSource`` to find every place an estimator
spends privacy; data-independent randomness (random initial centres, random
shifts, shuffles) uses ``NoiseSource.rng`` directly and costs nothing.

Why the noise is integer noise
------------------------------
Floating-point Laplace or Gaussian noise leaks the true value through the low
bits of the output (Mironov 2012): the set of doubles ``x + Lap(b)`` can take
depends on ``x``.  So no released number here is ``true value + float noise``:

* an **integer-valued query** (counts, cell counts, cluster sizes) gets integer
  noise, the discrete Laplace (two-sided geometric) for epsilon-DP and the
  discrete Gaussian (Canonne, Kamath & Steinke 2020) for (epsilon, delta)-DP,
  and is released as ``int64``;
* a **real-valued query** (clipped sums, means) is first rounded onto a public
  lattice ``gamma * Z`` (``gamma`` a power of two, fine relative to the noise)
  and then gets integer noise on that lattice, as OpenDP does.  Every released
  value is an exact multiple of ``gamma`` (the ledger entry's
  ``granularity``); its bits carry nothing but the noisy lattice index.
  Rounding moves each coordinate by at most ``gamma / 2``, so it adds at most
  ``gamma`` per coordinate that a record can change: the noise is calibrated to
  ``sensitivity + m * gamma`` (L1) or ``sensitivity + sqrt(m) * gamma`` (L2),
  ``m`` the number of coordinates, and the ledger records that sensitivity.
* selections (exponential mechanism, permute-and-flip, the quantile) release an
  index; the quantile's output is a point of a public lattice.

The samplers are vectorised numpy: about 2-5 x 10^7 values per second on one
core (``python -m benchmarks.noise_speed``).  They use the exact algorithms of
Canonne, Kamath & Steinke (2020, Alg. 2-3: two-sided geometric by sign and
rejection, discrete Gaussian by rejection from it) with the geometric drawn by
inversion of a full-precision uniform; :func:`discrete_laplace` states the
resulting error bound.

Unpredictable noise comes from the generator: ``random_state=None`` gives a
ChaCha20 stream keyed from OS entropy (:func:`dpcore.privacy.rng.check_random_state`).

References
----------
Dwork, McSherry, Nissim, Smith (2006), "Calibrating noise to sensitivity" (Laplace).
Mironov (2012), "On significance of the least significant bits for differential privacy", CCS.
Ghosh, Roughgarden, Sundararajan (2012), "Universally utility-maximizing privacy mechanisms" (geometric).
Canonne, Kamath, Steinke (2020), "The discrete Gaussian for differential privacy", NeurIPS.
McSherry & Talwar (2007), "Mechanism design via differential privacy" (exponential).
McKenna & Sheldon (2020), "Permute-and-Flip: a new mechanism for differentially private selection".
Balle & Wang (2018), "Improving the Gaussian mechanism for differential privacy", Thm. 8 (analytic Gaussian).
"""
from __future__ import annotations

import math

import numpy as np

from ..utils.fixedpoint import FixedPoint
from .accountant import BudgetLedger
from .calibration import _check_epsilon, _check_sensitivity, _lattice, discrete_gaussian_sigma
from .lattice import _check_scale, _from_lattice, _integer_indices, _integer_query, _on_lattice, _sampled, _size
from .privtree import PrivTreeMechanism
from .samplers import _gumbel, discrete_gaussian, discrete_laplace, uniform


class NoiseSource(PrivTreeMechanism):
    """Random generator + budget ledger: the only way dpcore draws privacy noise.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness: for a release, ChaCha20 keyed from OS
        entropy (``random_state=None``); a seeded generator only in
        simulations (:func:`dpcore.privacy.rng.check_random_state`).  Never
        stored beyond the fit that uses it.
    ledger : BudgetLedger
        Where each mechanism records its cost; it raises
        :class:`~dpcore.exceptions.BudgetExceededError` before a draw that
        would overspend.
    prefix : str, default ""
        Prepended to every entry name (used by :meth:`sub`).
    contribution_factor : int, default 1
        The most rows one privacy unit contributes (``max_contributions``, issue 23): every mechanism
        multiplies the sensitivity its caller states (for one row) by it.

    Examples
    --------
    A fresh, unpredictable generator (as ``random_state=None`` gives) and a
    ledger capped at epsilon = 1; the noisy values themselves are not shown:

    >>> import numpy as np
    >>> from dpcore.privacy.accountant import BudgetLedger
    >>> from dpcore.privacy.mechanisms import NoiseSource
    >>> from dpcore.privacy.rng import check_random_state
    >>> noise = NoiseSource(check_random_state(None), BudgetLedger(1.0))
    >>> noisy = noise.laplace(np.array([10.0, 20.0]), sensitivity=1.0, epsilon=0.5, name="counts")
    >>> noisy.shape
    (2,)
    >>> noise.ledger.total()
    (0.5, 0.0)
    """

    def __init__(self, rng: np.random.Generator, ledger: BudgetLedger, prefix: str = "", *,
                 contribution_factor: int = 1):
        if not isinstance(rng, np.random.Generator):
            raise TypeError("NoiseSource needs a numpy.random.Generator")
        if isinstance(contribution_factor, bool) or not isinstance(contribution_factor, (int, np.integer)) \
                or contribution_factor < 1:
            raise ValueError(f"contribution_factor must be a whole number >= 1, got {contribution_factor!r}")
        self.rng = rng
        self.ledger = ledger
        self.prefix = prefix
        #: Every sensitivity a caller states (one record's effect) is multiplied by this: the most rows one
        #: privacy unit may contribute (``max_contributions``, issue 23).  By the triangle inequality a unit's
        #: <= L rows move any query by at most L times one row's bound, so each mechanism below is
        #: (epsilon, delta)-DP for neighbouring datasets that differ by a whole unit.
        self.contribution_factor = int(contribution_factor)

    def _unit(self, sensitivity) -> float:
        """One record's sensitivity, checked, times the rows a privacy unit may contribute."""
        return _check_sensitivity(sensitivity) * self.contribution_factor

    def __getstate__(self):
        raise TypeError("a NoiseSource holds the generator of private noise and must not be pickled or stored")

    def _noised(self, k, bound: float, norm: str):
        """The integer query about to get noise: lattice indices ``k`` and its sensitivity ``bound`` in those units.

        One place every additive mechanism passes through (a no-op): the privacy audit hooks it to
        check that ``k`` on neighbouring datasets differs by at most ``bound`` in the ``norm``
        ("l1" or "l2"), exactly (tests/audit/test_exact_sums.py).
        """
        return k

    def _spend(self, name, epsilon, delta, mechanism, sensitivity, granularity=None, sampler=None):
        self.ledger.spend(self.prefix + name, epsilon, delta, mechanism=mechanism, sensitivity=sensitivity,
                          granularity=granularity, sampler=sampler)

    # -- additive noise ---------------------------------------------------
    def _laplace_plan(self, values, sensitivity, epsilon, integer, m=None):
        """(lattice indices of the query, gamma (None: integer query), sensitivity used, scale in units).

        The lattice step, the sensitivity used and the scale come from public inputs (sensitivity,
        epsilon, the query's size) and are checked before any value is read.  A
        :class:`~dpcore.utils.fixedpoint.FixedPoint` query (an exact sum) is shifted onto the
        lattice exactly; at its own resolution no rounding is added to the sensitivity.
        """
        if not isinstance(values, FixedPoint):
            arr = np.asarray(values)
            if _integer_query(arr, integer):
                _check_scale(sensitivity / epsilon, "discrete Laplace")
                return _integer_indices(arr), None, sensitivity, sensitivity / epsilon
        m = max(int(_size(values) if m is None else m), 1)
        finest = 2.0 ** -values.bits if isinstance(values, FixedPoint) else 0.0
        gamma = _lattice(min(sensitivity / epsilon, sensitivity / m), finest=finest)
        used = sensitivity if gamma == finest else sensitivity + m * gamma
        t = _check_scale(used / (epsilon * gamma), "discrete Laplace")
        return _on_lattice(values, gamma), gamma, used, t

    def laplace(self, values, *, sensitivity: float, epsilon: float, name: str, integer: bool | None = None):
        """Laplace mechanism with integer noise: ``values + DLap(sensitivity / epsilon)`` element-wise.

        Parameters
        ----------
        values : array-like, any shape (a scalar gives a 0-d array)
            The true answers of one query whose L1 sensitivity (over the whole
            array, under add/remove-one-record neighbours) is ``sensitivity``.
        sensitivity : float > 0
        epsilon : float > 0
        name : str
            Ledger entry name.
        integer : bool or None, default None
            Whether the query is integer-valued (counts).  None: integer dtype
            means yes.  ``True`` with float values checks they are whole numbers.

        Returns
        -------
        ndarray, same shape as ``values``: int64 for an integer query (true
        count + discrete Laplace noise); float64 otherwise, every value an
        exact multiple of the lattice step ``gamma`` recorded in the ledger
        entry's ``granularity``.

        Raises
        ------
        ValueError
            Non-positive sensitivity or epsilon, non-finite values,
            ``integer=True`` with fractional values.
        BudgetExceededError
            Before drawing, if epsilon exceeds what is left.

        Notes
        -----
        **Privacy.** epsilon-DP.  Integer query: the discrete Laplace with scale
        ``t = Delta / epsilon`` (Ghosh, Roughgarden & Sundararajan 2012;
        Canonne, Kamath & Steinke 2020, §2.2).  Real query: the values are
        rounded to ``gamma * Z`` with ``gamma`` the largest power of two below
        ``min(Delta / epsilon, Delta / m) / 2^10`` (``m = values.size``);
        rounding changes each coordinate by at most ``gamma / 2``, so the L1
        sensitivity of the rounded query is at most ``Delta' = Delta + m gamma``
        (at most 0.1 % more); in lattice units it is an integer query with
        sensitivity ``Delta' / gamma``, released with scale
        ``Delta' / (epsilon gamma)``: epsilon-DP, and post-processing (times
        ``gamma``, exact in binary floating point) keeps it (the lattice
        approach of OpenDP; cf. Mironov 2012's snapping mechanism).  The ledger
        records ``epsilon``, ``Delta'`` and ``gamma``.  Sampler error: see
        :func:`discrete_laplace`.
        """
        sensitivity = self._unit(sensitivity)
        epsilon = _check_epsilon(epsilon)
        k, gamma, used, t = self._laplace_plan(values, sensitivity, epsilon, integer)
        if gamma is None:
            self._spend(name, epsilon, 0.0, "discrete laplace", used, 1.0, _sampled("laplace", t, 1.0))
            k = self._noised(k, used, "l1")
            return k + discrete_laplace(self.rng, t, k.shape)
        self._spend(name, epsilon, 0.0, "discrete laplace on a lattice", used, gamma, _sampled("laplace", t, gamma))
        k = self._noised(k, used / gamma, "l1")
        return _from_lattice(k + discrete_laplace(self.rng, t, k.shape), gamma)

    def laplace_above(self, values, *, threshold: float, sensitivity: float, epsilon: float, name: str,
                      n_zeros=None, integer: bool | None = None):
        """Which of ``values + DLap(sensitivity / epsilon)`` exceed ``threshold`` (only the decisions are released).

        The noise is that of :meth:`laplace` (integer, or on the lattice for a
        real query).  With ``n_zeros``, also how many of ``n_zeros[g]``
        further values equal to 0 in each group ``g`` would exceed it, drawn as
        ``Binomial(n_zeros[g], P[X > threshold])`` with the exact tail of the
        discrete Laplace, ``P[X >= k] = q^k / (1 + q)`` for ``k >= 1``,
        ``q = exp(-1/t)``, without materialising them: the sparse form of
        thresholding a huge, mostly empty histogram (e.g. the 2^p children of
        a cube).  Which zero entries are the hits is uniform among them (they
        are exchangeable), so a caller may pick them uniformly.

        Parameters
        ----------
        values : array-like, any shape
        threshold : float
        sensitivity : float > 0, L1 sensitivity of the whole (implicit) vector
        epsilon : float > 0
        name : str
        n_zeros : array-like of int, optional
        integer : bool or None
            As in :meth:`laplace`.

        Returns
        -------
        above : ndarray of bool, shape of ``values``
        zero_hits : ndarray of int (shape of ``n_zeros``) or None

        Notes
        -----
        **Privacy.** epsilon-DP: post-processing of :meth:`laplace` on the full vector
        (explicit values and implicit zeros; zeros lie on every lattice).  The
        binomial counts use numpy's binomial sampler (floating point, but it
        releases only a count of decisions).
        """
        sensitivity = self._unit(sensitivity)
        epsilon = _check_epsilon(epsilon)
        arr = values if isinstance(values, FixedPoint) else np.asarray(values)
        n_total = _size(arr) + (int(np.sum(n_zeros)) if n_zeros is not None else 0)
        k, gamma, used, t = self._laplace_plan(arr, sensitivity, epsilon, integer, m=n_total)
        gamma = 1.0 if gamma is None else gamma
        self._spend(name, epsilon, 0.0, "discrete laplace (thresholded)", used, gamma, _sampled("laplace", t, gamma))
        k = self._noised(k, used / gamma, "l1")
        x = float(threshold) / gamma            # threshold in lattice units
        above = (k + discrete_laplace(self.rng, t, k.shape)) > x
        if n_zeros is None:
            return above, None
        q = math.exp(-1.0 / t)
        kmin = math.floor(x) + 1                 # X > x  <=>  X >= kmin
        p_zero = q ** kmin / (1 + q) if kmin >= 1 else 1.0 - q ** (1 - kmin) / (1 + q)
        return above, self.rng.binomial(np.asarray(n_zeros, dtype=np.int64), p_zero)

    def gaussian(self, values, *, sensitivity: float, epsilon: float, delta: float, name: str,
                 integer: bool | None = None):
        """Gaussian mechanism with integer noise: ``values + N_Z(0, sigma^2)`` element-wise.

        Parameters
        ----------
        values : array-like, any shape
            True answers of one query with L2 sensitivity ``sensitivity``.
        sensitivity : float > 0
        epsilon : float > 0
        delta : float in (0, 1)
        name : str
        integer : bool or None
            As in :meth:`laplace`.

        Returns
        -------
        ndarray, same shape as ``values``: int64 for an integer query, else
        float64 multiples of the ledger entry's ``granularity``.

        Notes
        -----
        **Privacy.** (epsilon, delta)-DP.  ``sigma`` = :func:`discrete_gaussian_sigma` (the
        CKS zCDP bound, proved for the discrete Gaussian; Balle & Wang's
        analytic calibration is exact only for the continuous one).  Real
        query: rounded to ``gamma * Z`` (``gamma`` a power of two below
        ``min(sigma, Delta / sqrt(m)) / 2^10``); the L2 sensitivity of the
        rounded query is at most ``Delta' = Delta + sqrt(m) gamma`` (each
        coordinate moves by at most ``gamma / 2``), the noise is
        ``N_Z(0, (sigma(Delta') / gamma)^2)`` in lattice units, and the ledger
        records ``Delta'`` and ``gamma``.
        """
        sensitivity = self._unit(sensitivity)
        epsilon = _check_epsilon(epsilon)
        if not (0 < float(delta) < 1):
            raise ValueError(f"the Gaussian mechanism needs 0 < delta < 1, got {delta}")
        sigma0 = discrete_gaussian_sigma(sensitivity, epsilon, delta)
        return self._discrete_gaussian_release(
            values, integer, sensitivity, sigma0,
            lambda mechanism, used, gamma, sampler: self._spend(name, epsilon, delta, mechanism, used, gamma,
                                                                dict(sampler, measure="approximate")))

    def _discrete_gaussian_release(self, values, integer, sensitivity: float, sigma0: float, record):
        """``values + N_Z(0, sigma0^2)`` (integer query) or the same on a fine lattice (real query).

        ``record(mechanism, sensitivity_used, granularity)`` is called (to spend)
        before anything is drawn.  A real query is rounded to ``gamma * Z``; its
        L2 sensitivity grows to ``Delta' = Delta + sqrt(m) gamma`` and the noise
        scale to ``sigma0 Delta' / Delta``, so the privacy parameter (epsilon at
        fixed delta, or rho = Delta^2 / (2 sigma^2)) is unchanged.
        """
        if not isinstance(values, FixedPoint):
            arr = np.asarray(values)
            if _integer_query(arr, integer):
                record("discrete gaussian", sensitivity, 1.0, _sampled("gaussian", sigma0, 1.0))
                k = self._noised(_integer_indices(arr), sensitivity, "l2")
                return k + discrete_gaussian(self.rng, sigma0, k.shape)
        m = max(_size(values), 1)
        finest = 2.0 ** -values.bits if isinstance(values, FixedPoint) else 0.0
        gamma = _lattice(min(sigma0, sensitivity / math.sqrt(m)), finest=finest)
        used = sensitivity if gamma == finest else sensitivity + math.sqrt(m) * gamma
        sigma = sigma0 * used / sensitivity
        record("discrete gaussian on a lattice", used, gamma, _sampled("gaussian", sigma / gamma, gamma))
        k = self._noised(_on_lattice(values, gamma), used / gamma, "l2")
        return _from_lattice(k + discrete_gaussian(self.rng, sigma / gamma, k.shape), gamma)

    def gaussian_zcdp(self, values, *, sensitivity: float, rho: float, name: str,
                      integer: bool | None = None) -> np.ndarray:
        """Gaussian mechanism as one step of a zCDP composition: ``values + N_Z(0, sigma^2)``,
        ``sigma = sensitivity / sqrt(2 rho)``.

        The step is ``rho``-zCDP (Canonne, Kamath & Steinke 2020, Thm. 14, for
        the discrete Gaussian).  The ledger must be a
        :class:`~dpcore.privacy.accountant.ZCDPLedger`, which adds the steps' rho and
        refuses a step beyond its grant.  Integer and real queries are released
        as in :meth:`gaussian` (integer noise; a real query on a fine lattice).

        Parameters
        ----------
        values : array-like, any shape; the query's L2 ``sensitivity`` is over the whole array
        sensitivity : float > 0
        rho : float > 0
        name : str
        integer : bool or None, as in :meth:`laplace`

        Returns
        -------
        ndarray, same shape as ``values`` (int64 for an integer query).

        Raises
        ------
        TypeError
            If this source's ledger is not a ZCDPLedger.
        """
        sensitivity = self._unit(sensitivity)
        rho = float(rho)
        if not (math.isfinite(rho) and rho > 0):
            raise ValueError(f"rho must be a positive finite number, got {rho}")
        if not hasattr(self.ledger, "spend_zcdp"):
            raise TypeError("gaussian_zcdp needs a ZCDPLedger (dpcore.privacy.accountant) to compose its steps")
        return self._discrete_gaussian_release(
            values, integer, sensitivity, sensitivity / math.sqrt(2.0 * rho),
            lambda mechanism, used, gamma, sampler: self.ledger.spend_zcdp(
                self.prefix + name, rho, mechanism=mechanism, sensitivity=used, granularity=gamma,
                sampler=dict(sampler, measure="zcdp", rho=float(rho))))

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

        Notes
        -----
        **Privacy.** epsilon-DP (McSherry & Talwar 2007).  Sampled with the Gumbel-max
        trick, ``argmax(logit_i + G_i)``, exact in real arithmetic.  Only the
        index is released, so low bits carry nothing; in floating point the
        selection can differ from the exact one only when two perturbed
        scores fall within their rounding error ``r = (L + 40) 2^-52``
        (``L = max |logit|``) of each other, or a Gumbel falls outside the
        range the 64-bit uniforms of :func:`uniform` reach (probability below
        ``2^-60``).  A Gumbel difference has density at most 1/4, so every
        selection probability is within ``m^2 r / 2`` of the exact one: an
        additive delta of that size (e.g. below 10^-11 for m = 1000, L = 100).
        """
        return self._exponential(scores, self._unit(sensitivity), epsilon, name, monotonic, log_base_measure)

    def _exponential(self, scores, sensitivity: float, epsilon: float, name: str, monotonic: bool,
                     log_base_measure) -> int:
        """:meth:`exponential` with ``sensitivity`` already for a whole privacy unit."""
        epsilon = _check_epsilon(epsilon)
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0 or not np.any(np.isfinite(scores)):
            raise ValueError("the exponential mechanism needs at least one candidate with a finite score")
        self._spend(name, epsilon, 0.0, "exponential", sensitivity)
        factor = 1.0 if monotonic else 2.0
        logits = epsilon * scores / (factor * sensitivity)
        if log_base_measure is not None:
            logits = logits + np.asarray(log_base_measure, dtype=float).ravel()
        logits = np.where(np.isfinite(scores), logits, -np.inf)
        return int(np.argmax(logits + _gumbel(self.rng, logits.size)))

    def permute_and_flip(self, scores, *, sensitivity: float, epsilon: float, name: str,
                         monotonic: bool = False) -> int:
        """Permute-and-flip selection (McKenna & Sheldon 2020, Alg. 1).

        Visits the candidates in a random order and accepts candidate ``r``
        with probability ``exp(epsilon * (q_r - q_max) / (2 * sensitivity))``;
        never worse in expected score than the exponential mechanism.

        Parameters and privacy as :meth:`exponential` (epsilon-DP).  The
        permutation uses numpy's exact bounded integers; each coin is
        ``U < p`` with :func:`uniform`, within relative ``2^-51`` of ``p``, so
        every selection probability is within ``m 2^-50`` (relative) of exact.

        Returns
        -------
        int, the selected index.
        """
        sensitivity = self._unit(sensitivity)
        epsilon = _check_epsilon(epsilon)
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0 or not np.any(np.isfinite(scores)):
            raise ValueError("permute-and-flip needs at least one candidate with a finite score")
        self._spend(name, epsilon, 0.0, "permute_and_flip", sensitivity)
        factor = 1.0 if monotonic else 2.0
        q = np.where(np.isfinite(scores), scores, -np.inf)
        p_accept = np.exp(epsilon * (q - q.max()) / (factor * sensitivity))
        # The best candidate accepts with probability 1, so one pass over a
        # random permutation always stops; draw it all at once.
        order = self.rng.permutation(q.size)
        accept = uniform(self.rng, q.size) <= p_accept[order]
        return int(order[np.argmax(accept)])

    #: The quantile's output lattice: the public range is cut into 2^32 equal cells.
    QUANTILE_CELLS = 2 ** 32

    def quantile(self, values, q: float, *, lower: float, upper: float, epsilon: float, name: str,
                 sensitivity: float = 1.0) -> float:
        """Private ``q``-quantile of ``values`` in the public range ``[lower, upper]`` (Smith 2011).

        The public range is cut into ``N = 2^32`` equal cells (a public
        lattice); each value is replaced by its cell index, clipped to
        ``[0, N)``.  The sorted indices ``c_1 <= ... <= c_m`` split the cells
        into ``m + 1`` runs; run ``j`` (``j`` values at or below its cells)
        scores ``-|j - q m|`` and is chosen by the exponential mechanism with
        base measure its number of cells; the output is the centre of a cell
        drawn uniformly in the chosen run.  The output is therefore always a
        lattice point ``lower + (i + 1/2)(upper - lower)/N`` inside
        ``[lower, upper]``, a function of the integer ``i`` only: unlike a
        float uniform between two data values, its low bits do not carry the
        data values bounding the run.

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

        Raises
        ------
        ValueError
            Non-finite or inverted bounds, ``q`` outside [0, 1].

        Notes
        -----
        **Privacy.** epsilon-DP: this is the exponential mechanism over the ``N`` cells
        with score ``-|#{l : c_l <= i} - q m|`` (changes by at most
        ``sensitivity`` per record) and uniform base measure, runs of equal
        score merged (McSherry & Talwar 2007); float safety as in
        :meth:`exponential`.

        References
        ----------
        Smith (2011), "Privacy-preserving statistical estimation with optimal
        convergence rates", STOC (the exponential-mechanism quantile).
        """
        sensitivity = self._unit(sensitivity)
        lower, upper, q = float(lower), float(upper), float(q)
        if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
            raise ValueError(f"quantile needs finite public bounds lower < upper, got ({lower}, {upper})")
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1], got {q}")
        n_cells = self.QUANTILE_CELLS
        h = (upper - lower) / n_cells
        z = np.asarray(values, dtype=float).ravel()
        c = np.sort(np.clip(np.floor((z - lower) / h), 0, n_cells - 1)).astype(np.int64)
        m = c.size
        # run j covers cells [c_j, c_{j+1}) with c_0 = 0, c_{m+1} = N.
        edges = np.concatenate([[0], c, [n_cells]])
        sizes = np.diff(edges)
        scores = -np.abs(np.arange(m + 1) - q * m)
        with np.errstate(divide="ignore"):
            log_len = np.log(sizes.astype(float))
        j = self._exponential(scores, sensitivity, epsilon, name, False, log_len)   # sensitivity already per unit
        i = int(edges[j]) + int(self.rng.integers(int(sizes[j])))
        return lower + (i + 0.5) * h

    # -- composition ------------------------------------------------------
    def sub(self, name: str, epsilon: float, delta: float = 0.0) -> NoiseSource:
        """Reserve ``(epsilon, delta)`` as one entry and return a source capped at it.

        For composite steps (e.g. one SMALL-BALL call) whose inner draws are
        themselves mechanisms: the parent ledger records a single entry
        charged in full up front; the child's own ledger (``.ledger``)
        details the inner steps and refuses to exceed the reservation.
        """
        self._spend(name, epsilon, delta, "composite", None)
        child = BudgetLedger(epsilon, delta)
        return NoiseSource(self.rng, child, prefix=f"{self.prefix}{name} / ",
                           contribution_factor=self.contribution_factor)

    def with_ledger(self, ledger: BudgetLedger) -> NoiseSource:
        """The same generator spending on another ledger (e.g. a :class:`~dpcore.privacy.accountant.ZCDPLedger`).

        For an estimator that composes its steps in another measure: it replaces its whole budget
        with ``ledger`` before its first draw (nothing has been spent on this source yet).

        Parameters
        ----------
        ledger : BudgetLedger

        Returns
        -------
        NoiseSource

        Raises
        ------
        ValueError
            Something was already spent on this source's ledger.
        """
        if list(self.ledger):
            raise ValueError("with_ledger replaces a fit's whole budget: call it before the first draw")
        if getattr(ledger, "privacy_unit", None) is None:
            ledger.privacy_unit = getattr(self.ledger, "privacy_unit", None)
        return NoiseSource(self.rng, ledger, prefix=self.prefix, contribution_factor=self.contribution_factor)

    def parallel(self, name: str, epsilon: float, n: int) -> list[NoiseSource]:
        """Charge ``epsilon`` once and return ``n`` sources each capped at ``epsilon``.

        For ``n`` mechanisms that read disjoint parts of the data (e.g. one
        draw per cluster, the clusters fixed by already-released centres):
        by parallel composition (McSherry 2009, Thm. 4) their joint cost is
        ``epsilon``, not ``n * epsilon``.  The caller is responsible for the
        disjointness; each child ledger details its own draws.
        """
        self._spend(name, epsilon, 0.0, "composite (parallel)", None)
        return [NoiseSource(self.rng, BudgetLedger(epsilon), prefix=f"{self.prefix}{name} / part {i + 1} / ",
                            contribution_factor=self.contribution_factor) for i in range(int(n))]


