"""Our graph as an MCP server: ``cks-desktop mcp serve [--session ID] [--http [HOST:]PORT]``.

Claude Desktop, VS Code, Cursor or any MCP host can read and grow the graph with the same
built-in tools our own assistant uses, through the same ``ToolRegistry``: the same argument
validation, the same session pinning, the same results. The pieces live in ``serve/``:

* ``scope.py``: which sessions a host may reach. ``--session ID`` pins one; without it the
  server offers the sessions the person shared (``sessions share ID``), and each tool call
  names one of them in its ``session`` argument. The name is resolved before the registry
  sees the call and picks that session's own ``Run``; the registry's pinning then overwrites
  every ``session_id`` with the run's session, so no argument reaches an unshared session.
  With nothing shared and no ``--session``, a new session is made for the launch (as
  before: a host that was given the server without further thought writes into a session of
  its own, never into the person's).
* ``resources.py``: each session's graph (JSON), a Markdown summary, and one resource per
  object (template ``cks://sessions/{session}/objects/{ref}``).
* ``live.py``: ``resources/subscribe`` (2025 era) and ``subscriptions/listen`` (2026-07-28),
  fed by the store's change feed, so a write by any process reaches subscribed hosts.
* ``prompts.py``: four prompts with arguments, and completions for them and the template.
* ``logbook.py``: ``logging/setLevel`` and a log message per tool call.
* ``hints.py``: tool annotations and output schemas, derived from each ``ToolSpec``.
* ``approver.py``: "the host asks" (default) or "this app asks too" for calls the app itself
  would ask about; read-only and ``auto`` calls always run.
* ``http.py``: streamable HTTP (bearer token, Host/Origin checks, SSE resumption).

Only tools that are ``llm_exposed`` are listed; the app-management tools (deleting
sessions, importing storage, …) are not, and calling them by name fails like an unknown
tool. Each tool's input schema is ``model_schema(spec)`` (the pinned ``session_id`` is not
shown), plus ``session`` when several sessions may be shared.

How to launch it (``serve_command``): from source or a pip install,
``[python, "-m", "cks_desktop", "mcp", "serve"]``; in a frozen (PyInstaller) build
``sys.executable`` is the app itself, so ``[app, "mcp", "serve"]`` (STACK.md pitfall 14).
Notes go to stderr; on stdio, stdout carries only the protocol.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop import APP_ID, __version__
from cks_desktop.serve.approver import HostApprover
from cks_desktop.serve.hints import host_input_schema, output_schema, tool_hints
from cks_desktop.serve.scope import SESSION_ARGUMENT, ScopeError, SessionScope
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, Scope, ToolCall, ToolSpec
from cks_desktop.tools.wire_names import to_wire

SERVE_SETTING = "the session's Scopes in the app (right-click the session in the Sessions list → Scopes…)"

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from cks_desktop.graph.model import Session
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.serve.clients import ClientTracker
    from cks_desktop.serve.live import LiveUpdates
    from cks_desktop.serve.logbook import Logbook
    from cks_desktop.tools.approval import Approver
    from cks_desktop.tools.registry import ToolRegistry

__all__ = ["HostApprover", "INSTRUCTIONS", "LIST_SESSIONS_TOOL", "SERVE_SETTING", "Serving", "build_server",
           "exposed_specs", "host_config", "open_session", "serve_command", "serve_stdio", "serving_run"]

INSTRUCTIONS = (
    "These tools read and grow knowledge graphs (CKS Desktop sessions): typed objects joined by typed "
    "relations. Search before adding, to reuse existing objects; prefer evolve_knowledge for several changes. "
    "Each graph is also a resource (cks://sessions/ID/graph.json, summary.md, and one per object)."
)
SHARED_INSTRUCTIONS = INSTRUCTIONS + (
    " Several sessions may be shared: list_shared_sessions names them, and every tool takes the session to "
    "work in as its 'session' argument (a title or an id)."
)
LIST_SESSIONS_TOOL = "list_shared_sessions"


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


@dataclass
class Serving:
    """Everything one served MCP endpoint shares across its connections."""

    registry: "ToolRegistry"
    scope: SessionScope
    clients: "ClientTracker"
    logbook: "Logbook"
    live: "LiveUpdates"
    started: float = field(default_factory=time.time)

    @classmethod
    def create(cls, registry: "ToolRegistry", scope: SessionScope, transport: str = "stdio") -> "Serving":
        from cks_desktop.serve.clients import ClientTracker
        from cks_desktop.serve.live import LiveUpdates
        from cks_desktop.serve.logbook import Logbook

        clients = ClientTracker(transport)
        logbook = Logbook()
        return cls(registry, scope, clients, logbook, LiveUpdates(scope, clients, logbook))

    def tools(self) -> list[ToolSpec]:
        """The tools to list: those any visible session's run may use (all exposed ones when
        nothing is shared yet: calls then say how to share a session)."""
        runs = self.scope.runs() if not self.scope.is_pinned else [self.scope.run_for(self.scope.pinned or "")]
        if not runs:
            return [s for s in self.registry.specs() if s.llm_exposed and s.source == "builtin"]
        seen: dict[str, ToolSpec] = {}
        for run in runs:
            for spec in exposed_specs(self.registry, run):
                seen.setdefault(spec.name, spec)
        return sorted(seen.values(), key=lambda s: s.name)


def _server_class() -> type:
    """``Server`` whose default initialization options announce list_changed for resources
    (the streamable-HTTP manager asks for the defaults; the 2025 era reads them)."""
    from mcp.server.lowlevel.server import NotificationOptions, Server

    class GraphServer(Server):
        def create_initialization_options(self, notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
            options = notification_options or NotificationOptions(resources_changed=True)
            return super().create_initialization_options(options, *args, **kwargs)

    return GraphServer


def build_server(registry: "ToolRegistry", run: Run | None = None, *, serving: Serving | None = None) -> "Server[Any]":
    """The MCP server over ``registry``: pinned to ``run``'s session, or as ``serving`` says."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    from cks_desktop.serve import prompts, resources
    from cks_desktop.serve.clients import key_of

    if serving is None:
        if run is None:
            raise ValueError("build_server needs a run or a Serving")
        pinned_run = run
        serving = Serving.create(registry, SessionScope(registry.store, lambda _sid: pinned_run, pinned=run.session_id))
    scope = serving.scope
    shared = not scope.is_pinned

    def tool_entry(spec: ToolSpec) -> types.Tool:
        hints = tool_hints(spec, registry)
        return types.Tool(
            name=to_wire(spec.name), title=spec.title or None, description=spec.description,
            input_schema=host_input_schema(spec, session_argument=shared), output_schema=output_schema(spec),
            annotations=types.ToolAnnotations(
                title=spec.title or None, read_only_hint=hints["readOnlyHint"],
                destructive_hint=hints["destructiveHint"] if not hints["readOnlyHint"] else None,
                idempotent_hint=hints["idempotentHint"], open_world_hint=hints["openWorldHint"]))

    sessions_tool = types.Tool(
        name=LIST_SESSIONS_TOOL, title="List shared sessions",
        description="The sessions the person shared with this app: their titles, ids and sizes. Pass a title or "
                    "an id as the 'session' argument of the other tools.",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"sessions": {"type": "array"}}},
        annotations=types.ToolAnnotations(title="List shared sessions", read_only_hint=True, idempotent_hint=True,
                                          open_world_hint=False))

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = [tool_entry(spec) for spec in serving.tools()]
        if shared:
            tools.insert(0, sessions_tool)
        return types.ListToolsResult(tools=tools)

    def text_result(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=structured, is_error=error)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        key = key_of(ctx)
        arguments = dict(params.arguments or {})
        if shared and params.name == LIST_SESSIONS_TOOL:
            listing = {"sessions": [{"id": s.id, "title": s.title, **scope.store.counts(s.id)}
                                    for s in scope.sessions()]}
            return text_result(json.dumps(listing, ensure_ascii=False, indent=2), structured=listing)
        session: "Session | None" = None
        if shared:
            try:
                session = scope.resolve(arguments.pop(SESSION_ARGUMENT, None))
            except ScopeError as exc:
                await serving.logbook.send(ctx, key, "warning", f"refused {params.name}: {exc}")
                return text_result(str(exc), error=True)
            target = scope.run_for(session.id)
        else:
            target = scope.run_for(scope.pinned or "")
        call = ToolCall(id=str(ctx.request_id), name=params.name, arguments=arguments)
        result = await registry.invoke(call, target)
        structured = result.structured if isinstance(result.structured, dict) else None
        spec = registry.resolve(params.name)
        if not result.is_error and structured is None and spec is not None and output_schema(spec) is not None:
            structured = {"result": result.structured if result.structured is not None else result.content}
        await serving.logbook.send(
            ctx, key, "warning" if result.is_error else "info",
            f"{result.name} in {session.title if session else target.session_id}: {result.outcome.value}"
            + (f" ({result.duration_ms:.0f} ms)" if result.duration_ms is not None else ""),
            tool=result.name, session_id=target.session_id, outcome=result.outcome.value, change_id=result.change_id)
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)],
                                    structured_content=structured, is_error=result.is_error)

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return await resources.list_resources(scope, params.cursor if params else None)

    async def list_templates(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourceTemplatesResult:
        return resources.templates()

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await resources.read(scope, str(params.uri))

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        key = key_of(ctx)
        result = await serving.live.subscribe(key, ctx.session, str(params.uri))
        await serving.logbook.send(ctx, key, "debug", f"subscribed to {params.uri}")
        return result

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        return await serving.live.unsubscribe(key_of(ctx), str(params.uri))

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return prompts.list_prompts()

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return await prompts.get_prompt(scope, params.name, params.arguments)

    async def complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        return await prompts.complete(scope, params)

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return await serving.logbook.set_level(key_of(ctx), params.level)

    server = _server_class()(
        APP_ID, version=__version__, title="CKS Desktop knowledge graph",
        instructions=SHARED_INSTRUCTIONS if shared else INSTRUCTIONS,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_templates, on_read_resource=read_resource,
        on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=serving.live.listen,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt, on_completion=complete)
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.middleware.append(serving.clients.middleware())
    _ = MCPError  # handlers raise it for protocol errors (resources, prompts, subscriptions)
    return server  # type: ignore[no-any-return]


def open_session(store: "GraphStore", session_id: str | None) -> "Session":
    """The session to serve: the one named (NotFound propagates), or a new one."""
    if session_id:
        return store.get_session(session_id)
    return store.create_session(f"MCP session {time.strftime('%Y-%m-%d %H:%M')}")


def serving_run(session_id: str, allowed_folders: tuple[Any, ...] = (),
                granted_scopes: frozenset[Scope] | None = None, approver: "Approver | None" = None) -> Run:
    """The run an MCP host's calls share. ``granted_scopes``: the session's own choice
    (``tools.scopes.chat_grant``), so a session the person made read-only is read-only to a host too;
    None grants everything (tests of the server alone). ``approver``: ``HostApprover`` unless given
    (``ServeApprover`` when serving for real)."""
    approver = approver if approver is not None else HostApprover()
    if granted_scopes is None:
        return Run(session_id, Caller.MCP_CLIENT, approver=approver, allowed_folders=allowed_folders)
    return Run(session_id, Caller.MCP_CLIENT, approver=approver, allowed_folders=allowed_folders,
               granted_scopes=granted_scopes, scope_setting=SERVE_SETTING)


async def serve_stdio(registry: "ToolRegistry", run: Run | None = None, *, serving: Serving | None = None) -> None:
    """Serve until the host closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(registry, run, serving=serving)
    live = serving.live if serving is not None else None
    if live is not None:
        await live.start()
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        if live is not None:
            await live.stop()
