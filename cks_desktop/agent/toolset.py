"""The tools a chat offers before MCP servers add theirs, built in one place.

The GUI, ``cks-desktop chat`` and ``cks-desktop tools`` all start from this set (and
``mcp serve`` from its host subset), so "what a model is offered" means the same
thing everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cks_desktop.agent.knowledge import register_agent_tools
from cks_desktop.mcp.resource_tool import register_resource_tool
from cks_desktop.tools.builtin import build_registry

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry


def build_chat_registry(store: "GraphStore | None", settings: "Settings | None" = None) -> "ToolRegistry":
    """Built-in graph tools + the agent's own tools (construct_knowledge) + read_mcp_resource, with the
    person's saved policy overrides applied."""
    registry = build_registry(store, settings)
    register_agent_tools(registry)
    register_resource_tool(registry)  # read_mcp_resource: reads through each server's reader (mcp/resource_tool.py)
    if settings is not None:
        registry.set_policy_overrides(settings.tool_policies)  # again: covers the agent's tools too
    return registry


def build_host_registry(store: "GraphStore | None", settings: "Settings | None" = None) -> "ToolRegistry":
    """The tools ``mcp serve`` offers an MCP host: the built-in graph tools only. A host brings its
    own model, so the agent's tools (``construct_knowledge`` calls ours) are not among them."""
    return build_registry(store, settings)
