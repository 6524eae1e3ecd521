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

import csv
import datetime as _dt
import html
import io
import json
import math
import numbers

import numpy as np

from ._version import __version__
from .explain import epsilon_statements, level_for

FORMAT = "dpcore-release/2"
#: The JSON Schema every export validates against (package data).
SCHEMA_FILE = "schemas/dpcore-release-2.schema.json"
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
                  simulation: bool = False, privacy_unit: str | None = None) -> dict:
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
    >>> from dpcore.dplloyd import DPLloyd
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
        "privacy_unit": {"unit": privacy_unit or DEFAULT_PRIVACY_UNIT,
                         "neighbouring": "add or remove one unit (unbounded differential privacy)"},
        "privacy": {
            "measure": measure,
            "epsilon": eps, "delta": delta, "epsilon_spent": float(eps_spent), "delta_spent": float(delta_spent),
            "guarantee": guarantee, "private": not seeded, "level": level_for(eps).name,
            "neighbouring": "datasets that differ by adding or removing one record",
            "composition": getattr(ledger, "composition",
                                   "basic sequential composition over the ledger's steps (their sum)"),
            "statements": [{"title": s.title, "value": s.value, "sentence": s.sentence, "formula": s.formula}
                           for s in epsilon_statements(eps, delta)],
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
    """Scale of one ledger step's noise in query units: b of the (discrete) Laplace, sigma of the Gaussian."""
    mech = str(row.get("mechanism") or "")
    sens, eps, delta = row.get("sensitivity"), float(row["epsilon"]), float(row.get("delta") or 0.0)
    if sens is None or not (isinstance(sens, (int, float)) and math.isfinite(sens)):
        return None
    if "laplace" in mech:
        return float(sens) / eps
    if "gaussian" in mech and delta > 0:
        from .privacy.calibration import analytic_gaussian_sigma
        return float(analytic_gaussian_sigma(float(sens), eps, delta))
    return None


def _ledger_row(row: dict) -> dict:
    out = {k: (None if (isinstance(v, float) and not math.isfinite(v)) else v) for k, v in row.items()}
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


def release_schema() -> dict:
    """The JSON Schema (draft 2020-12) of ``dpcore-release/2``, shipped as package data."""
    from importlib import resources
    return json.loads((resources.files("dpcore") / SCHEMA_FILE).read_text(encoding="utf-8"))


def validate_release(release: dict) -> None:
    """Check a release against :func:`release_schema`.

    Parameters
    ----------
    release : dict
        A release, e.g. from :func:`build_release` or ``json.loads`` of an export.

    Raises
    ------
    jsonschema.ValidationError
        Naming the first field that does not conform.
    ImportError
        If the optional ``jsonschema`` package is not installed.

    Examples
    --------
    A conforming release passes silently:

    >>> from dpcore.release import validate_release
    >>> import numpy as np
    >>> from dpcore.dplloyd import DPLloyd
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
    >>> validate_release(rel)
    """
    import jsonschema
    jsonschema.validate(release, release_schema(), cls=jsonschema.Draft202012Validator)


# -- writers ----------------------------------------------------------------------------------
def to_json(release: dict, *, indent: int | None = 1) -> str:
    """The release as JSON text (``json.loads`` gives the dict back).

    Parameters
    ----------
    release : dict
        From :func:`build_release`.
    indent : int or None, default 1
        Passed to :func:`json.dumps` (None: one line).

    Returns
    -------
    str
        The JSON text.

    Examples
    --------
    The JSON text gives the same release back:

    >>> import json
    >>> from dpcore.release import to_json
    >>> import numpy as np
    >>> from dpcore.dplloyd import DPLloyd
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
    >>> json.loads(to_json(rel)) == rel
    True
    """
    return json.dumps(release, indent=indent, ensure_ascii=False, allow_nan=False)


def _csv_rows(release: dict):
    yield ("section", "item", "field", "value")
    for key in ("format", "created"):
        yield ("meta", "", key, release[key])
    yield ("meta", "", "package", f"{release['package']['name']} {release['package']['version']}")
    yield ("meta", "", "dataset", release["dataset"]["name"])
    for k, v in release["algorithm"].items():
        yield ("algorithm", "", k, v)
    for k, v in release["parameters"].items():
        yield ("parameter", "", k, json.dumps(v) if isinstance(v, (list, dict)) else v)
    p = release["privacy"]
    for k in ("epsilon", "delta", "epsilon_spent", "delta_spent", "guarantee", "private", "level"):
        yield ("privacy", "", k, p[k])
    for k, v in release["seed_policy"].items():
        yield ("seed_policy", "", k, v)
    cols = release["dataset"]["columns"]
    for j, c in enumerate(cols):
        yield ("bounds", c, "lower", release["bounds"]["lower"][j])
        yield ("bounds", c, "upper", release["bounds"]["upper"][j])
    for i, e in enumerate(release["ledger"]):
        for k, v in e.items():
            yield ("ledger", i, k, "" if v is None else v)
    for i, row in enumerate(release["centroids"]):
        for c, v in zip(cols, row):
            yield ("centroid", i, c, v)
    syn = release["synopsis"]
    if syn is None:
        return
    yield ("synopsis", "", "kind", syn["kind"])
    for j, e in enumerate(syn.get("edges", [])):
        yield ("synopsis_edges", cols[j], "edges", json.dumps(e))
    for name in ("counts", "labels", "values"):
        if name in syn:
            arr = np.asarray(syn[name])
            for idx in np.ndindex(arr.shape):
                yield ("synopsis_cell", ";".join(map(str, idx)), name[:-1] if name != "values" else "value",
                       arr[idx].item())
    if "points" in syn:
        for i, (pt, w) in enumerate(zip(syn["points"], syn["weights"])):
            for c, v in zip(cols, pt):
                yield ("coreset_point", i, c, v)
            yield ("coreset_point", i, "weight", w)


def to_csv(release: dict) -> str:
    """The release as one long CSV: columns ``section, item, field, value``.

    Sections: meta, algorithm, parameter, privacy, seed_policy, bounds, ledger
    (one item per step), centroid (one item per centre, one field per column),
    synopsis, synopsis_edges, synopsis_cell (item = cell index ``i;j``),
    coreset_point.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in _csv_rows(release):
        w.writerow(row)
    return buf.getvalue()


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return html.escape(str(v))


def _table(header, rows) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in header)
    b = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"


def _svg(release: dict, size: int = 320) -> str:
    """Inline SVG of the first two columns: synopsis cells (grid), coreset discs and centres."""
    lo, hi = (np.asarray(release["bounds"][k], dtype=float) for k in ("lower", "upper"))
    if lo.size < 2:
        return ""
    sx, sy = size / (hi[0] - lo[0]), size / (hi[1] - lo[1])
    X = lambda x: (x - lo[0]) * sx  # noqa: E731
    Y = lambda y: size - (y - lo[1]) * sy  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
             f'style="border:1px solid #999;background:#fafafa">']
    syn = release["synopsis"]
    if syn and syn["kind"] == "grid" and len(syn["edges"]) == 2:
        counts = np.asarray(syn["counts"], dtype=float)
        ex, ey = (np.asarray(e) for e in syn["edges"])
        top = float(np.quantile(np.abs(counts), 0.99)) or 1.0
        for i, j in zip(*np.nonzero(counts > 0)):
            a = min(1.0, math.log1p(counts[i, j]) / math.log1p(top))
            parts.append(f'<rect x="{X(ex[i]):.1f}" y="{Y(ey[j + 1]):.1f}" width="{(ex[i + 1] - ex[i]) * sx:.2f}" '
                         f'height="{(ey[j + 1] - ey[j]) * sy:.2f}" fill="rgb(178,24,43)" fill-opacity="{a:.2f}"/>')
    if syn and syn["kind"] == "coreset":
        w = np.asarray(syn["weights"], dtype=float)
        for pt, wi in zip(syn["points"], w):
            parts.append(f'<circle cx="{X(pt[0]):.1f}" cy="{Y(pt[1]):.1f}" r="{2 + 8 * math.sqrt(wi / w.max()):.1f}" '
                         'fill="rgb(49,163,84)" fill-opacity="0.5"/>')
    for c in release["centroids"]:
        if len(c) >= 2:
            parts.append(f'<circle cx="{X(c[0]):.1f}" cy="{Y(c[1]):.1f}" r="6" fill="rgb(230,85,13)" '
                         'stroke="black" stroke-width="1.5"/>')
    parts.append("</svg>")
    return "".join(parts)


def to_html(release: dict) -> str:
    """A one-page, self-contained HTML report of the release (no scripts, no external files)."""
    p = release["privacy"]
    a = release["algorithm"]
    cols = release["dataset"]["columns"]
    syn = release["synopsis"]
    if syn is None:
        syn_txt = "No synopsis: this algorithm releases centres only."
    elif syn["kind"] == "grid":
        shape = np.asarray(syn["counts"]).shape
        syn_txt = (f"Grid synopsis of {' × '.join(map(str, shape))} cells with signed noisy counts "
                   "(full table in the JSON and CSV files).")
    elif syn["kind"] == "coreset":
        syn_txt = f"Private weighted coreset of {len(syn['points'])} points (full list in the JSON and CSV files)."
    else:
        syn_txt = f"Synopsis of kind {syn['kind']} (full content in the JSON and CSV files)."
    ledger_rows = [(e["name"], e["mechanism"], e["sensitivity"] if e["sensitivity"] is not None else "",
                    e["epsilon"], e["delta"]) for e in release["ledger"]]
    stmts = "".join(f"<li><b>{html.escape(s['title'])}: {html.escape(s['value'])}.</b> "
                    f"{html.escape(s['sentence'])} <code>{html.escape(s['formula'])}</code></li>"
                    for s in p["statements"])
    params = [(k, json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in release["parameters"].items()]
    bounds = [(c, release["bounds"]["lower"][j], release["bounds"]["upper"][j]) for j, c in enumerate(cols)]
    style = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:1.5em auto;color:#222;font-size:14px}"
             "table{border-collapse:collapse;margin:.4em 0 1em}td,th{border:1px solid #ccc;padding:2px 8px;"
             "text-align:left}h1{font-size:1.5em}h2{font-size:1.1em;margin-top:1.2em}.grid{display:flex;gap:2em}"
             ".note{color:#555;font-size:.9em}")
    delta_text = f", δ = {p['delta_spent']:.3g} of {p['delta']:.3g}" if p['delta'] else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Private clustering release · {html.escape(a['name'])}</title>
<style>{style}</style></head><body>
<h1>Private clustering release: {html.escape(a['name'])}, ε = {p['epsilon']:g}</h1>
<p>Dataset <b>{html.escape(release['dataset']['name'])}</b> · {html.escape(p['guarantee'])}
({html.escape(p['level'])}) · created {html.escape(release['created'])} ·
{html.escape(release['package']['name'])} {html.escape(release['package']['version'])} ·
source: {html.escape(a['reference'])}</p>
<h2>What this guarantees one person in the data</h2><ul>{stmts}</ul>
<div class="grid"><div>
<h2>Private centres</h2>{_table(['centre'] + cols, [(i + 1, *row) for i, row in enumerate(release['centroids'])])}
<h2>Privacy budget ledger</h2>
{_table(['step', 'mechanism', 'sensitivity', 'ε', 'δ'], ledger_rows)}
<p>Spent ε = {p['epsilon_spent']:.6g} of {p['epsilon']:g}{delta_text}
 ({html.escape(p['composition'])}).</p>
</div><div>
<h2>Picture</h2>{_svg(release)}
<p class="note">● private centres{' · red cells: positive noisy counts' if syn and syn['kind'] == 'grid' else ''}
 (first two columns, public bounds).</p>
</div></div>
<h2>Synopsis</h2><p>{html.escape(syn_txt)}</p>
<h2>Public inputs</h2>
{_table(['column', 'lower bound', 'upper bound'], bounds)}
{_table(['parameter', 'value'], params)}
<p><b>Noise.</b> {html.escape(' '.join(f"{k} = {v}." for k, v in release['seed_policy'].items() if k != 'policy'))}
{html.escape(release['seed_policy']['policy'])}</p>
<p class="note">{html.escape(release['notes'])}</p>
</body></html>
"""


# -- the data owner's check -----------------------------------------------------------------
def _vectors(release: dict, d: int) -> np.ndarray:
    vecs = list(release["centroids"])
    syn = release["synopsis"]
    if syn and "points" in syn:
        vecs += list(syn["points"])
    arr = np.asarray(vecs, dtype=float)
    return arr.reshape(-1, d) if arr.size else np.empty((0, d))


def find_input_rows(release: dict, X, *, atol: float = 0.0) -> np.ndarray:
    """Indices of rows of ``X`` that appear as a point (centre or coreset point) of the release.

    A private release may by chance put a centre exactly on a data point; an
    empty answer confirms that no input row was copied into it.

    Parameters
    ----------
    release : dict from :func:`build_release`
    X : ndarray (n, d), the raw data (this check is for the data owner only)
    atol : float, default 0 (exact equality)

    Returns
    -------
    ndarray of int, sorted row indices.
    """
    X = np.asarray(X, dtype=float)
    V = _vectors(release, X.shape[1])
    if V.shape[0] == 0:
        return np.empty(0, dtype=int)
    hits = np.zeros(X.shape[0], dtype=bool)
    for v in V:  # few released points; vectorised over the rows of X
        hits |= np.all(np.abs(X - v) <= atol, axis=1)
    return np.flatnonzero(hits)
