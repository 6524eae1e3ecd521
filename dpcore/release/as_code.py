"""Every release as code (issue 67): a script that draws the same settings again, a notebook that analyses it.

* :func:`to_script`: a short Python script for the monthly run.  Its data path and public bounds
  stand at the top; it draws the release's settings again through the release store exactly as
  ``python -m dpcore draw`` does (fresh noise, recorded against the data's cap before anything is
  shown, refused over it), and exits with the command line's status.
* :func:`to_notebook`: a Jupyter notebook that holds the release (its JSON embedded) and analyses it:
  the map or scatter plot, the guarantee in words, the ledger, and k-means at any k on the released
  points.  It reads nothing else (no data, no store), so running it spends no ε and records nothing.

Both are pure functions of the release dict (and of words the caller passes): they open no store and
no data, so the public gallery may offer them.  :data:`FORMATS` and :func:`render` name every way a
release leaves dpcore (JSON, CSV, HTML, script, notebook).
"""
from __future__ import annotations

import json

from .export import guarantee_sentence, to_csv, to_html, to_json
from .view import released_points

#: Every way a release leaves dpcore: format -> (file suffix, MIME type).
FORMATS = {"json": (".json", "application/json"), "csv": (".csv", "text/csv"), "html": (".html", "text/html"),
           "py": (".py", "text/x-python"), "ipynb": (".ipynb", "application/x-ipynb+json")}

#: Parameters the script passes through options of their own (the rest go through ``--param``).
_OWN_OPTIONS = ("n_clusters", "max_contributions", "contribution_bounding")


def default_data_path(dataset: str) -> str:
    """Where the script looks for the data by default: an upload's file name, else the data set's own name.

    ``"upload:trips.parquet"`` (the app's name for an upload) gives ``"trips.parquet"``; any other name
    is given as it is (``python -m dpcore draw`` also takes the name of a listed data set).

    Parameters
    ----------
    dataset : str
        The release's ``dataset.name`` (its account in the store).

    Returns
    -------
    str
    """
    return dataset.removeprefix("upload:")


def _title(release: dict, release_id: int | None) -> str:
    a, p = release["algorithm"], release["privacy"]
    k = release["parameters"].get("n_clusters")
    what = f"{a['name']}" + (f", k = {k}" if k is not None and a["key"] != "sanitize" else "")
    rid = f"Release #{release_id}" if release_id is not None else "A release"
    return f"{rid}: {what}, ε = {p['epsilon']:g}" + (f", δ = {p['delta']:.3g}" if p["delta"] else "") + \
        f" on {release['dataset']['name']}"


def _changed_parameters(release: dict) -> dict:
    """The release's parameters that differ from the algorithm's defaults (those a re-draw must pass)."""
    # Imported here: the gallery's first screen imports this module and loads no estimator (issue 66).
    from ..algorithms.registry import releasable
    cls = releasable(release["algorithm"]["key"])
    defaults = json.loads(json.dumps(cls().get_params(deep=False), default=str))
    return {k: v for k, v in release["parameters"].items()
            if k not in _OWN_OPTIONS and k in defaults and defaults[k] != v}


def _number(v) -> str:
    """A number as the command line reads it back exactly (``repr`` of a float is exact)."""
    return repr(float(v)) if float(v) != int(float(v)) or abs(float(v)) >= 1e16 else str(int(float(v)))


def to_script(release: dict, *, release_id: int | None = None, data_path: str | None = None) -> str:
    """A short script that draws the release's settings again through the release store.

    Parameters
    ----------
    release : dict
        From :func:`dpcore.release.build_release` (as recorded).
    release_id : int or None
        Its id in the store, named in the script's first line.
    data_path : str or None
        The data file (CSV or Parquet) or a listed data set's name; default :func:`default_data_path`.

    Returns
    -------
    str
        Python source.  Run, it calls ``dpcore.cli.main(["draw", DATA, ...])`` and exits with its
        status: 0 drawn (the new release's id printed), 2 usage, 3 refused by the cap or a role
        (nothing recorded), 4 bad data.

    Notes
    -----
    **Privacy.** Each run is a new draw with fresh noise that spends ε again on the data's account
    (sequential composition); the store refuses it over the data's cap.  The script holds public
    inputs only (bounds, parameters, column names, the data's name), never a released value.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.algorithms import EUGkM
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(500, 2))
    >>> rel = build_release(EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X), algorithm="eugkm",
    ...                     dataset="upload:points.csv", columns=["x", "y"])
    >>> text = to_script(rel, release_id=7)
    >>> 'DATA = "points.csv"' in text and '"--n-clusters", "3"' in text
    True
    """
    a, p, unit = release["algorithm"], release["privacy"], release.get("privacy_unit") or {}
    cols = list(release["dataset"]["columns"])
    name = release["dataset"]["name"]
    data = default_data_path(name) if data_path is None else str(data_path)
    lower = ", ".join(_number(v) for v in release["bounds"]["lower"])
    upper = ", ".join(_number(v) for v in release["bounds"]["upper"])
    sanitize = a["key"] == "sanitize"
    args = [f'    "{"sanitize" if sanitize else "draw"}", DATA,', '    "--name", NAME,',
            f"    \"--columns\", {json.dumps(','.join(cols), ensure_ascii=False)},",
            '    "--lower=" + ",".join(map(repr, LOWER)),', '    "--upper=" + ",".join(map(repr, UPPER)),']
    if not sanitize:
        args.append(f'    "--algorithm", "{a["key"]}",')
    k = release["parameters"].get("n_clusters")
    if k is not None and not sanitize:
        args.append(f'    "--n-clusters", "{int(k)}",')
    args.append(f'    "--epsilon", "{_number(p["epsilon"])}",')
    if p["delta"]:
        args.append(f'    "--delta", "{p["delta"]!r}",')
    if unit.get("person_level"):
        args.append(f"    \"--privacy-id\", {json.dumps(str(unit['column']), ensure_ascii=False)}, "
                    f"\"--max-contributions\", \"{int(unit['max_contributions'])}\", "
                    f"\"--bounding\", \"{unit.get('bounding', 'sample')}\",")
    for key, v in _changed_parameters(release).items():
        args.append(f"    \"--param\", {json.dumps(f'{key}={json.dumps(v)}', ensure_ascii=False)},")
    cols_words = ", ".join(cols[:4]) + (", …" if len(cols) > 4 else "")
    return f'''"""{_title(release, release_id)}: the same settings again, with fresh noise.

Made by dpcore {release["package"]["version"]} from that release ({release["created"]}).  Run it where the data is:

    python {{this file}}

It draws through the release store that $DPCORE_STORE names (else the default file), exactly as
`python -m dpcore draw` does: the draw is recorded in the data's account before anything is shown,
and refused (exit status 3, nothing recorded) when it would pass the total set for the data.
Exit status: 0 drawn, 2 usage, 3 refused (the cap or a role), 4 bad data.  Each run spends
ε = {p["epsilon"]:g} again: {guarantee_sentence(release)}.
"""
import sys

from dpcore.cli import main

# The data: a CSV or Parquet file (next month: next month's file), or a listed data set's name.
DATA = {json.dumps(data, ensure_ascii=False)}
# Its account in the release store.  Another file holds other rows: give it a name of its own.
NAME = {json.dumps(name, ensure_ascii=False)}
# Public bounds of {cols_words}: known without looking at the data (never read from it).
LOWER = [{lower}]
UPPER = [{upper}]

ARGS = [
{chr(10).join(args)}
]

if __name__ == "__main__":
    sys.exit(main(ARGS))
'''


def _code(source: str, **metadata):
    import nbformat.v4 as nbf
    return nbf.new_code_cell(source.strip("\n"), metadata=metadata)


def _md(source: str):
    import nbformat.v4 as nbf
    return nbf.new_markdown_cell(source.strip("\n"))


_PICTURE = '''
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display

from dpcore.release import guarantee_sentence, protected_unit
from dpcore.release.view import is_geo, released_points

COLUMNS = release["dataset"]["columns"]
LOWER, UPPER = release["bounds"]["lower"], release["bounds"]["upper"]
GEO = is_geo(release)                   # longitude, latitude: drawn on a map
try:
    POINTS = released_points(release)   # the released weighted points: a sanitized database
except ValueError:
    POINTS = None                       # the release publishes its centres only
MOST_POINTS = 20_000                    # the heaviest released points drawn (more only slows the browser)


def picture(centres, title):
    """The released points (if any) and ``centres`` on the first two columns, inside the public bounds."""
    centres = np.asarray(centres, dtype=float).reshape(-1, len(COLUMNS))
    xy = lambda a: (a[:, 0], a[:, 1] if a.shape[1] > 1 else np.zeros(len(a)))  # noqa: E731
    traces = []
    if POINTS is not None:
        keep = np.argsort(-POINTS.weights)[:MOST_POINTS]
        keep = keep[POINTS.weights[keep] > 0]
        x, y = xy(POINTS.points[keep])
        traces.append(dict(x=x, y=y, name="released points (noisy weight)", mode="markers",
                           marker=dict(size=5, color=POINTS.weights[keep], colorscale="Reds", opacity=0.6,
                                       colorbar=dict(title="noisy weight"))))
    x, y = xy(centres)
    traces.append(dict(x=x, y=y, name="centres", mode="markers",
                       marker=dict(size=14, color="rgb(230,85,13)", line=dict(width=1.5, color="black"))))
    if GEO:
        fig = go.Figure([go.Scattermap(lon=t["x"], lat=t["y"], name=t["name"], mode="markers",
                                       marker={k: v for k, v in t["marker"].items() if k != "line"})
                         for t in traces])
        fig.update_layout(map=dict(style="carto-positron", zoom=10,
                                   center=dict(lon=(LOWER[0] + UPPER[0]) / 2, lat=(LOWER[1] + UPPER[1]) / 2)))
    else:
        fig = go.Figure([go.Scatter(**t) for t in traces])
        fig.update_xaxes(range=[LOWER[0], UPPER[0]], title=COLUMNS[0])
        if len(COLUMNS) > 1:
            fig.update_yaxes(range=[LOWER[1], UPPER[1]], title=COLUMNS[1])
    fig.update_layout(title=title, height=560, legend=dict(orientation="h"))
    return fig
'''


def to_notebook(release: dict, *, release_id: int | None = None, account: str | None = None) -> str:
    """A Jupyter notebook that loads the release (embedded) and analyses it without any spend.

    Its cells: the release's JSON (embedded, so the notebook is one self-contained file), the guarantee
    in words (:func:`dpcore.release.guarantee_sentence` and the release's statements), the map (longitude,
    latitude) or scatter plot of the released points and centres (plotly), the centres, the ledger, and
    k-means at a k of the reader's choice on the released points when the release has them (a sanitized
    database, a noisy grid or a coreset: :func:`dpcore.release.view.released_points`).

    Parameters
    ----------
    release : dict
        From :func:`dpcore.release.build_release` (as recorded).
    release_id : int or None
        Its id in the store, named in the title.
    account : str or None
        The data's running total when the notebook was made (:func:`dpcore.store.totals.account_sentence`),
        shown as a dated sentence; None leaves it out.

    Returns
    -------
    str
        The notebook (nbformat 4 JSON).  Run top to bottom (Jupyter, ``nbclient``), it needs dpcore,
        pandas and plotly, and reads no file, no data and no store.

    Raises
    ------
    ImportError
        ``nbformat`` is not installed (``pip install nbformat``; ``dpcore[app]`` has it).

    Notes
    -----
    **Privacy.** Everything the notebook computes is a function of the released values and the public
    bounds: post-processing (Dwork & Roth 2014, Prop. 2.1).  Running it, any number of times at any k,
    spends nothing and records nothing.
    """
    import nbformat
    import nbformat.v4 as nbf

    try:
        released_points(release)
        has_points = True
    except ValueError:
        has_points = False
    text = json.dumps(release, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    literal = f'r"""{text}"""' if '"""' not in text and not text.endswith("\\") else repr(text)
    p = release["privacy"]
    k = len(release["centroids"])
    cells = [
        _md(f"""
# {_title(release, release_id)}

This notebook holds the published release (its JSON, in the next cell) and reads nothing else: no data
file, no release store. Everything below is computed from the released values and the public bounds, so
running it, as often as you like and at any k, **spends no ε and records nothing** (post-processing).
"""),
        _code(f"""
# The release as published (dpcore-release/2 JSON): the only input of this notebook.
import json

release = json.loads({literal})
""", jupyter={"source_hidden": True}),
        _code(_PICTURE),
        _md("## What it guarantees"),
        _code("""
lines = [f"**{guarantee_sentence(release)}.** What this means for one {protected_unit(release)} in the data:"]
lines += [f"- **{s['title']}: {s['value']}.** {s['sentence']}" for s in release["privacy"]["statements"]]
display(Markdown("\\n".join(lines)))
"""),
    ]
    if account:
        cells.append(_md(f"**All releases of this data together**, as recorded when this notebook was made: "
                         f"{account}"))
    cells += [
        _md(f"## The release: {k} private centre(s)" + (" and its released points" if has_points else "")),
        _code(f'picture(release["centroids"], "{_title(release, release_id)}")'),
        _code('pd.DataFrame(release["centroids"], columns=COLUMNS).rename_axis("centre")'),
        _md("## The budget ledger: what each step spent"),
        _code("""
p = release["privacy"]
display(Markdown(f"Spent ε = {p['epsilon_spent']:.6g} of {p['epsilon']:g}"
                 + (f", δ = {p['delta_spent']:.3g} of {p['delta']:.3g}" if p["delta"] else "")
                 + f" ({p['composition']})."))
pd.DataFrame(release["ledger"])[["name", "mechanism", "sensitivity", "epsilon", "delta"]]
"""),
    ]
    if has_points:
        cells += [
            _md("""
## k-means at any k on the released points

The released points and their noisy weights are a sanitized database: k-means on them, for any k, reads
nothing else, so it spends no ε (the seed fixes only k-means' start, so everyone gets the same centres).
Change `K` and run the cell again.
"""),
            _code(f"""
K = {max(k, 1)}   # any k: k-means on the released points is post-processing, it spends no ε
centres = POINTS.kmeans(K, random_state=0)
picture(centres, f"k-means on the released points, k = {{K}} (no ε spent)")
"""),
            _code('pd.DataFrame(centres, columns=COLUMNS).rename_axis("centre")'),
        ]
    else:
        cells.append(_md(f"""
## Other k

This release publishes only its {k} centres, no weighted points: clustering again at another k would need
the data (a new draw, which spends ε). A sanitized database (`python -m dpcore sanitize`, or
`dpcore.sanitize`) can be analysed here at any k for free.
"""))
    nb = nbf.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "dpcore": {"release_id": release_id, "format": release["format"], "epsilon": p["epsilon"]}})
    nbformat.validate(nb)
    return nbformat.writes(nb)


def render(release: dict, fmt: str, *, release_id: int | None = None, account: str | None = None,
           data_path: str | None = None) -> str:
    """The release in format ``fmt`` (a key of :data:`FORMATS`).

    Parameters
    ----------
    release : dict
    fmt : {"json", "csv", "html", "py", "ipynb"}
    release_id : int or None
        For the script's and the notebook's titles.
    account : str or None
        The data's running total in words (the HTML report and the notebook show it).
    data_path : str or None
        The script's data path (:func:`to_script`).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        An unknown format.
    """
    if fmt == "json":
        return to_json(release)
    if fmt == "csv":
        return to_csv(release)
    if fmt == "html":
        return to_html(release, account=account)
    if fmt == "py":
        return to_script(release, release_id=release_id, data_path=data_path)
    if fmt == "ipynb":
        return to_notebook(release, release_id=release_id, account=account)
    raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
