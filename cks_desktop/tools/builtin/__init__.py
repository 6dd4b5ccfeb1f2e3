"""The built-in tools (each spec declares its name, scopes, policy, exposure, what its results hold
and which arguments summarise a call) and the one function that builds a ready registry.

Every module of this package that declares ``TOOLS`` (a function returning its specs) and
``PLACE`` (where they stand in the list a model is offered) adds its tools: a new tool is one
module here, and the MCP output schema, the chat row's summary and the effect policies are read
from its spec (tests/tools/test_tool_specs.py).

Modules: ``read_tools`` (graph.read), ``retrieve`` (retrieve_passages, graph.read), ``write_tools`` + ``merge`` (single
writes), ``evolve`` (batched writes), ``files`` (read_text_file), ``admin``
(session management, never offered to models), ``schemas`` and ``refs``
(shared pieces).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import ToolSpec

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings

ADMIN_TOOLS = ("create_session", "list_sessions", "rename_session", "delete_session", "import_graph")


@functools.cache
def _tool_modules() -> tuple[Callable[[], list[ToolSpec]], ...]:
    """Each tool module's ``TOOLS``, in ``PLACE`` order (then by module name)."""
    found: list[tuple[int, str, Callable[[], list[ToolSpec]]]] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        tools = getattr(module, "TOOLS", None)
        if callable(tools):
            found.append((int(getattr(module, "PLACE", 1000)), info.name, tools))
    return tuple(tools for _place, _name, tools in sorted(found, key=lambda f: (f[0], f[1])))


def builtin_specs() -> list[ToolSpec]:
    specs = [spec for tools in _tool_modules() for spec in tools()]
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise RuntimeError("two built-in tool modules declare a tool of the same name")
    return specs


def register_builtin_tools(registry: ToolRegistry) -> None:
    for spec in builtin_specs():
        registry.register(spec, checked_schema=True)  # tests/core/test_start_imports.py checks them


def build_registry(store: "GraphStore | None", settings: "Settings | None" = None, **kwargs: Any) -> ToolRegistry:
    """A registry holding every built-in tool, with the person's policy overrides applied.

    ``store`` may be None for callers that only list tools (``tools list``):
    listing must work even when the database cannot be opened.
    """
    registry = ToolRegistry(store, **kwargs)  # type: ignore[arg-type]
    register_builtin_tools(registry)
    if settings is not None:
        registry.set_policy_overrides(settings.tool_policies)
    return registry


__all__ = ["ADMIN_TOOLS", "build_registry", "builtin_specs", "register_builtin_tools"]
