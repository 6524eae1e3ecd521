"""The data owner's list of large sources the app opens without loading: ``dpcore_sources.toml``.

The file is named by ``$DPCORE_SOURCES``, else ``$DPCORE_DATA/dpcore_sources.toml``.
Each ``[[source]]`` table is one data set::

    [[source]]
    name = "taxi_1e7"                                 # the key in the dataset list
    title = "NYC taxi, 10^7 rows"                     # short: the app's list shows ~22 characters whole
    summary = "10 million taxi pickups in Parquet, read where they lie"   # optional: one line under it
    path = "taxi_10000000"                            # file, glob or folder; relative to $DPCORE_DATA
    columns = ["pickup_longitude", "pickup_latitude"]
    lower = [-74.1, 40.7]                             # public bounds (required: never read from data)
    upper = [-73.9, 40.9]
    geo = true                                        # columns are longitude, latitude
    n_clusters_hint = 5

    [[source]]
    name = "trips_pg"
    url = "postgresql://analyst@db.internal:5432/tlc" # instead of path: a database URL ...
    table = "trips"                                   # ... and a table
    columns = ["lon", "lat"]
    lower = [-74.1, 40.7]
    upper = [-73.9, 40.9]

Row counts and columns shown before opening come from metadata only (Parquet
footers); nothing is scanned until a release is computed.  The app lists a source by its
``title`` with " · large" after it, in a one-line box that shows about 30 characters: a longer
title is cut there and shown in full under the box, before the ``summary``.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import tomllib


def config_path() -> Path | None:
    """The configuration file in use, or None."""
    env = os.environ.get("DPCORE_SOURCES")
    if env:
        return Path(env).expanduser()
    data = os.environ.get("DPCORE_DATA")
    if data:
        cand = Path(data).expanduser() / "dpcore_sources.toml"
        return cand if cand.is_file() else None
    return None


def _resolve(path: str) -> str:
    p = Path(path).expanduser()
    if not p.is_absolute() and os.environ.get("DPCORE_DATA"):
        p = Path(os.environ["DPCORE_DATA"]).expanduser() / p
    return str(p)


def read_config(path: Path | None = None) -> list[dict]:
    """The ``[[source]]`` entries, validated.

    Raises
    ------
    FileNotFoundError
        ``$DPCORE_SOURCES`` names a missing file.
    ValueError
        A malformed file or entry (the message names the entry and what to fix).
    """
    path = path or config_path()
    if path is None:
        return []
    if not Path(path).is_file():
        raise FileNotFoundError(f"DPCORE_SOURCES names {path}, which does not exist")
    try:
        cfg = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None
    out = []
    for i, entry in enumerate(cfg.get("source", [])):
        name = entry.get("name") or f"source_{i + 1}"
        if ("path" in entry) == ("url" in entry):
            raise ValueError(f"{path}: source {name!r} needs either path = ... or url = ... and table = ...")
        if "url" in entry and "table" not in entry:
            raise ValueError(f"{path}: source {name!r} has a url but no table")
        if "lower" not in entry or "upper" not in entry:
            raise ValueError(f"{path}: source {name!r} needs public bounds lower = [...] and upper = [...]")
        e = dict(entry, name=name)
        if "path" in e:
            e["path"] = _resolve(e["path"])
        e["bounds"] = (np.asarray(e["lower"], dtype=float), np.asarray(e["upper"], dtype=float))
        out.append(e)
    return out


def metadata(entry: dict) -> dict:
    """Row count, columns and where the data lie, without scanning a row.

    Returns
    -------
    dict
        ``rows`` (int from the Parquet footers, None for CSV files and database tables), ``columns``
        (list of str), ``format`` (``"parquet"``, ``"csv"`` or ``"table"``), ``files`` (number of
        files, 0 for a table), ``engine`` (``"duckdb"`` for files, else the URL's scheme) and
        ``error`` (a sentence, or None).  The row count is exact: it is for the data owner's eyes
        only, not for anything published.
    """
    columns = list(entry.get("columns") or [])
    if "path" not in entry:
        scheme = entry["url"].split(":", 1)[0].split("+")[0]
        return {"rows": None, "columns": columns, "format": "table", "files": 0, "engine": scheme,
                "error": None}
    out = {"rows": None, "columns": columns, "format": None, "files": 0, "engine": "duckdb", "error": None}
    try:
        from . import _expand
        files, kind = _expand(entry["path"])
    except (FileNotFoundError, ValueError) as exc:
        return dict(out, error=str(exc))
    out.update(format=kind, files=len(files))
    if kind == "parquet":
        import pyarrow.parquet as pq
        try:
            out["rows"] = sum(pq.read_metadata(f).num_rows for f in files)
            out["columns"] = columns or list(pq.read_schema(files[0]).names)
        except Exception as exc:  # pyarrow's errors for a truncated or foreign file
            return dict(out, error=f"cannot read the Parquet metadata of {entry['path']}: {exc}")
    return out


def content_key(entry: dict) -> str:
    """A short key that changes when the configured data change, read without scanning a row.

    Files: their paths, sizes and modification times; a table: its URL (without password) and name.
    The release store ties a dataset's privacy account to this key, so another data set
    configured under the same name gets its own account instead of silently sharing one.
    """
    import hashlib

    if "path" in entry:
        from . import _expand
        try:
            files, _ = _expand(entry["path"])
        except (FileNotFoundError, ValueError):
            files = []
        parts = [(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files]
        text = repr([entry["path"], list(entry.get("columns") or []), parts])
    else:
        text = repr([entry["url"].split("@")[-1], entry["table"], list(entry.get("columns") or [])])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def open_entry(entry: dict):
    """Open the source of one configured entry (files through DuckDB, or a database table)."""
    from . import from_files, from_table
    if "path" in entry:
        return from_files(entry["path"], columns=entry.get("columns"))
    return from_table(entry["url"], entry["table"], columns=entry.get("columns"))


__all__ = ["config_path", "read_config", "metadata", "content_key", "open_entry"]
