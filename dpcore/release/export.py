"""A release written out: JSON, CSV and a one-page HTML report; and the data owner's check for input rows.

Everything here reads the release dict only (post-processing: no privacy cost).
"""
from __future__ import annotations

import csv
import html
import io
import json
import math
import re

import numpy as np


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
    >>> from dpcore.algorithms import DPLloyd
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
    >>> json.loads(to_json(rel)) == rel
    True
    """
    return json.dumps(release, indent=indent, ensure_ascii=False, allow_nan=False)


def _csv_rows(release: dict):
    p, a = release["privacy"], release["algorithm"]
    cols = release["dataset"]["columns"]
    k = len(release["centroids"])
    yield ("section", "item", "field", "value")
    # The result first (issue 65): a stakeholder opening the file sees the centres at the top, then the
    # small sections that say what they are; the synopsis, often thousands of cells, comes last.
    yield ("centroid", "", "", f"Private centres: {k} centre(s), one row per centre and column ({', '.join(cols)}); "
           f"{a['name']} at ε = {p['epsilon']:g} on {release['dataset']['name']}. Then the release's details "
           "(meta, algorithm, parameter, privacy, seed_policy, bounds, ledger), then its synopsis.")
    for i, row in enumerate(release["centroids"]):
        for c, v in zip(cols, row):
            yield ("centroid", i, c, v)
    yield ("meta", "", "", "What this file is: the format, when it was made, by which package, on which data.")
    for key in ("format", "created"):
        yield ("meta", "", key, release[key])
    yield ("meta", "", "package", f"{release['package']['name']} {release['package']['version']}")
    yield ("meta", "", "dataset", release["dataset"]["name"])
    yield ("algorithm", "", "", "The algorithm and its source.")
    for key, v in a.items():
        yield ("algorithm", "", key, v)
    yield ("parameter", "", "", "Its public parameters (empty: not set).")
    for key, v in release["parameters"].items():
        yield ("parameter", "", key, json.dumps(v) if isinstance(v, (list, dict)) else v)
    yield ("privacy", "", "", "The privacy guarantee: ε and δ granted and spent.")
    for key in ("epsilon", "delta", "epsilon_spent", "delta_spent", "guarantee", "private", "level"):
        yield ("privacy", "", key, p[key])
    yield ("seed_policy", "", "", "Where the noise came from.")
    for key, v in release["seed_policy"].items():
        yield ("seed_policy", "", key, v)
    yield ("bounds", "", "", "The public bounds of each column, given before looking at the data.")
    for j, c in enumerate(cols):
        yield ("bounds", c, "lower", release["bounds"]["lower"][j])
        yield ("bounds", c, "upper", release["bounds"]["upper"][j])
    yield ("ledger", "", "", "The budget ledger: what each step spent (one item per step).")
    for i, e in enumerate(release["ledger"]):
        for key, v in e.items():
            yield ("ledger", i, key, "" if v is None else v)
    syn = release["synopsis"]
    if syn is None:
        return
    yield ("synopsis", "", "", f"The released synopsis ({syn['kind']}): noisy values, one row per cell or point.")
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

    The private centres come first (section ``centroid``: item = centre index, one field per column),
    then meta, algorithm, parameter, privacy, seed_policy, bounds, ledger (one item per step), and
    last the synopsis: synopsis, synopsis_edges, synopsis_cell (item = cell index ``i;j``),
    coreset_point.  Each section opens with a header row (empty item and field) whose value says
    what the section holds; a parameter that is not set has an empty value.

    Parameters
    ----------
    release : dict
        From :func:`dpcore.release.build_release`.

    Returns
    -------
    str
        The CSV text (``\n`` line ends), readable with :class:`csv.DictReader` or pandas.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in _csv_rows(release):
        w.writerow(row)
    return buf.getvalue()


def _fmt(v) -> str:
    if v is None:           # a parameter left unset: plain words, never Python's None (issue 65)
        return "not set"
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


def _centre_images(release: dict, scale: int = 3) -> str:
    """The centres of image data (d = side², side >= 4: MNIST's 28 × 28, digits' 8 × 8) as inline PNG
    tiles, grey levels over the public bounds (issue 31: views that fit the data); "" otherwise."""
    import base64
    import io

    from PIL import Image
    C = np.asarray(release["centroids"], dtype=float)
    d = C.shape[1] if C.ndim == 2 else 0
    side = int(round(math.sqrt(d))) if d else 0
    if d < 16 or side * side != d:
        return ""
    lo = float(np.min(release["bounds"]["lower"]))
    hi = float(np.max(release["bounds"]["upper"]))
    tiles = []
    for i, c in enumerate(C):
        g = np.clip((c - lo) / ((hi - lo) or 1.0), 0, 1).reshape(side, side)
        img = Image.fromarray((255 * (1 - g)).astype(np.uint8), mode="L")
        img = img.resize((side * scale,) * 2, Image.Resampling.NEAREST)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        src = base64.b64encode(buf.getvalue()).decode()
        tiles.append(f'<figure style="margin:0;text-align:center"><img alt="centre {i + 1}" '
                     f'src="data:image/png;base64,{src}"/><figcaption>{i + 1}</figcaption></figure>')
    return ('<div style="display:flex;flex-wrap:wrap;gap:6px">' + "".join(tiles) + "</div>"
            f'<p class="note">Each private centre as a {side} × {side} image (dark = high, over the public '
            'bounds).</p>')


def to_html(release: dict, *, account: str | None = None) -> str:
    """A one-page, self-contained HTML report of the release (no scripts, no external files).

    Parameters
    ----------
    release : dict
        From :func:`dpcore.release.build_release`.
    account : str or None
        The data's running total as a sentence (:func:`dpcore.explain.running_total`, Markdown bold
        allowed): every release of the same data adds up, so the report states the total, not only
        this release's ε (issue 31).  It is a function of the recorded ε values only.
    """
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
    images = _centre_images(release)
    if images:     # image data: the centres as pictures; their hundreds of columns are in the JSON and CSV
        centres_html = (f"<p>{len(release['centroids'])} centres of {len(cols)} columns each (full table in the "
                        "JSON and CSV files).</p>")
        picture = f"<h2>Picture</h2>{images}"
    else:
        centres_html = _table(['centre'] + cols, [(i + 1, *row) for i, row in enumerate(release['centroids'])])
        grid_note = " · red cells: positive noisy counts" if syn and syn["kind"] == "grid" else ""
        first_two = "first two columns" if len(cols) <= 2 else f"first two of {len(cols)} columns"
        picture = (f"<h2>Picture</h2>{_svg(release)}\n<p class=\"note\">● private centres{grid_note} "
                   f"({first_two}, public bounds).</p>")
    total_html = ("" if not account else "<h2>All releases of this data together</h2><p>"
                  + re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(account)) + "</p>\n")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Private clustering release · {html.escape(a['name'])}</title>
<style>{style}</style></head><body>
<h1>Private clustering release: {html.escape(a['name'])}, ε = {p['epsilon']:g}</h1>
<p>Dataset <b>{html.escape(release['dataset']['name'])}</b> · {html.escape(guarantee_sentence(release))}
({html.escape(p['level'])}) · created {html.escape(release['created'])} ·
{html.escape(release['package']['name'])} {html.escape(release['package']['version'])} ·
source: {html.escape(a['reference'])}</p>
{total_html}<h2>What this guarantees one {html.escape(protected_unit(release))} in the data</h2><ul>{stmts}</ul>
<div class="grid"><div>
<h2>Private centres</h2>{centres_html}
<h2>Privacy budget ledger</h2>
{_table(['step', 'mechanism', 'sensitivity', 'ε', 'δ'], ledger_rows)}
<p>Spent ε = {p['epsilon_spent']:.6g} of {p['epsilon']:g}{delta_text}
 ({html.escape(p['composition'])}).</p>
</div><div>
{picture}
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


def protected_unit(release: dict) -> str:
    """What one unit of a release is, in one word: ``"user"`` (person level), ``"trip"``, ``"record"``.

    Releases made before issue 23 protect one record.

    Returns
    -------
    str
    """
    return str(release.get("privacy_unit", {}).get("protected") or "record")


def guarantee_sentence(release: dict) -> str:
    """The guarantee with the unit it is for: "1-differential privacy for every user (...)" or, row level,
    "... for every trip (one row); a person with m trips is protected only at m·ε".

    Returns
    -------
    str
    """
    p = release["privacy"]
    if p.get("guarantee_for"):
        return str(p["guarantee_for"])
    return f"{p['guarantee']} for every record (one row); a person with m records is protected only at m·ε"
