"""MCP ↔ registry: tool listings become ``ToolSpec``s, call results become ``ToolOutput``s.

A model reads text, so every content block becomes text: images and audio as a
short note (``[image: image/png, 16×16, 2,048 bytes]``), embedded resources as their text (or a note for binary ones),
resource links as a line naming the link. ``structured_content`` is kept as
the result's ``structured`` value and shown as JSON when the server sent no
text. The registry caps the text like every other result; structured content
larger than that cap is not kept (a note in the text says so), or one result
could put 50 MB into a transcript, a ``--json`` print or a later request.

A server's tool is skipped (with the reason kept for the GUI and the log) when
its input schema is not a valid JSON Schema for an object, or refers to an
external document (validating arguments must never fetch a URL a server chose),
when the schema is too big to send with every request, or when its wire name
(``tools/wire_names.py``) is already another tool's: a server picks its tool names,
and the short hash in a wire name can be made to collide on purpose. A tool's
description is cut to ``MAX_DESCRIPTION`` characters, since every request carries it.
Whatever one tool of a listing does wrong costs that tool only.

Images: an image block's bytes are validated (``tools/images.py``: PNG,
JPEG, GIF or WebP by their magic number, at most 20 MB, a sane size in the header) and kept in
the output's ``images`` beside the note; the agent stores them in the session and sends them
to a model that takes images (a model without images reads the note, as before). A block that
fails the check becomes ``[image refused: <why>]``. Nothing a server sends is ever fetched: a
resource link (or a URL in text) stays a line of text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import mcp_types as types

from cks_desktop.mcp.config import ServerConfig
from cks_desktop.tools.images import ImageBlob, ImageRefused, from_base64
from cks_desktop.tools.images import describe as describe_image
from cks_desktop.tools.types import Handler, Policy, ToolOutput, ToolSpec
from cks_desktop.tools.wire_names import to_wire

MAX_DESCRIPTION = 8_000  # characters of one tool's description that go into every request
MAX_SCHEMA = 100_000  # characters of one tool's input schema (as JSON) that may go into every request
MAX_STRUCTURED = 100_000  # characters of a result's structured content kept (the registry's text cap)
TRUNCATED_MARK = "cks-desktop/structured-truncated"  # set by result_cap when it clipped the structured content

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
        return str(block.text)
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


def json_size_over(value: Any, limit: int) -> bool:
    """Whether ``value`` as JSON would be longer than ``limit`` characters (about).

    Counts string lengths and a few characters per item, and stops as soon as the
    limit is passed, so a 50 MB value costs no more than a small one; iterative, so
    depth costs nothing either.
    """
    stack = [value]
    left = limit
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            left -= len(item) + 2
        elif isinstance(item, dict):
            left -= 2 + 4 * len(item)
            for key, sub in item.items():
                left -= len(str(key))
                stack.append(sub)
        elif isinstance(item, (list, tuple)):
            left -= 2 + len(item)
            stack.extend(item)
        else:
            left -= 8
        if left < 0:
            return True
    return False


def clip_json(value: Any, budget: int, *, marks: bool = True) -> Any:
    """A copy of ``value`` cut down to about ``budget`` characters of JSON (long strings
    shortened, the rest of long lists and objects left out), made without rendering the
    whole value: a 50 MB result costs no more than a small one.

    ``marks``: say where something was left out (``"… 12 more"`` in a list, a ``"…"`` key, a
    trailing ``…``), for a person reading it. Without marks the copy keeps the value's shapes
    (a list of objects stays one), so a tool's output schema still accepts the clipped value."""
    left = [budget]
    ellipsis = "…" if marks else ""

    def clip(item: Any) -> Any:
        if left[0] <= 0:
            if marks or isinstance(item, str):
                return ellipsis
            return {} if isinstance(item, dict) else [] if isinstance(item, (list, tuple)) else item
        if isinstance(item, str):
            left[0] -= len(item) + 2
            return item if left[0] >= 0 else item[:max(0, len(item) + left[0])] + ellipsis
        if isinstance(item, dict):
            out: dict[str, Any] = {}
            for key, sub in item.items():
                if left[0] <= 0:
                    if marks:
                        out["…"] = f"{len(item) - len(out)} more"
                    break
                left[0] -= len(str(key)) + 4
                out[str(key)] = clip(sub)
            return out
        if isinstance(item, (list, tuple)):
            items: list[Any] = []
            for sub in item:
                if left[0] <= 0:
                    if marks:
                        items.append(f"… {len(item) - len(items)} more")
                    break
                left[0] -= 2
                items.append(clip(sub))
            return items
        left[0] -= 8
        return item

    return clip(value)


def image_of(block: Any) -> ImageBlob | str:
    """An image block's validated bytes, or the note that says why they were refused."""
    try:
        return from_base64(str(block.data or ""), claimed=str(block.mime_type or "") or None)
    except ImageRefused as exc:
        return f"[image refused: {exc}]"


def result_to_output(result: types.CallToolResult) -> ToolOutput:
    content = result.content
    if len(content) == 1 and result.structured_content is None and type(content[0]) is types.TextContent:
        text = str(content[0].text)  # the usual answer, one text block: what the loop below makes of it
        if text:
            return ToolOutput(content=text, structured=None, is_error=bool(result.is_error), images=())
    parts: list[str] = []
    images: list[ImageBlob] = []
    for block in result.content:
        if isinstance(block, types.ImageContent):
            found = image_of(block)
            if isinstance(found, str):
                parts.append(found)
            else:
                images.append(found)
                parts.append(f"[image: {describe_image(found)}]")
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents) \
                and str(block.resource.mime_type or "").startswith("image/"):
            # an embedded image (a screenshot server's resource): shown and sent like an image block
            try:
                blob = from_base64(block.resource.blob, claimed=block.resource.mime_type)
            except ImageRefused:
                parts.append(describe_block(block))
            else:
                images.append(blob)
                parts.append(f"[image: {block.resource.uri}, {describe_image(blob)}]")
        else:
            parts.append(describe_block(block))
    text = "\n".join(p for p in parts if p)
    structured = result.structured_content
    clipped = isinstance(result.meta, dict) and result.meta.get(TRUNCATED_MARK) is True
    if structured is not None and (clipped or json_size_over(structured, MAX_STRUCTURED)):
        # Capped like text: a model reads the beginning; the value itself is not passed on.
        note = f"[truncated: the structured content was larger than {MAX_STRUCTURED:,} characters"
        if text:
            text = f"{text}\n{note} and was left out]"
        else:
            shown = json.dumps(clip_json(structured, MAX_STRUCTURED), ensure_ascii=False, indent=2, default=str)
            text = f"{shown}\n\n{note}; only the beginning is shown]"
        structured = None
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, indent=2, default=str)
    if not text:
        text = "(the tool reported an error without a message)" if result.is_error else "(the tool returned nothing)"
    return ToolOutput(content=text, structured=structured, is_error=bool(result.is_error), images=tuple(images))


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


def annotated_policy(config: ServerConfig, tool: types.Tool) -> Policy:
    """A tool's default approval policy: the person's choice when there is one (``toolPolicies``, or
    the server's ``approval`` set in its settings), else what its annotations say. A read-only tool
    asks once per chat; a destructive one (or one that claims both) asks before every call; a
    tool without hints asks like every MCP tool (``always``). Hints come from the server, so they
    only ever lower the default to ``once``, never to ``auto``; the settings' per-tool policies
    (the registry's overrides) still win over this."""
    if tool.name in config.tool_policies or config.approval_explicit:
        return config.policy_for(tool.name)
    ann = tool.annotations
    if ann is not None and ann.destructive_hint is True:
        return Policy.ALWAYS
    if ann is not None and ann.read_only_hint is True:
        return Policy.ONCE
    return config.approval


def capped_description(text: str | None) -> str:
    """A tool's description as every request carries it: at most ``MAX_DESCRIPTION`` characters."""
    text = text or ""
    if len(text) <= MAX_DESCRIPTION:
        return text
    return text[:MAX_DESCRIPTION] + f" [description shortened: it was {len(text):,} characters]"


TASK_REQUIRED = ("it runs only as a task (execution.taskSupport \"required\"), and this app makes plain tool "
                 "calls only")


def _spec_for(config: ServerConfig, tool: types.Tool, handler_for: HandlerFactory) -> ToolSpec | str:
    """One tool's registry spec, or why it cannot be used."""
    execution = getattr(tool, "execution", None)
    if execution is not None and getattr(execution, "task_support", None) == "required":
        # Such a tool refuses a plain tools/call ("requires task augmentation"); offered to a model, every
        # call would fail. The app does not run task-augmented calls, so the status says why it is missing.
        return TASK_REQUIRED
    problem = schema_problem(tool.input_schema)
    if problem is not None:
        return problem
    if json_size_over(tool.input_schema, MAX_SCHEMA):
        return f"its input schema is larger than {MAX_SCHEMA:,} characters (every request would carry it)"
    schema = dict(tool.input_schema)
    schema.setdefault("type", "object")
    title = tool.title or (tool.annotations.title if tool.annotations else None) or ""
    return ToolSpec(
        name=internal_name(config.name, tool.name),
        description=capped_description(tool.description),
        input_schema=schema,
        scopes=config.scopes,
        default_policy=annotated_policy(config, tool),
        llm_exposed=True,
        handler=handler_for(tool.name),
        title=title[:200],
        annotations=annotations_of(tool, config.name),
        pin_session=False,
        timeout=None,  # the connection keeps its own clock, which progress resets
        source=config.source,
    )


def build_specs(config: ServerConfig, tools: Iterable[types.Tool], handler_for: HandlerFactory, *,
                taken: Mapping[str, str] | None = None) -> tuple[list[ToolSpec], list[SkippedTool]]:
    """The registry specs for a server's enabled, usable tools, and the tools left out.

    ``taken`` maps the wire names other sources' tools already hold to their internal
    names. A tool whose wire name is taken (by them or by an earlier tool of this
    listing) is left out: the first keeps its name, so a server cannot take over a
    name that is already in use, and no request ever offers one name twice.
    """
    specs: list[ToolSpec] = []
    skipped: list[SkippedTool] = []
    seen: set[str] = set()
    wires: dict[str, str] = dict(taken or {})
    for tool in tools:
        name = str(getattr(tool, "name", "?"))
        try:
            if name in seen:
                skipped.append(SkippedTool(name, "the server lists this name twice"))
                continue
            seen.add(name)
            if not config.tool_enabled(name):
                continue
            made = _spec_for(config, tool, handler_for)
            if isinstance(made, str):
                skipped.append(SkippedTool(name, made))
                continue
            wire = to_wire(made.name)
            holder = wires.get(wire)
            if holder is not None:
                skipped.append(SkippedTool(name, f"its name as models see it ({wire}) is already "
                                                 f"taken by '{holder}'"))
                continue
            wires[wire] = made.name
            specs.append(made)
        except Exception as exc:  # one odd tool must not cost the others (or the connection)
            skipped.append(SkippedTool(name, f"it could not be read ({type(exc).__name__}: {str(exc)[:200]})"))
    return specs, skipped


def tool_info(tool: types.Tool, config: ServerConfig) -> dict[str, Any]:
    """One tool as plain JSON for the CLI and the GUI."""
    return {
        "name": tool.name,
        "internal_name": internal_name(config.name, tool.name),
        "title": tool.title or (tool.annotations.title if tool.annotations else None) or "",
        "description": capped_description(tool.description),
        "enabled": config.tool_enabled(tool.name),
        "policy": annotated_policy(config, tool).value,
        "annotations": {k: v for k, v in annotations_of(tool, config.name).items() if k not in ("server", "tool")},
        "input_schema": tool.input_schema,
    }
