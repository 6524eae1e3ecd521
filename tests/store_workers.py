"""Child-process bodies for the store's multi-process tests (importable under the spawn start method)."""
from __future__ import annotations

import os
import time


def race(url: str, dataset: str, release: dict, n: int, out) -> None:
    """Record ``release`` ``n`` times; put (recorded ids, refusal messages, other errors) on ``out``."""
    from dpcore.exceptions import BudgetExceededError
    from dpcore.store import ReleaseStore
    store = ReleaseStore(url, timeout=120)
    ids, refused, errors = [], [], []
    for _ in range(n):
        try:
            ids.append(store.record(dataset, release, who=f"pid {os.getpid()}"))
        except BudgetExceededError as exc:
            refused.append(str(exc))
        except Exception as exc:  # reported to the parent, which fails the test
            errors.append(f"{type(exc).__name__}: {exc}")
    store.close()
    out.put((ids, refused, errors))


def killed_writer(url: str, dataset: str, release: dict, flag: str) -> None:
    """Start recording, and inside the transaction (rows inserted, not committed) signal and sleep."""
    from dpcore.store import ReleaseStore
    store = ReleaseStore(url, timeout=120)

    def hang():
        with open(flag, "w") as f:
            f.write("in transaction")
        time.sleep(600)  # the parent SIGKILLs us here
    store._before_commit = hang
    store.record(dataset, release, who="killed")
