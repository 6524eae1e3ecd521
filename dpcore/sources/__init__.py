"""Data sources: where the rows live, and the exact aggregates the scalable estimators need.

The algorithms that scale touch the data only through a few exact aggregates
(a count, a grid histogram, per-centre counts and sums), so those can run
where the data lives and only the small result comes back to get its noise:

    source (rows)  ->  exact aggregate  ->  noise + ledger (dpcore)  ->  release

Ways in
-------
* an array: ``est.fit(X)`` (wrapped in :class:`ArraySource`, numba kernels);
* Parquet or CSV files, globs and folders, out of core in embedded DuckDB:
  ``est.fit(sources.from_files("trips/*.parquet", columns=["lon", "lat"]))``;
* a Spark DataFrame or cluster: ``est.fit(sources.from_spark(df, columns=[...]))``;
* a database table (PostgreSQL, ...): ``sources.from_table("postgresql://...", "trips", columns=[...])``;
* any Ibis table: :func:`from_ibis`.

Estimators that accept a source declare it (``accepts_source = True``; the registry's
:data:`~dpcore.algorithms.registry.SCALABLE` lists their keys).  Others raise
:func:`~dpcore.algorithms.base.unsupported_error`, which names them.
"""
from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .base import DataSource, SourceError, as_domain
from .memory import ArraySource

if TYPE_CHECKING:
    from .ibis_source import IbisSource

def as_source(X, *, min_samples: int = 1) -> DataSource:
    """``X`` itself if it is a DataSource, else an :class:`ArraySource` over it (validated)."""
    if isinstance(X, DataSource):
        return X
    return ArraySource(X, min_samples=min_samples)


# ---------------------------------------------------------------------------
# constructors
# ---------------------------------------------------------------------------
_PARQUET = (".parquet", ".pq", ".parq")
_CSV = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz")


def _expand(path) -> tuple[list[str], str]:
    """Files named by a path, glob or folder, and their format ("parquet" or "csv").

    Raises
    ------
    FileNotFoundError
        Nothing there, a glob matching no file, a folder with no Parquet/CSV file.
    ValueError
        A mix of formats or an unknown extension.
    """
    p = str(path)
    if any(ch in p for ch in "*?["):
        files = sorted(f for f in glob.glob(p, recursive=True) if os.path.isfile(f))
        if not files:
            raise FileNotFoundError(f"the pattern {p!r} matches no file: check the folder and the pattern "
                                    "(e.g. 'trips/**/*.parquet')")
    elif os.path.isdir(p):
        files = sorted(str(f) for f in Path(p).rglob("*") if f.is_file() and f.name.lower().endswith(_PARQUET + _CSV))
        if not files:
            raise FileNotFoundError(f"the folder {p!r} holds no Parquet or CSV file")
    elif os.path.isfile(p):
        files = [p]
    else:
        raise FileNotFoundError(f"no file or folder {p!r}: check the path (relative paths start at "
                                f"{os.getcwd()})")
    kinds = {"parquet" if f.lower().endswith(_PARQUET) else "csv" if f.lower().endswith(_CSV) else "?"
             for f in files}
    if kinds == {"?"} or "?" in kinds and len(files) == 1:
        raise ValueError(f"{p!r}: not a Parquet or CSV file (extensions {_PARQUET + _CSV})")
    kinds.discard("?")
    if len(kinds) > 1:
        raise ValueError(f"{p!r} mixes Parquet and CSV files: point at one format")
    return [f for f in files if f.lower().endswith(_PARQUET + _CSV)], kinds.pop()


def from_files(path, columns=None, *, con=None, hive_partitioning: bool = True) -> IbisSource:
    """A source over Parquet or CSV files (a file, a glob or a folder), read out of core by DuckDB.

    Nothing is loaded: DuckDB streams the files for each aggregate (a few
    hundred MB of memory whatever their size).

    Parameters
    ----------
    path : str or Path
        A file, a glob (``"trips/*.parquet"``, ``"lake/**/*.parquet"``) or a folder (all its
        Parquet/CSV files, recursively; ``key=value`` folders are Hive partitions).
    columns : sequence of str, optional
        Coordinate columns (default: every numeric column).
    con : ibis DuckDB backend, optional
        Default: a new in-memory DuckDB connection.

    hive_partitioning : bool, default True
        Read ``key=value`` folder names as columns (the TLC's ``month=2015-01/`` layout).

    Returns
    -------
    IbisSource
        Exact aggregates computed by DuckDB where the files lie (engine ``"duckdb"``).

    Raises
    ------
    FileNotFoundError
        Missing file, a glob matching nothing, a folder without data files.
    TypeError, KeyError
        A column of strings, a column that does not exist.

    Notes
    -----
    Privacy: the source returns exact aggregates to the estimator, which adds the noise and
    records it in its ledger; nothing computed here is released or logged.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd
    >>> from dpcore import sources
    >>> from dpcore.algorithms import EUGkM
    >>> folder = tempfile.mkdtemp()
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(2000, 2))
    >>> pd.DataFrame(X, columns=["x", "y"]).to_parquet(os.path.join(folder, "part-0.parquet"))
    >>> src = sources.from_files(folder, columns=["x", "y"])
    >>> src.count()
    2000
    >>> EUGkM(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(src).cluster_centers_.shape
    (3, 2)
    """
    import ibis

    from .ibis_source import IbisSource

    files, kind = _expand(path)
    con = con or ibis.duckdb.connect()
    if kind == "parquet":
        table = con.read_parquet(files, hive_partitioning=hive_partitioning)
    else:
        table = con.read_csv(files)
    return IbisSource(table, columns, engine="duckdb", description=str(path))


def spark_session(master: str = "local[2]", *, app_name: str = "dpcore", conf: dict | None = None):
    """Get or start a SparkSession, with a clear error when Java is missing.

    Parameters
    ----------
    master : str, default ``"local[2]"``
        Two local cores; give a cluster URL for a cluster.
    app_name : str, default ``"dpcore"``
    conf : dict, optional
        Extra Spark settings, e.g. ``{"spark.driver.memory": "2g"}``.

    Returns
    -------
    pyspark.sql.SparkSession

    Raises
    ------
    SourceError
        Spark could not start (typically no Java 17: install a JRE, e.g. Debian's
        ``openjdk-17-jre-headless``, or set JAVA_HOME).

    Examples
    --------
    >>> from dpcore import sources
    >>> spark = sources.spark_session("local[2]")   # doctest: +SKIP
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pinned in requirements
        raise SourceError("pyspark is not installed: pip install -r requirements.txt") from exc
    builder = SparkSession.builder.master(master).appName(app_name)
    # Arrow batches of 2^20 rows to the Python workers (the default 10,000 makes mapInArrow pay per-batch
    # overhead 100x more often).
    settings = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "8",
                "spark.sql.execution.arrow.maxRecordsPerBatch": "1048576"}
    if master.startswith("local"):
        # The aggregates' numba kernels run in Spark's Python workers (mapInArrow): on this machine they
        # import dpcore from where the driver does, even when it is not installed (a checkout, tests).
        import os
        from pathlib import Path
        here = str(Path(__file__).resolve().parents[2])
        settings["spark.executorEnv.PYTHONPATH"] = os.pathsep.join(
            p for p in [here, os.environ.get("PYTHONPATH", "")] if p)
    for key, value in {**settings, **(conf or {})}.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:
        raise SourceError(
            f"Spark could not start ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). "
            "Spark needs Java 17: install a JRE (e.g. apt-get install openjdk-17-jre-headless) or point "
            "JAVA_HOME at one, or use DuckDB (sources.from_files) on one machine.") from exc


def from_spark(df, columns=None) -> IbisSource:
    """A source over a Spark DataFrame (local or on a cluster), through Ibis' PySpark backend.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        E.g. ``spark.read.parquet("s3://lake/trips/")``; nothing is collected.
    columns : sequence of str, optional
        Coordinate columns (default: every numeric column).

    Returns
    -------
    IbisSource
        Exact aggregates computed by Spark (engine ``"pyspark"``); nothing is collected to the driver
        but the aggregates.

    Raises
    ------
    TypeError, KeyError
        A non-numeric or missing column.

    Notes
    -----
    Privacy: as :func:`from_files`; the noise is added by the estimator, never by Spark.

    Examples
    --------
    >>> from dpcore import sources
    >>> from dpcore.algorithms import DPLloyd
    >>> spark = sources.spark_session("local[2]")                          # doctest: +SKIP
    >>> df = spark.read.parquet("lake/trips/")                             # doctest: +SKIP
    >>> src = sources.from_spark(df, columns=["pickup_longitude", "pickup_latitude"])  # doctest: +SKIP
    >>> DPLloyd(n_clusters=5, epsilon=1.0, bounds=([-74.1, 40.7], [-73.9, 40.9])).fit(src)  # doctest: +SKIP
    DPLloyd(...)
    """
    import uuid

    import ibis

    from .ibis_source import IbisSource

    con = ibis.pyspark.connect(df.sparkSession)
    name = f"dpcore_{uuid.uuid4().hex[:12]}"
    df.createOrReplaceTempView(name)
    return IbisSource(con.table(name), columns, engine="pyspark", description="Spark DataFrame")


def from_table(url: str, table: str, columns=None) -> IbisSource:
    """A source over a database table (``postgresql://user:pw@host:port/db``, or any Ibis URL).

    Parameters
    ----------
    url : str
        The database URL (a password in it is never echoed in messages; prefer ``~/.pgpass``).
    table : str
    columns : sequence of str, optional
        Coordinate columns (default: every numeric column).

    Returns
    -------
    IbisSource
        Exact aggregates computed by the database.

    Raises
    ------
    SourceError
        The database cannot be reached or the table does not exist.
    TypeError, KeyError
        A non-numeric or missing column.

    Examples
    --------
    >>> from dpcore import sources
    >>> src = sources.from_table("postgresql://analyst@db:5432/tlc", "trips",
    ...                          columns=["pickup_longitude", "pickup_latitude"])  # doctest: +SKIP
    """
    import ibis

    from .ibis_source import IbisSource

    shown = url.split("@")[-1]  # never echo a password
    for driver in ("+psycopg2", "+psycopg"):   # SQLAlchemy-style URLs name a driver Ibis does not take
        url = url.replace(f"postgresql{driver}://", "postgresql://")
    try:
        con = ibis.connect(url)
        t = con.table(table)
    except Exception as exc:
        raise SourceError(f"cannot open table {table!r} at {shown}: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}. Check that the database is "
                          "running and reachable, and the table name.") from exc
    return IbisSource(t, columns, engine=con.name, description=f"{table} at {shown}")


def from_ibis(table, columns=None) -> IbisSource:
    """A source over any Ibis table expression (any backend Ibis compiles to)."""
    from .ibis_source import IbisSource

    return IbisSource(table, columns)


def __getattr__(name):
    if name == "IbisSource":
        from .ibis_source import IbisSource
        return IbisSource
    raise AttributeError(name)


__all__ = ["DataSource", "ArraySource", "IbisSource", "SourceError", "as_source", "as_domain",
           "from_files", "from_spark", "from_table", "from_ibis", "spark_session"]
