"""Our graph as an MCP server: ``cks-desktop mcp serve [--session ID]`` over stdio.

Claude Desktop, Claude Code or any MCP host can then read and grow a session's
graph with the same built-in tools our own assistant uses, through the same
``ToolRegistry``: the same argument validation, the same session pinning (every
``session_id`` argument is overwritten with the served session, so a host
naming another session's id still writes to this one), the same results.

Only tools that are ``llm_exposed`` are listed; the app-management tools
(deleting sessions, importing storage, …) are not, and calling them by name
fails like an unknown tool. Each tool's input schema is exactly
``model_schema(spec)``: the pinned ``session_id`` is not shown.

Approvals. The run's caller is ``Caller.MCP_CLIENT`` and its approver is
``HostApprover``: tools whose policy is ``auto`` run as usual, and tools that
would ask the person (``once``/``always``) are treated as approved, because
an MCP host asks its own user before each tool call (Claude Desktop shows its
own permission prompt) and this process has no window to ask in. A person who
does not want a host to change the graph should not give it this server, or
should use a session made for it (the default: a new session per launch).

How to launch it (``serve_command``): from source or a pip install,
``[python, "-m", "cks_desktop", "mcp", "serve"]``; in a frozen (PyInstaller)
build ``sys.executable`` is the app itself, so ``[app, "mcp", "serve"]``
(STACK.md pitfall 14). The session id is printed on stderr; stdout carries
only the protocol.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from cks_desktop import APP_ID, __version__
from cks_desktop.tools.approval import ApprovalRequest, Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import model_schema
from cks_desktop.tools.types import Caller, Policy, Scope, ToolCall, ToolSpec
from cks_desktop.tools.wire_names import to_wire

SERVE_SETTING = "the session's Scopes in the app (right-click the session in the Sessions list → Scopes…)"

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from cks_desktop.graph.model import Session
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.tools.registry import ToolRegistry

INSTRUCTIONS = (
    "These tools read and grow one knowledge graph (a CKS Desktop session): typed objects joined by typed "
    "relations. Search before adding, to reuse existing objects; prefer evolve_knowledge for several changes."
)
_READ_ONLY_SCOPES = frozenset({Scope.GRAPH_READ, Scope.FS_READ})


class HostApprover:
    """Approves what the registry would ask about: the MCP host already asked its user."""

    denial_hint = ""

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        return Decision.ALLOW


def serve_command(session_id: str | None = None, data_dir: str | None = None) -> list[str]:
    """The command line an MCP host should run to reach this app's graph."""
    frozen = bool(getattr(sys, "frozen", False))
    cmd = [sys.executable] if frozen else [sys.executable, "-m", "cks_desktop"]
    if data_dir:
        cmd += ["--data-dir", str(data_dir)]
    cmd += ["mcp", "serve"]
    if session_id:
        cmd += ["--session", session_id]
    return cmd


def host_config(session_id: str | None = None, data_dir: str | None = None, name: str = APP_ID) -> dict[str, Any]:
    """A ``claude_desktop_config.json`` snippet for the GUI to show and copy."""
    cmd = serve_command(session_id, data_dir)
    return {"mcpServers": {name: {"command": cmd[0], "args": cmd[1:]}}}


def exposed_specs(registry: "ToolRegistry", run: Run) -> list[ToolSpec]:
    return [s for s in registry.offered(run) if s.source == "builtin"]


def _annotations(spec: ToolSpec) -> dict[str, Any]:
    """MCP hints: read-only tools, and writes that remove or rewrite (those that ask first)."""
    given = {k: v for k, v in spec.annotations.items() if k.endswith("Hint")}
    read_only = spec.scopes <= _READ_ONLY_SCOPES
    given.setdefault("readOnlyHint", read_only)
    if not read_only:
        given.setdefault("destructiveHint", spec.default_policy is not Policy.AUTO)
    return given


def build_server(registry: "ToolRegistry", run: Run) -> "Server[Any]":
    import mcp_types as types
    from mcp.server.lowlevel.server import Server

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = []
        for spec in exposed_specs(registry, run):
            hints = _annotations(spec)
            tools.append(types.Tool(
                name=to_wire(spec.name),
                title=spec.title or None,
                description=spec.description,
                input_schema=model_schema(spec),
                annotations=types.ToolAnnotations(
                    read_only_hint=hints.get("readOnlyHint"), destructive_hint=hints.get("destructiveHint"),
                    idempotent_hint=hints.get("idempotentHint"), open_world_hint=hints.get("openWorldHint")),
            ))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call = ToolCall(id=str(ctx.request_id), name=params.name, arguments=params.arguments or {})
        result = await registry.invoke(call, run)
        structured = result.structured if isinstance(result.structured, dict) else None
        return types.CallToolResult(content=[types.TextContent(text=result.content)],
                                    structured_content=structured, is_error=result.is_error)

    return Server(APP_ID, version=__version__, title="CKS Desktop knowledge graph", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def open_session(store: "GraphStore", session_id: str | None) -> "Session":
    """The session to serve: the one named (NotFound propagates), or a new one."""
    if session_id:
        return store.get_session(session_id)
    return store.create_session(f"MCP session {time.strftime('%Y-%m-%d %H:%M')}")


def serving_run(session_id: str, allowed_folders: tuple[Any, ...] = (),
                granted_scopes: frozenset[Scope] | None = None) -> Run:
    """The run an MCP host's calls share. ``granted_scopes``: the session's own choice
    (``tools.scopes.chat_grant``), so a session the person made read-only is read-only to a host too;
    None grants everything (tests of the server alone)."""
    if granted_scopes is None:
        return Run(session_id, Caller.MCP_CLIENT, approver=HostApprover(), allowed_folders=allowed_folders)
    return Run(session_id, Caller.MCP_CLIENT, approver=HostApprover(), allowed_folders=allowed_folders,
               granted_scopes=granted_scopes, scope_setting=SERVE_SETTING)


async def serve_stdio(registry: "ToolRegistry", run: Run) -> None:
    """Serve until the host closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(registry, run)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
