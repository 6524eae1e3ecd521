"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.centroid.hybrid``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.centroid.hybrid",)
