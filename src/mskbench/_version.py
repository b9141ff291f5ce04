"""The package version, importable from any layer without importing the package's ``__init__``."""

__version__ = "0.1.0"
