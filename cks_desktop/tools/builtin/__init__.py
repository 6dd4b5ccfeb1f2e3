"""The built-in tools (each spec declares its name, scopes,
policy and exposure) and the one function that builds a ready registry.

Modules: ``read_tools`` (graph.read), ``retrieve`` (retrieve_passages, graph.read), ``write_tools`` + ``merge`` (single
writes), ``evolve`` (batched writes), ``files`` (read_text_file), ``admin``
(session management, never offered to models), ``schemas`` and ``refs``
(shared pieces).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cks_desktop.tools.builtin.admin import admin_tools
from cks_desktop.tools.builtin.evolve import evolve_tool
from cks_desktop.tools.builtin.files import file_tools
from cks_desktop.tools.builtin.read_tools import read_tools
from cks_desktop.tools.builtin.retrieve import retrieve_tools
from cks_desktop.tools.builtin.write_tools import write_tools
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import ToolSpec

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings

ADMIN_TOOLS = ("create_session", "list_sessions", "rename_session", "delete_session", "import_graph")


def builtin_specs() -> list[ToolSpec]:
    return [*read_tools(), *retrieve_tools(), *write_tools(), evolve_tool(), *file_tools(), *admin_tools()]


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
