"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.utils.validation``
``dpcore.utils.domain``
``dpcore.privacy.rng``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.utils.validation",
                 "dpcore.utils.domain",
                 "dpcore.privacy.rng",)
