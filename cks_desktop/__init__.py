"""CKS Desktop: build knowledge graphs together with an AI assistant that calls tools."""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("cks-desktop")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

APP_NAME = "CKS Desktop"
APP_ID = "cks-desktop"
