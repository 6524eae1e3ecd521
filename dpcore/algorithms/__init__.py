"""The algorithms, by family: centroids, coresets, high-dimensional, WaveCluster; shared blocks; the registry.

``from dpcore.algorithms import DPLloyd`` reaches any estimator class; ``dpcore.ALGORITHMS[key]`` is
the stable way by key (CONTRACT.md).  Each family's modules import the shared building blocks of
``_blocks/`` and never each other's helpers.
"""
from .registry import ALGORITHMS, SCALABLE, assess
from .sanitize import Sanitizer, sanitize

globals().update({cls.__name__: cls for cls in ALGORITHMS.values()})

__all__ = ["ALGORITHMS", "SCALABLE", "assess", "Sanitizer", "sanitize", *(cls.__name__ for cls in ALGORITHMS.values())]
