"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.centroid.eugkm``
``dpcore.algorithms._blocks.grid``
``dpcore.algorithms._blocks.grid_kmeans``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.centroid.eugkm",
                 "dpcore.algorithms._blocks.grid",
                 "dpcore.algorithms._blocks.grid_kmeans",)
