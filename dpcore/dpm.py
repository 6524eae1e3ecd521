"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.algorithms.highdim.dpm``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.algorithms.highdim.dpm",)
