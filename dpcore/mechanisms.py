"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.privacy.mechanisms``
``dpcore.privacy.samplers``
``dpcore.privacy.calibration``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.privacy.mechanisms",
                 "dpcore.privacy.samplers",
                 "dpcore.privacy.calibration",)
