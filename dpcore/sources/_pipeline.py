"""A streamed pass: an engine's record batches to worker threads running the numba kernels of :mod:`._kernels`.

:class:`Pipeline` hands each batch of a DuckDB scan to one of a few threads, each adding it into its
own partial; :func:`partition_partials` and :func:`combine_partials` run the same kernels inside Spark's
executors (``mapInArrow``), one partial per partition.  Nothing here aggregates on its own: the
accumulators are the kernels', so every path returns the same integers.
"""
from __future__ import annotations

import numba
import numpy as np

from ._kernels import CellAccumulator, GridAccumulator, SumsAccumulator


class Pipeline:
    """Batches from an engine's scan, each handed to one of ``workers`` threads running a serial kernel.

    While a worker adds one batch to its own partial (numba, no GIL), the calling thread fetches the
    next: the engine's decoding and dpcore's kernel share the cores.  At most ``workers`` batches are
    in flight, so memory stays bounded.  ``kernel(X, w)`` adds batch X into worker w's partial; the
    caller adds the partials up at the end.  ``convert`` (e.g. :func:`batch_array`, an engine's
    record batch to an (m, d) array) runs in the worker too: the one thread that fetches is what
    limits a streamed pass (the workers waited on it 60 % of the time when it also converted).
    """

    def __init__(self, kernel, workers: int | None = None, convert=None):
        self.kernel = kernel
        self.workers = max(1, workers or numba.get_num_threads())
        self.convert = convert

    def run(self, batches) -> int:
        """Consume ``batches`` (iterable of (m, d) float64 arrays, or of what ``convert`` takes: anything
        with ``num_rows`` or a ``shape``); the number of rows seen."""
        import queue
        import threading
        q: queue.Queue = queue.Queue(maxsize=self.workers)
        errors: list[BaseException] = []

        def work(w):
            while True:
                X = q.get()
                if X is None:
                    return
                try:
                    if not errors:
                        self.kernel(X if self.convert is None else self.convert(X), w)
                except BaseException as exc:   # re-raised on the calling thread
                    errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in range(self.workers)]
        for t in threads:
            t.start()
        seen = 0
        try:
            for X in batches:
                if errors:
                    break
                q.put(X)
                seen += X.num_rows if hasattr(X, "num_rows") else X.shape[0]
        finally:
            for _ in threads:
                q.put(None)
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        return seen


def batch_array(batch, d: int) -> np.ndarray:
    """An Arrow record batch of ``d`` float64 columns as an (m, d) C-ordered array (NULL read as NaN)."""
    X = np.empty((batch.num_rows, d))
    for j in range(d):
        X[:, j] = batch.column(j).to_numpy(zero_copy_only=False)
    return X


def partition_partials(spec: tuple, d: int):
    """A function for Spark's ``DataFrame.mapInArrow``: one partition's exact partial aggregate.

    It runs inside the executors: the partition's record batches go through the same serial kernel
    as a streamed DuckDB scan, and the partition yields ONE row, ``blob``, holding its partial (the
    occupied cells and their counts for a grid; the k counts and k x d fixed-point sums for cluster
    sums) as int64 bytes.  Only these rows reach the driver (:func:`combine_partials`).

    ``spec``: ``("grid", lower, upper, shape)``, ``("sums", lower, upper, centers)`` or ``("cells", lower,
    upper, shape)`` (fine-cell statistics, :mod:`dpcore.sources.cells`), public values.
    """
    def run(batches):
        import pyarrow as pa
        kind, lower, upper, arg = spec
        acc = {"grid": GridAccumulator, "sums": SumsAccumulator, "cells": CellAccumulator}[kind](
            lower, upper, arg, workers=1)
        for b in batches:
            if b.num_rows:
                acc.add(batch_array(b, d), 0)
        if kind == "cells":
            idx, cnt, qs, ss, prof = acc.result()
            parts = [prof, [idx.size], idx, cnt, qs.ravel(), ss.view(np.int64)]
            blob = np.concatenate(parts).astype(np.int64).tobytes()
        elif kind == "grid":
            flat = acc.result()
            idx = np.flatnonzero(flat)
            blob = np.concatenate([idx.astype(np.int64), flat[idx]]).tobytes()
        else:
            cnt, sm = acc.result()
            blob = np.concatenate([cnt, sm.ravel()]).astype(np.int64).tobytes()
        yield pa.RecordBatch.from_pydict({"blob": [blob]}, schema=pa.schema([("blob", pa.binary())]))
    return run


def combine_partials(spec: tuple, blobs, d: int):
    """Add up the partitions' partials of :func:`partition_partials`: flat grid counts, or (counts, sums)."""
    kind, _, _, arg = spec
    if kind == "cells":
        parts, prof = [], np.zeros(2, dtype=np.int64)
        for blob in blobs:
            v = np.frombuffer(bytes(blob), dtype=np.int64)
            prof += v[:2]
            p = int(v[2])
            o = 3
            idx, cnt = v[o:o + p], v[o + p:o + 2 * p]
            qs = v[o + 2 * p:o + (2 + d) * p].reshape(p, d)
            ss = v[o + (2 + d) * p:o + (3 + d) * p].view(np.float64)
            parts.append((idx, cnt, qs, ss))
        idx = np.concatenate([q[0] for q in parts]) if parts else np.zeros(0, dtype=np.int64)
        cells, inv = np.unique(idx, return_inverse=True)
        cnt = np.zeros(cells.size, dtype=np.int64)
        qs = np.zeros((cells.size, d), dtype=np.int64)
        ss = np.zeros(cells.size)
        if parts:
            np.add.at(cnt, inv, np.concatenate([q[1] for q in parts]))
            np.add.at(qs, inv, np.concatenate([q[2] for q in parts]))
            np.add.at(ss, inv, np.concatenate([q[3] for q in parts]))
        return cells, cnt, qs, ss, prof
    if kind == "grid":
        out = np.zeros(int(np.prod(arg)), dtype=np.int64)
        for blob in blobs:
            v = np.frombuffer(bytes(blob), dtype=np.int64)
            half = v.size // 2
            np.add.at(out, v[:half], v[half:])
        return out
    k = np.asarray(arg).shape[0]
    cnt, sm = np.zeros(k, dtype=np.int64), np.zeros((k, d), dtype=np.int64)
    for blob in blobs:
        v = np.frombuffer(bytes(blob), dtype=np.int64)
        cnt += v[:k]
        sm += v[k:].reshape(k, d)
    return cnt, sm

