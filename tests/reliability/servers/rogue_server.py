"""A misbehaving stdio MCP server for the reliability suite (the SDK's low-level API).

Tools: ``env`` (its environment as JSON), ``big`` (a result of ``mb`` megabytes),
``flood`` (``mb`` megabytes to stderr, then answers), ``echo``, ``shrink`` (drops
``echo`` from the list and says so, mid-chat). At start, by environment:
  ROGUE_IGNORE_TERM=1   ignore SIGTERM and stdin EOF (only SIGKILL ends it)
  ROGUE_SAY=TEXT        print TEXT to stderr at start (a server logging its own config)
  ROGUE_PID_FILE=PATH   write the pid there
  ROGUE_NO_INIT=1       never answer initialize, and ignore stdin EOF (SIGTERM still ends it)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

if __name__ == "__main__":
    if os.environ.get("ROGUE_PID_FILE"):
        with open(os.environ["ROGUE_PID_FILE"], "w") as fh:
            fh.write(str(os.getpid()))
    if os.environ.get("ROGUE_SAY"):
        print(f"rogue: starting with {os.environ['ROGUE_SAY']}", file=sys.stderr, flush=True)
    if os.environ.get("ROGUE_IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("ROGUE_NO_INIT"):
        while True:
            sys.stdin.buffer.read(1) or time.sleep(0.05)  # deaf to EOF and to the protocol

from typing import Any  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.lowlevel.server import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.server.subscriptions import (  # noqa: E402
    InMemorySubscriptionBus,
    ListenHandler,
    ToolsListChanged,
)

BUS = InMemorySubscriptionBus()  # how the newer protocol revision carries list changes

TOOLS = [
    types.Tool(name="env", input_schema={"type": "object"}, description="The server's environment."),
    types.Tool(name="big", input_schema={"type": "object", "properties": {"mb": {"type": "number"}}},
               description="A big text result."),
    types.Tool(name="flood", input_schema={"type": "object", "properties": {"mb": {"type": "number"}}},
               description="Floods stderr."),
    types.Tool(name="echo", input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
               description="Echo."),
    types.Tool(name="shrink", input_schema={"type": "object"}, description="Removes echo from the list."),
]


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)])


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=list(TOOLS))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "env":
        return text(json.dumps(dict(os.environ)))
    if name == "big":
        return text("x" * int(float(args.get("mb", 10)) * 1_000_000))
    if name == "flood":
        line = ("e" * 99 + "\n").encode()
        for _ in range(int(float(args.get("mb", 50)) * 10_000)):
            os.write(2, line)
        os.write(2, b"flood done\n")
        return text("flooded")
    if name not in {t.name for t in TOOLS}:
        return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {name}")], is_error=True)
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "shrink":
        TOOLS[:] = [t for t in TOOLS if t.name != "echo"]
        await BUS.publish(ToolsListChanged())
        await ctx.session.send_tool_list_changed()
        return text("shrunk")
    return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {name}")], is_error=True)


async def main() -> None:
    server = Server("rogue", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                    on_subscriptions_listen=ListenHandler(BUS))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(tools_changed=True)))
    if os.environ.get("ROGUE_IGNORE_TERM"):
        while True:  # stdin closed: a well-behaved server would exit here
            time.sleep(0.05)


if __name__ == "__main__":
    anyio.run(main)
