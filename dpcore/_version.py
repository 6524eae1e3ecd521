"""The package version (one place: read by the face, the release environment and setuptools)."""
__version__ = "0.1.0"
