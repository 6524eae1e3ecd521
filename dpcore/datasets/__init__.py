"""Data sets: the catalogue, loaders, uploads and the NYC taxi downloader.

``from dpcore import datasets`` keeps its import path (CONTRACT.md): ``datasets.available()``,
``datasets.info(name)``, ``datasets.load(name)``.  Inside: :mod:`.dataset` (:class:`Dataset`),
:mod:`.catalogue` (names, descriptions, public bounds, :func:`load`), :mod:`.loaders`,
:mod:`.upload` (uploads) and :mod:`.nyc_taxi` (the downloader).
"""
from .catalogue import TAXI_SAMPLE_NAME, available, info, load
from .dataset import GOWALLA_BOUNDS, SAMPLE_DIR, TAXI_BOUNDS, Dataset
from .nyc_taxi import NYC_TAXI_NAME, NYC_TAXI_ROWS, NYC_TAXI_URL, download_nyc_taxi
from .upload import dataset_from_frame, is_id_like, read_table, suggest_columns

__all__ = ["Dataset", "available", "info", "load", "read_table", "dataset_from_frame", "suggest_columns", "is_id_like",
           "download_nyc_taxi",
           "TAXI_BOUNDS", "TAXI_SAMPLE_NAME", "GOWALLA_BOUNDS", "NYC_TAXI_URL", "NYC_TAXI_ROWS", "NYC_TAXI_NAME",
           "SAMPLE_DIR"]
