"""Publishable releases: build one from a fitted estimator, validate it, write it out, view it.

``from dpcore import release`` keeps its import path (CONTRACT.md).  Inside: :mod:`.build`
(:func:`build_release`), :mod:`.schema` (the JSON Schema), :mod:`.export` (JSON, CSV, HTML,
:func:`find_input_rows`) and :mod:`.view` (:class:`ReleasedFit`, a recorded release seen through
the fitted attributes pages draw).
"""
from .build import DEFAULT_PRIVACY_UNIT, FORMAT, REFUSAL_FORMAT, build_refusal, build_release
from .export import find_input_rows, guarantee_sentence, protected_unit, to_csv, to_html, to_json
from .schema import SCHEMA_FILE, release_schema, validate_release

__all__ = ["FORMAT", "REFUSAL_FORMAT", "build_refusal",
           "DEFAULT_PRIVACY_UNIT", "SCHEMA_FILE", "build_release", "release_schema", "validate_release",
           "to_json", "to_csv", "to_html", "find_input_rows",
           "guarantee_sentence", "protected_unit"]
