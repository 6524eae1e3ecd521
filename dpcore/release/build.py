"""Publishable releases: what a fitted private estimator may show the world, and nothing more.

:func:`build_release` turns a fitted private estimator into a plain dict that
holds only differentially private output and public inputs:

* private output: ``cluster_centers_``, ``synopsis_`` (grid counts, coreset,
  WaveCluster grid) and the branch a Hybrid took (chosen from a noisy size);
* public inputs: the bounds, the parameters, epsilon and delta, the noise
  policy, the package version, the column names;
* the budget ledger: what each step spent.

A private release (``random_state=None``) holds no seed: its noise came from
a cryptographically secure generator keyed from OS entropy that nobody can
reproduce.  A seeded fit is a simulation: it is refused unless
``simulation=True``, and then its guarantee field says it is not private.

It never holds an input row, the dataset size, the number of clipped rows,
non-private centres or any utility figure computed on the raw data (NICV,
cost, UD): those are functions of the data that no noise protects.
:func:`to_json`, :func:`to_csv` and :func:`to_html` write it out;
:func:`find_input_rows` is the data owner's check that no row of X appears.

Everything here is post-processing of an (epsilon, delta)-DP output, so it
costs no further privacy (Dwork & Roth 2014, Prop. 2.1).
"""
from __future__ import annotations

import datetime as _dt
import math
import numbers

import numpy as np

from .._version import __version__
from ..explain import epsilon_statements, level_for, unit_words

FORMAT = "dpcore-release/2"
#: Default privacy unit: what one neighbouring step adds or removes.
DEFAULT_PRIVACY_UNIT = "one record (one row of the input data)"
#: Parameters that are not algorithm settings (they have their own fields) or not JSON.
_NOT_PARAMETERS = {"epsilon", "delta", "bounds", "random_state"}


def _jsonable(v):
    """Plain JSON value for a parameter; raises TypeError for objects that are not."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    raise TypeError(f"parameter value {v!r} cannot be written to a release")


def build_release(est, *, algorithm: str, dataset: str = "", columns=None, created: str | None = None,
                  simulation: bool = False, privacy_unit: str | None = None, kind: str = "points") -> dict:
    """The publishable release of a fitted private estimator.

    Parameters
    ----------
    est : fitted DPClusterer
        A private estimator (``type(est).private``) fitted with public bounds.
    algorithm : str
        Its ``dpcore.ALGORITHMS`` key.
    dataset : str, default ""
        The dataset's public name (no fingerprint: a hash of the rows is a
        function of the data that no noise protects).
    columns : list of str or None
        Column names (public schema).  Default ``x0, x1, ...``.
    created : str or None
        ISO time stamp; default now (UTC).
    simulation : bool, default False
        Must be True to export a seeded fit (``est.simulation_``: an integer
        ``random_state``, SeedSequence or Generator).  Its noise is
        reproducible from the seed, so the export says in its guarantee that
        it is NOT private and records the seed (it is a simulation: tests,
        papers' figures, teaching on public data).
    kind : {"trips", "check-ins", "images", "points"}, default "points"
        What a row is, for the guarantee in words (:func:`dpcore.explain.unit_words`).
    privacy_unit : str or None
        What one "record" is, in words (e.g. "one taxi trip"); default
        "one record (one row of the input data)".  The guarantee is per unit.

    Returns
    -------
    dict, JSON-serialisable, with keys ``format``, ``created``, ``package``,
    ``dataset``, ``algorithm``, ``parameters``, ``privacy`` (granted and spent
    epsilon/delta, the guarantee in plain words), ``bounds``, ``seed_policy``,
    ``ledger``, ``centroids`` (k rows of d), ``synopsis`` (``synopsis_.to_dict()``
    or None) and ``notes``.  ``seed_policy`` holds ``random_state`` only for
    a simulation; a private release contains no seed anywhere.

    Raises
    ------
    RuntimeError
        If ``est`` is not fitted.
    ValueError
        If ``est`` is a non-private baseline, if its bounds were read from the
        data (then the output is not private for the extreme records), if
        its ledger spent more than it was granted, or if it was fitted with a
        seed and ``simulation`` is not True.

    Notes
    -----
    **Privacy.** Post-processing of the estimator's (epsilon, delta)-DP output and of
    public inputs: no further cost.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import DPLloyd
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
    >>> rel["privacy"]["private"], len(rel["centroids"])
    (True, 3)
    """
    if not hasattr(est, "budget_") or not hasattr(est, "cluster_centers_"):
        raise RuntimeError("the estimator is not fitted yet: fit it before building a release")
    cls = type(est)
    if not getattr(cls, "private", False):
        raise ValueError(f"{cls.display_name or cls.__name__} is not private: its result is for the data owner's "
                         "eyes only and cannot be published")
    if est.bounds_.from_data:
        raise ValueError("the bounds were read from the data, so this result is not private for the records at "
                         "the extremes; refit with public bounds before publishing")
    params_in = est.get_params(deep=False)
    seeded = bool(getattr(est, "simulation_", params_in.get("random_state") is not None))
    if seeded and not simulation:
        raise ValueError("this result was fitted with random_state set, so its noise is reproducible from the seed: "
                         "it is a simulation, not a private release. Refit with random_state=None (the default) to "
                         "publish, or pass simulation=True to export it labelled as not private.")
    ledger = est.budget_
    eps_spent, delta_spent = ledger.total()
    if eps_spent > ledger.epsilon * (1 + 1e-9) or delta_spent > ledger.delta * (1 + 1e-9) + 1e-15:
        raise ValueError("the ledger spent more than it was granted; refusing to publish")
    d = int(est.n_features_in_)
    columns = [str(c) for c in (columns if columns is not None else [f"x{i}" for i in range(d)])]
    if len(columns) != d:
        raise ValueError(f"columns has {len(columns)} names for {d} features")
    params = {k: _jsonable(v) for k, v in sorted(params_in.items()) if k not in _NOT_PARAMETERS}
    eps, delta = float(ledger.epsilon), float(ledger.delta)
    guarantee = f"({eps:g}, {delta:.3g})-differential privacy" if delta > 0 else f"{eps:g}-differential privacy"
    if seeded:
        seed = params_in.get("random_state")
        seed = int(seed) if isinstance(seed, numbers.Integral) else f"a caller-supplied {type(seed).__name__}"
        guarantee = (f"NOT PRIVATE: a simulation. The noise was drawn from a seeded generator (random_state = {seed}) "
                     "and is reproducible from the seed, so anyone who knows it can subtract the noise and read the "
                     f"exact answers. The noise level is that of a {guarantee} release, but this output gives no "
                     "privacy guarantee.")
        seed_policy = {"random_state": seed,
                       "policy": ("Simulation: the same data, algorithm, parameters, ε and seed reproduce this output "
                                  "exactly. Not a private release.")}
    else:
        seed_policy = {"policy": ("The noise came from a cryptographically secure generator keyed from the operating "
                                  "system's entropy and was never stored: nobody, the publisher included, can "
                                  "reproduce or remove it. Released values are integers (counts) or exact multiples "
                                  "of the lattice step recorded in the ledger (floating-point safe). Each further "
                                  "release on the same data spends its ε again (sequential composition): drawing "
                                  "several releases and keeping the best is a use of the data.")}
    measure = _privacy_measure(eps, delta)
    unit_info = getattr(est, "privacy_unit_", None)
    words = unit_words(unit_info, kind)
    unit_field: dict = {"unit": privacy_unit or (words.whole if unit_info else DEFAULT_PRIVACY_UNIT),
                  "neighbouring": ("add or remove one unit: all of its rows (unbounded differential privacy)"
                                   if unit_info else "add or remove one unit (unbounded differential privacy)"),
                  "person_level": bool(unit_info), "protected": words.one}
    if unit_info:
        unit_field.update(column=str(unit_info["unit"]), max_contributions=int(unit_info["max_contributions"]),
                          bounding=str(unit_info["bounding"]))
    extras = {}
    if hasattr(est, "branch_"):
        extras["hybrid_branch"] = str(est.branch_)  # chosen from a noisy (or public) dataset size
    rel = {
        "format": FORMAT,
        "created": created or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "package": {"name": "dpcore", "version": __version__},
        "dataset": {"name": str(dataset), "columns": columns},
        "algorithm": {"key": algorithm, "name": cls.display_name or cls.__name__, "reference": cls.reference,
                      "family": cls.family},
        "parameters": params,
        "privacy_unit": unit_field,
        "privacy": {
            "measure": measure,
            "epsilon": eps, "delta": delta, "epsilon_spent": float(eps_spent), "delta_spent": float(delta_spent),
            "guarantee": guarantee, "private": not seeded, "level": level_for(eps).name,
            "guarantee_for": words.guarantee(guarantee) if not seeded else guarantee,
            "neighbouring": ("datasets that differ by adding or removing all the rows of one unit" if unit_info
                             else "datasets that differ by adding or removing one record"),
            "composition": getattr(ledger, "composition",
                                   "basic sequential composition over the ledger's steps (their sum)"),
            "statements": [{"title": s.title, "value": s.value, "sentence": s.sentence, "formula": s.formula}
                           for s in epsilon_statements(eps, delta, unit=words)],
        },
        "bounds": {"lower": [float(v) for v in est.bounds_.lower], "upper": [float(v) for v in est.bounds_.upper],
                   "note": "public bounds given before looking at the data; points outside were clipped onto them"},
        "seed_policy": seed_policy,
        "ledger": [_ledger_row(r) for r in ledger.to_records()],
        "centroids": np.asarray(est.cluster_centers_, dtype=float).tolist(),
        "synopsis": est.synopsis_.to_dict() if est.synopsis_ is not None else None,
        "private_extras": extras,
        "environment": _environment(),
        "notes": ("Only differentially private output and public inputs. No input row, no dataset size, no "
                  "non-private centres and no utility figure computed on the raw data are included."),
    }
    return rel


def _privacy_measure(eps: float, delta: float) -> dict:
    """The privacy measure in words and in OpenDP's terms (``MaxDivergence``, ``Approximate(MaxDivergence)``)."""
    if delta > 0:
        return {"name": "approximate differential privacy", "opendp": "Approximate(MaxDivergence)",
                "parameters": {"epsilon": eps, "delta": delta}}
    return {"name": "pure differential privacy", "opendp": "MaxDivergence", "parameters": {"epsilon": eps}}


def _noise_scale(row: dict) -> float | None:
    """The sampled noise's scale in query units: discrete Laplace t or discrete Gaussian sigma, times the lattice.

    From the ledger entry's record of what was drawn (``sampler``); an entry without it (selections,
    composite steps) has none.
    """
    sampler = row.get("sampler")
    if not sampler:
        return None
    return float(sampler["value"]) * float(sampler["granularity"])


def _ledger_row(row: dict) -> dict:
    out = {k: (None if (isinstance(v, float) and not math.isfinite(v)) else v) for k, v in row.items()}
    out.setdefault("sampler", None)
    out.setdefault("noise_scale", _noise_scale(out))
    return out


def _environment() -> dict:
    """Versions of the libraries a release was computed with (public facts about the software)."""
    import platform
    from importlib import metadata
    out: dict[str, str | None] = {"python": platform.python_version(), "dpcore": __version__}
    for dist in ("numpy", "scipy", "scikit-learn", "randomgen", "PyWavelets"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out




#: Format of a refusal record: what a fit spent before it refused (issue 24).
REFUSAL_FORMAT = "dpcore-refusal/1"


def build_refusal(ledger, *, algorithm: str, dataset: str = "", reason: str = "",
                  guarantee: str | None = None) -> dict:
    """The record of a fit that spent part of its budget and then refused (e.g. the coreset's infeasibility).

    A refusal decided on a noisy count is itself an output of that count's mechanism: the person
    saw it, so the budget it spent must be in the dataset's account.  This dict is what
    :meth:`dpcore.store.ReleaseStore.record_refusal` stores; it holds no result, only the ledger
    and the refusal's sentence (which may state the noisy count: already paid for).

    Parameters
    ----------
    ledger : BudgetLedger
        The estimator's ``budget_`` at the refusal: the steps spent so far.
    algorithm : str
        The registry key.
    dataset : str
    reason : str
        The refusal as the person saw it.
    guarantee : str or None
        What the spend bought, in words, for a spend that released a parameter rather than refusing
        (e.g. L chosen privately); default "refused after spending ε = …".

    Returns
    -------
    dict with ``format`` = :data:`REFUSAL_FORMAT`, ``algorithm``, ``dataset``, ``privacy``
    (``epsilon_spent``, ``delta_spent``), ``privacy_unit`` (``person_level`` and the ledger's unit),
    ``ledger`` (rows as in a release) and ``refusal``.

    Raises
    ------
    ValueError
        The ledger spent nothing (there is nothing to record).
    """
    eps, delta = ledger.total()
    unit = getattr(ledger, "privacy_unit", None)
    if not eps > 0:
        raise ValueError("this fit spent nothing before it refused: there is nothing to record")
    return {"format": REFUSAL_FORMAT, "algorithm": {"key": str(algorithm)}, "dataset": {"name": str(dataset)},
            "privacy": {"epsilon_spent": float(eps), "delta_spent": float(delta),
                        "guarantee": guarantee or f"refused after spending ε = {eps:.4g}"},
            "privacy_unit": {"person_level": bool(unit), **(unit or {})},
            "ledger": [_ledger_row(r) for r in ledger.to_records()], "refusal": str(reason)[:2000]}
