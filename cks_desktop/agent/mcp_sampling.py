"""Running an MCP server's sampling request with the session's model (``sampling/createMessage``).

The host (the window's dialogs, the CLI's rules) decides whether a request runs; this
module runs it: the request's messages (with the person's edits to text-only turns)
become provider-neutral messages, the server's tools (when it offers some) become tool
definitions, and one model turn is streamed with the chat's provider (``ProviderHolder``),
bounded by the request's max tokens and ``SAMPLING_TIMEOUT``. The reply carries the text and
any tool calls, which the server runs itself (MCP: tool use inside sampling is the server's
loop, not ours; the app never runs a tool on a sampling request's behalf).

Images: an ``ImageContent`` in a request's messages (or in a tool result
inside one) goes to the model as an image when it takes images, validated by its bytes like a
tool's image (``tools/images.py``); for a model without images, or bytes that are not an image,
the request is refused with one sentence — a reply written without the picture the server asked
about would be an answer to a different question.

Every failure is one sentence in a refusal the server receives; nothing raises to the caller.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from cks_desktop.agent.images import part_of
from cks_desktop.agent.providers import ProviderHolder
from cks_desktop.agent.turn import stream_turn
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm import vision
from cks_desktop.llm.messages import ImagePart, Message, Part, Role, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, ProviderError
from cks_desktop.mcp.host import SamplingAnswer, SamplingReply, SamplingRequest, ToolUse
from cks_desktop.tools.images import ImageRefused, from_base64

log = logging.getLogger(__name__)

SAMPLING_TIMEOUT = 180.0
_WIRE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
_STOPS = {"stop": "endTurn", "tool_calls": "toolUse", "length": "maxTokens"}


def _messages(request: SamplingRequest) -> list[Message]:
    """The request as neutral messages: edited text for text-only turns, tool uses and results kept."""
    raw = list(getattr(request.params, "messages", None) or [])
    out: list[Message] = []
    for i, turn in enumerate(request.turns):
        role: Role = "assistant" if turn.role == "assistant" else "user"
        blocks = raw[i].content_as_list if i < len(raw) else []
        if turn.editable or not blocks:
            out.append(Message(role, [Text(turn.text)]))
            continue
        parts: list[Part] = []
        for block in blocks:
            kind = getattr(block, "type", "")
            if kind == "text":
                parts.append(Text(str(block.text)))
            elif kind == "tool_use":
                parts.append(ToolCallPart(str(block.id), str(block.name), dict(block.input)))
            elif kind == "tool_result":
                lines: list[str] = []
                images: list[ImagePart] = []
                for inner in block.content or []:
                    if getattr(inner, "type", "") == "image":
                        images.append(_image(inner))
                        lines.append(images[-1].note)  # named in the text, as a tool's image is
                    else:
                        lines.append(str(getattr(inner, "text", f"[{getattr(inner, 'type', '?')}]")))
                parts.append(ToolResultPart(str(block.tool_use_id), "", "\n".join(lines), bool(block.is_error),
                                            images=tuple(images)))
            elif kind == "image":
                parts.append(_image(block))
            else:
                parts.append(Text(f"[{kind}: {getattr(block, 'mime_type', '')}]"))
        out.append(Message(role, parts))
    return out


def _image(block: Any) -> ImagePart:
    """An ``ImageContent`` as a part with its bytes (a sampling request is not stored in a chat);
    the bytes decide what it is, so a script labelled ``image/png`` is ``ImageRefused``."""
    blob = from_base64(str(getattr(block, "data", "") or ""), claimed=getattr(block, "mime_type", None))
    return part_of(blob)


def _tools(request: SamplingRequest) -> list[ToolDef]:
    tools: list[ToolDef] = []
    for tool in getattr(request.params, "tools", None) or []:
        if _WIRE.match(tool.name):  # a name no provider accepts is left out rather than failing the request
            tools.append(ToolDef(tool.name, (tool.description or "")[:8000], dict(tool.input_schema)))
    choice = getattr(getattr(request.params, "tool_choice", None), "mode", None)
    return [] if choice == "none" else tools


class ProviderSampler:
    """A ``Sampler`` over the chat's provider holder."""

    def __init__(self, providers: ProviderHolder, *, timeout: float = SAMPLING_TIMEOUT) -> None:
        self.providers = providers
        self.timeout = timeout

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        server = request.server
        params = GenerationParams(temperature=request.temperature, max_output_tokens=request.max_tokens)
        assembler = StreamAssembler()
        try:  # a worker thread: decoding and checking a request's images is ~10 ms per MB
            messages = await asyncio.to_thread(_messages, request)
        except ImageRefused as exc:
            return SamplingAnswer.refuse(f"The sampling request of MCP server '{server}' holds an image the app "
                                         f"does not take: {exc}")
        try:
            async with asyncio.timeout(self.timeout), self.providers.use() as provider:
                if vision.has_images(messages) and not await vision.accepts_images(provider):
                    return SamplingAnswer.refuse(f"MCP server '{server}' sent an image, and "
                                                 f"{vision.refusal(provider)}")
                await stream_turn(provider, messages, _tools(request), request.system_prompt or None,
                                  assembler, lambda text: None, params=params)
                model = provider.config.model or self.providers.model
        except ProviderError as exc:
            return SamplingAnswer.refuse(f"The model could not answer MCP server '{server}': {exc.message}")
        except TimeoutError:
            return SamplingAnswer.refuse(f"The model did not answer MCP server '{server}' within {self.timeout:g} s.")
        except Exception as exc:  # an adapter bug: one sentence for the server, the trace for the log
            log.exception("sampling for %s failed", server)
            return SamplingAnswer.refuse(f"The completion for MCP server '{server}' failed ({type(exc).__name__}).")
        message = assembler.message(lambda name: name)
        uses = tuple(ToolUse(p.id, p.name, dict(p.arguments)) for p in message.tool_calls)
        stop = "toolUse" if uses else _STOPS.get(assembler.finish_reason or "stop", "endTurn")
        return SamplingAnswer(SamplingReply(model or "unknown", message.text, stop, uses))

