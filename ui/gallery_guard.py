"""The public gallery's import guard: its process never imports a module that reads raw data.

``gallery.py`` installs :class:`NoDataLoaders` before anything else it imports; ``python3 -m ui.serve --gallery``
(:func:`ui.serve.preload_gallery`) imports the gallery's library before the server listens and checks that none of
:data:`FORBIDDEN` came with it, since a module imported before the guard would never be asked for again.
"""
from __future__ import annotations

import importlib.abc
import sys

#: Modules that read raw data.  The gallery must never import them; a page of the curator's app that Streamlit
#: might run from the pages/ folder beside ``gallery.py`` would fail here rather than load data.  (dpcore.sources
#: itself is the estimators' in-memory path and opens nothing at import; its file, engine and config readers are
#: what is refused.)  Only the data layer is named: any UI module that reads data imports it (ui.data_picker ->
#: dpcore.datasets), so the guard needs no list of UI modules.
FORBIDDEN = ("dpcore.datasets", "dpcore.sources.config", "dpcore.sources.ibis_source")


def forbidden(name: str) -> bool:
    """True for a module name in :data:`FORBIDDEN` or inside one of those packages."""
    return name in FORBIDDEN or name.startswith(tuple(f + "." for f in FORBIDDEN))


class NoDataLoaders(importlib.abc.MetaPathFinder):
    """A finder that refuses :data:`FORBIDDEN` modules with an ImportError naming why."""

    def find_spec(self, name, path=None, target=None):
        if forbidden(name):
            raise ImportError(f"{name} reads raw data; the public gallery only reads the release store")
        return None


def install() -> None:
    """Put :class:`NoDataLoaders` first on ``sys.meta_path`` (once).  Only imports from here on are refused: a
    process that is to serve the gallery checks :func:`loaded` first (``ui.serve --gallery`` does)."""
    if not any(type(f).__name__ == NoDataLoaders.__name__ for f in sys.meta_path):
        sys.meta_path.insert(0, NoDataLoaders())


def loaded() -> list[str]:
    """The :data:`FORBIDDEN` modules already imported in this process (the guard cannot refuse those)."""
    return sorted(m for m in sys.modules if forbidden(m))


__all__ = ["FORBIDDEN", "NoDataLoaders", "forbidden", "install", "loaded"]
