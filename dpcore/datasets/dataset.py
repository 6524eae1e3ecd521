"""The :class:`Dataset` a loader returns, the embedded data folder and the public boxes of NYC."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

Progress = Callable[[float, str], None]


REPO = Path(__file__).resolve().parents[1]


def _sample_dir() -> Path:
    """The embedded datasets: package data ``dpcore/sample_data`` (a link to the repository's
    ``sample_data/`` in a checkout, real files in an installed wheel)."""
    from importlib import resources
    return Path(str(resources.files("dpcore") / "sample_data"))


SAMPLE_DIR = _sample_dir()


#: Feldman et al. (2017), §5.1: "latitude between 73.9°W and 74.1°W, longitude between
#: 40.7°N and 40.9°N" (the paper swaps the two words; the degrees are unambiguous).
#: (lower, upper) in (longitude, latitude) order, WGS84 degrees.
TAXI_BOUNDS = (np.array([-74.1, 40.7]), np.array([-73.9, 40.9]))


#: The box Natalino Busa cut the SNAP Gowalla NYC subset with (shared/data/README.md §2):
#: lat 40.48..40.92, lon -74.26..-73.70.  (longitude, latitude) order.
GOWALLA_BOUNDS = (np.array([-74.26, 40.48]), np.array([-73.70, 40.92]))


# --------------------------------------------------------------------------------------
# The data set object
# --------------------------------------------------------------------------------------
@dataclass
class Dataset:
    """A loaded data set, ready for an estimator.

    Attributes
    ----------
    name : str
        Registry name (``available()``), or ``"upload"``.
    X : ndarray (n, d) float64
        The points, finite, in data units.
    columns : list of str
        Name of each column of ``X``.
    bounds : tuple (lower, upper) of ndarray (d,), or None
        Public bounds in data units (known without looking at the data).
        None only for uploads with no bounds given.
    geo : bool
        True when the columns are ``[longitude, latitude]`` in WGS84 degrees, in that order.
    title : str
        Short human name.
    description : str
        One or two sentences: what it is, source, licence, what was dropped.
    labels : ndarray (n,) or None
        Reference labels when the source has them (ground truth or class).
    n_clusters_hint : int or None
        The k the literature uses on this set.
    n_dropped : int
        Rows removed before ``X``: outside the public box (a public per-record
        filter) or with missing values.  Subsampling by ``max_rows`` is not counted.
    source : str
        Where the data came from (file path, URL or package).
    units : ndarray (n,) or None
        The privacy unit (e.g. the user) of every row, when the data have a person column: releases are
        then made per person by default (``fit(X, privacy_id=units)``, issue 23).
    unit_column : str or None
        The name of that column (``"user_id"``).
    kind : {"trips", "check-ins", "images", "points"}
        What one row is, for sentences ("for every trip", "took a trip").
    public : bool
        True for the data embedded with the package and scikit-learn's teaching sets: already public,
        so the app may show a release at its defaults when a page opens (issue 24).  False for
        everything else (files, downloads, configured sources, uploads): a page then draws only when
        the person presses the button that states the cost.
    data_source : dpcore.sources.DataSource or None
        For large configured sources (``dpcore_sources.toml``): the rows stay where they are
        (Parquet via DuckDB, a database table) and ``X`` is an empty (0, d) array; estimators
        that scale fit on ``data_source`` (see :data:`dpcore.SCALABLE`).
    """

    name: str
    X: np.ndarray
    columns: list
    bounds: tuple | None
    geo: bool
    title: str
    description: str
    labels: np.ndarray | None = None
    n_clusters_hint: int | None = None
    n_dropped: int = 0
    source: str = ""
    notes: list = field(default_factory=list)
    data_source: Any = None
    units: Any = None
    unit_column: str | None = None
    kind: str = "points"
    public: bool = False

    @property
    def n(self) -> int:
        """Number of rows of ``X`` (of the source, with finite coordinates, for a large source)."""
        return int(self.data_source.count() if self.data_source is not None else self.X.shape[0])

    @property
    def d(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])


# --------------------------------------------------------------------------------------
# Registry entries
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Spec:
    name: str
    kind: str                  # "sample", "sklearn", "download", "file"
    title: str                 # a short name, unique in the catalogue: lists show it whole (<= 30 characters)
    description: str
    geo: bool = False
    bounds: tuple | None = None
    columns: tuple = ()        # source columns, in X order
    summary: str = ""          # one line under the title in a list: what the data is, where from.  No row
    #                            count in a title or summary: the exact n is for the raw-facts panel only
    label_col: str | None = None
    n_clusters_hint: int | None = None
    path: Path | None = None
    box_filter: bool = False   # drop rows outside ``bounds`` (public per-record filter)
    unit_col: str | None = None    # the person column (privacy unit), issue 23
    kind_of_rows: str = "points"   # "trips", "check-ins", "images", "points"
