"""Old flat import paths kept for one release as thin aliases that warn (issue 27).

``dpcore.grid``, ``dpcore.mechanisms``, ... moved into layers (docs/ARCHITECTURE.md).  Importing an
old path still works for one release: it warns with :class:`DeprecationWarning` and hands back the
new module (or, for a module that was split, a namespace holding the old names).  New code, the
tests and the app import the new paths.
"""
from __future__ import annotations

import sys
import warnings
from importlib import import_module


def deprecated_alias(old: str, *new: str) -> None:
    """Make module ``old`` an alias of the module(s) ``new``, with a :class:`DeprecationWarning`.

    Parameters
    ----------
    old : str
        The old dotted path (the alias module's ``__name__``).
    *new : str
        Dotted paths of the modules now holding its names.  With one, ``sys.modules[old]`` becomes
        that module itself (so ``dpcore.grid.EUGkM is dpcore.algorithms.centroid.eugkm.EUGkM`` and a
        monkeypatch through the old path still reaches the code); with several, their names are
        copied into the alias module.

    Returns
    -------
    None
    """
    warnings.warn(f"{old} is deprecated and will be removed in the next release: import from "
                  f"{' / '.join(new)} instead (dpcore's layers, docs/ARCHITECTURE.md)",
                  DeprecationWarning, stacklevel=3)
    targets = [import_module(n) for n in new]
    if len(targets) == 1:
        sys.modules[old] = targets[0]
        return
    namespace = sys.modules[old].__dict__
    for mod in targets:
        for k, v in vars(mod).items():
            if not k.startswith("__"):
                namespace.setdefault(k, v)
