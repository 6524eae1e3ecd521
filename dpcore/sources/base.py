"""The :class:`DataSource` protocol: the exact aggregates the scalable estimators need.

A source answers a handful of *exact* aggregate queries over the rows of a
table of numeric coordinates, wherever the rows live (a numpy array, Parquet
files read by DuckDB, a Spark DataFrame, a PostgreSQL table).  Only the
small result comes back; noise is added by the estimator through
:class:`~dpcore.privacy.mechanisms.NoiseSource` and recorded in its ledger.  A source
never releases, prints or logs a value it computes.

Every aggregate clips rows onto the public box first (as
:meth:`dpcore.utils.domain.Domain.clip` does) and skips rows with a missing,
NaN or infinite coordinate (counted by :meth:`DataSource.n_dropped`).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from ..utils.domain import Domain, check_bounds
from ..utils.fixedpoint import FixedPoint


class SourceError(RuntimeError):
    """A data source could not be opened or queried (engine not starting, database unreachable)."""


#: Engine messages that mean "a value could not be read as a number" (DuckDB, PostgreSQL, Spark).
_CONVERSION = ("conversion error", "could not convert", "csv error", "invalid input syntax", "cast_invalid_input",
               "numberformatexception", "cannot be cast", "malformed", "could not parse")

_log = logging.getLogger("dpcore.sources")


def engine_error(engine: str, label: str, where: str, columns, exc: BaseException) -> SourceError:
    """The error of an aggregate the engine could not compute, with public facts only.

    An engine's own message can quote a record: the line number of a malformed CSV value, the value
    itself, a count of bad rows.  A private fit's exceptions must not depend on the rows (docs/
    ARCHITECTURE.md, "Structure"), so the message names only the source, its columns and the type
    they must have; the engine's full message goes to the server log (``logging`` logger
    ``dpcore.sources``), which is for the data owner.

    Parameters
    ----------
    engine : str
        ``"duckdb"``, ``"pyspark"``, ``"postgres"``, ...
    label : str
        Which aggregate failed (``"grid counts"``).
    where : str
        The source's public description (file glob, table name).
    columns : sequence of str
        The coordinate columns.
    exc : BaseException
        The engine's exception (logged, never quoted).

    Returns
    -------
    SourceError
    """
    text = f"{type(exc).__name__}: {exc}"
    _log.error("%s could not compute the %s of %s: %s", engine, label, where or "the table", text)
    cols = ", ".join(map(str, columns))
    if any(m in text.lower() for m in _CONVERSION):
        return SourceError(f"{engine} could not read every value of column(s) {cols} of {where or 'the table'} as "
                           "a number (DOUBLE): clean or cast those columns where the data live, or skip the bad "
                           "values when reading them. The engine's full message is in the server log, for the "
                           "data owner (it may quote a record).")
    return SourceError(f"{engine} could not compute the {label} of {where or 'the table'} (columns {cols}; "
                       f"{type(exc).__name__}). The engine's full message is in the server log, for the data "
                       "owner (it may quote a record).")


@runtime_checkable
class DataSource(Protocol):
    """Exact aggregates over a table of ``n_features`` numeric coordinate columns.

    Attributes
    ----------
    columns : tuple of str
        The coordinate columns, in order.
    n_features : int
    engine : str
        ``"numpy"``, ``"duckdb"``, ``"pyspark"``, ``"postgres"``, ...
    on_pass : callable(str) or None
        Called with a short label before each pass over the data (progress bars).

    Notes
    -----
    Privacy: every method returns exact, non-private values computed from the data.
    They are for the estimator (which adds calibrated noise) or for the data
    owner's eyes only; a source never logs or releases them.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcore.sources import ArraySource, DataSource
    >>> src = ArraySource(np.array([[0.1, 0.2], [0.9, 0.8], [0.5, 0.5]]))
    >>> isinstance(src, DataSource), src.count()
    (True, 3)
    >>> src.grid_counts(((0, 0), (1, 1)), (2, 2)).tolist()
    [[1, 0], [0, 2]]
    """

    columns: tuple
    n_features: int
    engine: str
    on_pass: Callable[[str], None] | None

    def count(self) -> int:
        """Number of rows with finite coordinates."""

    def n_dropped(self) -> int:
        """Rows skipped because a coordinate is missing, NaN or infinite."""

    def n_outside(self, bounds) -> int:
        """Rows with a coordinate outside ``bounds`` (clipped onto the box by every aggregate)."""

    def column_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-column minimum and maximum, shape (d,) each (reading it is NOT private)."""

    def grid_counts(self, bounds, shape) -> np.ndarray:
        """Exact counts of clipped rows in a uniform grid of ``shape`` cells over ``bounds``.

        Cell of coordinate j: ``floor((clip(x) - lower) / width * m)`` clamped to
        ``[0, m - 1]``, so a point on an interior edge goes to the upper cell
        and the upper bound to the last cell.  Returns int64 of ``shape`` (flat, C order, when
        there are more than 32 dimensions: numpy's limit).
        """

    def cluster_sums(self, centers, bounds) -> tuple[np.ndarray, FixedPoint]:
        """Nearest-centre counts (k,) int64 and exact coordinate sums (k, d) of clipped rows.

        ``centers`` and the sums are in the ``[-1, 1]^d`` normalisation of
        ``bounds`` (Su et al. 2016, §4.1.1); ties go to the lowest centre index.
        Sums are exact fixed-point sums on the public grid of :mod:`dpcore.utils.fixedpoint`
        (a :class:`~dpcore.utils.fixedpoint.FixedPoint`, resolution ``2**-SUM_BITS``),
        identical on every engine.
        """

    def inertia(self, centers, bounds) -> float:
        """Sum over clipped rows of the squared distance to the nearest centre (normalised units)."""


def as_domain(bounds, d: int) -> Domain:
    """A :class:`Domain` from a Domain or a ``(lower, upper)`` pair."""
    if isinstance(bounds, Domain):
        return bounds
    return check_bounds(bounds, d=d)


def check_centers(centers, d: int) -> np.ndarray:
    """Finite centres of shape (k, d), k >= 1."""
    C = np.asarray(centers, dtype=float)
    if C.ndim != 2 or C.shape[1] != d or C.shape[0] == 0 or not np.isfinite(C).all():
        raise ValueError(f"centers must be finite with shape (k, {d}) and k >= 1, got shape {C.shape}")
    return C


def check_shape(shape, d: int) -> tuple[int, ...]:
    """Grid shape: d positive whole numbers with a product below 2**31."""
    shape = (int(np.asarray(shape).item()),) * d if np.ndim(shape) == 0 else tuple(int(m) for m in shape)
    if len(shape) != d or min(shape) < 1 or float(np.prod(shape, dtype=float)) >= 2 ** 31:
        raise ValueError(f"grid shape must be {d} positive cell counts with fewer than 2**31 cells, got {shape}")
    return shape
