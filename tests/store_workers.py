"""Child-process bodies for the store's multi-process tests (importable under the spawn start method)."""
from __future__ import annotations

import os
import time


def race(url: str, dataset: str, release: dict, n: int, ready, go, out) -> None:
    """Record ``release`` ``n`` times once ``go`` is set; put (ids, refusal messages, other errors) on ``out``."""
    from dpcore.exceptions import BudgetExceededError
    from dpcore.store import ReleaseStore
    store = ReleaseStore(url, timeout=120)
    ready.put(os.getpid())
    go.wait(600)  # all eight start together, so they really race
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


def open_and_record(url: str, dataset: str, release: dict, out) -> None:
    """Open a possibly not-yet-created store (first openers race to create it) and record once."""
    from dpcore.store import ReleaseStore
    try:
        with ReleaseStore(url, timeout=120) as store:
            out.put(store.record(dataset, release))
    except Exception as exc:
        out.put(f"{type(exc).__name__}: {exc}")


def draw_same_setting(url: str, dataset: str, release: dict, key: str, ready, go, out) -> None:
    """Open a store, wait for ``go``, record one draw of setting ``key``; put (release id, recorded) on ``out``."""
    from dpcore.store import ReleaseStore
    store = ReleaseStore(url, timeout=120)
    ready.put(os.getpid())
    go.wait(600)
    try:
        out.put(store.record_draw(dataset, release, settings_key=key, who=f"session {os.getpid()}"))
    except Exception as exc:  # reported to the parent, which fails the test
        out.put(f"{type(exc).__name__}: {exc}")
    store.close()
