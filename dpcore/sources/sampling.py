"""Contribution bounding by sampling where the data live (issue 23): at most L rows of each privacy unit.

The engine twin of :func:`dpcore.utils.contributions.sample_mask`: a keyed hash orders each unit's
rows and the first L are kept, so DuckDB, Spark, PostgreSQL and numpy keep the same rows for the same key.
Weighting, the other bounding, is :mod:`dpcore.sources.weighting`.
"""
from __future__ import annotations

from .base import as_domain
from .ibis_source import IbisSource, exact


def sampled(source: IbisSource, unit: str, max_contributions: int, key: int, bounds) -> IbisSource:
    """At most ``max_contributions`` rows of each privacy unit, chosen where the data live.

    ``ROW_NUMBER() OVER (PARTITION BY unit ORDER BY keyed hash, coordinates)`` in the engine: the keyed
    hash is the integer arithmetic of :func:`dpcore.utils.contributions.keyed_hash` on the public
    fixed-point grid, so DuckDB, Spark, PostgreSQL and numpy keep the same rows for the same key.

    Parameters
    ----------
    source : IbisSource
    unit : str
        The unit column (e.g. ``"user_id"``); any type with equality.
    max_contributions : int
        L, public.
    key : int
        The hash key, secret (drawn from the fit's secure generator, never released or logged).
    bounds : Domain or (lower, upper)
        The public box (the hash reads the rows' quantised normalised coordinates).

    Returns
    -------
    IbisSource over the kept rows (finite coordinates only).

    Raises
    ------
    KeyError
        No such column.
    TypeError
        ``source`` is already weighted per unit (:mod:`dpcore.sources.weighting`).
    """
    import ibis

    from ..utils.contributions import HASH_MULTIPLIERS, HASH_PRIME, hash_keys
    from ..utils.fixedpoint import SUM_BITS, SUM_SCALE
    if hasattr(source, "weight_bits"):
        raise TypeError("these rows are already weighted per unit: bound the original source instead")
    if unit not in source._raw.columns:
        raise KeyError(f"unit column {unit!r} not found in {source.description or 'the table'}; "
                       f"available: {list(source._raw.columns)}")
    dom = as_domain(bounds, source.n_features)
    raw = source._raw.filter(source._finite)
    t = raw.select(u=raw[unit], **{f"c{j}": raw[c].cast("float64") for j, c in enumerate(source.columns)})
    prime = ibis.literal(HASH_PRIME, type="int64")
    acc = ibis.literal(0, type="int64")
    for j in range(source.n_features):
        z = (source._x(t, j, dom) - exact(dom.center[j])) * exact(2.0 / dom.width[j])
        q = (z * exact(float(SUM_SCALE)) + exact(0.5)).floor().cast("int64") + ibis.literal(1 << SUM_BITS,
                                                                                          type="int64")
        mult = ibis.literal(HASH_MULTIPLIERS[j % len(HASH_MULTIPLIERS)], type="int64")
        acc = (acc + mult * q) % prime
    k1, k2 = hash_keys(key)
    tk = (acc * ibis.literal(k1, type="int64") + ibis.literal(k2, type="int64")) % prime
    h = (tk * tk + ibis.literal(k1, type="int64")) % prime
    ordered = t.mutate(_h=h)
    order = [ordered["_h"]] + [ordered[f"c{j}"] for j in range(source.n_features)]
    ranked = ordered.mutate(_r=ibis.row_number().over(group_by=ordered["u"], order_by=order))
    kept = ranked.filter(ranked["_r"] < int(max_contributions)).select(
        *[f"c{j}" for j in range(source.n_features)])
    out = IbisSource(kept, [f"c{j}" for j in range(source.n_features)], engine=source.engine,
                     description=f"{source.description} (at most {int(max_contributions)} rows per {unit})")
    out.columns = source.columns
    out.on_pass, out.on_progress = source.on_pass, source.on_progress
    return out

