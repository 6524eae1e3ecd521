"""Data sets: the registry, loaders, uploads and the NYC taxi downloader.

Every data set comes with **public bounds** (a box in data units) that are
known without looking at the records: a city's bounding box, a benchmark's
published value range, a measurement scale.  They are never computed from the
data here (CONTRACT.md: "Data bounds are public inputs").  Uploads are the one
exception: without bounds from the user, ``Dataset.bounds`` is None and the
estimator warns with :class:`~dpcore.exceptions.PrivacyLeakWarning`.

Names
-----
- ``nyc_taxi_sample``: 181,446 real NYC taxi pickups embedded in ``sample_data/`` (made by
  ``sample_data/make_taxi_sample.py``); the app's default.
- ``s1_like``, ``spirals``: synthetic sets made by ``sample_data/make_sample_data.py``.
- ``iris``, ``wine``, ``breast_cancer``, ``digits``: bundled with scikit-learn.
- ``nyc_taxi_2015_01``: NYC yellow-taxi pickups of January 2015, downloaded from
  NYC Open Data (SODA API) on first use and cached on disk.
- every known real file in the folder named by ``$DPCORE_DATA`` (read at call
  time), named by its file stem, e.g. ``nyc_taxi_2009-2015_bq_sample_pickups``,
  ``gowalla_nyc_locations``, ``franti_s1``, ``adult``, ``mnist_784``.
- large sources listed in ``dpcore_sources.toml`` (``$DPCORE_SOURCES``; see
  :mod:`dpcore.sources.config`): opened where they lie, never loaded.

No Streamlit import here: the app calls these functions and shows the
``ValueError``/``TypeError``/``ConnectionError`` messages, which are written as
sentences that say what to do.
"""
from __future__ import annotations

import csv
import dataclasses
import gzip
import hashlib
import io
import os
import re
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Dataset", "available", "info", "load", "read_table", "dataset_from_frame",
           "download_nyc_taxi", "TAXI_BOUNDS", "TAXI_SAMPLE_NAME", "GOWALLA_BOUNDS", "NYC_TAXI_URL"]

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
#: NYC Open Data, "2015 Yellow Taxi Trip Data" (dataset 2yzn-sicd), SODA endpoint.
NYC_TAXI_URL = "https://data.cityofnewyork.us/resource/2yzn-sicd.csv"
NYC_TAXI_NAME = "nyc_taxi_2015_01"
NYC_TAXI_ROWS = 200_000


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
    data_source : dpcore.sources.DataSource or None
        For large configured sources (``dpcore_sources.toml``): the rows stay where they are
        (Parquet via DuckDB, a database table) and ``X`` is an empty (0, d) array; estimators
        that scale fit on ``data_source`` (see :data:`dpcore.sources.SCALABLE`).
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
    title: str
    description: str
    geo: bool = False
    bounds: tuple | None = None
    columns: tuple = ()        # source columns, in X order
    label_col: str | None = None
    n_clusters_hint: int | None = None
    path: Path | None = None
    box_filter: bool = False   # drop rows outside ``bounds`` (public per-record filter)


def _sample_path(filename: str) -> Path:
    """Where an embedded sample file lives (the one place to change if samples become package data)."""
    return SAMPLE_DIR / filename


#: The embedded real taxi sample (``sample_data/make_taxi_sample.py``): the app's default data set.
TAXI_SAMPLE_NAME = "nyc_taxi_sample"

_SAMPLES = {
    TAXI_SAMPLE_NAME: _Spec(
        TAXI_SAMPLE_NAME, "sample", "NYC taxi pickups (real TLC trips, embedded)",
        "Pickup locations (longitude, latitude) of 181,446 NYC yellow-taxi trips, 2009-2015: the NYC Taxi "
        "& Limousine Commission trip records (NYC open data), as randomly sampled from the BigQuery public "
        "table nyc-tlc.yellow.trips by Google's ML course notebooks. Public bounds: the box of Feldman et al. "
        "2017 §5.1 (lon −74.1..−73.9, lat 40.7..40.9), a constant, not read from the data. Made by "
        "sample_data/make_taxi_sample.py from 191,897 trips: 1 with a missing coordinate, 138 GPS outliers "
        "outside the NYC region (lon −74.3..−73.7, lat 40.5..41.0) and 10,312 pickups outside the box "
        "(mostly the airports) were dropped.",
        geo=True, bounds=TAXI_BOUNDS, columns=("longitude", "latitude"), n_clusters_hint=5,
        path=_sample_path("nyc_taxi_sample.parquet"), box_filter=True),
    "s1_like": _Spec(
        "s1_like", "sample", "S1-like: 15 Gaussian clusters (synthetic)",
        "5,000 synthetic 2-D points in 15 Gaussian clusters in the style of Fränti's S1 benchmark, "
        "made by sample_data/make_sample_data.py (fixed seed); public box [0, 1,000,000]². "
        "Licence: part of this repository.",
        bounds=(np.array([0.0, 0.0]), np.array([1e6, 1e6])), columns=("x", "y"),
        label_col="label", n_clusters_hint=15, path=_sample_path("s1_like.csv")),
    "spirals": _Spec(
        "spirals", "sample", "Three spirals (synthetic)",
        "1,500 synthetic 2-D points on 3 interleaved noisy spirals (k-means cannot separate them; "
        "grid/density methods can), made by sample_data/make_sample_data.py (fixed seed); public box "
        "[-10, 10]². Licence: part of this repository.",
        bounds=(np.array([-10.0, -10.0]), np.array([10.0, 10.0])), columns=("x", "y"),
        label_col="label", n_clusters_hint=3, path=_sample_path("spirals.csv")),
    "mnist_sample": _Spec(
        "mnist_sample", "sample", "MNIST digits, 15,000-image sample (real)",
        "15,000 real handwritten digits, 28×28 grey levels 0..255, a uniform random subset of MNIST "
        "(LeCun, Cortes & Burges; OpenML mnist_784; CC BY-SA 3.0), made by "
        "sample_data/make_mnist_sample.py. Bounds: the pixel range 0..255.",
        bounds=(np.zeros(784), np.full(784, 255.0)),
        columns=tuple(f"pixel_{r}_{c}" for r in range(28) for c in range(28)),
        label_col="y", n_clusters_hint=10, path=_sample_path("mnist_sample.npz")),
}

_SKLEARN = {
    "iris": ("load_iris", "Iris flowers (scikit-learn)", 3,
             "Fisher's iris measurements: 150 flowers, 4 lengths in cm, 3 species (UCI ML Repository, "
             "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published in "
             "scikit-learn's description, widened by one unit of the last printed digit."),
    "wine": ("load_wine", "Wine chemistry (scikit-learn)", 3,
             "Chemical analysis of 178 Italian wines, 13 measurements, 3 cultivars (UCI ML Repository, "
             "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published in "
             "scikit-learn's description, widened by one unit of the last printed digit."),
    "breast_cancer": ("load_breast_cancer", "Breast cancer Wisconsin (scikit-learn)", 2,
                      "569 cell-nucleus images, 30 shape features, benign/malignant (UCI ML Repository, "
                      "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published "
                      "in scikit-learn's description, widened by one unit of the last printed digit."),
    "digits": ("load_digits", "Handwritten digits 8×8 (scikit-learn)", 10,
               "1,797 handwritten digits as 8×8 images of pixel counts 0..16 (UCI ML Repository, CC BY 4.0; "
               "bundled with scikit-learn, BSD-3-Clause). Bounds: the documented pixel range 0..16."),
}

_TAXI_DESCRIPTION = (
    "Pickup locations (longitude, latitude) of NYC yellow-taxi trips from the TLC trip records "
    "(NYC open data, free to use). "
    "Public bounds: the box of Feldman et al. 2017 §5.1 (lon −74.1..−73.9, lat 40.7..40.9); "
    "pickups outside it are dropped.")

# Benchmark sets: public box per file, (lower, upper) for (x, y).  None of these sets is
# private; the box still has to be a *constant* so that the app and the tests run the
# algorithms exactly as they would on private data (bounds never read at load time).
#  - SIPU/Fränti sets are published as integer coordinates on fixed scales: the A sets span
#    the 16-bit range 0..65535 exactly (x reaches both ends), Birch1/Birch2 reach 0 and
#    1,000,000 exactly; the S and Unbalance sets lie on the same 0..10^6 scale.  We take those
#    scales as the documented ranges.
#  - The DP-WaveCluster test sets (lchen10/DiffPrivWaveCluster) are integer rescalings of S1,
#    Aggregation and Spiral on the same 0..10^6 scale (Aggregation's x reaches 1,097,098, so
#    its x range is 0..1.1e6).
#  - The shape sets (Aggregation, Compound, ...), the Chameleon sets and the BIRCH-generator
#    sets document no value range.  For them the box is the published file's value range
#    rounded outward to a multiple of 5 (shape, birch_ds1/ds3) or 50 (Chameleon, birch_ds2):
#    a fixed constant, stated in the description as the benchmark's published value range.
_SIPU = "documented SIPU scale"
_ROUNDED = "the published value range, rounded outward"
_BENCH = {
    # name: (x_lo, y_lo, x_hi, y_hi, k, basis, title)
    "franti_s1": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S1 (15 Gaussian clusters)"),
    "franti_s2": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S2 (15 clusters, more overlap)"),
    "franti_s3": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S3 (15 clusters, much overlap)"),
    "franti_s4": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S4 (15 clusters, most overlap)"),
    "franti_a1": (0, 0, 65535, 65535, 20, _SIPU, "Fränti A1 (20 clusters)"),
    "franti_a2": (0, 0, 65535, 65535, 35, _SIPU, "Fränti A2 (35 clusters)"),
    "franti_a3": (0, 0, 65535, 65535, 50, _SIPU, "Fränti A3 (50 clusters)"),
    "franti_birch1": (0, 0, 1e6, 1e6, 100, _SIPU, "Birch1 (10×10 grid of clusters)"),
    "franti_birch2": (0, 0, 1e6, 1e6, 100, _SIPU, "Birch2 (100 clusters on a sine curve)"),
    "franti_unbalance": (0, 0, 1e6, 1e6, 8, _SIPU, "Unbalance (8 clusters of very different sizes)"),
    "shape_aggregation": (0, 0, 40, 30, 7, _ROUNDED, "Aggregation (Gionis et al.)"),
    "shape_compound": (5, 5, 45, 25, 6, _ROUNDED, "Compound (Zahn)"),
    "shape_spiral": (0, 0, 35, 35, 3, _ROUNDED, "Spiral (Chang & Yeung)"),
    "shape_jain": (0, 0, 45, 30, 2, _ROUNDED, "Jain (Jain & Law)"),
    "shape_flame": (0, 10, 15, 30, 2, _ROUNDED, "Flame (Fu & Medico)"),
    "shape_r15": (0, 0, 20, 20, 15, _ROUNDED, "R15 (Veenman et al.)"),
    "shape_d31": (0, 0, 30, 30, 31, _ROUNDED, "D31 (Veenman et al.)"),
    "shape_pathbased": (0, 0, 35, 35, 3, _ROUNDED, "Pathbased (Chang & Yeung)"),
    "chameleon_t4_8k": (0, 0, 650, 350, 6, _ROUNDED, "Chameleon t4.8k"),
    "chameleon_t5_8k": (0, 0, 850, 200, 6, _ROUNDED, "Chameleon t5.8k"),
    "chameleon_t7_10k": (0, 0, 700, 500, 9, _ROUNDED, "Chameleon t7.10k"),
    "chameleon_t8_8k": (0, 0, 700, 450, 8, _ROUNDED, "Chameleon t8.8k"),
    "birch_ds1_grid": (-5, -5, 45, 45, 100, _ROUNDED, "BIRCH DS1 (grid, WaveCluster)"),
    "birch_ds2_sine": (0, -30, 650, 30, 100, _ROUNDED, "BIRCH DS2 (sine, WaveCluster)"),
    "birch_ds3_random": (-5, -20, 110, 115, 100, _ROUNDED, "BIRCH DS3 (random centres, WaveCluster)"),
    "privwavecluster_15clusters_30k": (0, 0, 1e6, 1e6, 15, _SIPU, "DP-WaveCluster 15 clusters (30k)"),
    "privwavecluster_aggregation_30k": (0, 0, 1.1e6, 1e6, 5, _SIPU, "DP-WaveCluster Aggregation (30k)"),
    "privwavecluster_spiral_30k": (0, 0, 1e6, 1e6, 3, _SIPU, "DP-WaveCluster Spiral (30k)"),
}
_BENCH_SOURCE = {
    "franti": "P. Fränti's SIPU benchmarks via gagolews/clustering-data-v1 (AGPL-3.0, research use; "
              "cite Fränti & Sieranoja 2018)",
    "shape": "SIPU shape sets via gagolews/clustering-data-v1 (AGPL-3.0, research use)",
    "chameleon": "CLUTO/Chameleon sets via gagolews/clustering-data-v1 (AGPL-3.0, research use)",
    "birch": "BIRCH-generator sets from deric/clustering-benchmark (no licence file), as used by WaveCluster",
    "privwavecluster": "test sets of the DP-WaveCluster code, lchen10/DiffPrivWaveCluster (no licence file)",
}

# UCI Adult, the six numeric attributes of "Adult-num" (Su et al. 2016, §5).  Bounds from the
# UCI documentation (adult.names): records were extracted with AAGE>16, AFNLWGT>1, HRSWK>0;
# education-num codes the 16 education levels listed there; age is top-coded at 90, hours at
# 99 and capital-gain at 99999 (the CPS top codes).  UCI gives no maximum for fnlwgt and
# capital-loss: for those two we use the published value range rounded outward (1.5e6, 4500)
# and say so in the description.
_ADULT_COLS = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
_ADULT_BOUNDS = (np.array([17.0, 1.0, 1.0, 0.0, 0.0, 1.0]),
                 np.array([90.0, 1.5e6, 16.0, 99999.0, 4500.0, 99.0]))


def _data_dir() -> Path | None:
    env = os.environ.get("DPCORE_DATA")
    if not env:
        return None
    p = Path(env).expanduser()
    return p if p.is_dir() else None


def _file_spec(stem: str, path: Path) -> _Spec | None:
    """Registry entry for a known real file, or None for a file we do not know."""
    if re.fullmatch(r"nyc_taxi_.+_pickups", stem) and _is_table(path):
        return _Spec(stem, "file", f"NYC taxi pickups ({stem[9:-8]}, local copy)",
                     _TAXI_DESCRIPTION + " Local file from $DPCORE_DATA (see its README for the origin).",
                     geo=True, bounds=TAXI_BOUNDS, columns=("pickup_longitude", "pickup_latitude"),
                     n_clusters_hint=5, path=path, box_filter=True)
    if re.fullmatch(r"gowalla_nyc_.+", stem) and _is_table(path):
        what = "distinct check-in locations" if stem.endswith("locations") else "check-ins"
        return _Spec(stem, "file", f"Gowalla NYC {what}",
                     f"Gowalla {what} in New York City (SNAP loc-gowalla, Cho, Myers & Leskovec, KDD 2011; "
                     "subset cut by N. Busa, GPL-3.0). Public bounds: the box the subset was cut by "
                     "(lon −74.26..−73.70, lat 40.48..40.92).",
                     geo=True, bounds=GOWALLA_BOUNDS, columns=("longitude", "latitude"),
                     n_clusters_hint=5, path=path, box_filter=True)
    if stem in _BENCH and _is_table(path):
        xl, yl, xh, yh, k, basis, title = _BENCH[stem]
        src = _BENCH_SOURCE[stem.split("_")[0]]
        box = f"x {xl:g}..{xh:g}, y {yl:g}..{yh:g}"
        return _Spec(stem, "file", title,
                     f"2-D clustering benchmark, {src}. Public box: {box} ({basis}).",
                     bounds=(np.array([xl, yl], float), np.array([xh, yh], float)), columns=("x", "y"),
                     label_col="label" if not stem.startswith("birch_") else None,
                     n_clusters_hint=k, path=path, box_filter=True)
    if stem == "adult" and _is_table(path):
        return _Spec(stem, "file", "UCI Adult, six numeric attributes",
                     "48,842 census records (UCI ML Repository, Becker & Kohavi 1996, CC BY 4.0), the six "
                     "numeric attributes of Adult-num. Bounds from the UCI documentation (age 17..90, "
                     "education_num 1..16, capital_gain 0..99999, hours 1..99); fnlwgt 1..1.5e6 and "
                     "capital_loss 0..4500 are the published value range rounded outward (UCI gives no maximum).",
                     bounds=_ADULT_BOUNDS, columns=_ADULT_COLS, label_col="income",
                     n_clusters_hint=5, path=path, box_filter=True)
    if stem == "mnist_784" and path.name.endswith(".npz"):
        return _Spec(stem, "file", "MNIST handwritten digits (784 pixels)",
                     "70,000 handwritten digits as 28×28 grey-level images (LeCun, Cortes & Burges; CC BY-SA 3.0); "
                     "bounds: the pixel range 0..255.",
                     bounds=(np.zeros(784), np.full(784, 255.0)),
                     columns=tuple(f"pixel_{r}_{c}" for r in range(28) for c in range(28)),
                     label_col="y", n_clusters_hint=10, path=path)
    return None


def _is_table(path: Path) -> bool:
    """A file ``load`` reads as a table: gzipped CSV or Parquet."""
    return path.name.endswith((".csv.gz", ".parquet"))


def _file_specs() -> dict[str, _Spec]:
    folder = _data_dir()
    if folder is None:
        return {}
    specs = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        stem = next((name[:-len(ext)] for ext in (".csv.gz", ".npz", ".parquet") if name.endswith(ext)), None)
        if stem is None or not path.is_file():
            continue
        spec = _file_spec(stem, path)
        if spec is not None:
            specs[stem] = spec
    return specs


def _taxi_spec() -> _Spec:
    return _Spec(NYC_TAXI_NAME, "download", "NYC taxi pickups, January 2015 (download)",
                 _TAXI_DESCRIPTION + f" The first {NYC_TAXI_ROWS:,} trips by record id of NYC Open Data "
                 "dataset 2yzn-sicd, downloaded through its SODA API on first use and cached on disk.",
                 geo=True, bounds=TAXI_BOUNDS, columns=("pickup_longitude", "pickup_latitude"),
                 n_clusters_hint=5, box_filter=True)


def _all_specs() -> dict[str, _Spec]:
    specs: dict[str, _Spec] = dict(_SAMPLES)
    for key, (_, title, k, desc) in _SKLEARN.items():
        specs[key] = _Spec(key, "sklearn", title, desc, n_clusters_hint=k)
    specs[NYC_TAXI_NAME] = _taxi_spec()
    specs.update(_file_specs())
    specs.update(_source_specs())
    return specs


def _source_specs() -> dict[str, _Spec]:
    """Large sources listed in ``dpcore_sources.toml`` (see :mod:`dpcore.sources.config`)."""
    from .sources.config import read_config
    specs = {}
    for e in read_config():
        where = e.get("path") or f"table {e['table']} at {e['url'].split('@')[-1]}"
        specs[e["name"]] = _Spec(e["name"], "source", e.get("title", e["name"]),
                                 e.get("description", f"Large data opened where it lies ({where}); "
                                                      "only exact aggregates are computed there."),
                                 geo=bool(e.get("geo", False)), bounds=e["bounds"],
                                 columns=tuple(e.get("columns") or ()),
                                 n_clusters_hint=e.get("n_clusters_hint"))
    return specs


def _source_entry(name: str) -> dict:
    from .sources.config import read_config
    return next(e for e in read_config() if e["name"] == name)


def available() -> list[str]:
    """Names of every data set that :func:`load` accepts right now.

    Always the embedded samples (``nyc_taxi_sample``, ``s1_like``, ``spirals``), scikit-learn's bundled sets
    (``iris``, ``wine``, ``breast_cancer``, ``digits``) and the downloadable
    ``nyc_taxi_2015_01``; then every known real file found in the folder named
    by the environment variable ``DPCORE_DATA`` (read at call time), named by
    its file stem (``franti_s1``, ``nyc_taxi_2009-2015_bq_sample_pickups``, ...).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from dpcore.datasets import available
    >>> "s1_like" in available() and "iris" in available()
    True
    """
    return list(_all_specs())


def _spec(name: str) -> _Spec:
    specs = _all_specs()
    if name not in specs:
        hint = "" if _data_dir() else " (set DPCORE_DATA to a folder of real data files to see more)"
        raise ValueError(f"unknown data set {name!r}: choose one of {', '.join(specs)}{hint}")
    return specs[name]


def info(name: str, *, metadata: bool = True) -> dict:
    """Cheap facts about a data set, without loading it.

    Parameters
    ----------
    name : str
    metadata : bool, default True
        For a large configured source, also read its files' metadata (``rows``, ``columns``,
        ``format``, ``files``, ``engine``, ``error``: see :func:`dpcore.sources.config.metadata`).
        Lists that only need titles and kinds pass False: a lake's footers are not re-read for them.

    Returns
    -------
    dict
        ``title``, ``description``, ``geo`` (bool), ``n_clusters_hint``,
        ``downloadable`` (bool: fetched from the internet),
        ``cached`` (bool: the data are on this machine, so :func:`load` makes
        no request), ``needs_download`` (bool: ``downloadable and not cached``),
        ``large`` (bool: a configured source, opened where it lies).

    Raises
    ------
    ValueError
        Unknown name (the message lists the available ones).
    """
    spec = _spec(name)
    downloadable = spec.kind == "download"
    cached = _taxi_cache_path(NYC_TAXI_ROWS, NYC_TAXI_URL, None).is_file() if downloadable else True
    out = {"name": name, "title": spec.title, "description": spec.description, "geo": spec.geo,
           "n_clusters_hint": spec.n_clusters_hint, "downloadable": downloadable,
           "cached": cached, "needs_download": downloadable and not cached, "large": spec.kind == "source"}
    if spec.kind == "source" and metadata:
        # Row count and columns from metadata (Parquet footers): nothing is scanned.
        from .sources.config import metadata as read_metadata
        out.update(read_metadata(_source_entry(name)))
    return out


# --------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------
def _subsample(X, labels, max_rows, random_state):
    if max_rows is None or X.shape[0] <= max_rows:
        return X, labels
    if int(max_rows) < 1:
        raise ValueError(f"max_rows must be a positive whole number, got {max_rows}")
    rng = np.random.default_rng(random_state)
    idx = np.sort(rng.choice(X.shape[0], size=int(max_rows), replace=False))
    return X[idx], (labels[idx] if labels is not None else None)


def _keep_rows(X: np.ndarray, bounds, box_filter: bool) -> np.ndarray:
    """Rows with finite values (and inside ``bounds`` when ``box_filter``)."""
    keep = np.isfinite(X).all(axis=1)
    if box_filter and bounds is not None:
        lo, hi = bounds
        with np.errstate(invalid="ignore"):
            keep &= ((X >= lo) & (X <= hi)).all(axis=1)
    return keep


def _finish(spec: _Spec, X, labels, columns, *, max_rows, random_state, source, extra="") -> Dataset:
    X = np.asarray(X, dtype=np.float64)
    keep = _keep_rows(X, spec.bounds, spec.box_filter)
    n_dropped = int((~keep).sum())
    if n_dropped:
        X = X[keep]
        labels = labels[keep] if labels is not None else None
    X, labels = _subsample(X, labels, max_rows, random_state)
    desc = spec.description + extra
    if n_dropped:
        what = "outside the public box or with missing values" if spec.box_filter else "with missing values"
        desc += f" {n_dropped:,} rows {what} were dropped."
    return Dataset(name=spec.name, X=np.ascontiguousarray(X), columns=list(columns), bounds=spec.bounds,
                   geo=spec.geo, title=spec.title, description=desc, labels=labels,
                   n_clusters_hint=spec.n_clusters_hint, n_dropped=n_dropped, source=source)


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


def _load_sklearn(spec: _Spec, max_rows, random_state) -> Dataset:
    from sklearn import datasets as skd
    loader = getattr(skd, _SKLEARN[spec.name][0])
    bunch = loader()
    X = bunch.data.astype(np.float64)
    if spec.name == "digits":
        bounds = (np.zeros(X.shape[1]), np.full(X.shape[1], 16.0))  # DESCR: "integer pixels in the range 0..16"
    else:
        bounds = _descr_bounds(bunch.DESCR, X.shape[1])
    spec = dataclasses.replace(spec, bounds=bounds)
    return _finish(spec, X, np.asarray(bunch.target), [str(c) for c in bunch.feature_names],
                   max_rows=max_rows, random_state=random_state, source=f"sklearn.datasets.{loader.__name__}")


def _read_csv_columns(path, columns, label_col):
    import pandas as pd
    usecols = list(columns) + ([label_col] if label_col else [])
    try:
        if str(path).endswith(".parquet"):
            df = pd.read_parquet(path, columns=usecols)
        else:
            df = pd.read_csv(path, usecols=usecols)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{Path(path).name} does not have the expected columns {usecols}: {exc}") from None
    X = df[list(columns)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
    labels = df[label_col].to_numpy() if label_col else None
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


def load(name: str, *, max_rows: int | None = None, random_state=0, progress: Progress | None = None,
         cache_dir=None) -> Dataset:
    """Load a data set by name.

    Parameters
    ----------
    name : str
        One of :func:`available`.
    max_rows : int, optional
        Keep at most this many rows: a uniform random subset without
        replacement, drawn with ``random_state`` and kept in file order, so the
        same arguments always give the same rows.  Applied after the public
        box filter.
    random_state : int, default 0
        Seed of the subsample (non-private randomness).
    progress : callable(fraction, message), optional
        Called while downloading (``nyc_taxi_2015_01``) and once at the end.
    cache_dir : path, optional
        Download cache (default ``$DPCORE_CACHE`` or ``~/.cache/dpcore``).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unknown name; the message lists the available ones.
    ConnectionError
        ``nyc_taxi_2015_01`` is not cached and NYC Open Data cannot be reached.

    Examples
    --------
    >>> from dpcore.datasets import load
    >>> ds = load("s1_like")
    >>> ds.X.shape[1], len(ds.columns), ds.bounds is not None
    (2, 2, True)
    """
    spec = _spec(name)
    if spec.kind == "source":
        from .sources.config import open_entry
        src = open_entry(_source_entry(name))
        return Dataset(name, np.empty((0, src.n_features)), list(src.columns), spec.bounds, spec.geo, spec.title,
                       spec.description, n_clusters_hint=spec.n_clusters_hint, source=repr(src),
                       data_source=src)
    if spec.kind == "sklearn":
        ds = _load_sklearn(spec, max_rows, random_state)
    elif spec.kind == "download":
        path = download_nyc_taxi(NYC_TAXI_ROWS, base_url=NYC_TAXI_URL, progress=progress, cache_dir=cache_dir)
        X, _ = _read_csv_columns(path, spec.columns, None)
        ds = _finish(spec, X, None, ["longitude", "latitude"], max_rows=max_rows,
                     random_state=random_state, source=f"{NYC_TAXI_URL} (cached at {path})")
    elif spec.path is not None and spec.path.name.endswith(".npz"):
        with np.load(spec.path) as z:
            X8, y = z["X"], z["y"]
        X8, y = _subsample(X8, y, max_rows, random_state)   # before the float copy (70000×784)
        ds = _finish(spec, X8, y, spec.columns, max_rows=None, random_state=random_state, source=str(spec.path))
    else:
        assert spec.path is not None, f"{spec.name} has no file"
        if spec.kind == "sample" and not spec.path.is_file():
            script = "make_taxi_sample.py" if spec.name == TAXI_SAMPLE_NAME else "make_sample_data.py"
            raise ValueError(f"{spec.path} is missing: run `python sample_data/{script}` to make it")
        if spec.path.name.endswith(".parquet"):
            X, labels = _read_fixed_point_parquet(spec.path, spec.columns), None
        else:
            X, labels = _read_csv_columns(spec.path, spec.columns, spec.label_col)
        cols = ["longitude", "latitude"] if spec.geo else spec.columns
        ds = _finish(spec, X, labels, cols, max_rows=max_rows, random_state=random_state, source=str(spec.path))
    if progress is not None:
        progress(1.0, f"loaded {ds.title}: {ds.n:,} rows")
    return ds


# --------------------------------------------------------------------------------------
# NYC taxi download (SODA API)
# --------------------------------------------------------------------------------------
def _cache_root(cache_dir) -> Path:
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("DPCORE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "dpcore"


def _taxi_cache_path(n_rows: int, base_url: str, cache_dir) -> Path:
    tag = "" if base_url == NYC_TAXI_URL else "_" + hashlib.sha1(base_url.encode()).hexdigest()[:10]
    return _cache_root(cache_dir) / f"{NYC_TAXI_NAME}_{int(n_rows)}{tag}.csv.gz"


def download_nyc_taxi(n_rows: int = NYC_TAXI_ROWS, *, base_url: str = NYC_TAXI_URL, page_size: int = 50_000,
                      progress: Progress | None = None, cache_dir=None, timeout: float = 60) -> Path:
    """Download NYC yellow-taxi pickups of January 2015 from NYC Open Data, with a disk cache.

    Pages through the SODA API of dataset 2yzn-sicd with
    ``$select=pickup_longitude,pickup_latitude``, ``$order=:id``, ``$limit``
    and ``$offset`` until ``n_rows`` rows have arrived (or the data set ends),
    writing a gzip CSV to a temporary file that is renamed into place only
    when complete (an interrupted download leaves no partial cache).  A cached
    file is returned without any request.

    Parameters
    ----------
    n_rows : int, default 200,000
        Rows to fetch (the first ``n_rows`` by record id).
    base_url : str
        SODA CSV endpoint.
    page_size : int, default 50,000
        Rows per request.
    progress : callable(fraction, message), optional
        Called after each page with the fraction of ``n_rows`` received; the
        last call has fraction 1.0.
    cache_dir : path, optional
        Cache folder; default ``$DPCORE_CACHE``, else ``~/.cache/dpcore``.
    timeout : float, default 60
        Seconds per request.

    Returns
    -------
    pathlib.Path
        The cached ``.csv.gz`` with columns ``pickup_longitude,pickup_latitude``.

    Raises
    ------
    ConnectionError
        NYC Open Data could not be reached or answered with an error.
    ValueError
        Bad ``n_rows``/``page_size``, or the server's CSV lacks the pickup columns.
    """
    if int(n_rows) < 1 or int(page_size) < 1:
        raise ValueError("n_rows and page_size must be positive whole numbers")
    n_rows, page_size = int(n_rows), int(page_size)
    target = _taxi_cache_path(n_rows, base_url, cache_dir)
    if target.is_file():
        if progress is not None:
            progress(1.0, f"using the cached copy {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
    tmp = Path(tmp_name)
    received = 0
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            writer = io.TextIOWrapper(gz, encoding="utf-8", newline="")
            out = csv.writer(writer, lineterminator="\n")
            out.writerow(["pickup_longitude", "pickup_latitude"])
            while received < n_rows:
                limit = min(page_size, n_rows - received)
                query = urllib.parse.urlencode({"$select": "pickup_longitude,pickup_latitude",
                                                "$order": ":id", "$limit": limit, "$offset": received},
                                               safe="$:,")
                url = f"{base_url}?{query}"
                rows = _fetch_page(url, timeout)
                out.writerows(rows)
                received += len(rows)
                if progress is not None:
                    progress(min(received / n_rows, 1.0) if len(rows) == limit else 1.0,
                             f"downloaded {received:,} of {n_rows:,} taxi trips")
                if len(rows) < limit:     # the data set has no more rows
                    break
            writer.flush()
            writer.detach()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _fetch_page(url: str, timeout: float) -> list[list[str]]:
    """One SODA page as rows ``[lon, lat]`` (strings); clear errors for network trouble."""
    advice = "; use a local copy via DPCORE_DATA or upload a CSV"
    req = urllib.request.Request(url, headers={"Accept": "text/csv", "User-Agent": "dpcore"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise ConnectionError(f"could not reach NYC Open Data ({url.split('?')[0]}): the server answered "
                              f"HTTP {exc.code} {exc.reason}{advice}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConnectionError(f"could not reach NYC Open Data ({url.split('?')[0]}): {reason}{advice}") from exc
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return []
    header = [h.strip().lower() for h in header]
    try:
        i_lon, i_lat = header.index("pickup_longitude"), header.index("pickup_latitude")
    except ValueError:
        raise ValueError(f"NYC Open Data answered with columns {header}, not pickup_longitude/"
                         f"pickup_latitude{advice}") from None
    return [[r[i_lon], r[i_lat]] for r in reader if r]


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


def dataset_from_frame(df, columns, *, bounds=None, geo=None, name: str = "upload",
                       title: str | None = None) -> Dataset:
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
    from .utils.domain import check_bounds
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
                   n_dropped=n_dropped, source=name, notes=notes + ([note] if note else []))
