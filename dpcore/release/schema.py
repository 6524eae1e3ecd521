"""The release format's JSON Schema (``dpcore-release/2``), shipped in the package, and its validation."""
from __future__ import annotations

import json
from importlib import resources

#: The JSON Schema every export validates against (package data).
SCHEMA_FILE = "schemas/dpcore-release-2.schema.json"


def release_schema() -> dict:
    """The JSON Schema (draft 2020-12) of ``dpcore-release/2``, shipped as package data."""
    return json.loads((resources.files("dpcore") / SCHEMA_FILE).read_text(encoding="utf-8"))


def validate_release(release: dict) -> None:
    """Check a release against :func:`release_schema`.

    Parameters
    ----------
    release : dict
        A release, e.g. from :func:`build_release` or ``json.loads`` of an export.

    Raises
    ------
    jsonschema.ValidationError
        Naming the first field that does not conform.
    ImportError
        If the optional ``jsonschema`` package is not installed.

    Examples
    --------
    A conforming release passes silently:

    >>> from dpcore.release import validate_release
    >>> import numpy as np
    >>> from dpcore.algorithms import DPLloyd
    >>> from dpcore.release import build_release
    >>> X = np.random.default_rng(0).uniform(0, 1, size=(1000, 2))
    >>> est = DPLloyd(n_clusters=3, epsilon=1.0, bounds=(0, 1)).fit(X)
    >>> rel = build_release(est, algorithm="dplloyd", dataset="demo")
    >>> validate_release(rel)
    """
    import jsonschema
    jsonschema.validate(release, release_schema(), cls=jsonschema.Draft202012Validator)
