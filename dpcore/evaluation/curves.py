"""Privacy-utility curves: many releases per epsilon, measured against the non-private reference.

Privacy-utility curves
----------------------
:func:`privacy_utility_curve` fits one algorithm at each epsilon of a grid
``n_seeds`` times (each a different noisy release: fresh unpredictable noise
by default, or seeds ``random_state, random_state + 1, ...`` for a
reproducible simulation) and
measures each release against the non-private reference with the family's
own measure (:func:`measure_for`):

* centroids: the NICV ratio ``NICV(private) / NICV(non-private k-means)``
  (Su et al. 2016, Eq. 1, in the ``[-1, 1]^d`` normalisation of the public
  bounds); 1 is as good as non-private;
* coreset (Feldman et al. 2017): the relative k-means cost error
  ``cost(private) / cost(non-private) - 1`` (§5.4); 0 is as good as non-private;
* grid clusters (DP WaveCluster): UD against non-private WaveCluster with
  the same grid (Chen et al., §6.1.1); 0 is identical.

The summary is the median and the 10 %-90 % band over the seeds.  Every
figure compares with results computed on the raw data, so the curve is
**not private: for the data owner's eyes only**; and choosing epsilon by
looking at it on the real data is itself a use of the data.

A ``progress(fraction, message)`` callback is called after every fit; if it
returns ``False`` the computation stops and the curve is returned with
``complete=False`` (the seeds not run are NaN).

References
----------
Su, Cao, Li, Bertino, Jin (2016). Differentially private k-means clustering. CODASPY, §5.1, §6.1-6.3.
Feldman, Xiang, Zhu, Rus (2017). Coresets for differentially private k-means clustering. IPSN, §5.4.
Chen, Yu, Chirkova (2015). DP WaveCluster, §6.1.1 (UD).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InfeasibleBudgetError, PrivacyLeakWarning
from ..metrics import nicv
from ..utils.nearest import inertia
from ..utils.threads import ordered_map
from .accuracy import refused_on_all_rows, simulated_epsilon

#: The default epsilon grid of the curves: three named levels a decade apart (cheap enough for the
#: taxi data in well under a minute on a 20,000-row sample; add points in the app as needed).
DEFAULT_EPSILONS = (0.05, 0.5, 5.0)
#: Seeds per epsilon (the issue asks for at least 20).
DEFAULT_SEEDS = 20

Progress = Callable[[float, str], "bool | None"]


# -- measures --------------------------------------------------------------------------------------
#: The centre error as a curve's measure (issue 65): the distance of the private centres from the non-private
#: ones, matched one to one (:func:`~dpcore.evaluation.accuracy.centre_error`), in metres on longitude/latitude
#: data, else in data units: the unit of the expected error and of "ε from the accuracy you need".
CENTRE_ERROR = "centre error"


def measure_for(algorithm: str) -> str:
    """The family's own utility measure: ``"NICV ratio"``, ``"relative cost error"`` or ``"UD"``."""
    from ..algorithms.registry import ALGORITHMS
    cls = ALGORITHMS[algorithm]
    if cls.family == "grid clusters":
        return "UD"
    if algorithm == "coreset":
        return "relative cost error"
    return "NICV ratio"


def baseline_key(algorithm: str) -> str:
    """The non-private reference of an algorithm's family (``kmeans`` or ``wavecluster``)."""
    from ..algorithms.registry import ALGORITHMS
    return "wavecluster" if ALGORITHMS[algorithm].family == "grid clusters" else "kmeans"


def _filter_params(cls, params: dict) -> dict:
    names = set(cls().get_params(deep=False)) if cls.family == "grid clusters" else \
        set(cls(n_clusters=1).get_params(deep=False))
    return {k: v for k, v in params.items() if k in names}


@dataclass
class Reference:
    """The non-private reference a measure compares with (computed on the raw data: not private)."""

    measure: str
    estimator: Any
    value: float          # NICV, cost (normalised domain) or 0 for UD and the centre error
    line: float           # where the non-private line is drawn on the measure's axis (1 or 0)
    geo: bool = False     # the centre error in metres (longitude/latitude data)


def fit_reference(X, bounds, algorithm: str, *, n_clusters: int | None = None, params: dict | None = None,
                  random_state: int = 0, measure: str | None = None, geo: bool = False) -> Reference:
    """Fit the non-private reference for ``algorithm``'s measure on X (not private).

    ``measure``: the family's own (:func:`measure_for`) by default, or :data:`CENTRE_ERROR` for an algorithm
    that releases centres (``geo``: in metres).

    Returns
    -------
    Reference
    """
    from ..algorithms.registry import ALGORITHMS
    params = dict(params or {})
    measure = measure or measure_for(algorithm)
    key = baseline_key(algorithm)
    cls = ALGORITHMS[key]
    kw = _filter_params(cls, params)
    if measure == CENTRE_ERROR:
        if key != "kmeans":
            raise ValueError(f"the centre error measures algorithms that release centres, not {algorithm!r}")
        est = cls(n_clusters=n_clusters, epsilon=None, bounds=bounds, random_state=random_state).fit(X)
        return Reference(measure, est, 0.0, 0.0, bool(geo))
    if key == "kmeans":
        est = cls(n_clusters=n_clusters, epsilon=None, bounds=bounds, random_state=random_state).fit(X)
        Z, C = _normalised(X, est.cluster_centers_, bounds)
        value = inertia(Z, C) / X.shape[0] if measure == "NICV ratio" else inertia(Z, C)
        return Reference(measure, est, float(value), 1.0 if measure == "NICV ratio" else 0.0)
    est = cls(epsilon=None, bounds=bounds, **kw).fit(X)
    return Reference(measure, est, 0.0, 0.0)


def _reference_rows(X, Xs, measure: str):
    """The rows a curve's reference is fitted on: all of them for the centre error (the private centres are
    compared with k-means of all the rows, the reference a page draws beside a release; k-means of a sample is
    another, tens of metres away on the taxi sample), else the rows the measure is computed on (``Xs``)."""
    return np.asarray(X, dtype=float) if measure == CENTRE_ERROR else Xs


def _normalised(X, C, bounds):
    from ..utils.domain import check_bounds
    dom = check_bounds(bounds, d=X.shape[1])
    return dom.normalize(np.asarray(X, dtype=float)), dom.normalize(np.asarray(C, dtype=float))


def utility(est, X, bounds, reference: Reference) -> float:
    """The measure of one fitted private estimator against ``reference`` (not private).

    Returns
    -------
    float: NICV ratio (1 = non-private), relative cost error (0 = non-private), UD (0 = identical) or the
    centre error (metres or data units; 0 = non-private).
    """
    if reference.measure == CENTRE_ERROR:
        from .accuracy import centre_error
        return centre_error(est.cluster_centers_, reference.estimator.cluster_centers_, geo=reference.geo,
                            bounds=bounds)
    if reference.measure == "UD":
        from ..metrics.wavecluster import ud
        return float(ud(reference.estimator.synopsis_.labels, est.synopsis_.labels))
    if reference.measure == "NICV ratio":
        return float(nicv(X, est.cluster_centers_, bounds)) / reference.value
    Z, C = _normalised(X, est.cluster_centers_, bounds)
    return float(inertia(Z, C)) / reference.value - 1.0


# -- curves ----------------------------------------------------------------------------------------
@dataclass
class UtilityCurve:
    """Measured utility of one algorithm at several epsilons over seeded releases (not private).

    Attributes
    ----------
    algorithm : str
    measure : str
    epsilons : ndarray (m,)
    values : ndarray (m, n_seeds); NaN for releases not run (cancelled) or infeasible
    reference_line : float
        The non-private reference on the measure's axis (1 for the NICV ratio, 0 otherwise).
    reference_value : float
        The non-private NICV (or cost) itself.
    n_rows : int
        Rows the curve was computed on (after subsampling).
    complete : bool
        False when the progress callback cancelled the computation.
    failures : dict epsilon -> message
        Epsilons at which the algorithm refused to run (e.g. budget too small).
    """

    algorithm: str
    measure: str
    epsilons: np.ndarray
    values: np.ndarray
    reference_line: float
    reference_value: float
    n_rows: int
    complete: bool = True
    failures: dict = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """One row per epsilon: ``epsilon, median, q10, q90, n`` (n = releases measured)."""
        v = self.values
        ok = np.isfinite(v)
        n = ok.sum(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows
            med = np.nanmedian(v, axis=1)
            q10 = np.nanquantile(v, 0.10, axis=1)
            q90 = np.nanquantile(v, 0.90, axis=1)
        return pd.DataFrame({"algorithm": self.algorithm, "epsilon": self.epsilons, "median": med, "q10": q10,
                             "q90": q90, "n": n})


def subsample(X, max_rows: int | None, *, random_state: int = 0) -> np.ndarray:
    """At most ``max_rows`` rows of X, drawn uniformly without replacement (evaluation only)."""
    return _subsample_rows(X, None, max_rows, random_state)[0]


def _subsample_rows(X, privacy_id, max_rows, random_state):
    """:func:`subsample` of X and, row for row, of ``privacy_id`` (None stays None)."""
    X = np.asarray(X, dtype=float)
    ids = None if privacy_id is None else np.asarray(privacy_id)
    if ids is not None and ids.shape != (X.shape[0],):
        raise ValueError(f"privacy_id must hold one id per row of X: shape ({X.shape[0]},), got {ids.shape}")
    if max_rows is None or X.shape[0] <= int(max_rows):
        return X, ids
    idx = np.sort(np.random.default_rng(random_state).choice(X.shape[0], int(max_rows), replace=False))
    return X[idx], None if ids is None else ids[idx]


def privacy_utility_curve(X, bounds, algorithm: str, *, epsilons=DEFAULT_EPSILONS, n_seeds: int = DEFAULT_SEEDS,
                          n_clusters: int | None = None, params: dict | None = None, max_rows: int | None = None,
                          sample_seed: int = 0, reference: Reference | None = None,
                          progress: Progress | None = None, random_state: int | None = None,
                          on_epsilon=None, max_contributions: int | None = None, privacy_id=None, _done: int = 0,
                          _total: int | None = None, measure: str | None = None, geo: bool = False,
                          n_rows: int | None = None) -> UtilityCurve:
    """Utility against epsilon of one algorithm over ``n_seeds`` seeded releases per epsilon.

    Parameters
    ----------
    X : ndarray (n, d), data units
    bounds : (lower, upper), public bounds
    algorithm : str, a private key of ``dpcore.ALGORITHMS``
    epsilons : sequence of float > 0
    n_seeds : int >= 1
        Releases per epsilon.
    n_clusters : int or None
        k, for the centroid family.
    params : dict or None
        Further estimator parameters (e.g. ``theta``, ``num_grid``, ``delta``).
    max_rows : int or None
        Compute on a uniform subsample of this many rows (faster).  Each release on the subsample runs at
        epsilon times the rows of ``X`` over the subsample's
        (:func:`~dpcore.evaluation.accuracy.simulated_epsilon`: the error depends on N and epsilon through
        N·epsilon, Su et al. 2016, §6), so that its noise weighs as in a release on all of ``X``; the curve's
        x axis stays the release's epsilon.
    sample_seed : int
    reference : Reference or None
        Reuse a reference fitted on the same (subsampled) rows.
    progress : callable (fraction, message) -> bool or None
        Called after each release; returning False cancels.
    on_epsilon : callable (UtilityCurve) -> None, or None
        Called each time an epsilon's releases are all measured, with the curve so far (NaN where
        not measured yet, ``complete=False``): a display can show the first epsilon early.
    random_state : int or None, default None
        None: every release draws fresh unpredictable noise (as a real release
        would).  An int ``s``: release ``j`` uses seed ``s + j``, so the curve
        is reproducible (a simulation; tests, papers' figures).
    max_contributions : int >= 1 or None
        Simulate person-level releases protecting persons of up to this many rows: the rows are
        taken as persons of exactly ``max_contributions`` consecutive rows each (for points drawn
        independently, e.g. from a released synopsis: :func:`~dpcore.evaluation.synopsis_points`),
        so every release's noise is scaled to the per-person sensitivity.  Ignored by algorithms
        without a person-level mode.  With ``privacy_id`` the persons are the real ones instead.
    privacy_id : array-like (n,) or None
        The person (privacy unit) of every row of X, as a release's ``fit(X, privacy_id=...)``
        takes it: with ``max_contributions`` every simulated release bounds each person to
        ``max_contributions`` rows (``params["contribution_bounding"]``, default weighting where the
        algorithm can weight, else sampling: :func:`dpcore.algorithms.registry.bounding_for`) and
        scales its noise to that per-person sensitivity, as the real draw does (the data owner's
        curve on the raw data, issue 56).  Subsampled with X by ``max_rows``.  Needs
        ``max_contributions``.
    measure : str or None
        The family's own measure (:func:`measure_for`) by default; :data:`CENTRE_ERROR` measures how far the
        private centres sit from the non-private ones (``geo``: in metres, longitude/latitude data).
    geo : bool, default False

    n_rows : int or None
        The rows ``X`` stands for when it is itself a uniform sample of them (:func:`compare_curves` passes its
        data's); None: the rows of ``X``.
    Returns
    -------
    UtilityCurve

    Raises
    ------
    ValueError
        For an unknown or non-private algorithm, empty epsilons or n_seeds < 1, ``max_contributions``
        below 1, ``privacy_id`` without ``max_contributions`` or not of shape (n,).

    Notes
    -----
    Not private: every figure is computed on the raw data.
    """
    from ..algorithms.registry import ALGORITHMS, bounding_for
    if algorithm not in ALGORITHMS or not ALGORITHMS[algorithm].private:
        raise ValueError(f"{algorithm!r} is not a private algorithm of dpcore.ALGORITHMS")
    eps = np.asarray(sorted(float(e) for e in epsilons), dtype=float)
    if eps.size == 0 or not np.all(np.isfinite(eps) & (eps > 0)):
        raise ValueError("epsilons must be a non-empty list of positive numbers")
    n_seeds = int(n_seeds)
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1, got {n_seeds}")
    params = dict(params or {})
    if privacy_id is not None and max_contributions is None:
        raise ValueError("privacy_id needs max_contributions (L): the rows each person may contribute")
    n_rows = len(X) if n_rows is None else int(n_rows)
    Xs, ids = _subsample_rows(X, privacy_id, max_rows, sample_seed)
    cls = ALGORITHMS[algorithm]
    if reference is None:
        reference = fit_reference(_reference_rows(X, Xs, measure or measure_for(algorithm)), bounds, algorithm,
                                  n_clusters=n_clusters, params=params, measure=measure, geo=geo)
    kw = dict(params)
    if cls.family != "grid clusters":
        kw["n_clusters"] = n_clusters
    if max_contributions is not None:
        kw["max_contributions"] = int(max_contributions)
        # As a draw bounds: the requested bounding where this class can weight, else sampling
        # (default: dpcore.algorithms.registry.DEFAULT_BOUNDING).
        kw["contribution_bounding"] = bounding_for(cls, kw.get("contribution_bounding"))
    kw = _filter_params(cls, kw)
    fit_kw = {}
    if kw.get("max_contributions") is not None:
        if int(kw["max_contributions"]) < 1:
            raise ValueError(f"max_contributions must be at least 1, got {max_contributions}")
        # The real persons when given (the owner's curve); else persons of exactly L consecutive rows
        # (points drawn independently from a synopsis: every person is at the bound, the worst case).
        fit_kw["privacy_id"] = ids if ids is not None else np.arange(Xs.shape[0]) // int(kw["max_contributions"])
    values = np.full((eps.size, n_seeds), np.nan)
    total = _total or eps.size * n_seeds
    done = _done
    failures = {}
    complete = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for i, e in enumerate(eps):
            refused = (refused_on_all_rows(algorithm, e, n_rows=n_rows, d=Xs.shape[1], n_clusters=n_clusters or 1,
                                           params=kw) if n_rows > Xs.shape[0] else None)
            if refused is not None:      # a release on all the rows would be refused at this ε
                failures[float(e)] = refused.reason
                done += n_seeds
                continue

            def release(s, e=e):
                seed = None if random_state is None else int(random_state) + s
                est = cls(epsilon=simulated_epsilon(e, n_rows, Xs.shape[0]), bounds=bounds, random_state=seed,
                          **kw).fit(Xs, **fit_kw)
                return utility(est, Xs, bounds, reference)

            # The seeds of one ε side by side on the cores (their fits release the GIL), read in order.
            for s, fitted in enumerate(ordered_map(release, range(n_seeds))):
                try:
                    values[i, s] = fitted.result()
                except InfeasibleBudgetError as exc:
                    failures[float(e)] = str(exc)
                    done += n_seeds - s
                    break
                done += 1
                if progress is not None and progress(done / total, f"{cls.display_name or algorithm}: "
                                                                   f"ε = {e:g}, release {s + 1} of {n_seeds}") is False:
                    complete = False
                    break
            if not complete:
                break
            if on_epsilon is not None and i < eps.size - 1:
                on_epsilon(UtilityCurve(algorithm, reference.measure, eps, values.copy(), reference.line,
                                        reference.value, Xs.shape[0], False, dict(failures)))
    return UtilityCurve(algorithm, reference.measure, eps, values, reference.line, reference.value, Xs.shape[0],
                        complete, failures)


def compare_curves(X, bounds, algorithms, *, epsilons=DEFAULT_EPSILONS, n_seeds: int = DEFAULT_SEEDS,
                   n_clusters: int | None = None, params: dict | None = None, max_rows: int | None = None,
                   sample_seed: int = 0, progress: Progress | None = None,
                   random_state: int | None = None, on_partial=None,
                   max_contributions: int | None = None, privacy_id=None, measure: str | None = None,
                   geo: bool = False, kmeans=None) -> list[UtilityCurve]:
    """:func:`privacy_utility_curve` for several algorithms, sharing the reference and one progress bar.

    ``measure`` and ``geo``: as :func:`privacy_utility_curve` (one measure for every algorithm).

    ``kmeans``: a fitted non-private k-means of all of ``X`` the caller already has (``cluster_centers_``; the app's
    page reference, the same fit :func:`fit_reference` would make): a centre-error curve measures from it instead
    of fitting it again.

    ``max_contributions``: person-level simulations, as :func:`privacy_utility_curve`.
    ``privacy_id`` (array-like (n,) or None): the real person of every row of X, with
    ``max_contributions``, as :func:`privacy_utility_curve` (subsampled with X).

    ``on_partial(curves)``, if given, is called each time one more epsilon is measured, with the
    curves so far (the last one partial), so that a display can draw them as they come.

    Returns
    -------
    list of UtilityCurve, in the order given; after a cancellation the
    algorithms not started are missing and the last one is incomplete.
    """
    if privacy_id is not None and max_contributions is None:
        raise ValueError("privacy_id needs max_contributions (L): the rows each person may contribute")
    Xs, ids = _subsample_rows(X, privacy_id, max_rows, sample_seed)
    total = len(algorithms) * len(list(epsilons)) * int(n_seeds)
    refs: dict[tuple[str, str], Reference] = {}
    out: list[UtilityCurve] = []
    for j, a in enumerate(algorithms):
        bkey = (baseline_key(a), measure or measure_for(a))
        if bkey not in refs and kmeans is not None and bkey == ("kmeans", CENTRE_ERROR):
            refs[bkey] = Reference(CENTRE_ERROR, kmeans, 0.0, 0.0, bool(geo))
        if bkey not in refs:
            refs[bkey] = fit_reference(_reference_rows(X, Xs, bkey[1]), bounds, a, n_clusters=n_clusters,
                                       params=params, measure=measure, geo=geo)
        def partial(c, done=tuple(out)):
            on_partial([*done, c])

        c = privacy_utility_curve(Xs, bounds, a, epsilons=epsilons, n_seeds=n_seeds, n_clusters=n_clusters,
                                  params=params, reference=refs[bkey], progress=progress, random_state=random_state,
                                  on_epsilon=None if on_partial is None else partial,
                                  max_contributions=max_contributions, privacy_id=ids,
                                  _done=j * len(list(epsilons)) * int(n_seeds), _total=total, n_rows=len(X))
        out.append(c)
        if not c.complete:
            break
        if on_partial is not None and j < len(algorithms) - 1:
            on_partial(list(out))
    return out


def curves_frame(curves) -> pd.DataFrame:
    """All curves' summaries stacked (columns as :meth:`UtilityCurve.summary`, plus ``measure``)."""
    if not curves:
        return pd.DataFrame(columns=["algorithm", "epsilon", "median", "q10", "q90", "n", "measure"])
    return pd.concat([c.summary().assign(measure=c.measure) for c in curves], ignore_index=True)


def measured_best(curves) -> pd.DataFrame:
    """Per epsilon, the algorithm with the lowest median among the measured curves (same measure only)."""
    df = curves_frame(curves).dropna(subset=["median"])
    if df.empty:
        return pd.DataFrame(columns=["epsilon", "measured_best"])
    idx = df.groupby("epsilon")["median"].idxmin()
    return df.loc[idx, ["epsilon", "algorithm"]].rename(columns={"algorithm": "measured_best"}).reset_index(drop=True)
