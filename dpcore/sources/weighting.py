"""Contribution bounding by weighting where the data live (issue 68): every row of a unit, weighted.

:func:`~dpcore.sources.sampling.sampled` keeps at most L rows of each
privacy unit; :func:`weighted` keeps every row and gives it the integer weight

    ``w = min(2^B, floor(L 2^B / m))``  (``B`` = :data:`~dpcore.utils.contributions.WEIGHT_BITS`),

``m`` the unit's number of rows with finite coordinates, computed in the engine by a window count over the
unit column.  This is :func:`dpcore.utils.contributions.contribution_weights` (the in-memory
:class:`~dpcore.sources.memory.WeightedArraySource`) in SQL: the same integers on DuckDB, Spark and
PostgreSQL, so a unit's weights sum to at most ``L 2^B`` exactly and every aggregate is an exact integer
(a :class:`~dpcore.utils.fixedpoint.FixedPoint` of ``B`` bits for counts, ``SUM_BITS + B`` for sums).
Weighted sums are accumulated as DECIMAL(38, 0): ``|w q| < 2^37`` per row, and no engine's 64-bit sum can
overflow silently (Spark's does without ANSI mode).

The floor ``floor(L 2^B / m)`` is exact on every engine: the integer quotient of integers below 2^53,
whether computed by integer division (PostgreSQL) or as the floor of a double quotient (DuckDB, Spark: a
quotient within ``1 / (m q)`` of an integer is at least ``2^-26`` away from it relatively, far above a
double's rounding).

Weighted rows have no fine-cell statistics: Lloyd-type fits assign rows
(:func:`dpcore.sources.cells.use_cells`).  No aggregate leaves the engine but the weighted counts and sums
themselves (per cell or per centre), which only the noise module sees.
"""
from __future__ import annotations

import numpy as np

from ..utils.contributions import WEIGHT_BITS
from ..utils.fixedpoint import SUM_BITS, FixedPoint
from .base import as_domain, check_centers, check_shape
from .ibis_source import IbisSource, exact


def weighted(source: IbisSource, unit: str, max_contributions: int, *,
             weight_bits: int = WEIGHT_BITS) -> WeightedIbisSource:
    """Every row of ``source`` with its unit's contribution weight, computed where the data live.

    Parameters
    ----------
    source : IbisSource
    unit : str
        The unit column (e.g. ``"user_id"``); any type with equality.  Rows with a NULL unit count as
        one unit together (a conservative choice: their weights sum to at most L).
    max_contributions : int
        L, public.
    weight_bits : int, default :data:`~dpcore.utils.contributions.WEIGHT_BITS`

    Returns
    -------
    WeightedIbisSource

    Raises
    ------
    KeyError
        No such column.
    """
    return WeightedIbisSource(source, unit, int(max_contributions), int(weight_bits))


class WeightedIbisSource(IbisSource):
    """An :class:`~dpcore.sources.ibis_source.IbisSource` whose rows carry contribution weights (see :func:`weighted`).

    Aggregates are weighted and exact: :meth:`count` and :meth:`grid_counts` return fixed-point sums of
    the weights (``weight_bits`` bits), :meth:`cluster_sums` the weighted counts and the weighted sums of the
    quantised normalised coordinates (``SUM_BITS + weight_bits`` bits), as
    :class:`~dpcore.sources.memory.WeightedArraySource` does in memory.  Always one SQL aggregate per pass.

    Parameters
    ----------
    base : IbisSource
    unit : str
    max_contributions : int
    weight_bits : int
    """

    #: Weighted rows have no fine-cell statistics: Lloyd assigns rows.
    _cell_statistics = None  # type: ignore[assignment]
    #: Nor the one-pass histogram profile (row and outside-box counts with the cells): its counts are
    #: unweighted, so a weighted fit takes the weighted histogram and counts of this class (two passes).
    _grid_profile = None  # type: ignore[assignment]

    def __init__(self, base: IbisSource, unit: str, max_contributions: int, weight_bits: int):
        import ibis

        if unit not in base._raw.columns:
            raise KeyError(f"unit column {unit!r} not found in {base.description or 'the table'}; "
                           f"available: {list(base._raw.columns)}")
        raw = base._raw.filter(base._finite)
        d = base.n_features
        t = raw.select(u=raw[unit], **{f"c{j}": raw[c].cast("float64") for j, c in enumerate(base.columns)})
        rows = t["c0"].count().over(group_by=t["u"])            # the unit's rows with finite coordinates
        one = 1 << int(weight_bits)
        w = ibis.least(ibis.literal(one, type="int64"),
                       (ibis.literal(int(max_contributions) * one, type="int64") // rows).cast("int64"))
        cols = [f"c{j}" for j in range(d)]
        self._weighted = t.mutate(w=w).select(*cols, "w")
        super().__init__(self._weighted, cols, engine=base.engine,
                         description=f"{base.description} (every row weighted to at most "
                                     f"{int(max_contributions)} per {unit})")
        self.columns = base.columns
        self.weight_bits = int(weight_bits)
        self.scan = "sql"
        self.on_pass, self.on_progress = base.on_pass, base.on_progress

    def __repr__(self) -> str:
        return f"WeightedIbisSource({self.engine}: {self.description or 'table'}, columns={list(self.columns)})"

    def count(self) -> FixedPoint:  # type: ignore[override]
        """The sum of the weights (fixed point, ``weight_bits`` bits).

        Returns
        -------
        FixedPoint, 0-d
        """
        row = self._run(self._weighted.aggregate(s=self._weighted["w"].sum()), "row count").to_pylist()[0]
        return FixedPoint(np.array(int(row["s"] or 0), dtype=np.int64), self.weight_bits)

    def grid_counts(self, bounds, shape) -> FixedPoint:  # type: ignore[override]
        """The sum of the weights in each cell of the grid ``shape`` over the box (fixed point).

        Returns
        -------
        FixedPoint of ``shape`` (flat beyond 32 dimensions)
        """
        dom = as_domain(bounds, self.n_features)
        shape = check_shape(shape, self.n_features)
        t = self._weighted
        expr = t.select(cell=self._flat_cell(t, dom, shape), w=t["w"]).group_by("cell").aggregate(
            n=lambda s: s["w"].sum())
        res = self._run(expr, "grid counts")
        out = np.zeros(int(np.prod(shape)), dtype=np.int64)
        if res.num_rows:
            out[np.asarray(res["cell"], dtype=np.int64)] = np.asarray(res["n"], dtype=np.int64)
        return FixedPoint(out.reshape(shape) if len(shape) <= 32 else out, self.weight_bits)

    def cluster_sums(self, centers, bounds):
        """Weighted counts and sums per nearest centre: ``(FixedPoint (k,), FixedPoint (k, d))``.

        Returns
        -------
        counts : FixedPoint (k,), ``weight_bits`` bits
        sums : FixedPoint (k, d), ``SUM_BITS + weight_bits`` bits, normalised units
        """
        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        k, d = C.shape
        rows = self._weighted
        z, dist = self._labelled(rows, C, dom)
        t = rows.select(w=rows["w"], **{f"z{j}": z[j] for j in range(d)}, **{f"d{c}": dist[c] for c in range(k)})
        scale = exact(float(1 << SUM_BITS))
        wq = {f"q{j}": ((t[f"z{j}"] * scale + exact(0.5)).floor() * t["w"]).cast("decimal(38, 0)")
              for j in range(d)}
        expr = (t.select(label=self._nearest(t, k), w=t["w"], **wq).group_by("label")
                .aggregate(n=lambda s: s["w"].sum(), **{f"s{j}": (lambda s, j=j: s[f"q{j}"].sum()) for j in range(d)}))
        counts, sums = self._per_label(self._run(expr, "cluster sums").to_pylist(), k, d)
        return FixedPoint(counts, self.weight_bits), FixedPoint(sums, SUM_BITS + self.weight_bits)

    def inertia(self, centers, bounds) -> float:
        """The weighted k-means cost in normalised units (the data owner's figure; not private).

        Returns
        -------
        float
        """
        import ibis

        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        rows = self._weighted
        _, dist = self._labelled(rows, C, dom)
        best = ibis.least(*dist) if len(dist) > 1 else dist[0]
        row = self._run(rows.aggregate(s=(best * rows["w"].cast("float64")).sum()), "inertia").to_pylist()[0]
        return float(row["s"] or 0.0) / (1 << self.weight_bits)
