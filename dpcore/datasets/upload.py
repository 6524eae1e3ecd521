"""Uploads: a CSV/Parquet file read with clear limits and messages, and a Dataset made from its columns.

Bad input (empty, huge, text columns, NaN, points outside the bounds) gets a sentence that says what
to do (``ValueError``/``TypeError``), and nothing is lost.
"""
from __future__ import annotations

import csv
import gzip
import io
import os
import re
from pathlib import Path

import numpy as np

from .dataset import Dataset

# --------------------------------------------------------------------------------------
# Uploads
# --------------------------------------------------------------------------------------
_CSV_EXT = (".csv", ".tsv", ".txt", ".csv.gz")


_PARQUET_EXT = (".parquet", ".pq")


def _size_of(source) -> int | None:
    if isinstance(source, (str, os.PathLike)):
        return os.path.getsize(source)
    size = getattr(source, "size", None)
    if isinstance(size, int):
        return size
    try:
        pos = source.tell()
        end = source.seek(0, io.SEEK_END)
        source.seek(pos)
        return end - pos
    except (AttributeError, OSError, ValueError):
        return None


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def read_table(source, *, filename: str, max_bytes: int = 200 * 2**20):
    """Read an uploaded CSV or parquet file into a pandas DataFrame.

    CSV: the delimiter (comma, semicolon or tab) is sniffed; with semicolons a
    decimal comma (``1,5``) is recognised.  Text is decoded as UTF-8 (a BOM is
    allowed); when that fails it is decoded as Windows-1252 (Excel's usual
    export), or Latin-1 when Windows-1252 cannot decode it either.  Such a
    fallback is recorded in ``df.attrs['note']`` so the app can show it: the
    numbers are unaffected, only accented text in names may differ.

    Parameters
    ----------
    source : str, PathLike or binary file-like
        A path, or an object with ``read`` (e.g. Streamlit's UploadedFile,
        whose ``size`` is used to refuse big files before reading them).
    filename : str
        The file's name; its extension chooses the reader
        (``.csv``, ``.tsv``, ``.txt``, ``.csv.gz``, ``.parquet``, ``.pq``).
    max_bytes : int, default 200 MiB
        Larger files are refused before being read.

    Returns
    -------
    pandas.DataFrame
        ``attrs['note']`` holds a sentence about any encoding fallback (else absent).

    Raises
    ------
    ValueError
        Unknown extension, empty file, file larger than ``max_bytes``,
        unreadable content, no header row, or no numeric column.
    """
    import pandas as pd
    lower = str(filename).lower()
    if lower.endswith(_PARQUET_EXT):
        kind = "parquet"
    elif lower.endswith(_CSV_EXT):
        kind = "csv"
    else:
        ext = "".join(Path(lower).suffixes[-2:]) or "(none)"
        raise ValueError(f"{filename}: file type {ext} is not supported; upload a .csv (comma, semicolon or "
                         "tab separated) or a .parquet file (from Excel: File > Save As > CSV)")
    size = _size_of(source)
    if size is not None and size > max_bytes:
        raise ValueError(f"{filename} is {_mb(size)}, more than the {_mb(max_bytes)} limit; upload a smaller "
                         "file (for example a random sample of the rows, or only the columns to cluster)")
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            data = fh.read(max_bytes + 1)
    else:
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        data = source.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{filename} is larger than the {_mb(max_bytes)} limit; upload a smaller file "
                         "(for example a random sample of the rows, or only the columns to cluster)")
    if len(data) == 0:
        raise ValueError(f"{filename} is empty; upload a file with a header row and at least one row of numbers")

    if kind == "parquet":
        try:
            df = pd.read_parquet(io.BytesIO(data))
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise ValueError(f"{filename} could not be read as parquet ({exc}); check that the file is a "
                             "parquet file, or upload a CSV instead") from None
        note = None
    else:
        if lower.endswith(".gz"):
            try:  # cap the decompressed text at max_bytes too (a small .gz can unpack to gigabytes)
                with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                    data = gz.read(max_bytes + 1)
            except (OSError, EOFError) as exc:
                raise ValueError(f"{filename} is not a valid gzip file ({exc}); upload the plain CSV") from None
            if len(data) > max_bytes:
                raise ValueError(f"{filename} unpacks to more than the {_mb(max_bytes)} limit; upload a smaller "
                                 "file (for example a random sample of the rows)")
        text, note = _decode(data, filename)
        if not text.strip():
            raise ValueError(f"{filename} is empty; upload a file with a header row and at least one row of numbers")
        df = _parse_csv(text, filename)

    if df.shape[1] == 0 or df.shape[0] == 0:
        raise ValueError(f"{filename} has no data rows (only a header?); upload a file with a header row "
                         "and at least one row of numbers")
    names = [str(c) for c in df.columns]
    if all(_looks_numeric(c) for c in names):
        raise ValueError(f"{filename} has no header row: its first line holds numbers ({', '.join(names[:4])}), "
                         "not column names; add a header line such as 'x,y' and upload again")
    numeric = [c for c in df.columns if _is_numeric_dtype(df[c])]
    if not numeric:
        raise ValueError(f"{filename} has no numeric columns (found {', '.join(names[:8])}); clustering needs "
                         "numbers, for example longitude and latitude columns")
    if note:
        df.attrs["note"] = note
    return df


def _decode(data: bytes, filename: str) -> tuple[str, str | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    for enc, label in (("cp1252", "Windows-1252"), ("latin-1", "Latin-1")):
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        return text, (f"{filename} is not UTF-8 text; it was read as {label} (the usual Excel export). "
                      "Numbers are unaffected; if names with accents look wrong, save the file as UTF-8 CSV.")
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _parse_csv(text: str, filename: str):
    import pandas as pd
    head = text[:65536]
    try:
        sep = csv.Sniffer().sniff(head.split("\n", 20)[0] if "\n" in head else head, delimiters=",;\t").delimiter
    except csv.Error:
        first = head.splitlines()[0] if head.splitlines() else ""
        counts = {d: first.count(d) for d in (",", ";", "\t")}
        sep = max(counts, key=lambda c: counts[c]) if max(counts.values()) > 0 else ","
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise ValueError(f"{filename} could not be read as a table ({str(exc).strip()}); check that every "
                         "line has the same number of separators (comma, semicolon or tab)") from None
    if sep == ";":
        # European CSV: semicolon separator, decimal comma.  Re-read if text columns are all "1,5"-like.
        obj = [c for c in df.columns if df[c].dtype == object or str(df[c].dtype).startswith(("str", "string"))]
        pattern = re.compile(r"^\s*-?\d+,\d+\s*$")
        if obj and any(df[c].dropna().astype(str).map(lambda s: bool(pattern.match(s))).all()
                       and df[c].notna().any() for c in obj):
            df = pd.read_csv(io.StringIO(text), sep=sep, decimal=",")
    return df


def _looks_numeric(s: str) -> bool:
    try:
        float(s.strip())
        return True
    except ValueError:
        return False


def _is_numeric_dtype(col) -> bool:
    kind = getattr(col.dtype, "kind", "O")
    return kind in "biuf"


_LON_RE = re.compile(r"(?:^|[_\s.\-])(lon|lng|long|longitude)$|^(lon|lng|long|longitude)(?:[_\s.\-]|$)")


_LAT_RE = re.compile(r"(?:^|[_\s.\-])(lat|latitude)$|^(lat|latitude)(?:[_\s.\-]|$)")


def _geo_role(name: str) -> str | None:
    n = str(name).strip().lower()
    if _LON_RE.search(n):
        return "lon"
    if _LAT_RE.search(n):
        return "lat"
    return None


#: Column names that say "an identifier" (a person, a device, a row number): never clustered by default.
_ID_RE = re.compile(r"(?:^|[_\s.\-])(id|uid|uuid|guid|key|index|idx)$|^(id|uid|uuid)(?:[_\s.\-]|$)|"
                    r"^(user|person|customer|client|account|device|patient|driver|member|owner|visitor)"
                    r"(?:[_\s.\-]?(id|no|number|name|key))?$")


def is_id_like(name) -> bool:
    """True when a column's name says it identifies someone or something (``user_id``, ``ID``, ``customer``).

    Decided by the name alone, so the answer never depends on the rows.
    """
    return bool(_ID_RE.search(str(name).strip().lower()))


def suggest_columns(df) -> dict:
    """Defaults for an upload: which numeric columns to cluster and which column may say whose each row is.

    Longitude and latitude are found by name and confirmed by range (every finite value within ±180
    and ±90 degrees); an id-like column (:func:`is_id_like`) is never proposed for clustering and is
    offered, not chosen, as the person column.  These are suggestions for the file's owner, who sees
    the file; nothing here is a release.

    Parameters
    ----------
    df : pandas.DataFrame
        The table :func:`read_table` read.

    Returns
    -------
    dict with ``columns`` (list of up to two numeric column names, longitude first when found),
    ``geo`` (True when they are longitude, latitude) and ``person`` (the first id-like column, or None).
    """
    numeric = [c for c in df.columns if _is_numeric_dtype(df[c])]
    ids = [c for c in df.columns if is_id_like(c)]

    def within(c, limit: float) -> bool:
        values = np.asarray(df[c], dtype=float)
        values = values[np.isfinite(values)]
        return values.size > 0 and bool((np.abs(values) <= limit).all())

    lon = next((c for c in numeric if _geo_role(c) == "lon" and within(c, 180)), None)
    lat = next((c for c in numeric if _geo_role(c) == "lat" and within(c, 90)), None)
    if lon is not None and lat is not None:
        return {"columns": [lon, lat], "geo": True, "person": ids[0] if ids else None}
    plain = [c for c in numeric if c not in ids]
    return {"columns": plain[:2], "geo": False, "person": ids[0] if ids else None}


def dataset_from_frame(df, columns, *, bounds=None, geo=None, name: str = "upload",
                       title: str | None = None, unit_column: str | None = None) -> Dataset:
    """Turn chosen columns of a DataFrame (e.g. an upload) into a :class:`Dataset`.

    Rows with a missing (NaN) or infinite value in a chosen column are dropped
    and counted in ``n_dropped``; the description says so.  Points outside
    ``bounds`` are kept: the estimators clip them and count them.

    Parameters
    ----------
    df : pandas.DataFrame
    columns : list of str
        Columns to cluster, in order.
    bounds : (lower, upper), optional
        Public bounds for ``columns`` (scalars or arrays of length d, in the
        order of ``columns``).  None leaves ``Dataset.bounds`` None: the
        estimator will then warn that the data's own range is used.
    geo : bool, optional
        None: detect from the names (a longitude-like name such as
        ``lon``/``lng``/``longitude``/``pickup_longitude`` and a latitude-like
        one, two columns, values within ±180/±90); the columns are then
        ordered longitude, latitude (and ``bounds`` with them).
        True: the two columns are longitude and latitude (reordered when their
        names tell, else taken in the order given).
    name, title : str
    unit_column : str, optional
        A column that names each row's privacy unit (the person: a user id, a patient number); rows with
        a missing id are dropped with the others.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Missing columns (the message names them and the available ones), no
        columns chosen, no rows left, ``geo=True`` with other than two columns
        or values outside ±180/±90, bad ``bounds``.
    TypeError
        A chosen column holds text.
    """
    from ..utils.domain import check_bounds
    if isinstance(columns, str):
        columns = [columns]
    columns = list(columns)
    if not columns:
        raise ValueError("choose at least one column to cluster")
    avail = [str(c) for c in df.columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {', '.join(map(repr, missing))} not found; the file has: {', '.join(avail)}")
    text = [c for c in columns if not (_is_numeric_dtype(df[c]))]
    if text:
        raise TypeError(f"column(s) {', '.join(map(repr, text))} hold text, not numbers; choose numeric columns "
                        "only, or fix the file (e.g. remove units or thousands separators)")
    d = len(columns)
    lohi = None
    if bounds is not None:
        dom = check_bounds(bounds, d=d)
        lohi = (dom.lower.copy(), dom.upper.copy())
    X = df[columns].to_numpy(dtype=np.float64)

    notes = []
    roles = [_geo_role(c) for c in columns]
    order = None
    if d == 2 and sorted(r for r in roles if r) == ["lat", "lon"]:
        order = [roles.index("lon"), roles.index("lat")]
    if geo is None:
        geo = order is not None
        if geo:
            with np.errstate(invalid="ignore"):
                Xo = X[:, order]
                finite = np.isfinite(Xo).all(axis=1)
                inside = (np.abs(Xo[finite, 0]) <= 180).all() and (np.abs(Xo[finite, 1]) <= 90).all()
            if not inside:
                geo = False
                notes.append("The columns are named like longitude/latitude but hold values beyond ±180/±90, "
                             "so they are not drawn on a map.")
    elif geo:
        if d != 2:
            raise ValueError(f"geo=True needs exactly two columns (longitude, latitude), got {d}")
        order = order or [0, 1]
        with np.errstate(invalid="ignore"):
            Xo = X[:, order]
            finite = np.isfinite(Xo).all(axis=1)
            if not ((np.abs(Xo[finite, 0]) <= 180).all() and (np.abs(Xo[finite, 1]) <= 90).all()):
                raise ValueError(f"columns {columns[order[0]]!r}, {columns[order[1]]!r} are not longitude/latitude "
                                 "in degrees (values beyond ±180/±90); untick 'map' or choose other columns")
    geo = bool(geo)
    if geo and order is not None and order != [0, 1]:
        X = X[:, order]
        columns = [columns[i] for i in order]
        if lohi is not None:
            lohi = (lohi[0][order], lohi[1][order])

    keep = np.isfinite(X).all(axis=1)
    units = None
    if unit_column is not None:
        if unit_column not in df.columns:
            raise ValueError(f"unit column {unit_column!r} not found; the file has: {', '.join(avail)}")
        if unit_column in columns:
            raise ValueError(f"{unit_column!r} is clustered: the person column must be another column")
        ids = df[unit_column]
        keep &= ids.notna().to_numpy()
        units = ids.to_numpy()[keep]
        units = units.astype(str) if units.dtype == object else units
    n_dropped = int((~keep).sum())
    X = np.ascontiguousarray(X[keep])
    if X.shape[0] == 0:
        raise ValueError(f"no rows left: every row has a missing value in {', '.join(columns)}; "
                         "choose other columns or fill the gaps")
    note = getattr(df, "attrs", {}).get("note")
    desc = f"Uploaded data: {X.shape[0]:,} rows, columns {', '.join(columns)}."
    if n_dropped:
        desc += f" {n_dropped:,} rows with missing or infinite values were dropped."
    if lohi is None:
        desc += " No public bounds were given."
    if note:
        desc += " " + note
    desc = " ".join([desc] + notes)
    return Dataset(name=name, X=X, columns=[str(c) for c in columns], bounds=lohi, geo=geo,
                   title=title or "Uploaded data", description=desc, labels=None, n_clusters_hint=None,
                   n_dropped=n_dropped, source=name, notes=notes + ([note] if note else []), units=units,
                   # An upload's rows are check-ins once a person column is known; before that nothing says what a
                   # row is, so a "record", not a "trip" (issue 65: a check-ins file was spoken of as trips).
                   unit_column=unit_column, kind="check-ins" if geo and units is not None else "points")
