"""A stdio MCP server (the SDK's low-level ``Server``) whose tool ``look`` asks the client's model
about an image: a ``sampling/createMessage`` whose user message holds text and an
``ImageContent`` (base64 from the ``image`` argument, type from ``mime``), and a second turn
with a tool result that carries an image too (``with_result``). It returns what the client
answered, or the client's refusal, as JSON text (images-2)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool(name="look", description="Ask the client's model about an image.",
                    input_schema={"type": "object", "properties": {
                        "image": {"type": "string"}, "mime": {"type": "string"},
                        "with_result": {"type": "boolean"}}})]


def _text(value: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(value))])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    warnings.simplefilter("ignore")  # the SDK marks sampling deprecated at 2026-07-28
    image = types.ImageContent(data=str(args["image"]), mime_type=str(args.get("mime", "image/png")))
    messages = [types.SamplingMessage(role="user", content=[types.TextContent(text="What is in this picture?"), image])]
    if args.get("with_result"):
        messages += [
            types.SamplingMessage(role="assistant", content=[types.ToolUseContent(id="t1", name="shot", input={})]),
            types.SamplingMessage(role="user", content=[types.ToolResultContent(tool_use_id="t1", content=[
                types.TextContent(text="the screenshot"), image])]),
        ]
    try:
        result = await ctx.session.create_message(messages, max_tokens=50, related_request_id=ctx.request_id)
    except Exception as exc:  # the client's refusal arrives as an error: hand it back as it came
        return _text({"error": str(exc)})
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return _text({"text": " ".join(str(getattr(b, "text", "")) for b in blocks), "model": result.model})


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server: Server[Any] = Server("image-sampling", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


if __name__ == "__main__":
    anyio.run(main)
