"""Which data a draw reads: a file as the app reads an upload, files or a table where they lie, or a listed set.

The account a draw lands in is keyed by the data's content, as in the app:

* a CSV or Parquet file is read by the app's upload readers (:func:`dpcore.datasets.read_table`,
  :func:`dpcore.datasets.dataset_from_frame`) and keyed by its parsed rows
  (:func:`dpcore.store.keys.content_digest`): the same rows reach the same account whether uploaded in
  the app or drawn here, under any file name or encoding;
* files read where they lie (a glob, a folder, ``--engine``) and database tables are keyed as the app
  keys its configured sources (:func:`dpcore.sources.config.content_key`);
* a data set the app lists (built-in, ``$DPCORE_DATA``, ``dpcore_sources.toml``) is loaded by
  :func:`dpcore.datasets.load` and keyed as the app keys it.

Bad data raises :class:`BadData` with a sentence that says what to do; nothing is recorded.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

#: The app's upload limit (:func:`dpcore.datasets.read_table`); a larger file is read where it lies.
MAX_FILE_BYTES = 200 * 2**20
#: L when a person column is used and no ``--max-contributions`` is given: the app's default.
DEFAULT_MAX_CONTRIBUTIONS = 5


class BadData(ValueError):
    """The data cannot be used as given (exit status 4): the message says what to do."""


class Usage(ValueError):
    """The options do not fit together (exit status 2)."""


@dataclass
class Data:
    """What a draw needs of its data: the rows (or a source), their public bounds and their account.

    Attributes
    ----------
    name : str
        The default account: ``upload:FILE`` for a file, the listed name, or the path of a source.
    fingerprint : str
        What the store keys the account to (:func:`dpcore.store.draw.settings`'s ``fingerprint``).
    X : ndarray (n, d) or DataSource
    columns : list of str
    bounds : (lower, upper) ndarrays (d,), or None (refused before a draw)
    units : ndarray (n,), str (a source's column) or None
    unit_column : str or None
    title, kind : str
        For the store's description and the guarantee's words ("trip", "record").
    notes : list of str
        Sentences for standard error (rows left out, ...).
    """

    name: str
    fingerprint: str
    X: object
    columns: list
    bounds: tuple | None
    units: object = None
    unit_column: str | None = None
    title: str = ""
    kind: str = "points"
    notes: list = field(default_factory=list)

    @property
    def is_source(self) -> bool:
        """True when the rows stay where they lie (a DataSource): the draw runs there."""
        return not isinstance(self.X, np.ndarray)

    @property
    def former(self) -> tuple:
        """The rows' digests under former canonical forms (:func:`dpcore.store.keys.former_digests`), so that an
        account registered before issue 68 (ids' names hashed) is still found; ``()`` for a source."""
        if self.is_source:
            return ()
        from ..store.keys import former_digests
        return former_digests(self.X, None if isinstance(self.units, str) else self.units)


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in str(text).split(",") if t.strip()]


def _numbers(text: str | None, what: str) -> np.ndarray | None:
    parts = _split(text)
    if parts is None:
        return None
    try:
        return np.array([float(t) for t in parts])
    except ValueError:
        raise Usage(f"--{what}={text} is not a comma-separated list of numbers (write --{what}=-74.1,40.7)") from None


def bounds_of(args, d: int, default=None) -> tuple | None:
    """The public bounds from ``--lower``/``--upper`` (one number per column), else ``default``.

    Raises
    ------
    Usage
        Only one of them, or not one number per column.
    """
    lower, upper = _numbers(args.lower, "lower"), _numbers(args.upper, "upper")
    if lower is None and upper is None:
        return default
    if lower is None or upper is None:
        raise Usage("give both --lower and --upper (one number per column each)")
    if lower.size != d or upper.size != d:
        raise Usage(f"--lower and --upper need one number per column ({d}), got {lower.size} and {upper.size}")
    if not np.all(np.isfinite(lower) & np.isfinite(upper)) or np.any(lower >= upper):
        raise Usage("each lower bound must be a number below its upper bound")
    return lower, upper


def extra_params(args) -> dict:
    """``--param NAME=VALUE`` options as estimator parameters (VALUE read as JSON, else as text)."""
    out = {}
    for item in args.param:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise Usage(f"--param {item!r}: write NAME=VALUE, e.g. --param theta=10")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _is_pattern(path: str) -> bool:
    return any(ch in path for ch in "*?[") or os.path.isdir(path)


def open_data(args) -> Data:
    """The data ``args.data`` names (see the module docstring), checked before any draw.

    Raises
    ------
    BadData
        Missing file, unreadable file, text column, missing values (without ``--drop-missing``),
        unknown column, a file too large to load (use ``--engine``).
    Usage
        Options that do not fit the data (bounds per column, ``--table`` without a URL, ...).
    """
    path = str(args.data)
    if "://" in path:
        return _table(args, path)
    if args.table:
        raise Usage("--table goes with a database URL as DATA (postgresql://user@host/db)")
    if args.engine or _is_pattern(path):
        return _where_it_lies(args, path)
    if os.path.isfile(path):
        return _file(args, path)
    from .. import datasets
    if path in datasets.available():
        return _listed(args, path)
    raise BadData(f"no file, folder or listed data set named {path!r}: check the path (relative paths start at "
                  f"{os.getcwd()}), or list the data sets with python -c \"from dpcore import datasets; "
                  "print(datasets.available())\"")


def _columns(args, data_label: str) -> list[str]:
    cols = _split(args.columns)
    if not cols:
        raise Usage(f"name the columns to cluster in {data_label}: --columns C1,C2")
    return cols


def _missing_values(df, used: list[str]) -> int:
    """Rows with a missing or infinite value in a used numeric column (text columns are refused elsewhere)."""
    bad = np.zeros(len(df), dtype=bool)
    for c in used:
        if c not in df.columns:
            continue
        col = df[c]
        if getattr(col.dtype, "kind", "O") in "biuf":
            bad |= ~np.isfinite(col.to_numpy(dtype=float))
        else:
            bad |= col.isna().to_numpy()
    return int(bad.sum())


def _file(args, path: str) -> Data:
    """One CSV or Parquet file, read exactly as the app reads an upload."""
    from .. import datasets
    from ..store.keys import content_digest
    filename = os.path.basename(path)
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise BadData(f"{path} is {size / 2**20:.0f} MB, more than the {MAX_FILE_BYTES // 2**20} MB the app loads; "
                      "read it where it lies instead: add --engine duckdb (out of core, the algorithms that scale)")
    try:
        df = datasets.read_table(path, filename=filename)
    except ValueError as exc:
        raise BadData(str(exc).replace("upload a", "use a").replace("upload again", "try again")) from None
    cols = _columns(args, filename)
    used = cols + ([args.privacy_id] if args.privacy_id else [])
    missing = [c for c in used if c not in df.columns]
    if missing:
        raise BadData(f"column(s) {', '.join(map(repr, missing))} not found in {filename}; it has: "
                      f"{', '.join(map(str, df.columns))}")
    text = [c for c in cols if getattr(df[c].dtype, "kind", "O") not in "biuf"]
    if text:
        raise BadData(f"column(s) {', '.join(map(repr, text))} of {filename} hold text, not numbers; choose numeric "
                      "columns only, or fix the file (e.g. remove units or thousands separators)")
    notes = []
    n_bad = _missing_values(df, used)
    if n_bad and not args.drop_missing:
        raise BadData(f"{n_bad} row(s) of {filename} have a missing or infinite value in {', '.join(used)}; remove "
                      "them from the file, or pass --drop-missing to leave them out (as the app does with an "
                      "upload). Nothing was recorded.")
    if n_bad:
        notes.append(f"{n_bad} row(s) with a missing value were left out (--drop-missing): a fact about the file, "
                     "not part of the release.")
    bounds = bounds_of(args, len(cols))
    if bounds is None:
        raise BadData("no public bounds: give --lower=L1,L2 and --upper=U1,U2, one number per column, known without "
                      "looking at the data (e.g. the city's bounding box). Bounds read from the data would leak its "
                      "extremes, so nothing is drawn without them.")
    try:
        ds = datasets.dataset_from_frame(df, cols, bounds=bounds, name=f"upload:{filename}",
                                         unit_column=args.privacy_id)
    except (ValueError, TypeError) as exc:
        raise BadData(str(exc)) from None
    units = getattr(ds, "units", None)
    return Data(name=f"upload:{filename}", fingerprint=content_digest(ds.X, units), X=ds.X, columns=list(ds.columns),
                bounds=ds.bounds, units=units, unit_column=args.privacy_id, title=ds.title, kind=ds.kind, notes=notes)


def _listed(args, name: str) -> Data:
    """A data set the app lists: loaded and keyed as the app's data picker does."""
    from .. import datasets
    from ..sources.config import content_key, read_config
    from ..store.keys import content_digest
    ds = datasets.load(name)
    cols = _split(args.columns)
    if cols and cols != list(ds.columns):
        raise Usage(f"{name} has the columns {', '.join(ds.columns)}; drop --columns or give exactly these")
    if args.privacy_id and args.privacy_id != ds.unit_column:
        has = f"the person column {ds.unit_column!r}" if ds.unit_column else "no person column"
        raise Usage(f"{name} has {has}; --privacy-id cannot name {args.privacy_id!r}")
    bounds = bounds_of(args, len(ds.columns), default=ds.bounds)
    if bounds is None:
        raise BadData(f"{name} has no public bounds: give --lower and --upper, known without looking at the data")
    source = getattr(ds, "data_source", None)
    if source is not None:
        entry = next(e for e in read_config() if e["name"] == name)
        fingerprint, X, units = f"src-{content_key(entry)}", source, ds.unit_column
    else:
        fingerprint, X, units = content_digest(ds.X, ds.units), ds.X, ds.units
    return Data(name=name, fingerprint=fingerprint, X=X, columns=list(ds.columns), bounds=bounds, units=units,
                unit_column=ds.unit_column, title=ds.title, kind=getattr(ds, "kind", "points"))


def _source_data(args, source, key_entry: dict, label: str) -> Data:
    from ..sources.config import content_key
    bounds = bounds_of(args, len(source.columns))
    if bounds is None:
        raise BadData("no public bounds: give --lower=L1,L2 and --upper=U1,U2, one number per column, known without "
                      "looking at the data. Nothing is drawn without them.")
    return Data(name=label, fingerprint=f"src-{content_key(key_entry)}", X=source, columns=list(source.columns),
                bounds=bounds, units=args.privacy_id, unit_column=args.privacy_id, title=label)


def _where_it_lies(args, path: str) -> Data:
    """Files, a glob or a folder read where they lie: DuckDB (default) or Spark."""
    from .. import sources
    cols = _columns(args, path)
    wanted = cols + ([args.privacy_id] if args.privacy_id else [])
    if not (any(ch in path for ch in "*?[") or os.path.exists(path)):
        raise BadData(f"no file or folder {path!r}: check the path (relative paths start at {os.getcwd()})")
    try:
        if args.engine == "spark":
            files, kind = sources._expand(path)
            spark = sources.spark_session()
            reader = spark.read.parquet if kind == "parquet" else (
                lambda *f: spark.read.csv(list(f), header=True, inferSchema=True))
            src = sources.from_spark(reader(*files), columns=cols)
        else:
            src = sources.from_files(path, columns=cols)
    except (FileNotFoundError, KeyError, TypeError, ValueError) as exc:
        raise BadData(str(exc).strip("'\"")) from None
    entry = {"path": os.path.abspath(path) if not any(ch in path for ch in "*?[") else path, "columns": wanted}
    return _source_data(args, src, entry, os.path.basename(path.rstrip("/")) or path)


def _table(args, url: str) -> Data:
    """A database table read where it lies."""
    from .. import sources
    if not args.table:
        raise Usage("a database URL needs --table TABLE")
    cols = _columns(args, f"table {args.table}")
    try:
        src = sources.from_table(url, args.table, columns=cols)
    except (KeyError, TypeError, ValueError) as exc:
        raise BadData(str(exc).strip("'\"")) from None
    entry = {"url": url, "table": args.table, "columns": cols + ([args.privacy_id] if args.privacy_id else [])}
    return _source_data(args, src, entry, args.table)
