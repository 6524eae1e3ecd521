"""Sources pushed into a database or engine through Ibis: DuckDB, PySpark, PostgreSQL, ...

Each aggregate is ONE backend-neutral Ibis expression, compiled by Ibis to the
engine's SQL; there is no hand-written SQL per backend.  The arithmetic is the
same, operation by operation, as the numba kernels of
:mod:`dpcore.sources._kernels`, so every engine returns identical values.
Float constants (bounds, centres) are written as exact dyadic fractions of
integer literals (``CAST(m AS DOUBLE) / CAST(2**q AS DOUBLE)``): a decimal
literal such as ``0.30000000000000004`` is parsed as a DECIMAL by some
engines and converted to a double with a rounding of its own.
"""
from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable

import numpy as np

from ..utils.fixedpoint import FixedPoint
from . import _kernels as K
from ._pipeline import Pipeline, batch_array, combine_partials, partition_partials
from .base import as_domain, check_centers, check_shape, engine_error

_MAX_POW = 62  # 2**62 is an exact int64 literal and an exact double


def exact(v: float):
    """An Ibis float64 expression equal to the double ``v`` on every engine (exact dyadic form)."""
    import ibis

    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"not a finite number: {v}")
    if v == 0.0:
        return ibis.literal(0, type="int64").cast("float64")
    m, e = math.frexp(v)            # v = m * 2**e, 0.5 <= |m| < 1
    mant, exp = int(m * 2 ** 53), e - 53   # v = mant * 2**exp exactly
    while mant % 2 == 0:
        mant //= 2
        exp += 1
    expr = ibis.literal(mant, type="int64").cast("float64")
    while exp != 0:                # each step is exact: powers of two, no overflow or underflow here
        step = max(-_MAX_POW, min(_MAX_POW, exp))
        p = ibis.literal(2 ** abs(step), type="int64").cast("float64")
        expr = expr * p if step > 0 else expr / p
        exp -= step
    return expr


def _clip(x, lo, hi):
    """``x`` clipped onto ``[lo, hi]`` for finite x: ``lo`` below, ``hi`` above, else x (as the numba kernels)."""
    import ibis

    # Two comparisons in a CASE, not least(greatest(...)): the same value for finite x, and about
    # 10 % faster per pass on DuckDB, whose LEAST/GREATEST on doubles are slow.
    return ibis.cases((x < lo, lo), (x > hi, hi), else_=x)


def _finite_test(xs, engine: str):
    """True where every coordinate expression of ``xs`` is a finite number (False or NULL elsewhere)."""
    if engine == "duckdb":
        # DuckDB's own isfinite(): False for NaN and +-inf, NULL for NULL.  The range test below cost DuckDB
        # 2.8 s more than this per pass over 5*10^7 Parquet rows (3.55 s against 1.18 s streamed; 0.75 s with
        # no test, benchmarks/results/engine_export.txt), and is not safe there alone: DuckDB folds
        # ``x <= max`` to TRUE from a Parquet file's min/max statistics, which the format keeps without NaN
        # (duckdb/duckdb#25521, open in DuckDB 1.4.4).
        finite = None
        for x in xs:
            ok = _duckdb_isfinite(x)
            finite = ok if finite is None else finite & ok
        return finite
    # A range test, not isnan/isinf: Ibis 12 compiles isinf() to FALSE on PySpark (so infinite
    # rows were kept there).  NULL fails it, NaN too (it sorts above every number on Spark and
    # PostgreSQL), and so do +-inf.
    big, finite = sys.float_info.max, None
    for x in xs:
        ok = (x >= exact(-big)) & (x <= exact(big))
        finite = ok if finite is None else finite & ok
    return finite


def _duckdb_isfinite(x):
    """DuckDB's ``isfinite(x)`` as an Ibis boolean expression."""
    return _isfinite_udf()(x)


@functools.cache
def _isfinite_udf():
    """The builtin scalar function ``isfinite``, declared to Ibis once (Ibis imported only when a source is made)."""
    import ibis

    @ibis.udf.scalar.builtin(name="isfinite")
    def isfinite(v: float) -> bool:  # type: ignore[empty-body]  # pragma: no cover - SQL only, never called
        ...
    return isfinite


def _is_numeric(dtype) -> bool:
    return dtype.is_numeric() or dtype.is_boolean()


class IbisSource:
    """A :class:`~dpcore.sources.DataSource` over an Ibis table (DuckDB, PySpark, PostgreSQL, ...).

    Build one with :func:`dpcore.sources.from_files`, :func:`~dpcore.sources.from_spark`,
    :func:`~dpcore.sources.from_table` or :func:`~dpcore.sources.from_ibis`.

    Parameters
    ----------
    table : ibis.Table
    columns : sequence of str, optional
        Coordinate columns; default every numeric column.
    engine : str, optional
        Label for messages (default: the backend's name).
    description : str, optional
        Where the data is (path, table), for messages.

    Raises
    ------
    KeyError
        A named column does not exist.
    TypeError
        A named column is not numeric (e.g. strings), or the table has no numeric column.
    """

    def __init__(self, table, columns=None, *, engine: str | None = None, description: str = ""):
        schema = table.schema()
        names = list(schema.names)
        if columns is None:
            columns = [c for c in names if _is_numeric(schema[c])]
            if not columns:
                raise TypeError(f"{description or 'the table'} has no numeric column: choose a table with "
                                "numeric coordinates")
        columns = [str(c) for c in columns]
        missing = [c for c in columns if c not in names]
        if missing:
            raise KeyError(f"column(s) {missing} not found in {description or 'the table'}; "
                           f"available: {names}")
        bad = [f"{c} ({schema[c]})" for c in columns if not _is_numeric(schema[c])]
        if bad:
            raise TypeError(f"column(s) {bad} are not numeric: choose numeric coordinate columns, or convert "
                            "them to numbers in the source first")
        if not columns:
            raise ValueError("choose at least one coordinate column")
        self.columns = tuple(columns)
        self.n_features = len(columns)
        try:
            backend = table._find_backend().name
        except Exception:  # an unbound table
            backend = "ibis"
        self.engine = engine or backend
        self.description = description
        self.on_pass: Callable[[str], None] | None = None
        #: Called with the fraction done (0 to 1) while a pass runs, where the engine reports it (DuckDB).
        self.on_progress: Callable[[float], None] | None = None
        xs = [table[c].cast("float64") for c in columns]
        self._raw = table
        self._finite = _finite_test(xs, self.engine)
        coords = {f"c{j}": x for j, x in enumerate(xs)}
        self._t = table.filter(self._finite).select(**coords)
        self._every = table.select(**coords)
        self._profile: dict = {}
        #: How the dense aggregates (grid counts, cluster sums, inertia) are computed: ``"arrow"`` streams
        #: the engine's scan as Arrow record batches into dpcore's numba kernels (issue 26); ``"partitions"``
        #: runs those kernels inside Spark's executors (``mapInArrow``); ``"sql"`` runs one Ibis aggregate
        #: in the engine.  All give identical integers.  Arrow for DuckDB, whose ``GROUP BY`` hashes every
        #: row into up to millions of groups for a directly indexed array of public shape: 2-3.5x faster
        #: per pass at 2*10^7 rows, as fast at 10^8 (where one thread fetching the batches is the limit),
        #: and the row count 2x faster.  SQL for Spark: on local[2] its aggregate beat the executors'
        #: kernels (2*10^7 rows: grid 9.2 s vs 8.8 s, Lloyd step 3.6 s vs 4.5 s; the rows' trip to the
        #: Python workers costs what the direct indexing saves).  SQL for PostgreSQL and the rest.
        self.scan = "arrow" if self.engine == "duckdb" else "sql"

    def __repr__(self) -> str:
        return f"IbisSource({self.engine}: {self.description or 'table'}, columns={list(self.columns)})"

    # -- execution -----------------------------------------------------------
    def _run(self, expr, label: str):
        """Execute an aggregate; engine failures become a SourceError with the engine named."""
        if self.on_pass is not None:
            self.on_pass(label)
        try:
            if self.on_progress is not None and self.engine == "duckdb":
                return self._run_polling(expr)
            return expr.to_pyarrow()
        except Exception as exc:  # the engine's own error types differ by backend; its message may quote a row
            raise engine_error(self.engine, label, self.description, self.columns, exc) from None

    def _run_polling(self, expr):
        """Run on a worker thread while this thread reports DuckDB's own progress of the query.

        DuckDB's ``query_progress()`` is meant to be read from another thread while a query
        runs; the callback stays on the caller's thread (Streamlit draws only from there).
        """
        from concurrent.futures import ThreadPoolExecutor, wait

        con = self._raw._find_backend().con
        if not getattr(self, "_progress_on", False):
            # DuckDB tracks a query's progress only with its progress bar on; printing stays off.
            con.execute("SET enable_progress_bar = true")
            con.execute("SET enable_progress_bar_print = false")
            self._progress_on = True
        with ThreadPoolExecutor(1, thread_name_prefix="dpcore-pass") as pool:
            fut = pool.submit(expr.to_pyarrow)
            while not wait([fut], timeout=0.25).done:
                try:
                    p = float(con.query_progress())
                except Exception:   # not every DuckDB build reports progress: the bar just waits
                    p = -1.0
                if p >= 0 and self.on_progress is not None:
                    self.on_progress(p / 100.0)
            return fut.result()

    #: Rows per Arrow record batch of a streamed scan: 16 MB per double column, cache-friendly partials.
    BATCH_ROWS = 1 << 20

    def _stream(self, label: str, kernel, table=None) -> int:
        """One pass over the finite rows, streamed: the engine reads, projects and filters, and each
        Arrow record batch, as an (m, d) float64 array, goes to ``kernel(X, worker)`` on one of
        :class:`dpcore.sources._kernels.Pipeline`'s threads (the numba kernels of
        :mod:`dpcore.sources._kernels`, each worker adding into its own partial).

        Memory stays bounded by the batches in flight and the partials (O(cells) or O(k d)).  No row
        leaves this function.  Returns the number of rows seen; errors become a
        :class:`SourceError` naming the engine, as in :meth:`_run`.  ``table``: another projection of
        the coordinates (default: the finite rows); NULL coordinates arrive as NaN.
        """
        if self.on_pass is not None:
            self.on_pass(label)
        n = (self._profile.get(None) or {}).get("n")
        d = self.n_features

        def batches():
            seen = 0
            rows = self._rows() if table is None else table
            for batch in rows.to_pyarrow_batches(chunk_size=self.BATCH_ROWS):
                if batch.num_rows == 0:
                    continue
                yield batch
                seen += batch.num_rows
                if self.on_progress is not None and n:
                    self.on_progress(min(1.0, seen / n))

        try:
            return Pipeline(kernel, convert=lambda batch: batch_array(batch, d)).run(batches())
        except Exception as exc:  # the engine's own error types differ by backend; its message may quote a row
            raise engine_error(self.engine, label, self.description, self.columns, exc) from None

    def _partitions(self, label: str, spec: tuple):
        """One pass on Spark with the kernel inside the executors (``mapInArrow``), per partition; only
        each partition's partial aggregate is collected (:func:`dpcore.sources._kernels.partition_partials`).

        The executors must import dpcore (installed there, or on ``PYTHONPATH``:
        :func:`dpcore.sources.spark_session` sets it for local masters).  Where they cannot, this
        source warns once and goes back to the engine's SQL aggregate (``scan = "sql"``): the same
        integers, more slowly.  Returns the combined aggregate, or None after such a fall-back.
        """
        import pyarrow as pa  # noqa: F401  (mapInArrow needs it on the driver too)
        if self.on_pass is not None:
            self.on_pass(label)
        backend = self._raw._find_backend()
        try:
            frame = backend.raw_sql(backend.compile(self._rows()))
            rows = frame.mapInArrow(partition_partials(spec, self.n_features), "blob binary").collect()
        except Exception as exc:
            if "No module named 'dpcore'" in str(exc):
                import warnings
                warnings.warn("Spark's executors cannot import dpcore, so the aggregates run as Spark SQL "
                              "instead (the same values, slower): install dpcore on the executors, or put it on "
                              "their PYTHONPATH (spark.executorEnv.PYTHONPATH).", RuntimeWarning, stacklevel=3)
                self.scan = "sql"
                return None
            raise engine_error(self.engine, label, self.description, self.columns, exc) from None
        return combine_partials(spec, [r["blob"] for r in rows], self.n_features)

    @staticmethod
    def _x(t, j: int, dom):
        """Coordinate j of the rows ``t`` clipped onto the box (the same operations as the numba kernels)."""
        # A CASE, not Value.clip: its NULL guards nest a copy of x per bound (3^depth copies once
        # nested), and the rows here are already finite.
        return _clip(t[f"c{j}"], exact(dom.lower[j]), exact(dom.upper[j]))

    # -- aggregates ----------------------------------------------------------
    def _rows(self):
        """The rows with finite coordinates, as columns ``c0, c1, ...``.

        Once the row count has shown that every row is finite, the per-row
        test (three per column, about a quarter of a grid pass on DuckDB) is
        dropped from the later passes: the same rows, a cheaper query.  Like
        the cached counts, this takes the data to stay the same between passes.
        """
        prof = self._profile.get(None)
        return self._every if prof is not None and prof["n"] == prof["n_total"] else self._t

    def _counts(self, dom=None):
        """Total rows, finite rows, and (with a box) finite rows outside it: always exactly one pass.

        Always one pass, whatever the data hold: the number of passes (and the
        progress bars that show them) must not reveal whether some row has a
        missing, NaN or infinite coordinate.  Rows outside the box are the
        finite rows minus those inside it (a NaN or NULL coordinate is never
        inside: NaN sorts above every number on DuckDB, Spark and PostgreSQL).
        """
        key = None if dom is None else (tuple(dom.lower), tuple(dom.upper))
        if key not in self._profile and self.scan == "arrow":
            # Every row of the coordinates (NULL as NaN), through the same tests in a numba kernel.
            inf = np.full(self.n_features, np.inf)
            acc = K.ProfileAccumulator(-inf if dom is None else dom.lower, inf if dom is None else dom.upper)
            total = self._stream("row count", acc.add, table=self._every)
            finite, inside = acc.result()
            prof = self._profile.setdefault(None, {"n_total": total, "n": finite})
            if dom is not None:
                self._profile[key] = dict(prof, n_out=prof["n"] - inside)
        if key not in self._profile:
            t = self._raw
            aggs = {"n_total": t.count(), "n": t.count(where=self._finite)}
            if dom is not None:
                inside = None
                for j, c in enumerate(self.columns):
                    i = t[c].cast("float64").between(exact(dom.lower[j]), exact(dom.upper[j]))
                    inside = i if inside is None else inside & i
                aggs["n_in"] = t.count(where=inside)
            row = self._run(t.aggregate(**aggs), "row count").to_pylist()[0]
            prof = self._profile.setdefault(None, {"n_total": int(row["n_total"] or 0), "n": int(row["n"] or 0)})
            if dom is not None:
                self._profile[key] = dict(prof, n_out=prof["n"] - int(row["n_in"] or 0))
        return self._profile[key]

    def count(self) -> int:
        prof = self._profile.get(None) or self._counts()
        return prof["n"]

    def n_dropped(self) -> int:
        prof = self._profile.get(None) or self._counts()
        return prof["n_total"] - prof["n"]

    def n_outside(self, bounds) -> int:
        return self._counts(as_domain(bounds, self.n_features))["n_out"]

    def column_range(self):
        t = self._rows()
        aggs = {}
        for j in range(self.n_features):
            aggs[f"lo{j}"] = t[f"c{j}"].min()
            aggs[f"hi{j}"] = t[f"c{j}"].max()
        row = self._run(t.aggregate(**aggs), "column range").to_pylist()[0]
        if row["lo0"] is None:
            raise ValueError(f"{self.description or 'the table'} has no row with finite coordinates")
        d = self.n_features
        return (np.array([row[f"lo{j}"] for j in range(d)], dtype=float),
                np.array([row[f"hi{j}"] for j in range(d)], dtype=float))

    def grid_counts(self, bounds, shape) -> np.ndarray:
        dom = as_domain(bounds, self.n_features)
        shape = check_shape(shape, self.n_features)
        if self.scan == "partitions":
            flat = self._partitions("grid counts", ("grid", dom.lower, dom.upper, tuple(shape)))
            if flat is not None:
                return flat.reshape(shape) if len(shape) <= 32 else flat
        if self.scan == "arrow":
            acc = K.GridAccumulator(dom.lower, dom.upper, shape)
            self._stream("grid counts", acc.add)
            out = acc.result()
            return out.reshape(shape) if len(shape) <= 32 else out
        t = self._rows()
        expr = t.select(cell=self._flat_cell(t, dom, shape)).group_by("cell").aggregate(n=lambda t: t.count())
        res = self._run(expr, "grid counts")
        out = np.zeros(int(np.prod(shape)), dtype=np.int64)
        if res.num_rows:
            out[np.asarray(res["cell"], dtype=np.int64)] = np.asarray(res["n"], dtype=np.int64)
        return out.reshape(shape) if len(shape) <= 32 else out

    def _flat_cell(self, t, dom, shape, x=None):
        """The flat (C-order) grid cell of the rows ``t`` (their coordinates ``x``, default the columns)."""
        import ibis

        # Only the upper clamp: the clipped x is >= lower, so x - lower, the quotient and the
        # product are >= 0 (IEEE rounding is monotone) and so is their floor.  The flat cell number
        # is a 32-bit integer (check_shape keeps the grid under 2**31 cells): Spark groups on it
        # about 25 % faster than on one 64-bit key per dimension, DuckDB as fast.
        flat = None
        for j, m in enumerate(shape):
            xj = self._x(t, j, dom) if x is None else _clip(x[j], exact(dom.lower[j]), exact(dom.upper[j]))
            u = (xj - exact(dom.lower[j])) / exact(dom.width[j]) * m
            idx = ibis.least(u.floor().cast("int32"), ibis.literal(m - 1, type="int32"))
            flat = idx if flat is None else flat * ibis.literal(m, type="int32") + idx
        return flat

    def _counted(self, bounds) -> bool:
        """Whether ``count``, ``n_dropped`` and ``n_outside(bounds)`` are known without a pass (cached)."""
        dom = as_domain(bounds, self.n_features)
        return (tuple(dom.lower), tuple(dom.upper)) in self._profile

    def _grid_profile(self, dom, shape):
        """One pass for :class:`dpcore.sources.cells.GridSource`: (grid counts (flat), (total, finite, inside)).

        The histogram of :meth:`grid_counts` and, from the same aggregate, the row count, the rows skipped
        for a missing coordinate and the rows outside the box (also cached).  Streamed: every row through
        the grid kernel with its profile.  SQL: one ``GROUP BY`` of every row on its cell (``-1`` for a row
        with a non-finite coordinate), the rows inside the box counted per group.
        """
        import ibis

        if self.scan == "arrow":
            acc = K.GridAccumulator(dom.lower, dom.upper, shape, profile=True)
            total = self._stream("grid counts", acc.add, table=self._every)
            (finite, inside), counts = acc.profile(), acc.result()
        else:   # SQL (Spark's executors read only finite rows: the profile needs them all)
            t = self._every
            xs = [t[f"c{j}"] for j in range(self.n_features)]
            ok, in_box = _finite_test(xs, self.engine), None
            for j, x in enumerate(xs):
                i = x.between(exact(dom.lower[j]), exact(dom.upper[j]))
                in_box = i if in_box is None else in_box & i
            # A non-finite row's coordinates are replaced before the arithmetic: no engine casts NaN to an
            # integer (PostgreSQL refuses to).
            safe = [ibis.cases((ok, x), else_=exact(dom.lower[j])) for j, x in enumerate(xs)]
            cell = ibis.cases((ok, self._flat_cell(t, dom, shape, safe)), else_=ibis.literal(-1, type="int32"))
            inn = ibis.cases((in_box, ibis.literal(1, type="int64")), else_=ibis.literal(0, type="int64"))
            res = self._run(t.select(cell=cell, inn=inn).group_by("cell").aggregate(
                n=lambda s: s.count(), n_in=lambda s: s["inn"].sum()), "grid counts")
            cells, n = np.asarray(res["cell"], dtype=np.int64), np.asarray(res["n"], dtype=np.int64)
            counts, kept = np.zeros(int(np.prod(shape)), dtype=np.int64), cells >= 0
            counts[cells[kept]] = n[kept]
            total, finite = int(n.sum()), int(n[kept].sum())
            inside = int(np.asarray(res["n_in"].to_pylist(), dtype=np.int64).sum())
        prof = self._profile.setdefault(None, {"n_total": int(total), "n": int(finite)})
        self._profile.setdefault((tuple(dom.lower), tuple(dom.upper)), dict(prof, n_out=prof["n"] - int(inside)))
        return counts, (int(total), int(finite), int(inside))

    def _cell_statistics(self, dom, shape):
        """One pass for :func:`dpcore.sources.cells.cell_statistics`: (flat cells, counts, sums, offsets, profile).

        Streamed (``scan="arrow"``): every row of the coordinates, so the same pass fills the row
        count, the rows dropped and the rows outside this box (the fit then reads the data once).
        SQL: one ``GROUP BY`` over the finite rows with the same arithmetic as the numba kernel;
        the row count is then its own pass.
        """
        import ibis

        d = self.n_features
        key = (tuple(dom.lower), tuple(dom.upper))
        if self.scan == "partitions":
            got = self._partitions("cell statistics", ("cells", dom.lower, dom.upper, tuple(shape)))
            if got is not None:
                return got
        if self.scan == "arrow":
            acc = K.CellAccumulator(dom.lower, dom.upper, shape)
            known = self._profile.get(None)
            total = self._stream("cell statistics", acc.add, table=None if known else self._every)
            idx, cnt, qs, ss, prof = acc.result()
            base = self._profile.setdefault(None, {"n_total": total, "n": int(prof[0])})
            self._profile.setdefault(key, dict(base, n_out=base["n"] - int(prof[1])))
            return idx, cnt, qs, ss, prof
        t = self._rows()
        flat, cols = None, {}
        for j, m in enumerate(shape):
            u = (self._x(t, j, dom) - exact(dom.lower[j])) / exact(dom.width[j]) * m
            i = ibis.least(u.floor().cast("int64"), ibis.literal(m - 1, type="int64"))
            flat = i if flat is None else flat * ibis.literal(m, type="int64") + i
            z = (self._x(t, j, dom) - exact(dom.center[j])) * exact(2.0 / dom.width[j])
            cols[f"q{j}"] = (z * exact(K.SUM_SCALE) + exact(0.5)).floor()
            mid = exact(-1.0) + (i * 2 + 1).cast("float64") / exact(float(m))
            cols[f"u{j}"] = (z - mid) * (z - mid)
        off = cols.pop("u0")
        for j in range(1, d):
            off = off + cols.pop(f"u{j}")
        expr = (t.select(cell=flat, o=off, **cols).group_by("cell")
                .aggregate(n=lambda s: s.count(), ss=lambda s: s["o"].sum(),
                           **{f"s{j}": (lambda s, j=j: s[f"q{j}"].sum()) for j in range(d)}))
        res = self._run(expr, "cell statistics")
        order = np.argsort(np.asarray(res["cell"], dtype=np.int64), kind="stable")
        idx = np.asarray(res["cell"], dtype=np.int64)[order]
        cnt = np.asarray(res["n"], dtype=np.int64)[order]
        qs = np.stack([np.asarray(res[f"s{j}"].to_pylist(), dtype=np.int64)[order] for j in range(d)], axis=1) \
            if len(order) else np.zeros((0, d), dtype=np.int64)
        ss = np.asarray(res["ss"], dtype=float)[order]
        prof = self._counts(dom)
        return idx, cnt, qs, ss, np.array([prof["n"], prof["n"] - prof["n_out"]], dtype=np.int64)

    def _labelled(self, t, C, dom):
        """Normalised coordinates z_j of the rows ``t``, and their squared distances to the centres."""
        z = [(self._x(t, j, dom) - exact(dom.center[j])) * exact(2.0 / dom.width[j]) for j in range(self.n_features)]
        dist = []
        for c in range(C.shape[0]):
            t = None
            for j in range(self.n_features):
                u = z[j] - exact(C[c, j])
                t = u * u if t is None else t + u * u
            dist.append(t)
        return z, dist

    def cluster_sums(self, centers, bounds):

        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        k, d = C.shape
        if self.scan == "partitions":
            got = self._partitions("cluster sums", ("sums", dom.lower, dom.upper, C))
            if got is not None:
                return got[0], FixedPoint(got[1])
        if self.scan == "arrow":
            # int64 partials: exact up to 2**63 / 2**SUM_BITS rows' worth of |z| <= 1 (2**39 rows, as in memory)
            acc = K.SumsAccumulator(dom.lower, dom.upper, C)
            self._stream("cluster sums", acc.add)
            counts, sums = acc.result()
            return counts, FixedPoint(sums)
        rows = self._rows()
        z, dist = self._labelled(rows, C, dom)
        t = rows.select(**{f"z{j}": z[j] for j in range(d)}, **{f"d{c}": dist[c] for c in range(k)})
        label = self._nearest(t, k)
        scale = exact(K.SUM_SCALE)
        fixed = {f"q{j}": (t[f"z{j}"] * scale + exact(0.5)).floor() for j in range(d)}
        expr = (t.select(label=label, **fixed).group_by("label")
                .aggregate(n=lambda s: s.count(), **{f"s{j}": (lambda s, j=j: s[f"q{j}"].sum()) for j in range(d)}))
        counts, sums = self._per_label(self._run(expr, "cluster sums").to_pylist(), k, d)
        return counts, FixedPoint(sums)

    @staticmethod
    def _per_label(rows, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
        """An aggregate's rows ``{label, n, s0 .. s{d-1}}`` as counts (k,) int64 and sums (k, d) of exact integers."""
        counts = np.zeros(k, dtype=np.int64)
        sums = np.zeros((k, d), dtype=object)     # Python ints: exact however large
        sums[:] = 0
        for row in rows:
            c = int(row["label"])
            counts[c] = int(row["n"])
            sums[c] = [int(row[f"s{j}"]) for j in range(d)]
        if all(abs(v) < 2 ** 62 for v in sums.ravel()):
            sums = sums.astype(np.int64)
        return counts, sums

    @staticmethod
    def _nearest(t, k: int):
        """The nearest centre's index from the squared distances ``d0 .. d{k-1}`` of ``t`` (ties: the lowest)."""
        import ibis

        # The first centre at the minimum distance is the first c with d_c <= every later d (an
        # earlier centre is above the minimum, which some later one reaches).  No least()
        # over all k: each condition stops at its first false comparison, about 20 % less work per
        # pass on DuckDB than least() then a CASE of equalities.
        label = ibis.literal(k - 1, type="int64")
        if k > 1:
            whens = []
            for c in range(k - 1):
                within = t[f"d{c}"] <= t[f"d{c + 1}"]
                for c2 in range(c + 2, k):
                    within = within & (t[f"d{c}"] <= t[f"d{c2}"])
                whens.append((within, ibis.literal(c, type="int64")))
            label = ibis.cases(*whens, else_=label)
        return label

    def inertia(self, centers, bounds) -> float:
        import ibis

        dom = as_domain(bounds, self.n_features)
        C = check_centers(centers, self.n_features)
        if self.scan == "arrow":
            from ..utils.nearest import inertia
            parts = np.zeros(Pipeline(None).workers)

            def part(X, w):
                Xc, _ = dom.clip(X)
                parts[w] += inertia(dom.normalize(Xc), C)
            self._stream("inertia", part)
            return float(parts.sum())
        rows = self._rows()
        _, dist = self._labelled(rows, C, dom)
        best = ibis.least(*dist) if len(dist) > 1 else dist[0]
        row = self._run(rows.aggregate(s=best.sum()), "inertia").to_pylist()[0]
        return float(row["s"] or 0.0)
