"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.privacy.accountant``
``dpcore.privacy.calibration``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.privacy.accountant",
                 "dpcore.privacy.calibration",)
