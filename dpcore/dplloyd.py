"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.centroid.dplloyd``
``dpcore.algorithms._blocks.size``
``dpcore.algorithms._blocks.sphere_packing``
``dpcore.algorithms._blocks.lloyd``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.centroid.dplloyd",
                 "dpcore.algorithms._blocks.size",
                 "dpcore.algorithms._blocks.sphere_packing",
                 "dpcore.algorithms._blocks.lloyd",)
