"""Exact structural audit: everything a release shows besides its noisy values is a function of public inputs.

The rule (docs/ARCHITECTURE.md, "Structure"): a release's *structure* -- every array's
shape and dtype, the number of centres, coreset points, rounds and iterations, the
ledger's entries with their epsilon and delta, the export's keys, and the warnings and
exceptions ``fit`` raises -- is a function of public inputs (bounds, a declared
``n_samples``, k, epsilon, delta, the other parameters) and of values already released
through the ledger (such as a noisy count).  Everything else is a value drawn through the
noise module.

How the audit decides, exactly and without statistics
-----------------------------------------------------
Structure may legitimately depend on released noisy values (a grid sized from the noisy
count, the clusters WaveCluster finds in its noisy grid): that is post-processing.  So
comparing two fits with *independent* noise would flag correct code, and comparing two
fits with the *same seed* would too, because the same seed gives the same noise, hence
*different* released values (``n + Z`` vs ``n + 1 + Z``).  The audit therefore couples
the two fits on their released values: :class:`NoiseTape` records every value the fit on
``D`` releases through a :class:`~dpcore.privacy.mechanisms.NoiseSource` mechanism, and the fit
on ``D'`` runs the same mechanisms (so its ledger is its own) but releases the recorded
values instead of its own draws.  Every mechanism dpcore uses (Laplace, Gaussian,
exponential, permute-and-flip, the quantile's exponential mechanism) has full support,
so the values released on ``D`` are a possible outcome on ``D'`` too.  Data-independent
randomness (``noise.rng``: sphere packing, random shifts, k-means++ restarts) is coupled
too: each call is keyed by its method and argument shapes, and the i-th call with a key
on ``D'`` returns the i-th result with that key on ``D``.  Calls whose shape depends on
the data (``permutation(n)``) get fresh draws; they cannot be structure themselves.

Given the same public inputs and the same released values, any difference in structure
on ``D`` and ``D'`` can only come from the data themselves: a leak, found with
certainty on the pair that triggers it (no false alarm, no sampling error).  A mechanism
call whose name, budget, sensitivity or shape differs between the two fits is itself
such a difference (:attr:`NoiseTape.mismatches`).

What the audit does not see: a branch taken on a value the tape does not couple (a
mechanism with data-dependent support would have to be added here), and timing.
"""
from __future__ import annotations

import copy
import hashlib
import inspect
import numbers
import warnings
from collections import defaultdict

import numpy as np

from dpcore.algorithms.base import DPClusterer
from dpcore.privacy.mechanisms import NoiseSource
from dpcore.store.draw import attach_spend, refusal_of

#: Fitted attributes that are declared raw facts for the data owner, not part of any release
#: (the app shows them only in its "Raw data facts" panel; build_release never exports them).
RAW_FACTS = {"n_clipped_"}

#: NoiseSource methods that compose rather than draw: their children are taped too.
_COMPOSERS = ("sub", "parallel", "with_ledger")
#: Mechanisms whose array argument is the data itself (its length is private): not structure.
_DATA_SIZED_ARGS = {"quantile"}
#: Mechanisms released in a sparse form: ``laplace_above`` thresholds a public-size vector of
#: which only the non-zero entries are passed explicitly (the rest as ``n_zeros``), so the
#: explicit part's length is the data's business.  Its output is replayed when the explicit
#: parts have the same shape and drawn afresh otherwise (the coupling is then partial).
_SPARSE = {"laplace_above"}
#: Keyword arguments of the mechanisms that carry data-derived values (their shape is structure).
_DATA_ARGS = {"values", "scores", "n_zeros"}


def _mechanism_names() -> list[str]:
    """Every public drawing method of NoiseSource (found by inspection, so new mechanisms are taped)."""
    return [m for m, f in inspect.getmembers(NoiseSource, inspect.isfunction)
            if not m.startswith("_") and m not in _COMPOSERS]


def _arg_sig(v, with_shape: bool = True):
    if isinstance(v, (bool, str, type(None))):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    a = np.asarray(v)
    return ("array", a.shape if with_shape else None, a.dtype.str)


def _value_key(v):
    """A hashable stand-in for an argument's exact value (arrays by shape, dtype and bytes)."""
    if isinstance(v, (bool, str, type(None), numbers.Number)):
        return v
    a = np.ascontiguousarray(v)
    if a.dtype == object:
        return ("object", repr(v))
    return ("array", a.shape, a.dtype.str, hashlib.sha1(a.tobytes()).hexdigest())


def _data_sig(v, sized: bool):
    """A data-derived argument: its shape when that is structure, never its values or dtype."""
    return ("array", np.shape(v)) if sized else "data"


def structure_of(v):
    """Type and shape of a value (what a noisy value contributes to structure)."""
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (numbers.Integral, numbers.Real)):
        return type(v).__name__ if not isinstance(v, np.generic) else v.dtype.str
    if v is None:
        return None
    if isinstance(v, tuple):
        return tuple(structure_of(x) for x in v)
    a = np.asarray(v)
    return ("ndarray", a.shape, a.dtype.str)


class _TapedGenerator:
    """Proxy of a numpy Generator whose calls are recorded (record mode) or replayed by key."""

    def __init__(self, tape, gen):
        self._tape = tape
        self._gen = gen

    def __getattr__(self, attr):
        target = getattr(self._gen, attr)
        if not callable(target) or attr in ("shuffle",):  # in-place methods: no coupling
            return target

        def call(*args, **kwargs):
            # Keyed by the arguments' values, not only their shapes: a draw whose probabilities
            # or range come from the raw rows (not from released values) must not be coupled,
            # or the audit would hide it.
            key = (attr, tuple(_value_key(a) for a in args),
                   tuple(sorted((k, _value_key(x)) for k, x in kwargs.items())))
            return self._tape._rng_call(key, lambda: target(*args, **kwargs))
        return call


class TapedSource:
    """A NoiseSource look-alike: mechanisms spend on the real ledger; released values are taped.

    Attributes the estimators read (``ledger``, ``prefix``, ...) come from the wrapped source;
    ``rng`` is the coupled data-independent generator.
    """

    def __init__(self, tape: NoiseTape, inner: NoiseSource):
        self._tape = tape
        self._inner = inner
        self.rng = _TapedGenerator(tape, inner.rng)

    def __getattr__(self, attr):
        target = getattr(self._inner, attr)
        if attr in _COMPOSERS:
            def compose(*args, **kwargs):
                out = target(*args, **kwargs)
                if isinstance(out, list):
                    return [TapedSource(self._tape, o) for o in out]
                return TapedSource(self._tape, out)
            return compose
        if attr in self._tape.mechanisms:
            def mechanism(*args, **kwargs):
                return self._tape._mechanism_call(self._inner, attr, args, kwargs, self)
            return mechanism
        return target


class NoiseTape:
    """Couples the fits on ``D`` and ``D'`` on their released values (see the module docstring).

    Parameters
    ----------
    seed : int
        Seeds the mechanisms' own noise in record mode.
    """

    def __init__(self, seed: int = 0):
        self.mode = "record"
        self.mechanisms = set(_mechanism_names())
        self.calls: list[tuple] = []          # (signature, output) in order
        self.rng_calls: dict = defaultdict(list)
        self.mismatches: list[str] = []
        self._seed = seed
        self._reset()

    def _reset(self):
        self.pos = 0
        self.rng_pos = defaultdict(int)
        self._mech_rng = np.random.default_rng([self._seed, 1 if self.mode == "record" else 2])
        self._coupled = True

    def replay(self):
        """Switch to replay mode: the next fit releases the recorded values."""
        self.mode = "replay"
        self._reset()

    def source(self, noise: NoiseSource) -> TapedSource:
        return TapedSource(self, noise)

    # -- data-independent randomness -----------------------------------------------------
    def _rng_call(self, key, draw):
        i = self.rng_pos[key]
        self.rng_pos[key] += 1
        if self.mode == "record":
            out = draw()
            self.rng_calls[key].append(copy.deepcopy(out))
            return out
        recorded = self.rng_calls.get(key, [])
        if i < len(recorded):
            return copy.deepcopy(recorded[i])
        return draw()  # a data-sized call (e.g. a permutation of the n rows): fresh, uncoupled

    # -- mechanisms ----------------------------------------------------------------------
    def _mechanism_call(self, inner: NoiseSource, method: str, args, kwargs, outer=None):
        sized = method not in _DATA_SIZED_ARGS and method not in _SPARSE
        saved = inner.rng
        inner.rng = self._mech_rng  # the mechanisms' own draws never disturb the coupled stream
        try:
            out = getattr(inner, method)(*args, **kwargs)
        finally:
            inner.rng = saved
        # A public method that hands out sources (a composer this module does not know by name)
        # is wrapped, not replayed.
        if isinstance(out, NoiseSource):
            out.rng = saved
            return TapedSource(self, out)
        if isinstance(out, list) and out and all(isinstance(o, NoiseSource) for o in out):
            for o in out:
                o.rng = saved
            return [TapedSource(self, o) for o in out]
        # The data-derived arguments (the true answers, the scores) contribute their shape only;
        # the parameters (name, epsilon, delta, sensitivity, threshold, ...) their value.
        sig = (method, inner.prefix, tuple(_data_sig(a, sized) for a in args),
               tuple(sorted((k, _data_sig(v, sized) if k in _DATA_ARGS else _arg_sig(v))
                            for k, v in kwargs.items())),
               structure_of(out) if method not in _SPARSE else "sparse")
        if self.mode == "record":
            self.calls.append((sig, copy.deepcopy(out)))
            return out
        i = self.pos
        self.pos += 1
        if not self._coupled:
            return out
        if i >= len(self.calls):
            self.mismatches.append(f"mechanism call {i + 1} on D' has no counterpart on D: {sig}")
            self._coupled = False
            return out
        rec_sig, rec_out = self.calls[i]
        if rec_sig != sig:
            self.mismatches.append(f"mechanism call {i + 1} differs:\n  D : {rec_sig}\n  D': {sig}")
            self._coupled = False
            return out
        if method in _SPARSE and structure_of(out) != structure_of(rec_out):
            return out  # a sparse release over different explicit entries: its own draw (see _SPARSE)
        return copy.deepcopy(rec_out)

    def finish(self):
        """After the replayed fit: calls recorded on D that D' never made are a mismatch too."""
        if self.mode == "replay" and self._coupled and self.pos < len(self.calls):
            self.mismatches.append(f"D made {len(self.calls)} mechanism calls, D' only {self.pos}: "
                                   f"first missing {self.calls[self.pos][0]}")


# ---------------------------------------------------------------------------------------
# What a fit shows
# ---------------------------------------------------------------------------------------

#: Export sections that hold noisy values (replaced by their type and shape).
_NOISY_SECTIONS = ("centroids", "synopsis", "private_extras")


def _shape_tree(v):
    if isinstance(v, dict):
        return {k: _shape_tree(x) for k, x in sorted(v.items())}
    if isinstance(v, str):
        return v  # kinds, names: structure
    if isinstance(v, list):
        try:
            a = np.asarray(v, dtype=float)
            return ("list", a.shape, "numeric")
        except (TypeError, ValueError):
            return ("list", len(v), [_shape_tree(x) for x in v])
    return structure_of(v)


def release_structure(rel: dict) -> dict:
    """The export (:func:`dpcore.release.build_release`) with every noisy value replaced by its type and shape.

    Public sections (parameters, privacy, bounds, ledger, algorithm, ...) are kept verbatim
    except the time stamp; the noisy sections keep their keys and strings (e.g. the
    synopsis kind) and lose their numbers.
    """
    out = {}
    for k, v in sorted(rel.items()):
        if k == "created":
            out[k] = type(v).__name__
        elif k in _NOISY_SECTIONS:
            out[k] = _shape_tree(v)
        else:
            out[k] = v
    return out


def estimator_structure(est) -> dict:
    """What a page may show about a fitted estimator besides noisy values.

    The ledger (name, epsilon, delta, mechanism, sensitivity, granularity of each entry) and every
    fitted attribute ending in ``_`` except :data:`RAW_FACTS`: integers, strings and
    booleans as they are (``n_iter_``, ``coreset_size_``, ``n_clusters_``, ``branch_``),
    floats and arrays by type and shape, objects (synopsis, plan) by their fields.
    """
    out = {"ledger": [(e.name, float(e.epsilon), float(e.delta), getattr(e, "mechanism", None),
                       getattr(e, "sensitivity", None), getattr(e, "granularity", None)) for e in est.budget_]}
    for name, v in sorted(vars(est).items()):
        if not name.endswith("_") or name.startswith("_") or name in RAW_FACTS or name == "budget_":
            continue
        out[name] = _attr_structure(v)
    return out


def _attr_structure(v, depth: int = 0):
    if isinstance(v, (bool, np.bool_, str)) or v is None:
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return type(v).__name__
    if isinstance(v, (np.ndarray, list, tuple)) and depth < 3:
        if isinstance(v, (list, tuple)) and any(isinstance(x, (np.ndarray, list, tuple)) for x in v):
            return (type(v).__name__, [_attr_structure(x, depth + 1) for x in v])
        return structure_of(v)
    if hasattr(v, "__dict__") and depth < 3:
        return (type(v).__name__, {k: _attr_structure(x, depth + 1) for k, x in sorted(vars(v).items())
                                   if not k.startswith("_")})
    return type(v).__name__


# ---------------------------------------------------------------------------------------
# One coupled pair of fits
# ---------------------------------------------------------------------------------------

def _build_release_kwargs() -> dict:
    """``simulation=True`` once dpcore.release refuses seeded fits without it (issue #12)."""
    from dpcore.release import build_release
    return {"simulation": True} if "simulation" in inspect.signature(build_release).parameters else {}


def observe(make, X, tape: NoiseTape, key: str, fit_kw: dict | None = None) -> dict:
    """Fit ``make()`` on X with its noise taped; return everything the fit shows.

    Returns
    -------
    dict with ``outcome`` (``"fitted"`` or the exception's type and message), ``warnings``
    (category and message of each, in order), and for a fitted estimator ``export`` (the
    whole export), ``release`` (:func:`release_structure`) and ``estimator``
    (:func:`estimator_structure`).
    """
    from dpcore.release import build_release
    est = make()
    orig = DPClusterer._begin_fit

    def begin(self, X_, **kw):   # one entry for arrays and DataSources
        data, noise, n = orig(self, X_, **kw)
        return data, tape.source(noise), n

    seen = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPClusterer._begin_fit = begin
        try:
            est.fit(X, **(fit_kw or {}))
            seen["outcome"] = "fitted"
        except Exception as exc:  # noqa: BLE001 -- the exception itself is what is compared
            seen["outcome"] = (type(exc).__name__, str(exc))
            # What the store would record for this refusal (its spend and sentence; issue 24): the
            # library's own path, so the record is audited like a release.
            attach_spend(est, exc)
            refusal = refusal_of(exc, algorithm=key, dataset="audit")
            if refusal is not None:
                seen["refusal"] = refusal
        finally:
            DPClusterer._begin_fit = orig
    # A ResourceWarning is the garbage collector finalising some unrelated object (another test's unclosed
    # database connection) whenever it runs: its timing is the interpreter's, not the fit's, and it was seen
    # on one side of a pair only (CI, stop 62).  Every other warning is the estimator's and is compared.
    seen["warnings"] = [(w.category.__name__, str(w.message)) for w in caught if not issubclass(w.category, ResourceWarning)]
    if seen["outcome"] == "fitted":
        rel = build_release(est, algorithm=key, dataset="audit", created="2000-01-01T00:00:00+00:00",
                            **_build_release_kwargs())
        for fact in RAW_FACTS:  # a raw fact must never reach the export
            assert fact not in repr(rel), f"{fact} appears in the release"
        seen["export"] = rel
        seen["release"] = release_structure(rel)
        seen["estimator"] = estimator_structure(est)
    return seen


def coupled_pair(make, X, Xp, key: str, seed: int = 0, fit_kw: dict | None = None,
                 fit_kw_p: dict | None = None) -> tuple[dict, dict, list[str]]:
    """Fit on ``X`` (recording), then on ``Xp`` (replaying the released values); return both views and mismatches.

    ``fit_kw`` / ``fit_kw_p``: extra ``fit`` arguments on each side (e.g. the rows' ``privacy_id``).
    """
    tape = NoiseTape(seed)
    a = observe(lambda: make(seed), X, tape, key, fit_kw)
    tape.replay()
    b = observe(lambda: make(seed), Xp, tape, key, fit_kw_p)
    tape.finish()
    return a, b, tape.mismatches


def value_differences(a: dict, b: dict) -> list[str]:
    """Export sections whose *values* differ between the coupled fits.

    With the released values coupled, every value of the export is a function of public
    inputs and mechanism outputs only if it is identical on D and D'.  A value computed from
    the rows without going through the noise module (a true mean, a true count) differs.
    """
    ea, eb = a.get("export"), b.get("export")
    if ea is None or eb is None:
        return [] if ea is eb else ["export: one side has none"]
    return [f"export.{k}: D {ea.get(k)!r:.300} != D' {eb.get(k)!r:.300}"
            for k in sorted(set(ea) | set(eb)) if ea.get(k) != eb.get(k)]


def structural_differences(a: dict, b: dict, mismatches: list[str]) -> list[str]:
    """Human-readable list of what differs between the two views (empty: the pair passes)."""
    diffs = list(mismatches)
    for part in ("outcome", "warnings", "refusal", "release", "estimator"):
        va, vb = a.get(part), b.get(part)
        if va == vb:
            continue
        if isinstance(va, dict) and isinstance(vb, dict):
            for k in sorted(set(va) | set(vb)):
                if va.get(k, "<missing>") != vb.get(k, "<missing>"):
                    diffs.append(f"{part}.{k}: D {va.get(k, '<missing>')!r} != D' {vb.get(k, '<missing>')!r}")
        else:
            diffs.append(f"{part}: D {va!r} != D' {vb!r}")
    return diffs
