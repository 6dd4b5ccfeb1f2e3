"""CKS Desktop: build knowledge graphs together with an AI assistant that calls tools."""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed package's metadata when first asked for: importing
    ``importlib.metadata`` costs 0.1-0.2 s, which neither the window's start nor a command pays
    unless it shows the version."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("cks-desktop")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        version = "0.0.0+source"
    globals()["__version__"] = version
    return version

APP_NAME = "CKS Desktop"
APP_ID = "cks-desktop"
