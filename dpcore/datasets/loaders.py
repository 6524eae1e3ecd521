"""Readers behind :func:`dpcore.datasets.load`: scikit-learn sets, CSV columns, fixed-point Parquet."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from .dataset import Dataset, _Spec


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------
def _subsample(X, labels, max_rows, random_state, units=None):
    if max_rows is None or X.shape[0] <= max_rows:
        return (X, labels) if units is None else (X, labels, units)
    if int(max_rows) < 1:
        raise ValueError(f"max_rows must be a positive whole number, got {max_rows}")
    rng = np.random.default_rng(random_state)
    idx = np.sort(rng.choice(X.shape[0], size=int(max_rows), replace=False))
    out = X[idx], (labels[idx] if labels is not None else None)
    return out if units is None else (*out, units[idx])


def _keep_rows(X: np.ndarray, bounds, box_filter: bool) -> np.ndarray:
    """Rows with finite values (and inside ``bounds`` when ``box_filter``)."""
    keep = np.isfinite(X).all(axis=1)
    if box_filter and bounds is not None:
        lo, hi = bounds
        with np.errstate(invalid="ignore"):
            keep &= ((X >= lo) & (X <= hi)).all(axis=1)
    return keep


def _finish(spec: _Spec, X, labels, columns, *, max_rows, random_state, source, extra="", units=None) -> Dataset:
    X = np.asarray(X, dtype=np.float64)
    keep = _keep_rows(X, spec.bounds, spec.box_filter)
    n_dropped = int((~keep).sum())
    if n_dropped:
        X = X[keep]
        labels = labels[keep] if labels is not None else None
        units = units[keep] if units is not None else None
    if units is None:
        X, labels = _subsample(X, labels, max_rows, random_state)
    else:
        X, labels, units = _subsample(X, labels, max_rows, random_state, units)
    desc = spec.description + extra
    if n_dropped:
        what = "outside the public box or with missing values" if spec.box_filter else "with missing values"
        desc += f" {n_dropped:,} rows {what} were dropped."
    return Dataset(name=spec.name, X=np.ascontiguousarray(X), columns=list(columns), bounds=spec.bounds,
                   geo=spec.geo, title=spec.title, description=desc, labels=labels,
                   n_clusters_hint=spec.n_clusters_hint, n_dropped=n_dropped, source=source,
                   units=units, unit_column=spec.unit_col, kind=spec.kind_of_rows,
                   public=spec.kind in PUBLIC_KINDS)


#: Spec kinds whose data are public: embedded with the package, or scikit-learn's teaching sets.
PUBLIC_KINDS = ("sample", "sklearn")


def _descr_bounds(descr: str, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Min/max of scikit-learn's DESCR summary table, widened by one unit of the last digit.

    The DESCR rounds (e.g. wine's alcohol max is printed 14.8, the data hold 14.83), so each
    printed value is moved outward by one unit of its last printed digit.  Every attribute
    of iris, wine and breast cancer is a non-negative physical quantity, so the lower bound
    stops at 0.
    """
    lo: list[float] = []
    hi: list[float] = []
    in_table = False
    for line in descr.splitlines():
        if line.startswith(":Summary Statistics:"):
            in_table = True
            continue
        if not in_table:
            continue
        m = re.match(r"^\s*[^:=]+:\s+(-?\d+(?:\.\d+)?)\s+(-?\d+(?:\.\d+)?)", line)
        if m:
            for value, out, sign in ((m.group(1), lo, -1), (m.group(2), hi, +1)):
                decimals = len(value.split(".")[1]) if "." in value else 0
                out.append(round(float(value) + sign * 10.0 ** -decimals, decimals))
            if len(lo) == n_features:
                break
    if len(lo) != n_features:
        raise RuntimeError(f"could not read {n_features} min/max rows from scikit-learn's description "
                           f"(found {len(lo)}); the DESCR format changed")
    return np.maximum(np.array(lo), 0.0), np.array(hi)


def _load_sklearn(spec: _Spec, loader_name: str, max_rows, random_state) -> Dataset:
    from sklearn import datasets as skd
    loader = getattr(skd, loader_name)
    bunch = loader()
    X = bunch.data.astype(np.float64)
    if spec.name == "digits":
        bounds = (np.zeros(X.shape[1]), np.full(X.shape[1], 16.0))  # DESCR: "integer pixels in the range 0..16"
    else:
        bounds = _descr_bounds(bunch.DESCR, X.shape[1])
    spec = dataclasses.replace(spec, bounds=bounds)
    return _finish(spec, X, np.asarray(bunch.target), [str(c) for c in bunch.feature_names],
                   max_rows=max_rows, random_state=random_state, source=f"sklearn.datasets.{loader.__name__}")


def _read_csv_columns(path, columns, label_col, unit_col=None):
    import pandas as pd
    usecols = list(columns) + ([label_col] if label_col else []) + ([unit_col] if unit_col else [])
    try:
        if str(path).endswith(".parquet"):
            df = pd.read_parquet(path, columns=usecols)
        else:
            df = pd.read_csv(path, usecols=usecols)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{Path(path).name} does not have the expected columns {usecols}: {exc}") from None
    X = df[list(columns)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    labels = df[label_col].to_numpy() if label_col else None
    if unit_col:
        return X, labels, df[unit_col].to_numpy()
    return X, labels


def _read_fixed_point_parquet(path, columns) -> np.ndarray:
    """Columns of a Parquet file as float64; integer columns with ``per_degree`` field metadata
    (fixed point, e.g. microdegrees) are divided by it, exactly as written by ``make_taxi_sample.py``."""
    import pyarrow.parquet as pq
    table = pq.read_table(path, columns=list(columns))
    out = np.empty((table.num_rows, len(columns)), dtype=np.float64)
    for j, name in enumerate(columns):
        field = table.schema.field(name)
        out[:, j] = table.column(name).to_numpy()
        per = (field.metadata or {}).get(b"per_degree")
        if per is not None:
            out[:, j] /= float(per)    # division, not * 1e-6: exactly the source's decimal numbers
    return out
