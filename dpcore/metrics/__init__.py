"""Clustering quality measures (NICV, inertia, relative error, CostGap) and WaveCluster's measures.

``dpcore.metrics.nicv`` and friends keep their import path; the nearest-centre kernels they use
live below the algorithms, in :mod:`dpcore.utils.nearest`.
"""
from ..utils.nearest import assign, cluster_sums, inertia
from .clustering import cost_gap, matched_center_distance, nicv, relative_error

__all__ = ["assign", "cluster_sums", "inertia", "nicv", "relative_error", "cost_gap", "matched_center_distance"]
