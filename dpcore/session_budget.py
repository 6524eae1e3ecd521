"""Deprecated alias (issue 27; removed in the next release) of:

``dpcore.store.session_budget``
"""
from ._deprecated import deprecated_alias

deprecated_alias(__name__,
                 "dpcore.store.session_budget",)
