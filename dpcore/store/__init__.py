"""The release store: a durable privacy-budget account per dataset and the releases recorded against it.

``from dpcore.store import ReleaseStore`` keeps its import path (CONTRACT.md).  Inside:
:mod:`.tables` (schema, hash chains, versions), :mod:`.records` (what the store returns and
checks), :mod:`.release_store` (:class:`ReleaseStore`, reserve-before-reveal) and :mod:`.draw`
(the app's and a script's way to fit, build and record a release in that order).
"""
from ..exceptions import (
    AccessDeniedError,
    BudgetExceededError,
    ReleaseTooLargeError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    StoreVersionError,
)
from .connection import DEFAULT_TIMEOUT
from .records import MAX_RELEASE_BYTES, StoredRelease, VerifyReport
from .release_store import ReleaseStore
from .roles import ROLES
from .tables import SCHEMA_VERSION, default_store_url

__all__ = ["ReleaseStore", "StoredRelease", "VerifyReport", "default_store_url", "SCHEMA_VERSION",
           "MAX_RELEASE_BYTES", "DEFAULT_TIMEOUT", "BudgetExceededError", "StoreError", "StoreLockedError",
           "StoreCorruptError", "StoreVersionError", "StoreUnavailableError", "ReleaseTooLargeError",
           "AccessDeniedError", "ROLES"]
