"""Previews of public data kept on disk, so that a server restart does not fit them again (issue 66).

A preview on data that is already public (the embedded taxi sample, the teaching sets) is a fit with fresh
noise, shown labelled as a preview and never recorded (:func:`ui.releases.public_preview`).  The server
shares one per setting with every session; this module also keeps it on disk, as the release dict the fit
would publish (:func:`dpcore.release.build_release`, written by a background thread), keyed by the setting
(which names the data's content digest) and by the code that computed it (:func:`code_version`).  A restarted
server shows the same preview instead of fitting it again: Figure 8's levels view fits eight previews, four of
them PRIVATE-K-MEAN's at 1.2-1.7 s of CPU each.  The expected-error band's simulations on public data are kept
here too (:mod:`ui.models.expected_error`: the Explorer's first visit simulated 50 releases, ~7 s of CPU).

Only previews of public data may be stored here (the caller checks, :func:`ui.releases.public_preview`): their
noise protects nothing, so a copy on disk shares nothing private.  No Streamlit here.

Where: ``$DPCORE_PREVIEW_CACHE`` if set, else ``previews`` in the user cache folder
(``platformdirs.user_cache_dir("dpcore")``: ``~/.cache/dpcore/previews`` on Linux).  One folder per code
version; folders of other versions untouched for :data:`PRUNE_AFTER_DAYS` days are removed.  Writers write a
temporary file and rename it (atomic on one file system), so two servers filling the same entry at once leave
one whole file, and a reader never sees half of one; an unreadable entry is a miss, never an error.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

#: The environment variable naming the cache folder (tests and benchmarks point it at a temporary folder).
ENV = "DPCORE_PREVIEW_CACHE"
#: The format of an entry; a change of it is a change of :func:`code_version`.
FORMAT = "dpcore-preview/1"
#: The release kinds whose previews are kept on disk (:func:`ui.releases.public_preview`): the ones Figure 8's
#: levels view fits at four ε each (PRIVATE-K-MEAN's rounds and PrivTree on every row: seconds, where the other
#: previews take a fraction of one).
KEPT_ON_DISK = ("coreset", "sanitize")
#: Folders of other code versions older than this are removed when an entry is written.
PRUNE_AFTER_DAYS = 7

_log = logging.getLogger(__name__)
T = TypeVar("T")


def cache_dir() -> Path:
    """The cache folder: ``$DPCORE_PREVIEW_CACHE``, else ``previews`` in the user cache folder (platformdirs)."""
    env = os.environ.get(ENV, "").strip()
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_cache_dir("dpcore", appauthor=False)) / "previews"


@functools.cache
def code_version() -> str:
    """Names the code a preview was computed with: dpcore's version, :data:`FORMAT` and a digest of every file of
    the ``dpcore`` package (sources and package data: the algorithms, the noise, the release format).

    Any change of the library gives a new version, so a preview is never shown from older code.  Computed once
    per process (~100 files, a few milliseconds).
    """
    import dpcore
    return f"{dpcore.__version__}-{files_digest(Path(dpcore.__file__).resolve().parent, dpcore.__version__)}"


def files_digest(root: Path, salt: str = "") -> str:
    """A digest of every file under ``root`` (its relative path and bytes; compiled ``__pycache__`` left out)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(f"{salt}|{FORMAT}".encode())
    for f in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / code_version() / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".json")


def load(key: str) -> dict | None:
    """The entry kept for ``key`` (a preview's settings key) by this code version, or None (none, unreadable, or
    another key's)."""
    try:
        entry = json.loads(_path(key).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        return None
    return entry


def save(key: str, entry: dict, *, path: Path | None = None) -> None:
    """Keep ``entry`` (JSON-able) for ``key``: written to a temporary file and renamed into place.

    Never raises: a cache that cannot be written (read-only home, full disk) only means the next server fits
    again; the reason goes to the log.  ``path``: where (default: :func:`cache_dir`'s file for ``key`` now).
    """
    path = path or _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _prune(path.parent)
        body = json.dumps({**entry, "format": FORMAT, "key": key}, separators=(",", ":"), default=_plain)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except (OSError, TypeError, ValueError) as exc:
        _log.warning("dpcore: preview not kept on disk (%s): %s", path.parent, exc)


def kept(key: str, make: Callable[[], T], *, encode: Callable[[T], dict], decode: Callable[[dict], T | None],
         background: bool = False) -> T:
    """What is kept on disk for ``key``, read back, else ``make()`` now, kept for the next server.

    The one "read back, else compute and keep" of this module's users (a preview, the expected-error simulations,
    the non-private reference of public data): a restarted server reads instead of computing.

    Parameters
    ----------
    key : str, names the figure and everything it was computed from (the data's content digest, the settings)
    make : callable () -> value, the computation
    encode : callable (value) -> dict, the JSON-able entry kept for it
    decode : callable (dict) -> value or None, the entry read back; None: unusable (a miss, computed again)
    background : encode and write on a background thread (:func:`flush` waits for it), when encoding is itself
        work the caller need not wait for

    Returns
    -------
    The value read back (``decode``'s), else ``make()``'s, the same object the caller computed.  Nothing raises
    for the cache: an entry that cannot be encoded or written is computed again by the next server (logged).
    """
    entry = load(key)
    if entry is not None:
        try:
            value = decode(entry)
        except (KeyError, TypeError, ValueError) as exc:     # an entry this code cannot read: a miss, never an error
            _log.warning("dpcore: unreadable entry on disk, computed again: %s", exc)
            value = None
        if value is not None:
            return value
    value = make()
    # The file is named now, in the caller's environment (the cache folder may be another by the time it is written).
    path = _path(key)
    if not background:
        _keep(key, path, encode, value)
        return value
    writer = threading.Thread(target=_keep, args=(key, path, encode, value), daemon=True, name="dpcore-preview-cache")
    with _lock:
        _writers.append(writer)
    writer.start()
    return value


def kept_fit(key: str, fit, *, algorithm: str, dataset: str, columns, kind: str = "points"):
    """The preview of ``key`` read back from disk, else ``fit()`` now, kept for the next server (:func:`kept`).

    Parameters
    ----------
    key : str, the preview's settings key (:func:`dpcore.store.draw.settings`: data digest, algorithm, parameters)
    fit : callable () -> fitted private estimator, the preview's fit (fresh noise)
    algorithm, dataset, columns, kind : as :func:`dpcore.release.build_release`

    Returns
    -------
    Read back: a :class:`~dpcore.release.view.ReleasedFit` of the release the fit would publish, with the fit's
    check of its public inputs (``regime_``, :class:`~dpcore.algorithms.regime.Regime`).  Fitted now: the
    estimator itself, whose release is built and written by a background thread (:func:`flush` waits for it): a
    sanitized database's release runs k-means and lists ~20,000 points, ~1 s the page need not wait for.  The
    same values either way, and the attributes a page reads of a preview are on both.
    """
    import dataclasses

    def encode(est) -> dict:
        from dpcore.release import build_release
        regime = getattr(est, "regime_", None)
        return {"release": build_release(est, algorithm=algorithm, dataset=dataset, columns=columns, kind=kind),
                "regime": None if regime is None else dataclasses.asdict(regime)}

    return kept(key, fit, encode=encode, decode=lambda entry: _released(entry, key), background=True)


def flush(timeout: float | None = None) -> None:
    """Wait until the entries computed so far are written (tests; a server about to stop)."""
    with _lock:
        writers, _writers[:] = list(_writers), []
    for w in writers:
        w.join(timeout)


_lock = threading.Lock()
_writers: list[threading.Thread] = []


def _keep(key: str, path: Path, encode: Callable, value) -> None:
    try:
        entry = encode(value)
    except Exception as exc:      # an entry that cannot be encoded is computed again by the next server: nothing more
        _log.warning("dpcore: not kept on disk: %s", exc)
        return
    save(key, entry, path=path)


def _released(entry: dict, key: str):
    from dpcore.algorithms.regime import Regime
    from dpcore.release.view import ReleasedFit
    out = ReleasedFit(entry["release"], None, draw=0, key=key)
    if entry.get("regime") is not None:
        out.regime_ = Regime(**entry["regime"])  # type: ignore[attr-defined]  # as a fitted preview carries it
    return out


def _plain(value):
    """NumPy scalars and arrays as JSON (a release's values are already plain; a regime's figures may not be)."""
    import numpy as np
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")


@functools.cache
def _prune(current: Path) -> None:
    """Remove the folders of other code versions not written for :data:`PRUNE_AFTER_DAYS` days (once a process)."""
    cutoff = time.time() - PRUNE_AFTER_DAYS * 86400
    for other in current.parent.iterdir():
        try:
            if other.is_dir() and other != current and other.stat().st_mtime < cutoff:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass


__all__ = ["ENV", "FORMAT", "KEPT_ON_DISK", "PRUNE_AFTER_DAYS", "cache_dir", "code_version", "files_digest",
           "flush", "kept", "kept_fit", "load", "save"]
