"""A stdio MCP server (the official SDK's low-level API) whose results are 50 MB.

``big_text`` answers with one 50 MB text block; ``big_structured`` with 50 MB of
structured content (100,000 records of 500 characters); ``big_typed`` the same under an output
schema (the clipped value must still satisfy it). What a careless or hostile
server sends: the client must cap it for the model without stalling its event loop.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

SIZE = 50 * 1024 * 1024

TOOLS = [
    types.Tool(name="big_text", input_schema={"type": "object"}, description="50 MB of text."),
    types.Tool(name="big_structured", input_schema={"type": "object"}, description="50 MB of structured content."),
    types.Tool(name="big_typed", input_schema={"type": "object"}, description="The same, with an output schema.",
               output_schema={"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}},
                              "required": ["rows"]}),
]


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=list(TOOLS))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name in ("big_structured", "big_typed"):
        rows = [{"id": i, "body": "y" * 500} for i in range(SIZE // 520)]
        return types.CallToolResult(content=[], structured_content={"rows": rows})
    return types.CallToolResult(content=[types.TextContent(text="x" * SIZE)])


async def main() -> None:
    server = Server("big", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


if __name__ == "__main__":
    anyio.run(main)
