"""The expected-error band of releases at an ε (issue 65, point 5): one cached simulation per setting and ε.

:func:`expected_error` and :func:`accuracy_answer` simulate :data:`EXPECTED_ERROR_RELEASES` releases (fresh,
unpredictable noise each) on data a page may simulate on (public data, the owner's raw data) and cache them for
the whole server: the Explorer's band under a draw and Compare's answer and chart read the same simulations.
On private data :func:`preview_band` and :func:`preview_answer` do the same from a recorded release's synopsis
(:func:`dpcore.evaluation.release_preview`, post-processing).  Re-exported by :mod:`ui.models.shared`.  No
Streamlit here.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from dpcore.formatting import fmt_distance, fmt_epsilon, fmt_range, fmt_share

#: Simulated releases behind every expected-error band (issue 65: 20 unseeded ones gave bands 40 % apart).
EXPECTED_ERROR_RELEASES = 50
#: Bootstrap rounds for the uncertainty of a band simulated from a recorded release (private data).
PREVIEW_CHECKS = 2


@dataclass(frozen=True)
class ErrorSetting:
    """What an expected-error band is a function of (hashable: the cache's key).

    Attributes
    ----------
    data : str
        Names the points simulated on: ``"data:<name>:<fingerprint>"`` (public data, or the owner's raw data).
    algorithm : str
    n_clusters : int
    params : tuple
        The further parameters as sorted ``(name, value)`` pairs (δ, the algorithm's own, the privacy unit's).
    lower, upper : tuple of float
        The public bounds.
    geo : bool
        Longitude/latitude: distances in metres.
    source : str
        What the band says it was simulated on ("this public data", "the raw data").
    public : bool
        The data are public (the embedded taxi sample, the teaching sets): its simulations are also kept on disk
        (:mod:`ui.preview_cache`), so a restarted server shows the band without simulating it again.  Simulations
        on an owner's raw data stay in this server's memory.
    """

    data: str
    algorithm: str
    n_clusters: int
    params: tuple
    lower: tuple
    upper: tuple
    geo: bool
    source: str
    public: bool = False

    @property
    def unit(self) -> str:
        """``"m"`` on a map, else ``"data units"``."""
        return "m" if self.geo else "data units"


@dataclass(frozen=True)
class Band:
    """The expected error of a release at one ε: where the private centres sit from the non-private ones.

    Attributes
    ----------
    epsilon : float
    low, median, high : float
        The 10 %, 50 % and 90 % quantiles of the simulated releases' centre errors, in ``unit`` (NaN where the
        algorithm refused at this ε).
    unit : str
    n_releases : int
    source : str
        What the releases were simulated on, in words.
    note : str
        A further sentence (the uncertainty of a band simulated from a recorded release).
    diagonal : float or None
        The public box's diagonal in data units: a band in data units also reads as a share of it, as the
        teaching sentence under the same draw does (issue 65: "1.7 % of the domain's diagonal" beside
        "3,483–5,520 data units").
    """

    epsilon: float
    low: float
    median: float
    high: float
    unit: str
    n_releases: int
    source: str
    note: str = ""
    diagonal: float | None = None

    @property
    def ok(self) -> bool:
        """True when the band has numbers (the algorithm ran at this ε)."""
        return bool(np.isfinite([self.low, self.median, self.high]).all())

    def sentence(self) -> str:
        """The band in one sentence, with its unit on every figure."""
        if not self.ok:
            return (f"No expected error at ε = {fmt_epsilon(self.epsilon)}: the algorithm refuses to run at this ε "
                    "on data of this size.")
        share = ""
        if self.unit == "data units" and self.diagonal:
            lo, hi = fmt_share(self.low / self.diagonal).removesuffix(" %"), fmt_share(self.high / self.diagonal)
            share = f" ({lo}–{hi} of the domain's diagonal)"
        where = self.source if self.source.startswith(("this ", "the ", "points ")) else f"the {self.source}"
        return (f"Expected error at ε = {fmt_epsilon(self.epsilon)}: the private centres sit "
                f"{fmt_range(self.low, self.high, self.unit)}{share} from the non-private ones in 80 % of releases "
                f"(median {fmt_distance(self.median, self.unit)}; {self.n_releases} simulated releases on {where})."
                + (f" {self.note}" if self.note else ""))


class _LRU:
    """A small thread-safe cache for the whole server (every session): summaries of simulations, never a release.

    A value being computed is computed once: a second caller of the same key (another session opening the same
    page, a class of thirty at once) waits for the first's result instead of simulating it again beside it.
    """

    def __init__(self, size: int):
        self.size, self.lock, self.items = size, threading.Lock(), OrderedDict()
        self.pending: dict = {}      # key -> Future of the value one caller is computing now

    def get(self, key, make: Callable):
        while True:
            with self.lock:
                if key in self.items:
                    self.items.move_to_end(key)
                    return self.items[key]
                pending = self.pending.get(key)
                mine = pending is None
                if mine:
                    pending = self.pending[key] = Future()
            if not mine:
                try:
                    return pending.result()
                except _Abandoned:   # the computing caller stopped (its error, or its session went): try again
                    continue
            try:
                value = make()       # outside the lock: a long simulation never blocks another setting's reader
            except BaseException:
                with self.lock:
                    self.pending.pop(key, None)
                pending.set_exception(_Abandoned())
                raise
            with self.lock:
                self.items[key] = value
                self.pending.pop(key, None)
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
            pending.set_result(value)
            return value

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


class _Abandoned(Exception):
    """The caller computing a value stopped without one; a waiting caller computes it itself."""


_ERRORS = _LRU(512)
_POINTS = _LRU(16)


def _points(setting: ErrorSetting, points: Callable) -> tuple:
    """The rows simulated on (a seeded sample of at most 20,000), the non-private centres the errors are measured
    from (``points``'s: the reference the pages draw, k-means on all rows; else computed so) and the number of
    rows the sample stands for (a release on it runs at ε times all rows over the sample's), per data.

    ``points`` : callable () -> (X, privacy_id or None, reference centres or None), X all the rows."""
    from dpcore.evaluation.accuracy import reference_centres, sample_rows

    def make():
        X, ids, reference = points()
        if reference is None:
            reference = reference_centres(X, setting.n_clusters, (np.asarray(setting.lower), np.asarray(setting.upper)))
        n_rows = X.shape[0]      # the sample's releases run at ε·n_rows/len(sample): noise weighs as on all rows
        X, ids = sample_rows(X, ids)
        return X, ids, np.asarray(reference, dtype=float), n_rows
    return _POINTS.get((setting.data, setting.n_clusters, setting.lower, setting.upper, setting.params), make)


def simulated_errors(setting: ErrorSetting, epsilon: float, points: Callable) -> np.ndarray:
    """The centre errors of :data:`EXPECTED_ERROR_RELEASES` releases simulated at ``epsilon``, cached per setting.

    Parameters
    ----------
    setting : ErrorSetting
    epsilon : float
    points : callable () -> (X, privacy_id or None, reference centres or None), all the rows (:func:`_points`)
        The rows to simulate on; called only when the cache does not hold them.

    Returns
    -------
    ndarray (EXPECTED_ERROR_RELEASES,), in ``setting.unit``; fresh, unpredictable noise in every release.
    """
    from dpcore.evaluation.accuracy import simulate_errors

    def make():
        X, ids, reference, n_rows = _points(setting, points)
        return simulate_errors(setting.algorithm, float(epsilon), X=X, bounds=(np.asarray(setting.lower),
                               np.asarray(setting.upper)), n_clusters=setting.n_clusters, reference=reference,
                               geo=setting.geo, params=dict(setting.params), n_releases=EXPECTED_ERROR_RELEASES,
                               privacy_id=ids, n_rows=n_rows)
    return _ERRORS.get((setting, float(epsilon)), (lambda: _kept(setting, epsilon, make)) if setting.public else make)


def _kept(setting: ErrorSetting, epsilon: float, make: Callable) -> np.ndarray:
    """The simulation of public data read back from disk (:mod:`ui.preview_cache`, per data digest, setting, ε
    and code version), else ``make()`` now, kept for the next server.  Public data only: its noise protects
    nothing, and the errors are a summary of simulations, never a release."""
    from .. import preview_cache
    # "n-scaled": the sample's releases run at ε·N/n (dpcore.evaluation.accuracy.simulated_epsilon); entries
    # of the simulations before it (at ε on the sample, several times too pessimistic) are not read back.
    key = f"expected-error|n-scaled|{EXPECTED_ERROR_RELEASES}|{setting!r}|{float(epsilon)!r}"
    return preview_cache.kept(
        key, make, encode=lambda errors: {"errors": [float(e) for e in errors]},
        decode=lambda entry: (np.asarray(entry["errors"], dtype=float)
                              if len(entry.get("errors", ())) == EXPECTED_ERROR_RELEASES else None))


def expected_error(setting: ErrorSetting, epsilon: float, points: Callable) -> Band:
    """The expected-error band at ``epsilon``: one cached simulation per setting and ε, the same on every page.

    Returns
    -------
    Band
    """
    import warnings
    errors = simulated_errors(setting, epsilon, points)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # every release refused: a NaN band
        lo, mid, hi = np.nanquantile(errors, [0.1, 0.5, 0.9]) if np.isfinite(errors).any() else (np.nan,) * 3
    diagonal = float(np.linalg.norm(np.asarray(setting.upper) - np.asarray(setting.lower)))
    return Band(float(epsilon), float(lo), float(mid), float(hi), setting.unit, int(np.isfinite(errors).sum()),
                setting.source, diagonal=diagonal)


def accuracy_answer(setting: ErrorSetting, target: float, points: Callable, *, epsilons=None,
                    confidence: float = 0.9):
    """The smallest ε whose simulated releases are within ``target`` in ``confidence`` of them, and the band at
    every ε: built from the same cached simulations as :func:`expected_error`.

    Returns
    -------
    dpcore.evaluation.AccuracyAnswer
    """
    from dpcore.evaluation.accuracy import ACCURACY_EPSILONS, answer_from_errors, check_target
    target = check_target(target, confidence, EXPECTED_ERROR_RELEASES)
    eps = np.asarray(sorted(float(e) for e in (epsilons or ACCURACY_EPSILONS)))
    errors = np.stack([simulated_errors(setting, float(e), points) for e in eps])
    return answer_from_errors(errors, eps, target, confidence=confidence, geo=setting.geo, source=setting.source)


def _digest(obj) -> str:
    return hashlib.blake2b(json.dumps(obj, sort_keys=True, default=str).encode(), digest_size=12).hexdigest()


def preview_key(fit, shape, epsilon: float, geo: bool) -> tuple:
    """The cache key of a band simulated from a recorded release: the look-alike's synopsis and the setting.

    Two draws of the same setting (algorithm, k, parameters, unit) previewed on the same look-alike at the
    same ε share one simulation, whichever page asks (the Explorer under a draw, Compare's chart).
    """
    rel = fit.release
    params = {k: v for k, v in (rel.get("parameters") or {}).items() if k != "epsilon"}
    return ("preview", _digest((shape.release or {}).get("synopsis")), rel["algorithm"]["key"], _digest(params),
            _digest(rel.get("privacy_unit")), float(epsilon), bool(geo))


def preview_band(fit, shape, epsilon: float, *, geo: bool):
    """The expected error of releases like the recorded ``fit`` at ``epsilon``, simulated from ``shape``'s synopsis.

    Post-processing of recorded releases (:func:`dpcore.evaluation.release_preview`, with
    :data:`EXPECTED_ERROR_RELEASES` releases and :data:`PREVIEW_CHECKS` bootstrap rounds), cached per
    :func:`preview_key`.

    Returns
    -------
    dpcore.evaluation.ReleasePreview

    Raises
    ------
    ValueError
        As :func:`~dpcore.evaluation.release_preview` (a noisy size below k, other bounds).
    """
    from dpcore.evaluation import release_preview

    def make():
        return release_preview(fit, float(epsilon), lookalike=None if shape is fit else shape, geo=geo,
                               n_releases=EXPECTED_ERROR_RELEASES, n_checks=PREVIEW_CHECKS)
    return _ERRORS.get(preview_key(fit, shape, epsilon, geo), make)


def preview_answer(fit, shape, target: float, *, geo: bool, epsilons=None, confidence: float = 0.9):
    """The smallest ε whose releases like ``fit`` are within ``target``, from the same cached previews as the
    expected error under a draw (:func:`preview_band` at each ε): on private data Compare's chart and the
    Explorer's band agree for the same draw and look-alike.

    Returns
    -------
    dpcore.evaluation.AccuracyAnswer (its band: each ε's band as :func:`preview_band` states it)
    """
    from dpcore.evaluation.accuracy import ACCURACY_EPSILONS, AccuracyAnswer, check_target
    target = check_target(target, confidence, EXPECTED_ERROR_RELEASES)
    eps = np.asarray(sorted(float(e) for e in (epsilons or ACCURACY_EPSILONS)))
    previews = [preview_band(fit, shape, float(e), geo=geo) for e in eps]
    band = np.stack([np.asarray(p.band, dtype=float) for p in previews])
    within = np.array([float(np.mean(np.where(np.isnan(p.errors), False, p.errors <= target)))
                       if p.errors is not None else 0.0 for p in previews])
    ok = np.flatnonzero(within >= confidence)
    return AccuracyAnswer(float(eps[ok[0]]) if ok.size else None, target, "m" if geo else "data units", eps, band,
                          within, float(confidence), EXPECTED_ERROR_RELEASES, f"points drawn from {previews[0].source}")
