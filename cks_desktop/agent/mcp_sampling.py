"""Running an MCP server's sampling request with the session's model (``sampling/createMessage``).

The host (the window's dialogs, the CLI's rules) decides whether a request runs; this
module runs it: the request's messages (with the person's edits to text-only turns)
become provider-neutral messages, the server's tools (when it offers some) become tool
definitions, and one model turn is streamed with the chat's provider (``ProviderHolder``),
bounded by the request's max tokens and ``SAMPLING_TIMEOUT``. The reply carries the text and
any tool calls, which the server runs itself (MCP: tool use inside sampling is the server's
loop, not ours; the app never runs a tool on a sampling request's behalf).

Every failure is one sentence in a refusal the server receives; nothing raises to the caller.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from cks_desktop.agent.providers import ProviderHolder
from cks_desktop.agent.turn import stream_turn
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm.messages import Message, Part, Role, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, ProviderError
from cks_desktop.mcp.host import SamplingAnswer, SamplingReply, SamplingRequest, ToolUse

log = logging.getLogger(__name__)

SAMPLING_TIMEOUT = 180.0
_WIRE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
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
                text = "\n".join(str(getattr(b, "text", f"[{getattr(b, 'type', '?')}]")) for b in block.content)
                parts.append(ToolResultPart(str(block.tool_use_id), "", text, bool(block.is_error)))
            else:
                parts.append(Text(f"[{kind}: {getattr(block, 'mime_type', '')}]"))
        out.append(Message(role, parts))
    return out


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
        try:
            async with asyncio.timeout(self.timeout), self.providers.use() as provider:
                await stream_turn(provider, _messages(request), _tools(request), request.system_prompt or None,
                                  assembler, lambda text: None, params=params)
                model = str(getattr(getattr(provider, "config", None), "model", "") or self.providers.model)
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


def sampler_for(providers: Any) -> ProviderSampler:
    return ProviderSampler(providers)
