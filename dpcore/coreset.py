"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.coreset.private_kmeans``
``dpcore.algorithms.coreset.plan``
``dpcore.algorithms.coreset.small_ball``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.coreset.private_kmeans",
                 "dpcore.algorithms.coreset.plan",
                 "dpcore.algorithms.coreset.small_ball",)
