"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.wavecluster.wavecluster``
``dpcore.algorithms.wavecluster.transform``
``dpcore.algorithms.wavecluster.private``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.wavecluster.wavecluster",
                 "dpcore.algorithms.wavecluster.transform",
                 "dpcore.algorithms.wavecluster.private",)
