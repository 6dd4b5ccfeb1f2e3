"""A bare SDK server with the same tool as ``mcp serve`` (``get_object``), for bench/mcp_serve.py.

The SDK's low-level ``Server`` whose one tool runs the built-in ``get_object`` handler itself
and answers what ours answers (the result as indented JSON text, and as structured content):
the same tool work on both sides, so the difference is our serving layer — the session
scope, the registry (lookup, validation, pinning, approval check), the log message and, over
HTTP, the token and Host/Origin checks. ``python bench/mcp_serve_bare.py DB SESSION [--http PORT]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import json  # noqa: E402

import mcp_types as types  # noqa: E402
from mcp.server.lowlevel.server import Server  # noqa: E402

from cks_desktop.graph.store import GraphStore  # noqa: E402
from cks_desktop.tools.builtin import build_registry  # noqa: E402
from cks_desktop.tools.context import Run, ToolContext  # noqa: E402
from cks_desktop.tools.types import Caller  # noqa: E402


def main() -> None:
    db, session = sys.argv[1], sys.argv[2]
    store = GraphStore.open(Path(db))
    registry = build_registry(store)
    spec = registry.get("get_object")
    run = Run(session, Caller.MCP_CLIENT)

    async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
        return types.ListToolsResult(tools=[types.Tool(name="get_object", input_schema=dict(spec.input_schema))])

    async def call_tool(ctx, params):  # type: ignore[no-untyped-def]
        tctx = ToolContext(session_id=session, store=store, run=run, registry=registry)
        value = await spec.handler({"session_id": session, **(params.arguments or {})}, tctx)
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(
            value, ensure_ascii=False, indent=2, default=str))], structured_content=value)

    server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
    else:
        import anyio
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)


if __name__ == "__main__":
    main()
