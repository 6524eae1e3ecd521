"""ε from the accuracy people need (issue 31): the smallest ε whose releases put the centres within a stated error.

A person states the error they can accept in data units ("centres within 300 m of where they would
be without privacy" on a map; a share of the domain elsewhere).  :func:`epsilon_for_accuracy`
simulates many releases at each ε of a grid and answers with the smallest ε whose error is within
the target in at least ``confidence`` of them, and the error band at every ε.

Where the simulated releases run decides who may see the answer:

* on a **public look-alike** (:func:`lookalike`): points drawn from public inputs only (the public
  bounds, d, k and a public size; DP Wizard's approach), so the answer is public and costs no ε;
* on the **raw data**: more faithful, but every figure is computed on the data, so it is not private
  and is for the data owner's eyes only.

Errors are measured between the private centres and the non-private k-means centres on the same
points, matched one to one (Hungarian method, :func:`scipy.optimize.linear_sum_assignment`): the
mean distance of a private centre from its non-private partner.  On longitude/latitude data the
distance is in metres (equirectangular projection at the bounds' middle latitude, accurate to well
under 1 % over a city).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import InfeasibleBudgetError, PrivacyLeakWarning
from ..metrics import matched_center_distance
from ..utils.threads import ordered_map

#: ε values tried, smallest first (the app's slider values and beyond).
ACCURACY_EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)

#: Metres per degree of latitude; a degree of longitude is this times cos(latitude).
METRES_PER_DEGREE = 111_195.0


@dataclass(frozen=True)
class AccuracyAnswer:
    """What :func:`epsilon_for_accuracy` found.

    Attributes
    ----------
    epsilon : float or None
        The smallest ε of the grid whose error is within ``target`` in at least ``confidence`` of the
        simulated releases; None when no ε of the grid reaches it.
    target : float
        The accepted error, in ``unit``.
    unit : str
        ``"m"`` on longitude/latitude data, else ``"data units"``.
    epsilons : ndarray (m,)
    band : ndarray (m, 3)
        The error's 10 %, 50 % and 90 % quantiles at each ε (NaN where the algorithm refused).
    within : ndarray (m,)
        Share of the simulated releases within ``target`` at each ε.
    confidence : float
    n_releases : int
        Simulated releases per ε.
    source : str
        ``"public look-alike"`` or ``"raw data"``.
    """

    epsilon: float | None
    target: float
    unit: str
    epsilons: np.ndarray
    band: np.ndarray
    within: np.ndarray
    confidence: float
    n_releases: int
    source: str

    def sentence(self) -> str:
        """The answer in one sentence, with the band at the answer's ε (a unit on every figure)."""
        from ..formatting import fmt_distance, fmt_epsilon, fmt_range, fmt_share
        what = f"centres within {fmt_distance(self.target, self.unit)} of the non-private ones"
        where = self.source if self.source.startswith("this ") else f"the {self.source}"
        on = f"({self.n_releases} simulated releases per ε on {where})"
        if self.epsilon is None:
            return (f"No ε up to {fmt_epsilon(self.epsilons[-1])} puts the {what} in {fmt_share(self.confidence)} of "
                    f"releases {on}: accept a larger error, a smaller k, or more data.")
        i = int(np.flatnonzero(self.epsilons == self.epsilon)[0])
        lo, mid, hi = self.band[i]
        return (f"ε = {fmt_epsilon(self.epsilon)} is the smallest ε tried that puts the {what} in at least "
                f"{fmt_share(self.confidence)} of releases {on}; at ε = {fmt_epsilon(self.epsilon)} the error is "
                f"{fmt_range(lo, hi, self.unit)} in 80 % of them (median {fmt_distance(mid, self.unit)}).")


def quantity(v: float) -> str:
    """A distance as people read it: ``"1,780"``, ``"373"``, ``"0.0123"`` (:func:`dpcore.formatting.fmt_number`)."""
    from ..formatting import fmt_number
    return fmt_number(v)


def lookalike(bounds, n: int, k: int, *, random_state=0) -> np.ndarray:
    """Points made from public inputs only: ``k`` Gaussian clusters inside the public bounds.

    Parameters
    ----------
    bounds : (lower, upper), arrays (d,) or scalars with a ``d`` taken from the other
    n : int >= 1, a public size (not the data's exact size, which is private)
    k : int >= 1
    random_state : int or None

    Returns
    -------
    ndarray (n, d), inside the bounds: cluster centres uniform in the middle 80 % of each side,
    spreads of 5 % of each side (the clipped tails land on the bounds).
    """
    lo, hi = (np.atleast_1d(np.asarray(b, dtype=float)) for b in bounds)
    lo, hi = np.broadcast_arrays(lo, hi)
    n, k = int(n), int(k)
    if n < 1 or k < 1:
        raise ValueError(f"a look-alike needs n >= 1 and k >= 1, got n = {n}, k = {k}")
    rng = np.random.default_rng(random_state)
    span = hi - lo
    centres = lo + span * rng.uniform(0.1, 0.9, size=(k, lo.size))
    which = rng.integers(0, k, size=n)
    X = centres[which] + rng.normal(0.0, 0.05, size=(n, lo.size)) * span
    return np.clip(X, lo, hi)


def centre_error(private_centers, reference_centers, *, geo: bool = False, bounds=None) -> float:
    """Mean distance of the private centres from their non-private partners, matched one to one.

    Parameters
    ----------
    private_centers, reference_centers : ndarray (k, d)
    geo : bool
        Longitude/latitude in degrees: the distance is in metres (equirectangular projection at the
        middle latitude of ``bounds``).
    bounds : (lower, upper) or None, needed when ``geo``

    Returns
    -------
    float, in metres when ``geo``, else in data units.
    """
    P = np.asarray(private_centers, dtype=float)
    R = np.asarray(reference_centers, dtype=float)
    if geo:
        mid = math.radians((float(np.ravel(bounds[0])[1]) + float(np.ravel(bounds[1])[1])) / 2)
        scale = np.array([math.cos(mid), 1.0]) * METRES_PER_DEGREE
        P, R = P[:, :2] * scale, R[:, :2] * scale
    return matched_center_distance(P, R)


def noise_effect(est, baseline_centers, *, true_counts=None, geo: bool = False) -> str:
    """One sentence on what the noise did to a release, for teaching on public data (issue 31).

    Parameters
    ----------
    est : fitted private centroid estimator (``cluster_centers_``, ``budget_``, ``bounds_``)
    baseline_centers : ndarray (k, d), the non-private centres on the same data
    true_counts : ndarray or None
        The exact counts of the release's grid cells (public data only), to compare the noise with.
    geo : bool
        Longitude/latitude: the distance in metres, as the expected error under the same draw says it.

    Returns
    -------
    str: how far the private centres sit from the non-private ones (matched one to one, Hungarian
    method), in metres on a map or data units otherwise, and as a share of the bounds' diagonal (the
    expected error's unit beside the teaching sentence's, issue 65), and, for a grid synopsis, the typical size of the
    noise on one cell (the Laplace scale ``sensitivity / ε`` of the cell counts' ledger entry)
    against the points a non-empty cell holds.

    Notes
    -----
    **Not private**: it compares with the non-private result and may read exact counts.  The app
    shows it only in teaching mode, on data that is already public.
    """
    from ..formatting import fmt_distance, fmt_epsilon, fmt_share
    lo, hi = np.asarray(est.bounds_.lower, dtype=float), np.asarray(est.bounds_.upper, dtype=float)
    diag = float(np.linalg.norm(hi - lo)) or 1.0
    moved = matched_center_distance(est.cluster_centers_, baseline_centers) / diag
    eps = float(est.budget_.total()[0])
    far = centre_error(est.cluster_centers_, baseline_centers, geo=geo, bounds=(lo, hi))
    text = (f"At ε = {fmt_epsilon(eps)} the private centres sit on average "
            f"{fmt_distance(far, 'm' if geo else 'data units')} ({fmt_share(moved)} of the domain's diagonal) from "
            "the non-private ones (matched one to one).")
    grid = [e for e in est.budget_ if e.name == "grid cell counts" and e.epsilon > 0]
    if grid and getattr(getattr(est, "synopsis_", None), "kind", None) == "grid":
        scale = float(grid[-1].sensitivity or 1.0) / float(grid[-1].epsilon)
        text += (f" The noise on each grid cell's count is typically ± {scale:,.0f} "
                 + ("point" if round(scale) == 1 else "points"))
        if true_counts is not None:
            full = np.asarray(true_counts, dtype=float)
            full = full[full > 0]
            if full.size:
                text += f", against {np.median(full):,.0f} points in a typical non-empty cell"
                if scale > np.median(full):
                    text += ": the grid is mostly noise, so the centres land almost anywhere"
        text += "."
    return text


def check_target(target, confidence, n_releases) -> float:
    """The accepted error as a float, after checking it and the answer's settings.

    Raises
    ------
    ValueError
        A target that is not a positive number, a confidence outside (0, 1), fewer than 2 releases.
    """
    target = float(target)
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"the accepted error must be a positive number, got {target}")
    if not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if int(n_releases) < 2:
        raise ValueError(f"at least 2 simulated releases per ε are needed, got {n_releases}")
    return target


def epsilon_for_accuracy(algorithm: str, target: float, *, bounds, n_clusters: int, X=None, n: int | None = None,
                         geo: bool = False, params: dict | None = None, epsilons=ACCURACY_EPSILONS,
                         n_releases: int = 20, confidence: float = 0.9, random_state=None,
                         max_rows: int | None = 20_000, source: str | None = None,
                         progress=None, privacy_id=None) -> AccuracyAnswer:
    """The smallest ε whose releases put the centres within ``target`` of the non-private ones.

    Parameters
    ----------
    algorithm : str, a private centroid key of ``dpcore.ALGORITHMS`` (e.g. ``"eugkm"``)
    target : float > 0, the accepted error: metres when ``geo``, else data units
    bounds : (lower, upper), the public bounds
    n_clusters : int
    X : ndarray (n, d) or None
        The points to simulate on: None for a public look-alike (:func:`lookalike`, needs ``n``);
        the raw data only for the data owner (not private).
    n : int or None, the look-alike's public size
    max_rows : int or None, default 20,000
        Simulate on a uniform sample of at most this many of ``X``'s rows, each release at ε times the rows of
        ``X`` over the sample's (:func:`simulated_epsilon`), so that its noise weighs as on all of ``X``.
    geo : bool, longitude/latitude data (errors in metres)
    params : dict or None, further estimator parameters (e.g. ``delta``)
    epsilons : sequence of float > 0, tried smallest first
    n_releases : int >= 2, simulated releases per ε
    confidence : float in (0, 1), the share of releases that must be within ``target``
    random_state : int or None
        None: fresh noise every release.  An int: reproducible simulations (tests).
    source : str or None
        What the answer says it simulated on; default ``"public look-alike"`` or ``"raw data"``.
    progress : callable (fraction) -> None, or None
    privacy_id : array-like (n,) or None
        The person of every row of ``X``, with ``params["max_contributions"]`` (L): every simulated
        release bounds each person to L rows and scales its noise to that per-person sensitivity, as
        the real draw does (issue 56: the owner's answer on the raw data was row level).  Sampled
        with ``X`` by ``max_rows``.

    Returns
    -------
    AccuracyAnswer

    Raises
    ------
    ValueError
        A target that is not positive, a bad confidence, too few releases, no points and no ``n``;
        ``privacy_id`` without ``X``, without ``params["max_contributions"]`` or not of shape (n,).

    Notes
    -----
    **Privacy.** On the look-alike every figure is a function of public inputs: publishing it costs
    nothing.  With ``X`` the raw data, nothing here is private.  Simulated releases are seeded only
    when ``random_state`` is given, and none of them is ever a release.
    """
    from ..algorithms.registry import ALGORITHMS
    target = check_target(target, confidence, n_releases)
    if algorithm not in ALGORITHMS or not ALGORITHMS[algorithm].private:
        raise ValueError(f"{algorithm!r} is not a private algorithm of dpcore.ALGORITHMS")
    label, source = source, "raw data"
    if X is None:
        if n is None:
            raise ValueError("give the points to simulate on, or a public size n for a look-alike")
        X = lookalike(bounds, n, n_clusters, random_state=0 if random_state is None else random_state)
        source = "public look-alike"
    X = np.asarray(X, dtype=float)
    ids = None
    if privacy_id is not None:
        ids = np.asarray(privacy_id)
        if source != "raw data" or not (params or {}).get("max_contributions"):
            raise ValueError("privacy_id needs the points X and params['max_contributions'] (L), the rows each "
                             "person may contribute")
        if ids.shape != (X.shape[0],):
            raise ValueError(f"privacy_id must hold one id per row of X: shape ({X.shape[0]},), got {ids.shape}")
    n_rows = X.shape[0]          # a sample's releases are simulated at ε·n_rows/len(sample) (simulated_epsilon)
    reference = reference_centres(X, int(n_clusters), bounds)       # on all rows, as a person compares
    X, ids = sample_rows(X, ids, max_rows)
    eps = np.asarray(sorted(float(e) for e in epsilons))
    errors = np.full((eps.size, int(n_releases)), np.nan)
    for i, e in enumerate(eps):
        seed = None if random_state is None else int(random_state) + 1000 * i
        done = (lambda f, i=i: progress((i + f) / eps.size)) if progress is not None else None
        errors[i] = simulate_errors(algorithm, float(e), X=X, bounds=bounds, n_clusters=n_clusters,
                                    reference=reference, geo=geo, params=params, n_releases=n_releases,
                                    random_state=seed, privacy_id=ids, progress=done, n_rows=n_rows)
    return answer_from_errors(errors, eps, target, confidence=confidence, geo=geo,
                              source=source if label is None else label)


def sample_rows(X: np.ndarray, privacy_id=None, max_rows: int | None = 20_000):
    """A uniform sample of at most ``max_rows`` rows of ``X`` (and their persons), the same one every time.

    Returns
    -------
    (ndarray (m, d), ndarray (m,) or None)
        All rows when there are no more than ``max_rows`` (or ``max_rows`` is None).  The sample is seeded:
        it chooses which rows a simulation runs on, never noise.
    """
    X = np.asarray(X, dtype=float)
    if max_rows is None or X.shape[0] <= int(max_rows):
        return X, privacy_id
    keep = np.random.default_rng(0).permutation(X.shape[0])[:int(max_rows)]
    return X[keep], None if privacy_id is None else np.asarray(privacy_id)[keep]


def simulated_epsilon(epsilon: float, n_rows: int, n_simulated: int) -> float:
    """The ε a simulation on ``n_simulated`` rows sampled uniformly from ``n_rows`` runs at, so that its releases
    carry the noise a release at ``epsilon`` on all ``n_rows`` rows carries: ``epsilon * n_rows / n_simulated``.

    Su et al. (2016, §6: Eqs. 7, 9-10 and 12) show that the centre error of DPLloyd and of EUGkM depends on the
    data's size N and on ε only through Nε: every noisy count and sum weighs noise of scale 1/ε against N rows (and
    EUGkM's grid, Eq. 4, is a function of Nε).  A simulation on a uniform sample of n rows at ε·N/n keeps Nε, so
    its errors estimate those of a release on all N rows; at ε itself they are those of a release on n rows,
    several times larger.  Measured on the taxi sample (N = 181,446, n = 20,000; 40 releases, centre error against
    k-means on all rows): EUGkM at ε = 1, all rows 50/79/128 m (10th/50th/90th percentile), the sample at ε·N/n
    42/77/134 m, the sample at ε 141/299/1,526 m; DPLloyd, Hybrid, zCDP-Lloyd and KMeans-Guarantee alike at
    ε = 0.1 and 1.

    Parameters
    ----------
    epsilon : float > 0, the release's ε
    n_rows : int, the rows a release would run on
    n_simulated : int >= 1, the rows the simulation runs on (at most ``n_rows``)

    Returns
    -------
    float, ``epsilon`` when ``n_simulated >= n_rows``.

    Notes
    -----
    **Not a release**: the ε of a simulation, whose releases are never recorded or shown.
    """
    n_rows, n_simulated = int(n_rows), max(int(n_simulated), 1)
    return float(epsilon) * n_rows / n_simulated if n_rows > n_simulated else float(epsilon)


def refused_on_all_rows(algorithm: str, epsilon: float, *, n_rows: int, d: int, n_clusters: int,
                        params: dict | None = None):
    """The refusal a release of ``algorithm`` at ``epsilon`` on all ``n_rows`` rows would meet, or None.

    A simulation on a sample at :func:`simulated_epsilon` keeps Nε, but a refusal need not follow Nε: PRIVATE-K-MEAN
    needs more than t_min points before its first round at ε itself, PrivGene refuses a number of distance terms
    that grows with N (on the taxi sample at ε = 1 both refuse all rows while the sample at ε·N/n runs).  This asks
    the class's own rule (:meth:`~dpcore.algorithms.base.DPClusterer.regime`) at the real inputs, as a fit does
    after its noisy size; a refusal about utility only (``utility_only``, which calibration may overrule in a fit)
    is not counted.

    Returns
    -------
    :class:`~dpcore.algorithms.regime.Regime` or None

    Notes
    -----
    **Not a release**: public inputs and the simulation's own; no noise, no cost.
    """
    from ..algorithms.registry import ALGORITHMS
    params = dict(params or {})
    L = params.get("max_contributions") or 1        # a fit's rule sees ε per row: ε / L at person level
    rule = {key: v for key, v in params.items()
            if key not in ("delta", "max_contributions", "contribution_bounding", "n_clusters", "epsilon", "bounds")}
    verdict = ALGORITHMS[algorithm].regime(n=max(float(n_rows), 1.0), d=int(d), k=int(n_clusters),
                                           epsilon=float(epsilon) / float(L), delta=float(params.get("delta", 0.0)),
                                           **rule)
    return verdict if verdict.status == "refuse" and not verdict.utility_only else None


def reference_centres(X: np.ndarray, n_clusters: int, bounds=None) -> np.ndarray:
    """The non-private k-means centres simulated releases are compared with: the app's non-private reference
    (:class:`dpcore.algorithms.nonprivate.KMeans`, k-means++ with 10 starts, ``random_state=0``, in ``bounds``).

    Give it all the rows a release would run on, not a sample of them: the errors then measure what a person
    compares on the map (the private centres against these), and k-means of a 20,000-row sample with 3 starts,
    the reference before, sat 36 m from it on the taxi sample while EUGkM's draws sit 42-134 m from it at ε = 1.

    Parameters
    ----------
    X : ndarray (n, d)
    n_clusters : int
    bounds : (lower, upper) or None, the public bounds (None: those of ``X``, not private, as this is not)

    Returns
    -------
    ndarray (n_clusters, d), data units.  **Not private**: computed on ``X`` as it is.
    """
    from ..algorithms.nonprivate import KMeans
    X = np.asarray(X, dtype=float)
    if bounds is None:
        bounds = (X.min(axis=0), X.max(axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # a non-private reference: its own notes do not apply here
        return KMeans(n_clusters=int(n_clusters), random_state=0, bounds=bounds).fit(X).cluster_centers_


def simulate_errors(algorithm: str, epsilon: float, *, X, bounds, n_clusters: int, reference, geo: bool = False,
                    params: dict | None = None, n_releases: int = 50, random_state=None, privacy_id=None,
                    progress=None, n_rows: int | None = None) -> np.ndarray:
    """Centre errors of ``n_releases`` releases simulated on ``X`` at one ε, each with fresh noise.

    Parameters
    ----------
    algorithm : str, a private key of ``dpcore.ALGORITHMS``
    epsilon : float > 0
    X : ndarray (n, d), the points simulated on (a public data set, or the raw data for its owner)
    bounds : (lower, upper), the public bounds
    n_clusters : int
    reference : ndarray (k, d), the non-private centres on ``X`` (:func:`reference_centres`)
    geo : bool, longitude/latitude: errors in metres
    params : dict or None, further estimator parameters (``delta``, ``max_contributions``, ...)
    n_releases : int >= 1, default 50
    random_state : int or None
        None: fresh, unpredictable noise for every release.  An int: release ``s`` is seeded ``random_state + s``
        (tests).
    privacy_id : ndarray (n,) or None, the person of every row (with ``params["max_contributions"]``)
    progress : callable (fraction) -> None, or None
    n_rows : int or None
        The rows the simulated releases stand for, when ``X`` is a uniform sample of them (:func:`sample_rows`):
        each is fitted at :func:`simulated_epsilon` ``(epsilon, n_rows, len(X))``, so that its noise weighs as in a
        release on all ``n_rows`` rows.  None: ``len(X)`` (the releases are of ``X`` itself).

    Returns
    -------
    ndarray (n_releases,)
        :func:`centre_error` of each release against ``reference`` (metres when ``geo``, else data units); all NaN
        when a release on all ``n_rows`` rows would be refused (:func:`refused_on_all_rows`); NaN
        from the first release the algorithm refused (:class:`~dpcore.exceptions.InfeasibleBudgetError`) on.

    Notes
    -----
    **Not a release**: the simulations run on ``X`` and are never recorded.  On the raw data every figure they
    give is not private (the data owner's eyes only).
    """
    from ..algorithms.registry import ALGORITHMS
    cls = ALGORITHMS[algorithm]
    fit_kw = {} if privacy_id is None else {"privacy_id": privacy_id}
    out = np.full(int(n_releases), np.nan)
    if n_rows is not None and n_rows > len(X) and refused_on_all_rows(
            algorithm, epsilon, n_rows=n_rows, d=np.shape(X)[1], n_clusters=n_clusters, params=params) is not None:
        return out                   # a release on all the rows would be refused: no figure, as for one refused here
    epsilon = simulated_epsilon(epsilon, len(X) if n_rows is None else n_rows, len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # regime and seeded-simulation warnings: these are simulations
        warnings.simplefilter("ignore", PrivacyLeakWarning)

        def release(s):
            seed = None if random_state is None else int(random_state) + s
            return cls(n_clusters=int(n_clusters), epsilon=float(epsilon), bounds=bounds, random_state=seed,
                       **dict(params or {})).fit(X, **fit_kw)

        # The releases side by side on the cores (their fits release the GIL), read in order.
        for s, fitted in enumerate(ordered_map(release, range(int(n_releases)))):
            try:
                est = fitted.result()
            except InfeasibleBudgetError:
                break
            out[s] = centre_error(est.cluster_centers_, reference, geo=geo, bounds=bounds)
            if progress is not None:
                progress((s + 1) / out.size)
    return out


def answer_from_errors(errors: np.ndarray, eps: np.ndarray, target: float, *, confidence: float, geo: bool,
                       source: str) -> AccuracyAnswer:
    """The smallest ε whose simulated releases meet ``target`` in a ``confidence`` share, from their errors.

    Parameters
    ----------
    errors : ndarray (len(eps), n_releases), centre errors (NaN where a release refused)
    eps : ndarray (len(eps),), increasing
    target : float, the error asked for (metres when ``geo``, else data units)
    confidence : float in (0, 1]
    geo : bool
    source : str, what the releases were simulated on (for the sentence)

    Returns
    -------
    AccuracyAnswer (its band: each ε's 10 / 50 / 90 % quantiles).  Post-processing of simulated
    errors: no privacy cost of its own.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # an ε where every release refused: NaN band
        band = np.nanquantile(errors, [0.1, 0.5, 0.9], axis=1).T
    within = np.where(np.isnan(errors), 0.0, errors <= target).mean(axis=1)
    ok = np.flatnonzero(within >= float(confidence))
    return AccuracyAnswer(float(eps[ok[0]]) if ok.size else None, target, "m" if geo else "data units", eps, band,
                          within, float(confidence), int(errors.shape[1]), source)
