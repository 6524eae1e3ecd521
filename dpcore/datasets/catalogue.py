"""The catalogue of data sets: names, descriptions, public bounds, and :func:`load`.

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

import os
import re
from pathlib import Path

import numpy as np

from . import nyc_taxi  # URL and row count read at call time (tests point them at a local server)
from .dataset import GOWALLA_BOUNDS, SAMPLE_DIR, TAXI_BOUNDS, Dataset, Progress, _Spec
from .loaders import _finish, _load_sklearn, _read_csv_columns, _read_fixed_point_parquet, _subsample
from .nyc_taxi import NYC_TAXI_NAME, _taxi_cache_path, download_nyc_taxi


def _sample_path(filename: str) -> Path:
    """Where an embedded sample file lives (the one place to change if samples become package data)."""
    return SAMPLE_DIR / filename


#: The embedded real taxi sample (``sample_data/make_taxi_sample.py``): the app's default data set.
TAXI_SAMPLE_NAME = "nyc_taxi_sample"

_SAMPLES = {
    TAXI_SAMPLE_NAME: _Spec(
        TAXI_SAMPLE_NAME, "sample", "NYC taxi 2009–15 (built in)",
        "Pickup locations (longitude, latitude) of 181,446 NYC yellow-taxi trips, 2009-2015: the NYC Taxi "
        "& Limousine Commission trip records (NYC open data), as randomly sampled from the BigQuery public "
        "table nyc-tlc.yellow.trips by Google's ML course notebooks. Public bounds: the box of Feldman et al. "
        "2017 §5.1 (lon −74.1..−73.9, lat 40.7..40.9), a constant, not read from the data. Made by "
        "sample_data/make_taxi_sample.py from 191,897 trips: 1 with a missing coordinate, 138 GPS outliers "
        "outside the NYC region (lon −74.3..−73.7, lat 40.5..41.0) and 10,312 pickups outside the box "
        "(mostly the airports) were dropped.",
        geo=True, bounds=TAXI_BOUNDS, columns=("longitude", "latitude"), n_clusters_hint=5,
        path=_sample_path("nyc_taxi_sample.parquet"), box_filter=True, kind_of_rows="trips",
        summary="Real yellow-taxi pickups, 2009–2015 (NYC TLC trip records, a BigQuery sample), "
                "built into dpcore."),
    "s1_like": _Spec(
        "s1_like", "sample", "S1-like (synthetic)",
        "5,000 synthetic 2-D points in 15 Gaussian clusters in the style of Fränti's S1 benchmark, "
        "made by sample_data/make_sample_data.py (fixed seed); public box [0, 1,000,000]². "
        "Licence: part of this repository.",
        bounds=(np.array([0.0, 0.0]), np.array([1e6, 1e6])), columns=("x", "y"),
        label_col="label", n_clusters_hint=15, path=_sample_path("s1_like.csv"),
        summary="Points in 15 Gaussian clusters, in the style of Fränti's S1 benchmark; made by dpcore."),
    "spirals": _Spec(
        "spirals", "sample", "Three spirals (synthetic)",
        "6,000 synthetic 2-D points on 3 interleaved noisy spirals (k-means cannot separate them; "
        "grid/density methods can), made by sample_data/make_sample_data.py (fixed seed); public box "
        "[-10, 10]². Licence: part of this repository.",
        bounds=(np.array([-10.0, -10.0]), np.array([10.0, 10.0])), columns=("x", "y"),
        label_col="label", n_clusters_hint=3, path=_sample_path("spirals.csv"),
        summary="Points on 3 interleaved spirals: k-means cannot separate them, grid methods can."),
    "mnist_sample": _Spec(
        "mnist_sample", "sample", "MNIST digits (sample)",
        "15,000 real handwritten digits, 28×28 grey levels 0..255, a uniform random subset of MNIST "
        "(LeCun, Cortes & Burges; OpenML mnist_784; CC BY-SA 3.0), made by "
        "sample_data/make_mnist_sample.py. Bounds: the pixel range 0..255.",
        bounds=(np.zeros(784), np.full(784, 255.0)),
        columns=tuple(f"pixel_{r}_{c}" for r in range(28) for c in range(28)),
        label_col="y", n_clusters_hint=10, path=_sample_path("mnist_sample.npz"), kind_of_rows="images",
        summary="Real handwritten digits of 28×28 pixels, a random sample of MNIST (LeCun, Cortes & Burges)."),
}

#: name: (scikit-learn loader, title, k, summary, description)
_SKLEARN = {
    "iris": ("load_iris", "Iris flowers (scikit-learn)", 3,
             "Flowers: 4 lengths in cm, 3 species (Fisher 1936, UCI; bundled with scikit-learn).",
             "Fisher's iris measurements: 150 flowers, 4 lengths in cm, 3 species (UCI ML Repository, "
             "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published in "
             "scikit-learn's description, widened by one unit of the last printed digit."),
    "wine": ("load_wine", "Wine chemistry (scikit-learn)", 3,
             "Italian wines: 13 chemical measurements, 3 cultivars (UCI; bundled with scikit-learn).",
             "Chemical analysis of 178 Italian wines, 13 measurements, 3 cultivars (UCI ML Repository, "
             "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published in "
             "scikit-learn's description, widened by one unit of the last printed digit."),
    "breast_cancer": ("load_breast_cancer", "Breast cancer (scikit-learn)", 2,
                      "Cell nuclei: 30 shape features, benign or malignant (UCI Breast Cancer Wisconsin; "
                      "bundled with scikit-learn).",
                      "569 cell-nucleus images, 30 shape features, benign/malignant (UCI ML Repository, "
                      "CC BY 4.0; bundled with scikit-learn, BSD-3-Clause). Bounds: the min/max published "
                      "in scikit-learn's description, widened by one unit of the last printed digit."),
    "digits": ("load_digits", "Digits 8×8 (scikit-learn)", 10,
               "Handwritten digits as 8×8 images (UCI; bundled with scikit-learn).",
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
    "franti_s1": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S1 (15 clusters)"),
    "franti_s2": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S2 (more overlap)"),
    "franti_s3": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S3 (much overlap)"),
    "franti_s4": (0, 0, 1e6, 1e6, 15, _SIPU, "Fränti S4 (most overlap)"),
    "franti_a1": (0, 0, 65535, 65535, 20, _SIPU, "Fränti A1 (20 clusters)"),
    "franti_a2": (0, 0, 65535, 65535, 35, _SIPU, "Fränti A2 (35 clusters)"),
    "franti_a3": (0, 0, 65535, 65535, 50, _SIPU, "Fränti A3 (50 clusters)"),
    "franti_birch1": (0, 0, 1e6, 1e6, 100, _SIPU, "Birch1 (10×10 grid)"),
    "franti_birch2": (0, 0, 1e6, 1e6, 100, _SIPU, "Birch2 (on a sine curve)"),
    "franti_unbalance": (0, 0, 1e6, 1e6, 8, _SIPU, "Unbalance (8 unequal clusters)"),
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
    "birch_ds1_grid": (-5, -5, 45, 45, 100, _ROUNDED, "BIRCH DS1 (grid)"),
    "birch_ds2_sine": (0, -30, 650, 30, 100, _ROUNDED, "BIRCH DS2 (sine)"),
    "birch_ds3_random": (-5, -20, 110, 115, 100, _ROUNDED, "BIRCH DS3 (random centres)"),
    "privwavecluster_15clusters_30k": (0, 0, 1e6, 1e6, 15, _SIPU, "DP-WaveCluster: 15 clusters"),
    "privwavecluster_aggregation_30k": (0, 0, 1.1e6, 1e6, 5, _SIPU, "DP-WaveCluster: Aggregation"),
    "privwavecluster_spiral_30k": (0, 0, 1e6, 1e6, 3, _SIPU, "DP-WaveCluster: Spiral"),
}
_BENCH_SOURCE = {
    "franti": "P. Fränti's SIPU benchmarks via gagolews/clustering-data-v1 (AGPL-3.0, research use; "
              "cite Fränti & Sieranoja 2018)",
    "shape": "SIPU shape sets via gagolews/clustering-data-v1 (AGPL-3.0, research use)",
    "chameleon": "CLUTO/Chameleon sets via gagolews/clustering-data-v1 (AGPL-3.0, research use)",
    "birch": "BIRCH-generator sets from deric/clustering-benchmark (no licence file), as used by WaveCluster",
    "privwavecluster": "test sets of the DP-WaveCluster code, lchen10/DiffPrivWaveCluster (no licence file)",
}
#: The same origins in a few words, for a summary line.
_BENCH_ORIGIN = {
    "franti": "one of P. Fränti's SIPU benchmarks",
    "shape": "a SIPU shape benchmark",
    "chameleon": "a CLUTO/Chameleon benchmark",
    "birch": "a BIRCH-generator set, as used by WaveCluster",
    "privwavecluster": "a test set of the DP-WaveCluster code",
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
        return _Spec(stem, "file", f"NYC taxi {_taxi_period(stem[9:-8])} (local)",
                     _TAXI_DESCRIPTION + " Local file from $DPCORE_DATA (see its README for the origin).",
                     geo=True, bounds=TAXI_BOUNDS, columns=("pickup_longitude", "pickup_latitude"),
                     n_clusters_hint=5, path=path, box_filter=True, kind_of_rows="trips",
                     summary=f"Real yellow-taxi pickups (NYC TLC trip records) from the file {path.name} in "
                             "the data folder.")
    if re.fullmatch(r"gowalla_nyc_.+", stem) and _is_table(path):
        what = "distinct check-in locations" if stem.endswith("locations") else "check-ins"
        return _Spec(stem, "file", f"Gowalla NYC {what.removeprefix('distinct check-in ')}",
                     f"Gowalla {what} in New York City (SNAP loc-gowalla, Cho, Myers & Leskovec, KDD 2011; "
                     "subset cut by N. Busa, GPL-3.0). Public bounds: the box the subset was cut by "
                     "(lon −74.26..−73.70, lat 40.48..40.92).",
                     geo=True, bounds=GOWALLA_BOUNDS, columns=("longitude", "latitude"),
                     n_clusters_hint=5, path=path, box_filter=True,
                     unit_col="user_id" if what == "check-ins" else None,
                     kind_of_rows="check-ins" if what == "check-ins" else "points",
                     summary=f"Gowalla {what} in New York City, 2009–2010 (SNAP loc-gowalla)"
                             + (": many rows per person." if what == "check-ins" else "."))
    if stem in _BENCH and _is_table(path):
        xl, yl, xh, yh, k, basis, title = _BENCH[stem]
        src = _BENCH_SOURCE[stem.split("_")[0]]
        box = f"x {xl:g}..{xh:g}, y {yl:g}..{yh:g}"
        return _Spec(stem, "file", title,
                     f"2-D clustering benchmark, {src}. Public box: {box} ({basis}).",
                     bounds=(np.array([xl, yl], float), np.array([xh, yh], float)), columns=("x", "y"),
                     label_col="label" if not stem.startswith("birch_") else None,
                     n_clusters_hint=k, path=path, box_filter=True,
                     summary=f"2-D points in {k} clusters: {_BENCH_ORIGIN[stem.split('_')[0]]}.")
    if stem == "adult" and _is_table(path):
        return _Spec(stem, "file", "UCI Adult (6 numeric columns)",
                     "48,842 census records (UCI ML Repository, Becker & Kohavi 1996, CC BY 4.0), the six "
                     "numeric attributes of Adult-num. Bounds from the UCI documentation (age 17..90, "
                     "education_num 1..16, capital_gain 0..99999, hours 1..99); fnlwgt 1..1.5e6 and "
                     "capital_loss 0..4500 are the published value range rounded outward (UCI gives no maximum).",
                     bounds=_ADULT_BOUNDS, columns=_ADULT_COLS, label_col="income",
                     n_clusters_hint=5, path=path, box_filter=True,
                     summary="US census records (UCI Adult, 1994): age, hours per week and 4 more numeric columns.")
    if stem == "mnist_784" and path.name.endswith(".npz"):
        return _Spec(stem, "file", "MNIST digits (full set)",
                     "70,000 handwritten digits as 28×28 grey-level images (LeCun, Cortes & Burges; CC BY-SA 3.0); "
                     "bounds: the pixel range 0..255.",
                     bounds=(np.zeros(784), np.full(784, 255.0)),
                     columns=tuple(f"pixel_{r}_{c}" for r in range(28) for c in range(28)),
                     label_col="y", n_clusters_hint=10, path=path, kind_of_rows="images",
                     summary="Every MNIST handwritten digit, 28×28 pixels (LeCun, Cortes & Burges).")
    return None


_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _taxi_period(part: str) -> str:
    """A local taxi file's period, short and readable: ``"2016-01to03"`` -> ``"Jan–Mar 2016"``.

    The part of the file name between ``nyc_taxi_`` and ``_pickups``; titles must fit a list's
    one-line box (issue 56).  ``"YYYY-MM"`` -> ``"Jan 2009"``; ``"YYYY-MMtoMM"`` -> ``"Jan–Mar 2016"``;
    ``"YYYY-YYYY…"`` -> ``"2009–15"``; anything else with its underscores as spaces.

    Examples
    --------
    >>> _taxi_period("2009-01"), _taxi_period("2016-01to03"), _taxi_period("2009-2015_bq_sample")
    ('Jan 2009', 'Jan–Mar 2016', '2009–15')
    """
    month = r"(0[1-9]|1[0-2])"
    if m := re.fullmatch(rf"(\d{{4}})-{month}", part):
        return f"{_MONTHS[int(m[2]) - 1]} {m[1]}"
    if m := re.fullmatch(rf"(\d{{4}})-{month}to{month}", part):
        return f"{_MONTHS[int(m[2]) - 1]}–{_MONTHS[int(m[3]) - 1]} {m[1]}"
    if m := re.fullmatch(r"(\d{4})-(\d{4})(?:_.*)?", part):
        return f"{m[1]}–{m[2][2:]}" if m[1][:2] == m[2][:2] else f"{m[1]}–{m[2]}"
    return part.replace("_", " ")


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
    return _Spec(NYC_TAXI_NAME, "download", "NYC taxi Jan 2015 (download)",
                 _TAXI_DESCRIPTION + f" The first {nyc_taxi.NYC_TAXI_ROWS:,} trips by record id of NYC Open Data "
                 "dataset 2yzn-sicd, downloaded through its SODA API on first use and cached on disk.",
                 geo=True, bounds=TAXI_BOUNDS, columns=("pickup_longitude", "pickup_latitude"),
                 n_clusters_hint=5, box_filter=True, kind_of_rows="trips",
                 summary="Yellow-taxi pickups of January 2015 (NYC TLC trip records), "
                         "downloaded from NYC Open Data once, then kept on disk.")


def _all_specs() -> dict[str, _Spec]:
    specs: dict[str, _Spec] = dict(_SAMPLES)
    for key, (_, title, k, summary, desc) in _SKLEARN.items():
        specs[key] = _Spec(key, "sklearn", title, desc, n_clusters_hint=k, summary=summary)
    specs[NYC_TAXI_NAME] = _taxi_spec()
    specs.update(_file_specs())
    specs.update(_source_specs())
    return specs


def _source_specs() -> dict[str, _Spec]:
    """Large sources listed in ``dpcore_sources.toml`` (see :mod:`dpcore.sources.config`)."""
    from ..sources.config import read_config
    specs = {}
    for e in read_config():
        where = e.get("path") or f"table {e['table']} at {e['url'].split('@')[-1]}"
        specs[e["name"]] = _Spec(e["name"], "source", e.get("title", e["name"]),
                                 e.get("description", f"Large data opened where it lies ({where}); "
                                                      "only exact aggregates are computed there."),
                                 geo=bool(e.get("geo", False)), bounds=e["bounds"],
                                 columns=tuple(e.get("columns") or ()),
                                 n_clusters_hint=e.get("n_clusters_hint"), summary=e.get("summary", ""))
    return specs


def _source_entry(name: str) -> dict:
    from ..sources.config import read_config
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
        ``title`` (a short name, unique among :func:`available`, at most 30 characters for every
        built-in set and known file: one line of a list), ``summary`` (one sentence for beside the
        title: what the data is and where from; may be empty for a configured source),
        ``description`` (the full account: origin, licence, public bounds, what was dropped),
        ``geo`` (bool), ``n_clusters_hint``,
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
    cached = _taxi_cache_path(nyc_taxi.NYC_TAXI_ROWS, nyc_taxi.NYC_TAXI_URL, None).is_file() if downloadable else True
    out = {"name": name, "title": spec.title, "summary": spec.summary, "description": spec.description, "geo": spec.geo,
           "n_clusters_hint": spec.n_clusters_hint, "downloadable": downloadable,
           "cached": cached, "needs_download": downloadable and not cached, "large": spec.kind == "source"}
    if spec.kind == "source" and metadata:
        # Row count and columns from metadata (Parquet footers): nothing is scanned.
        from ..sources.config import metadata as read_metadata
        out.update(read_metadata(_source_entry(name)))
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
        from ..sources.config import open_entry
        src = open_entry(_source_entry(name))
        return Dataset(name, np.empty((0, src.n_features)), list(src.columns), spec.bounds, spec.geo, spec.title,
                       spec.description, n_clusters_hint=spec.n_clusters_hint, source=repr(src),
                       data_source=src)
    if spec.kind == "sklearn":
        ds = _load_sklearn(spec, _SKLEARN[spec.name][0], max_rows, random_state)
    elif spec.kind == "download":
        path = download_nyc_taxi(nyc_taxi.NYC_TAXI_ROWS, base_url=nyc_taxi.NYC_TAXI_URL, progress=progress,
                                 cache_dir=cache_dir)
        X, _ = _read_csv_columns(path, spec.columns, None)
        ds = _finish(spec, X, None, ["longitude", "latitude"], max_rows=max_rows,
                     random_state=random_state, source=f"{nyc_taxi.NYC_TAXI_URL} (cached at {path})")
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
        units = None
        if spec.path.name.endswith(".parquet"):
            X, labels = _read_fixed_point_parquet(spec.path, spec.columns), None
        elif spec.unit_col:
            X, labels, units = _read_csv_columns(spec.path, spec.columns, spec.label_col, spec.unit_col)
        else:
            X, labels = _read_csv_columns(spec.path, spec.columns, spec.label_col)
        cols = ["longitude", "latitude"] if spec.geo else spec.columns
        ds = _finish(spec, X, labels, cols, max_rows=max_rows, random_state=random_state, source=str(spec.path),
                     units=units)
    if progress is not None:
        progress(1.0, f"loaded {ds.title}: {ds.n:,} rows")
    return ds


