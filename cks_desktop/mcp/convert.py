"""MCP ↔ registry: tool listings become ``ToolSpec``s, call results become ``ToolOutput``s.

A model reads text, so every content block becomes text: images and audio as a
short note (``[image: image/png, 2,048 bytes]``; their bytes would only waste
the context), embedded resources as their text (or a note for binary ones),
resource links as a line naming the link. ``structured_content`` is kept as
the result's ``structured`` value and shown as JSON when the server sent no
text. The registry caps the text like every other result.

A server's tool is skipped (with the reason kept for the GUI and the log) when
its input schema is not a valid JSON Schema for an object, or refers to an
external document: validating arguments must never fetch a URL a server chose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jsonschema
import mcp_types as types

from cks_desktop.mcp.config import ServerConfig
from cks_desktop.tools.types import Handler, ToolOutput, ToolSpec

HandlerFactory = Callable[[str], Handler]
"""Makes the registry handler that calls one tool of the server."""


@dataclass(frozen=True)
class SkippedTool:
    name: str
    reason: str


def internal_name(server: str, tool: str) -> str:
    return f"mcp:{server}:{tool}"


def _b64_size(data: str) -> int:
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def describe_block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_b64_size(block.data):,} bytes]"
    if kind == "resource":
        res = block.resource
        mime = f", {res.mime_type}" if res.mime_type else ""
        if isinstance(res, types.TextResourceContents):
            return f"[resource: {res.uri}{mime}]\n{res.text}"
        return f"[resource: {res.uri}{mime}, {_b64_size(res.blob):,} bytes]"
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        line = f"[resource link: {block.name} — {block.uri}{mime}]"
        return f"{line}\n{block.description}" if block.description else line
    return f"[{kind or 'unknown'} content]"


def result_to_output(result: types.CallToolResult) -> ToolOutput:
    parts = [describe_block(block) for block in result.content]
    text = "\n".join(p for p in parts if p)
    structured = result.structured_content
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, indent=2, default=str)
    if not text:
        text = "(the tool reported an error without a message)" if result.is_error else "(the tool returned nothing)"
    return ToolOutput(content=text, structured=structured, is_error=bool(result.is_error))


# -- tool specs ---------------------------------------------------------------
def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _pointer_exists(schema: dict[str, Any], ref: str) -> bool:
    node: Any = schema
    for raw in ref[2:].split("/") if ref.startswith("#/") else []:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False
    return True


def schema_problem(schema: Any) -> str | None:
    """Why a server's input schema cannot be used, or None when it can."""
    if not isinstance(schema, dict):
        return "its input schema is not a JSON object"
    kind = schema.get("type", "object")
    if kind != "object":
        return f"its input schema describes {kind!r}, not an object of arguments"
    try:
        for ref in _refs(schema):
            if ref != "#" and not ref.startswith("#/"):
                return f"its input schema refers to an external document ({ref})"
            if not _pointer_exists(schema, ref):
                return f"its input schema refers to {ref}, which it does not define"
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its input schema is invalid: {exc.message}"
    except RecursionError:  # a hostile or broken server can nest a schema thousands deep
        return "its input schema is nested too deeply"
    return None


def annotations_of(tool: types.Tool, server: str) -> dict[str, Any]:
    notes: dict[str, Any] = {"server": server, "tool": tool.name}
    ann = tool.annotations
    if ann is not None:
        for attr, key in (("title", "title"), ("read_only_hint", "readOnlyHint"),
                          ("destructive_hint", "destructiveHint"), ("idempotent_hint", "idempotentHint"),
                          ("open_world_hint", "openWorldHint")):
            value = getattr(ann, attr, None)
            if value is not None:
                notes[key] = value
    return notes


def build_specs(config: ServerConfig, tools: Iterable[types.Tool],
                handler_for: HandlerFactory) -> tuple[list[ToolSpec], list[SkippedTool]]:
    """The registry specs for a server's enabled, usable tools, and the tools left out."""
    specs: list[ToolSpec] = []
    skipped: list[SkippedTool] = []
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            skipped.append(SkippedTool(tool.name, "the server lists this name twice"))
            continue
        seen.add(tool.name)
        if not config.tool_enabled(tool.name):
            continue
        problem = schema_problem(tool.input_schema)
        if problem is not None:
            skipped.append(SkippedTool(tool.name, problem))
            continue
        schema = dict(tool.input_schema)
        schema.setdefault("type", "object")
        title = tool.title or (tool.annotations.title if tool.annotations else None) or ""
        specs.append(ToolSpec(
            name=internal_name(config.name, tool.name),
            description=tool.description or "",
            input_schema=schema,
            scopes=config.scopes,
            default_policy=config.policy_for(tool.name),
            llm_exposed=True,
            handler=handler_for(tool.name),
            title=title,
            annotations=annotations_of(tool, config.name),
            pin_session=False,
            timeout=None,  # the connection keeps its own clock, which progress resets
            source=config.source,
        ))
    return specs, skipped


def tool_info(tool: types.Tool, config: ServerConfig) -> dict[str, Any]:
    """One tool as plain JSON for the CLI and the GUI."""
    return {
        "name": tool.name,
        "internal_name": internal_name(config.name, tool.name),
        "title": tool.title or (tool.annotations.title if tool.annotations else None) or "",
        "description": tool.description or "",
        "enabled": config.tool_enabled(tool.name),
        "policy": config.policy_for(tool.name).value,
        "annotations": {k: v for k, v in annotations_of(tool, config.name).items() if k not in ("server", "tool")},
        "input_schema": tool.input_schema,
    }
