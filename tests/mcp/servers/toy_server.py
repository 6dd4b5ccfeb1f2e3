"""A toy stdio MCP server for the connection tests (the SDK's low-level ``Server`` API).

The low-level API is used so the tests control what the real protocol carries:
page sizes of ``tools/list``, progress notifications, ``is_error`` results,
images, resources, and misbehaviour (crashing, hanging, flooding stderr,
writing garbage to stdout).

Behaviour at start is chosen by environment variables:
  TOY_PAGE_SIZE=N          tools/list pages of N tools (default 3)
  TOY_EXTRA_TOOLS=N        N extra numbered tools ``t00``… to make pagination visible
  TOY_EXIT_AT_START=CODE   write a few stderr lines, then exit with CODE before serving
  TOY_GARBAGE_AT_START=1   write non-JSON lines to stdout before serving
  TOY_STDERR_FLOOD=N       write N lines to stderr before serving
  TOY_MARKER_DIR=DIR       where the server writes its pid and ``wait_for_cancel`` records cancellation
  TOY_BAD_SCHEMA=1         list one tool whose input schema is not a valid JSON Schema
  TOY_TASK_TOOLS=1         list "batch_job" (execution.taskSupport "required": callable only as a task)
                           and "maybe_task" ("optional": a plain call works too)
  TOY_EXIT_IF_EXISTS=PATH  exit at start (like TOY_EXIT_AT_START=5) when PATH exists
  TOY_HANG_AT_START=1      never answer; exit only when stdin closes
  TOY_HTTP_PORT=N          serve streamable HTTP on 127.0.0.1:N instead of stdio
"""

from __future__ import annotations

import os
import sys


def _early_exit() -> None:
    """Fail before the (slow) imports, the way a misconfigured server does."""
    code = os.environ.get("TOY_EXIT_AT_START")
    flag = os.environ.get("TOY_EXIT_IF_EXISTS")
    if flag and os.path.exists(flag):
        code = "5"
    if code:
        print("toy: reading config", file=sys.stderr)
        print("toy: fatal: missing API key TOY_KEY", file=sys.stderr, flush=True)
        sys.exit(int(code))
    if os.environ.get("TOY_HANG_AT_START"):
        sys.stdin.read()
        sys.exit(0)


if __name__ == "__main__":
    _early_exit()

import base64  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.lowlevel.server import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged  # noqa: E402

# Set in main(): a duplicate of the real stdout pipe taken before the SDK diverts
# fd 1, so a tool can write garbage onto the wire the client reads.
WIRE_FD: int | None = None


def _tool(name: str, props: dict[str, Any] | None = None, required: list[str] | None = None, **kw: Any) -> types.Tool:
    schema: dict[str, Any] = {"type": "object", "properties": props or {}}
    if required:
        schema["required"] = required
    return types.Tool(name=name, input_schema=schema, **kw)


def base_tools() -> list[types.Tool]:
    return [
        _tool("echo", {"text": {"type": "string"}}, ["text"], description="Echo the text back.",
              title="Echo", annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False)),
        _tool("add", {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"],
              description="Add two numbers."),
        _tool("fail", description="Always returns an error result."),
        _tool("rpc_error", description="Answers with a JSON-RPC error."),
        _tool("mixed", description="Text, an image, an embedded resource and a resource link."),
        _tool("slow", {"seconds": {"type": "number"}, "steps": {"type": "integer"}},
              description="Sleeps, reporting progress in steps."),
        _tool("hang", description="Never returns."),
        _tool("wait_for_cancel", {"tag": {"type": "string"}}, ["tag"], description="Waits until cancelled."),
        _tool("crash", description="Exits the process in the middle of the call."),
        _tool("flood", {"lines": {"type": "integer"}}, description="Writes many lines to stderr."),
        _tool("garbage", description="Writes a non-JSON line to stdout, then answers."),
        _tool("grow", {"name": {"type": "string"}}, ["name"], description="Adds a tool and says the list changed."),
        _tool("whoami", description="Returns the Authorization header of the HTTP request."),
        _tool("session_echo", {"session_id": {"type": "string"}}, ["session_id"],
              description="Returns the session_id it was given (MCP tools are not pinned)."),
    ]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


def build(*, page_size: int = 3, extra_tools: int = 0, bad_schema: bool = False,
          marker_dir: Path = Path(".")) -> Server[Any]:
    """A fresh toy server (its own tool list and event bus): in-process tests build one each."""
    tools = base_tools()
    tools += [_tool(f"t{i:02d}", description=f"Numbered tool {i}.") for i in range(extra_tools)]
    if os.environ.get("TOY_TASK_TOOLS"):
        tools.append(types.Tool(name="batch_job", description="Runs only as a task.", input_schema={"type": "object"},
                                execution=types.ToolExecution(task_support="required")))
        tools.append(types.Tool(name="maybe_task", description="May run as a task.", input_schema={"type": "object"},
                                execution=types.ToolExecution(task_support="optional")))
    if bad_schema:
        tools.append(types.Tool(name="bad_schema", input_schema={"type": "object", "properties": {"x": {"type": 12}}}))
    bus = InMemorySubscriptionBus()

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params and params.cursor else 0
        page = tools[start:start + page_size]
        nxt = str(start + page_size) if start + page_size < len(tools) else None
        return types.ListToolsResult(tools=page, next_cursor=nxt)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await _call(ctx, params, tools, bus, marker_dir)

    return Server("toy", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                  on_subscriptions_listen=ListenHandler(bus))


async def _call(ctx: Any, params: types.CallToolRequestParams, tools: list[types.Tool],
                bus: InMemorySubscriptionBus, marker_dir: Path) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "add":
        total = int(args["a"]) + int(args["b"])
        return types.CallToolResult(content=[types.TextContent(text=str(total))], structured_content={"result": total})
    if name == "fail":
        return types.CallToolResult(content=[types.TextContent(text="it went wrong")], is_error=True)
    if name == "rpc_error":
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=-32603, message="the server broke on purpose")
    if name == "mixed":
        png = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
        return types.CallToolResult(content=[
            types.TextContent(text="here you go"),
            types.ImageContent(data=png, mime_type="image/png"),
            types.EmbeddedResource(resource=types.TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="resource body")),
            types.ResourceLink(name="report", uri="https://example.invalid/report.pdf",
                               mime_type="application/pdf", description="the full report"),
        ])
    if name == "slow":
        steps = int(args.get("steps", 1))
        token = (ctx.meta or {}).get("progress_token")
        for i in range(steps):
            await anyio.sleep(float(args.get("seconds", 0.1)) / steps)
            if token is not None:
                await ctx.session.send_progress_notification(token, i + 1, steps, related_request_id=ctx.request_id)
        return text("done")
    if name == "hang":
        await anyio.sleep_forever()
    if name == "wait_for_cancel":
        tag = str(args["tag"])
        (marker_dir / f"{tag}.started").write_text("started")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            (marker_dir / f"{tag}.cancelled").write_text("cancelled")
            raise
    if name == "crash":
        await anyio.sleep(0.05)
        print("about to crash on purpose", file=sys.stderr, flush=True)
        os._exit(7)
    if name == "flood":
        for i in range(int(args.get("lines", 1000))):
            print(f"flood line {i} " + "x" * 60, file=sys.stderr)
        sys.stderr.flush()
        return text("flooded")
    if name == "garbage":
        if WIRE_FD is not None:
            os.write(WIRE_FD, b"this is not json-rpc\n")
        return text("after garbage")
    if name == "grow":
        tools.append(_tool(str(args["name"]), description="A tool added at run time."))
        await bus.publish(ToolsListChanged())
        await ctx.session.send_tool_list_changed()
        return text("grown")
    if name == "whoami":
        request = getattr(ctx, "request", None)
        return text(str(request.headers.get("authorization") if request is not None else None))
    if name == "session_echo":
        return text(str(args.get("session_id")))
    if any(t.name == name for t in tools):
        return text(f"{name} ran")
    return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {name}")], is_error=True)


async def main() -> None:
    global WIRE_FD
    WIRE_FD = os.dup(1)
    marker_dir = Path(os.environ.get("TOY_MARKER_DIR", "."))
    (marker_dir / "pid").write_text(str(os.getpid()))
    if os.environ.get("TOY_GARBAGE_AT_START"):
        os.write(WIRE_FD, b"npm WARN something noisy\nnot json either\n")
    for i in range(int(os.environ.get("TOY_STDERR_FLOOD", "0"))):
        print(f"startup flood {i} " + "y" * 60, file=sys.stderr)
    server = build(page_size=int(os.environ.get("TOY_PAGE_SIZE", "3")),
                   extra_tools=int(os.environ.get("TOY_EXTRA_TOOLS", "0")),
                   bad_schema=bool(os.environ.get("TOY_BAD_SCHEMA")), marker_dir=marker_dir)
    port = os.environ.get("TOY_HTTP_PORT")
    if port:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        config = uvicorn.Config(app, host="127.0.0.1", port=int(port), log_level="warning")
        await uvicorn.Server(config).serve()
        return
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))


if __name__ == "__main__":
    anyio.run(main)
