"""The use cases both front ends call, and the composition root (Qt-free).

- ``services``: ``AppServices`` (the window's core: settings, keychain, store, assistant, MCP).
- ``cases``: ``UseCases``, the use cases below on one store and settings (the headless commands
  build their own; it loads neither the agent nor a provider SDK).
- ``documents``: add files (per-file refusals), list, open, remove.
- ``graph_io``: preview an import, import with the conflict choice, export any format.
- ``extraction``: estimate, run and apply with the person's prices, cap and review choices.

The chat use case is ``agent.assistant.Assistant`` (``AppServices.assistant``). This package sits
between ``ui``/``commands`` and the core in the import-linter layers (pyproject.toml).
``services`` (which imports the agent) loads on first use of its names, so a command that needs
only ``runtime.documents`` does not pay for it while parsing its arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.runtime.services import AppServices, Toolset

__all__ = ["AppServices", "Toolset", "UseCases"]


def __getattr__(name: str) -> Any:
    if name == "UseCases":
        from cks_desktop.runtime.cases import UseCases

        return UseCases
    if name in __all__:
        from cks_desktop.runtime import services

        return getattr(services, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
