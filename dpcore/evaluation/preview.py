"""Accuracy previews computed from a recorded release (issue 56, point 3): post-processing, no further ε.

On private data the error band of a release cannot be simulated on the data (that is a use of the
data nobody recorded) and a public look-alike (:func:`~dpcore.evaluation.accuracy.lookalike`: public
bounds, k and a public size) knows neither the data's shape nor its size nor a person's L rows: on a
3,000-row upload it said 104–176 m where the draw was 1–26 km off.  A release that is already
recorded carries all three at no further cost: its synopsis (a noisy grid, a sanitized point set or
a coreset) is a noisy picture of the data's shape, its noisy counts sum to a noisy size, and its
privacy unit names L.  So the look-alike here is drawn from the released synopsis
(:func:`synopsis_points`) and simulated releases run on it at the release's unit
(:func:`release_preview`, :func:`epsilon_for_accuracy_from_release`).

What a look-alike must not carry is the synopsis' noise as mass: cells whose noisy count is within
a few noise scales of zero are taken as empty (:func:`floor_scales`).  Small mass far from the data
decides the error of the algorithms that pass over it (zCDP-Lloyd, DPM): k-means on the look-alike
spends a centre on it, they do not, and a sanitized database's spurious PrivTree leaves made their
previews twice their real error on the taxi sample (issue 56; ``benchmarks/preview_coverage.py``).

The preview is itself computed from a noisy release, so it is uncertain.  How much is measured by a
parametric bootstrap (Efron & Tibshirani 1993, §6.5): releases simulated on the look-alike are turned
into look-alikes of their own, and the spread of their medians around the first one's is the factor
stated beside the band (:attr:`ReleasePreview.uncertainty`).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..exceptions import InfeasibleBudgetError, PrivacyLeakWarning
from ..release.view import ReleasedFit
from .accuracy import ACCURACY_EPSILONS, AccuracyAnswer, answer_from_errors, centre_error, check_target, quantity
from .lookalike_points import (  # noqa: F401  (re-exported: the preview's look-alike, documented there)
    FLOOR,
    MAX_LOOKALIKE_ROWS,
    SHAPED_KINDS,
    cell_noise_scale,
    floor_scales,
    synopsis_points,
)


def checked_keys() -> tuple[str, ...]:
    """Registry keys of the algorithms whose previews are checked against real draws (their classes declare
    ``preview_checked = True``; read from the registry when asked, so a class registered later counts).

    ``tests/test_preview.py`` checks each: the band covers >= 70 % of real draws on taxi, Gowalla at person
    level and an upload (EUGkM and Hybrid on their own grid, the others on a sanitized database at a tenth of
    the draw's ε; PGkM over 20 real draws and the app's 12 simulated releases per preview: 77 %, 98 %, 97 %,
    where 10 draws' sampling noise alone once gave 63 % on taxi).  Measured but not declared
    (``benchmarks/results/preview_coverage.txt``):

    * Auto: 53 % on the upload (93-100 % on taxi and Gowalla).  On the upload's tight clusters Auto releases
      EUGkM or Hybrid in most draws, and a grid algorithm previewed on a sanitized database at a tenth of ε
      (person level, L = 5) is about 5 times too pessimistic: EUGkM there covers 40 % of real draws (band
      median 6.0 km against 1.1 km), Hybrid 47 %; the database's PrivTree leaves spread each 1-km cluster
      over its leaf.  On a sanitized database at the draw's full ε, Auto covers 87 %; previewed on the
      chosen candidate's own grid (tried at stop 62, not kept) 57 %, its median 2.9x the real one: the
      simulation of Auto's whole split on points drawn from a grid at a share of ε adds that grid's noise
      twice.  A check takes a minute or more per data set.
    * PRIVATE-K-MEAN (coreset): refuses at ε = 1 on these sizes.

    Returns
    -------
    tuple of str
        In registry order.
    """
    from ..algorithms.registry import ALGORITHMS  # imported when asked, as the registry elsewhere in this module
    return tuple(key for key, cls in ALGORITHMS.items() if vars(cls).get("preview_checked", False))


@dataclass(frozen=True)
class ReleasePreview:
    """The expected error of releases like a recorded one, from :func:`release_preview`.

    Attributes
    ----------
    epsilon : float
        The ε the simulated releases ran at.
    band : ndarray (3,)
        The 80 % band and median shown to people: the simulated 10 % quantile divided by
        ``uncertainty``, the median, the 90 % quantile times ``uncertainty`` (metres on a map, else
        data units); NaN where the algorithm refused at this ε.
    simulated : ndarray (3,)
        10 %, 50 % and 90 % quantiles of the simulated releases' centre errors, before widening.
    unit : str
        ``"m"`` or ``"data units"``.
    uncertainty : float >= 1
        The preview's own uncertainty as a factor: the band may be off by about ×``uncertainty``
        because it is computed from a noisy release (parametric bootstrap; NaN if not measured).
    n_releases : int
        Simulated releases behind the band.
    size : int
        The released noisy size the look-alike was drawn at.
    max_contributions : int or None
        The release's L (person level), None for a row-level release.
    source : str
        The release(s) the preview was computed from, in words (``"release #12's synopsis"``, or
        ``"release #9's synopsis (sanitized database at ε = 0.1, recorded on the same data), for release
        #12's setting (DPLloyd)"`` when the look-alike came from another release of the same data).
    checked : bool
        Whether previews like this one are checked against real draws: a :func:`checked_keys` algorithm on
        its own synopsis or a sanitized database's; the sentence says so when they are not.
    errors : ndarray (n_releases,) or None
        The simulated releases' centre errors behind ``simulated`` (NaN where the algorithm refused): what
        an answer's share of releases within a target is counted on.
    """

    epsilon: float
    band: np.ndarray
    simulated: np.ndarray
    unit: str
    uncertainty: float
    n_releases: int
    size: int
    max_contributions: int | None
    source: str
    checked: bool = True
    errors: np.ndarray | None = None

    def covers(self, errors) -> np.ndarray:
        """Which of ``errors`` (real draws' centre errors, same unit) fall inside the 80 % band."""
        e = np.asarray(errors, dtype=float)
        return (e >= self.band[0]) & (e <= self.band[2])

    def sentence(self) -> str:
        """The band and its own uncertainty in one sentence, as the app shows it."""
        if not np.isfinite(self.band).all():
            return (f"No preview at ε = {self.epsilon:g}: the algorithm refuses to run at this ε on data of the "
                    "released size.")
        lo, mid, hi = (quantity(v) for v in self.band)
        unc = (f" The preview is itself uncertain by about ×{self.uncertainty:.1f} because it is computed from a "
               f"noisy release; the band allows for that (the simulations alone gave "
               f"{quantity(self.simulated[0])}–{quantity(self.simulated[2])} {self.unit})."
               if np.isfinite(self.uncertainty) else "")
        who = f", at most {self.max_contributions} rows per person" if self.max_contributions else ""
        return (f"Expected error at ε = {self.epsilon:g}: the private centres sit {lo}–{hi} {self.unit} from the "
                f"non-private ones in 80 % of releases (median {mid} {self.unit}). Simulated from {self.source}: "
                f"{self.n_releases} releases on points drawn from that synopsis at its noisy size (about "
                f"{self.size:,} rows){who}; post-processing, it costs no ε.{unc}"
                + ("" if self.checked else " Previews like this one are not checked against real draws yet (those of "
                   f"{checked_names()}, each on its own synopsis or a sanitized database's, are): read the band as "
                   "a rough guide."))


def _checked(key: str, fit: ReleasedFit, shape: ReleasedFit) -> bool:
    """Whether a preview of ``key`` from ``shape``'s synopsis is one of the kinds checked against real draws.

    Checked (tests/test_preview.py): a release on its own synopsis, or a :func:`checked_keys` algorithm on a
    sanitized database's.  On another release's grid (an EUGkM or Hybrid draw as the look-alike of a
    DPM draw) the previews of DPM and zCDP-Lloyd covered only 60-67 % of real draws on the taxi sample
    (``benchmarks/preview_coverage.py --lookalike eugkm --share 1``), so such a preview is not called
    checked.
    """
    return key in checked_keys() and (shape is fit or shape.release["algorithm"]["key"] == "sanitize")


def checked_names() -> str:
    """The short display names of the :func:`checked_keys` algorithms, in words.

    Returns
    -------
    str
        ``"EUGkM, Hybrid, DPLloyd, ... and zCDP-Lloyd"``: each registry display name without its
        parenthesis, in :func:`checked_keys` order.
    """
    from ..algorithms.registry import releasable
    # "DPM (separation)" -> "DPM": the sentence lists names, the picker explains them.
    names = [(releasable(key).display_name or key).split(" (")[0] for key in checked_keys()]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _release_view(release) -> ReleasedFit:
    if isinstance(release, ReleasedFit):
        return release
    if isinstance(release, dict):
        return ReleasedFit(release)
    rel = getattr(release, "release", None)
    if isinstance(rel, dict):
        return ReleasedFit(rel)
    raise TypeError("give a recorded release: its dict, or the ReleasedFit a page draws")


def previewable(release) -> bool:
    """Whether this release carries its own look-alike: a grid, point or coreset synopsis.

    A release without one (centres only: DPLloyd, zCDP-Lloyd, DPM, ...) is previewed on another
    release's synopsis (``release_preview(..., lookalike=...)``, :func:`lookalike_source`).
    """
    try:
        fit = _release_view(release)
    except (TypeError, KeyError, ValueError):
        return False
    return getattr(fit.synopsis_, "kind", None) in SHAPED_KINDS


def _same_bounds(a: ReleasedFit, lower, upper) -> bool:
    """Whether release ``a`` was drawn inside the public bounds (lower, upper): scalars or arrays (d,)."""
    lo, hi = np.asarray(a.bounds_.lower, dtype=float), np.asarray(a.bounds_.upper, dtype=float)
    try:
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), lo.shape) for b in (lower, upper))
    except ValueError:       # another number of columns
        return False
    return bool(np.allclose(lo, lower) and np.allclose(hi, upper))


def _unit_L(fit: ReleasedFit) -> int | None:
    """A release's L: its privacy unit's ``max_contributions`` when person level, else None."""
    unit = fit.release.get("privacy_unit") or {}
    return int(unit["max_contributions"]) if unit.get("person_level") and unit.get("max_contributions") else None


def _unit_bounding(fit: ReleasedFit) -> str | None:
    """A person-level release's contribution bounding ("weight" or "sample"), else None."""
    unit = fit.release.get("privacy_unit") or {}
    return str(unit["bounding"]) if unit.get("person_level") and unit.get("bounding") else None


def lookalike_source(release, candidates, *, bounds=None, person_level: bool | None = None,
                     max_contributions: int | None = None, bounding: str | None = None) -> ReleasedFit | None:
    """The recorded release whose synopsis previews ``release``: its own, else the best among ``candidates``.

    Parameters
    ----------
    release : dict, ReleasedFit or None
        The draw to preview; None to choose for a setting not drawn yet (a curve), given by
        ``bounds`` and ``person_level``.
    candidates : iterable of dict, ReleasedFit or StoredRelease
        Other recorded releases of the same data set (the store's, or the draws a page shows).
    bounds : (lower, upper) or None
        The public bounds to match when ``release`` is None (scalars or arrays (d,)).
    person_level : bool or None
        The unit to match when ``release`` is None (True: person level).
    max_contributions : int or None
        The L to prefer when ``release`` is None and ``person_level`` (the page's L); with a
        ``release``, its own privacy unit's L.
    bounding : {"weight", "sample"} or None
        The contribution bounding to prefer when ``release`` is None (None: no preference); with a
        ``release``, its own.

    Returns
    -------
    ReleasedFit or None
        ``release`` itself when it holds a grid, point or coreset synopsis; else, among the
        candidates that hold one, have the same public bounds and protect the same unit (person or
        row level): one with the same L first (a synopsis drawn at another L carries another
        noise-to-signal ratio and, with sampling, other rows), then one bounded the same way (a
        weighted synopsis carries all of every person's rows, a sampled one a sample: issue 68), then
        a sanitized database (the look-alike previews are checked on), then the one drawn at the
        largest ε (its synopsis is the least noisy), with its store id when it has one; None if there
        is none.  Order of the preferences: same L, same bounding, then sanitized, then ε (so a
        sanitized database at another L comes after a grid at the same L).

    Raises
    ------
    ValueError
        ``release`` is None and ``bounds`` or ``person_level`` is missing.

    Notes
    -----
    **Privacy.** A choice among recorded releases by their public fields (ε, bounds, unit):
    post-processing, no further cost.
    """
    if release is None:
        if bounds is None or person_level is None:
            raise ValueError("without a release, give the bounds and the unit (person_level) to match")
        lower, upper, person = bounds[0], bounds[1], bool(person_level)
        L = int(max_contributions) if person and max_contributions is not None else None
        how = bounding if person else None
    else:
        fit = _release_view(release)
        if previewable(fit):
            return fit
        lower, upper = fit.bounds_.lower, fit.bounds_.upper
        person = bool((fit.release.get("privacy_unit") or {}).get("person_level"))
        L = _unit_L(fit)
        how = _unit_bounding(fit)
    best, best_rank = None, (False, False, False, -math.inf)
    for c in candidates:
        rel = getattr(c, "release", c)
        if not previewable(rel):
            continue
        cand = c if isinstance(c, ReleasedFit) else ReleasedFit(rel, getattr(c, "id", None))
        if bool((cand.release.get("privacy_unit") or {}).get("person_level")) != person \
                or not _same_bounds(cand, lower, upper):
            continue
        # The same L first (row level: both None), then a sanitized database (previews of centres-only draws
        # are checked on its synopsis, _checked), then the least noisy.
        rank = (_unit_L(cand) == L, how is None or _unit_bounding(cand) == how,
                cand.release["algorithm"]["key"] == "sanitize", float(cand.release["privacy"]["epsilon"]))
        if rank > best_rank:
            best, best_rank = cand, rank
    return best


def _setting(fit: ReleasedFit, algorithm, n_clusters, params, *, shape: bool = False):
    """(estimator class, k, L, parameters) of a release; ``shape``: any releasable key (a sanitized database too)."""
    from ..algorithms.registry import ALGORITHMS, bounding_for, releasable
    rel = fit.release
    key = algorithm or rel["algorithm"]["key"]
    if shape:
        cls = releasable(key)
    elif key not in ALGORITHMS or not ALGORITHMS[key].private:
        raise ValueError(f"{key!r} is not a private algorithm of dpcore.ALGORITHMS")
    else:
        cls = ALGORITHMS[key]
    k = int(n_clusters or rel["parameters"].get("n_clusters") or fit.cluster_centers_.shape[0])
    L = _unit_L(fit)
    allowed = set(cls().get_params(deep=False))
    # Another algorithm than the release's: none of the release's parameters (a name may mean something else).
    own = (rel["parameters"] or {}) if key == rel["algorithm"]["key"] else {}
    p = {name: v for name, v in own.items()
         if name in allowed and name not in ("n_clusters", "epsilon", "bounds", "random_state", "max_contributions",
                                             "contribution_bounding")}
    p.update(params or {})
    if L:
        # The release's bounding (weighting or sampling), as this class runs it: simulations bound as a draw.
        p.setdefault("contribution_bounding", bounding_for(cls, _unit_bounding(fit)))
    if "delta" in allowed and not p.get("delta") and rel["privacy"].get("delta"):
        p["delta"] = float(rel["privacy"]["delta"])
    return cls, k, L, p


def _describe(fit: ReleasedFit, shape: ReleasedFit) -> str:
    """Which draw a preview comes from, in words (the setting's release and the synopsis' release)."""
    def name(f):
        return f"release #{f.release_id}" if f.release_id is not None else "the release"
    if shape is fit:
        return f"{name(fit)}'s synopsis"
    from ..algorithms.registry import releasable
    what = lambda f: releasable(f.release["algorithm"]["key"]).display_name or f.release["algorithm"]["key"]  # noqa: E731
    kind = "sanitized database" if shape.release["algorithm"]["key"] == "sanitize" else what(shape)
    return (f"{name(shape)}'s synopsis ({kind} at ε = {float(shape.release['privacy']['epsilon']):g}, recorded on "
            f"the same data), for {name(fit)}'s setting ({what(fit)})")


def _prepare(fit: ReleasedFit, algorithm, n_clusters, params, random_state, lookalike=None):
    """The simulation's setting and its look-alike, from recorded releases (see :func:`release_preview`)."""
    shape = fit if lookalike is None else _release_view(lookalike)
    if getattr(shape.synopsis_, "kind", None) not in SHAPED_KINDS:
        raise ValueError("this release holds no grid, point or coreset synopsis, so its shape cannot be previewed; "
                         "give another recorded release of the same data that holds one (EUGkM, Hybrid, a "
                         "sanitized database) as the look-alike")
    if shape is not fit and not _same_bounds(shape, fit.bounds_.lower, fit.bounds_.upper):
        raise ValueError("the look-alike release has other public bounds than the release previewed: it must be a "
                         "release of the same data with the same bounds")
    cls, k, L, p = _setting(fit, algorithm, n_clusters, params)
    bounds = (fit.bounds_.lower, fit.bounds_.upper)
    rng = np.random.default_rng(random_state)
    X, size = synopsis_points(shape.synopsis_, bounds, noise_scale=cell_noise_scale(shape.budget_), random_state=rng)
    if min(X.shape[0], size) < k:
        # k-means on fewer points than centres has no answer to compare a simulated release with.
        raise ValueError(f"the release's noisy size ({size:,}) is below k = {k}: too few points to preview "
                         "its error; choose a smaller k or draw on more data")
    return cls, k, L, p, bounds, rng, X, size, shape


def _errors(cls, X, L, *, k, epsilon, bounds, params, geo, n_releases, size, rng) -> np.ndarray:
    """Centre errors of ``n_releases`` releases simulated on ``X`` (fresh noise each) against k-means on ``X``."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits
    # One thread: on a few thousand points OpenMP's start-up and spin-waits cost more than the work
    # (2 s against 0.06 s per fit on a loaded two-core machine).
    with threadpool_limits(1):
        reference = KMeans(n_clusters=k, n_init=3, random_state=0).fit(X).cluster_centers_
    out = np.full(int(n_releases), np.nan)
    for s in range(int(n_releases)):
        try:
            est = _simulated_fit(cls, X, L, k=k, epsilon=epsilon, bounds=bounds, params=params, size=size, rng=rng)
        except InfeasibleBudgetError:
            break
        out[s] = centre_error(est.cluster_centers_, reference, geo=geo, bounds=bounds)
    return out


def _simulated_fit(cls, X, L, *, k, epsilon, bounds, params, size, rng):
    """One simulated release on ``X`` at the release's unit, with fresh (seeded) noise; never a release."""
    # A look-alike capped below the released size simulates the release's noise-to-signal ratio by
    # shrinking ε in proportion (every noisy count scales with n, every noise scale with 1/ε).
    eps = float(epsilon) * X.shape[0] / max(size, X.shape[0])
    kw = dict(params)
    fit_kw = {}
    if L:
        # Person level: persons of exactly L rows each, so every mechanism's sensitivity is the release's,
        # bounded as the release was (_setting: its bounding, or sampling where this class only samples).
        kw["max_contributions"] = int(L)
        kw.setdefault("contribution_bounding", "sample")
        fit_kw["privacy_id"] = np.arange(X.shape[0]) // int(L)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # regime warnings: these are simulations, never releases
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return cls(n_clusters=k, epsilon=eps, bounds=bounds, random_state=int(rng.integers(2**31)),
                   **kw).fit(X, **fit_kw)


def release_preview(release, epsilon: float | None = None, *, lookalike=None, algorithm: str | None = None,
                    n_clusters: int | None = None, params: dict | None = None, geo: bool = False,
                    n_releases: int = 20, n_checks: int = 3, random_state=None) -> ReleasePreview:
    """The expected centre error of releases like a recorded one, from a released synopsis (no further ε).

    Parameters
    ----------
    release : dict or ReleasedFit
        A recorded release (``dpcore-release/2``): its algorithm, k, parameters and privacy unit
        are the setting simulated.
    lookalike : dict, ReleasedFit or None
        A recorded release of the same data with the same public bounds holding a grid, point or
        coreset synopsis, whose synopsis is the look-alike (:func:`lookalike_source` picks one);
        default ``release`` itself, which must then hold one (:func:`previewable`).  This is how a
        centres-only release (DPLloyd, zCDP-Lloyd, DPM, ...) is previewed.
    epsilon : float > 0 or None
        The ε to preview; default the release's own.  Any ε may be previewed: the simulations
        read only the release.
    algorithm : str or None, a private key of ``dpcore.ALGORITHMS``; default the release's
    n_clusters : int or None; default the release's
    params : dict or None, further estimator parameters (override the release's)
    geo : bool, longitude/latitude columns: errors in metres
    n_releases : int >= 2, simulated releases behind the band
    n_checks : int >= 0
        Bootstrap rounds for the preview's own uncertainty (0: not measured, ``uncertainty`` NaN).
    random_state : int or None
        Seeds the look-alike and the simulations (tests); None: fresh randomness.  Nothing seeded
        here is a release.

    Returns
    -------
    ReleasePreview

    Raises
    ------
    ValueError
        No synopsis with mass (neither ``lookalike`` nor ``release`` holds one), a look-alike with
        other bounds, a noisy size below k, a bad ε, too few releases, or an algorithm that is not
        private.
    TypeError
        ``release`` is neither a release dict nor a :class:`~dpcore.release.view.ReleasedFit`.

    Notes
    -----
    **Privacy.** Every input is released output (the synopsis, its noisy size, the centres' count,
    the privacy unit and L) or public (bounds, ε, algorithm): the preview is post-processing of the
    recorded release(s) (Dwork & Roth 2014, Prop. 2.1) and may be shown to anyone who may see them.
    It never reads the data.

    **Method.** Points are drawn from the synopsis at the released noisy size
    (:func:`synopsis_points`); ``n_releases`` releases of the algorithm are simulated on them at
    ``epsilon`` and the release's unit (persons of L rows each when person level, so every noise
    scale is the release's), each compared with k-means on the same points (matched one to one,
    :func:`~dpcore.evaluation.centre_error`).  The band is their 10-50-90 % quantiles.  Uncertainty:
    ``n_checks`` times the look-alike's own release is simulated again on it (its algorithm, ε and
    unit) and its synopsis becomes a look-alike in turn; the factor ``u`` is exp(RMS of log(their
    medians / the preview's median)); the band shown is the simulated 10 % quantile / ``u`` to the
    90 % quantile × ``u``, so that it allows for the preview's own error.
    Cells below :func:`floor_scales` noise scales (the look-alike's ledger) are taken as empty.
    Checked against real draws in ``tests/test_preview.py`` for the :func:`checked_keys` algorithms
    (taxi, Gowalla at person level, an upload-like CSV; EUGkM and Hybrid on their own synopsis, the
    others on a sanitized database's): the band covers at least 70 % of them.
    """
    fit = _release_view(release)
    eps = float(fit.release["privacy"]["epsilon"] if epsilon is None else epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"ε must be a positive number, got {epsilon}")
    if int(n_releases) < 2:
        raise ValueError(f"at least 2 simulated releases are needed, got {n_releases}")
    cls, k, L, p, bounds, rng, X, size, shape = _prepare(fit, algorithm, n_clusters, params, random_state, lookalike)
    sim = dict(k=k, epsilon=eps, bounds=bounds, params=p, geo=geo, rng=rng)
    errors = _errors(cls, X, L, n_releases=n_releases, size=size, **sim)
    simulated = _band(errors)
    uncertainty = _uncertainty(cls, X, L, simulated[1], shape=shape, size=size, n_checks=n_checks,
                               n_releases=n_releases, **sim)
    u = uncertainty if np.isfinite(uncertainty) else 1.0
    band = np.array([simulated[0] / u, simulated[1], simulated[2] * u])
    return ReleasePreview(eps, band, simulated, "m" if geo else "data units", uncertainty,
                          int(np.isfinite(errors).sum()), int(size), L, _describe(fit, shape),
                          _checked(algorithm or fit.release["algorithm"]["key"], fit, shape), errors)


def _band(errors) -> np.ndarray:
    errors = np.asarray(errors, dtype=float)
    if not np.isfinite(errors).any():
        return np.full(3, np.nan)
    return np.nanquantile(errors, [0.1, 0.5, 0.9])


def _uncertainty(cls, X, L, median, *, shape: ReleasedFit, size, n_checks, n_releases, k, epsilon, bounds, params,
                 geo, rng) -> float:
    """×factor of the preview's median from a parametric bootstrap (see :func:`release_preview`)."""
    if int(n_checks) < 1 or not np.isfinite(median) or median <= 0:
        return float("nan")
    # The look-alike's own release, simulated again on the look-alike: its algorithm, ε and unit.
    s_cls, s_k, s_L, s_p = _setting(shape, None, None, None, shape=True)
    s_eps = float(shape.release["privacy"]["epsilon"])
    logs = []
    for _ in range(int(n_checks)):
        try:
            est = _simulated_fit(s_cls, X, s_L, k=s_k, epsilon=s_eps, bounds=bounds, params=s_p, size=size, rng=rng)
            Xb, size_b = synopsis_points(est.synopsis_, bounds, size=size, random_state=rng,
                                         noise_scale=cell_noise_scale(est.budget_))
        except (InfeasibleBudgetError, ValueError, AttributeError):
            continue
        m = _band(_errors(cls, Xb, L, k=k, epsilon=epsilon, bounds=bounds, params=params, geo=geo,
                          n_releases=max(int(n_releases) // 2, 2), size=size_b, rng=rng))[1]
        if np.isfinite(m) and m > 0:
            logs.append(math.log(m / median))
    if not logs:
        return float("nan")
    return float(max(math.exp(math.sqrt(float(np.mean(np.square(logs))))), 1.0))


def epsilon_for_accuracy_from_release(release, target: float, *, lookalike=None, algorithm: str | None = None,
                                      n_clusters: int | None = None, params: dict | None = None, geo: bool = False,
                                      epsilons=ACCURACY_EPSILONS, n_releases: int = 20, confidence: float = 0.9,
                                      random_state=None) -> AccuracyAnswer:
    """The smallest ε whose releases put the centres within ``target``, simulated from a recorded release.

    :func:`~dpcore.evaluation.epsilon_for_accuracy` on points drawn from the release's synopsis
    (:func:`synopsis_points`, at its noisy size) and at its unit (L rows per person when person
    level), instead of on a public look-alike or the raw data.

    Parameters
    ----------
    release : dict or ReleasedFit, a recorded release (its setting is simulated)
    target : float > 0, the accepted error: metres when ``geo``, else data units
    lookalike : dict, ReleasedFit or None
        As :func:`release_preview`: another recorded release of the same data whose synopsis is
        the look-alike; default ``release``, which must then hold one.
    algorithm, n_clusters, params, geo : as :func:`release_preview`
    epsilons : sequence of float > 0, tried smallest first
    n_releases : int >= 2, simulated releases per ε
    confidence : float in (0, 1)
    random_state : int or None (tests); None: fresh randomness

    Returns
    -------
    AccuracyAnswer, with ``source`` naming the release.

    Raises
    ------
    ValueError
        As :func:`release_preview` and :func:`~dpcore.evaluation.epsilon_for_accuracy`.

    Notes
    -----
    **Privacy.** Post-processing of the recorded release (Dwork & Roth 2014, Prop. 2.1): no further
    cost, and the answer may be used as a release's ε (it depends on the data only through a
    release already accounted for).
    """
    fit = _release_view(release)
    target = check_target(target, confidence, n_releases)
    cls, k, L, p, bounds, rng, X, size, shape = _prepare(fit, algorithm, n_clusters, params, random_state, lookalike)
    eps = np.asarray(sorted(float(e) for e in epsilons))
    errors = np.stack([_errors(cls, X, L, k=k, epsilon=float(e), bounds=bounds, params=p, geo=geo,
                               n_releases=n_releases, size=size, rng=rng) for e in eps])
    source = f"points drawn from {_describe(fit, shape)}"
    return answer_from_errors(errors, eps, target, confidence=float(confidence), geo=geo, source=source)
