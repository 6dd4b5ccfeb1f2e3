"""Anthropic Messages API adapter (``anthropic.AsyncAnthropic``, streaming).

We read the raw event stream (``messages.create(stream=True)``) rather than the
``messages.stream`` helper: the helper parses every ``input_json_delta`` into a
partial snapshot as it goes and raises on argument JSON the model got wrong,
which would kill the whole turn; we only need the fragments, and a bad argument
text has to become ``ToolCallDone(arguments=None, error=...)`` that the model can
be told about. It also spares a partial-JSON parse per fragment.

History goes out as Anthropic expects it: tool calls are ``tool_use`` blocks,
results are ``tool_result`` blocks (with ``is_error``) in a *user* message, and
consecutive messages of one role are merged (a tool message followed by the
next prompt becomes one user message with the results first).

Structured output (``response_schema``): one forced tool whose input schema is
the schema. Its input is replayed as plain text events, so ``respond_json``
reads every provider the same way. A schema that is not an object is wrapped in
``{"value": ...}`` (tool inputs must be objects) and unwrapped here.

Extended thinking: with ``params.reasoning`` the request carries ``thinking``
with a budget; ``thinking``/``redacted_thinking`` blocks stream as ``ReasoningDelta``s
(text, then the ``signature_delta``) and go back, signed and unchanged, first in their
assistant message, as the API requires in a tool loop. The API's other rules are kept
here: no temperature but the default, ``max_tokens`` above the budget, no thinking with a
forced tool, and none switched on in the middle of a tool loop.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anthropic

from cks_desktop.llm.assembler import done_from_raw
from cks_desktop.llm.errors import (
    ErrorContext, body_error, build, from_status, from_transport, requested, retry_after_from_headers,
    transport_in_chain, unexpected,
)
from cks_desktop.llm.events import (
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)
from cks_desktop.llm.messages import ImagePart, Message, Reasoning, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderError, ProviderProfile
from cks_desktop.llm.profiles import ANTHROPIC
from cks_desktop.llm.providers import image_wire
from cks_desktop.llm.providers.base import Adapter, StreamState, normalize_finish, shared_tls, system_text
from cks_desktop.llm.vision import images_ready, sends_images
from cks_desktop.tools.wire_names import to_wire

RESPONSE_TOOL = "respond"
ORIGIN = "anthropic"  # ``Reasoning.origin`` of thinking blocks this adapter sends back
DEFAULT_THINKING_BUDGET = 8192  # tokens, when the session asks for thinking without a budget
MIN_THINKING_BUDGET = 1024  # the API's minimum ``budget_tokens``
_COUNTED = ("model", "messages", "system", "tools", "tool_choice", "thinking")  # what count_tokens takes
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "pause",
}


def response_tool_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(input schema for the forced tool, whether the answer was wrapped in ``value``)."""
    if schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}, True


def _content(message: Message, images: bool = False) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, Text):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            blocks.append(image_wire.anthropic_image(part) if image_wire.usable(part, images)
                          else {"type": "text", "text": image_wire.note(part)})
        elif isinstance(part, Reasoning):
            thought = thinking_block(part)
            if thought is not None:
                blocks.append(thought)
        elif isinstance(part, ToolCallPart):
            blocks.append({"type": "tool_use", "id": part.id, "name": to_wire(part.name), "input": part.arguments})
        elif isinstance(part, ToolResultPart):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.call_id,
                                     "content": part.content or "(no output)"}
            shown = [image_wire.anthropic_image(i) for i in part.images if image_wire.usable(i, images)]
            if shown:  # tool_result content may hold image blocks beside the text
                block["content"] = [{"type": "text", "text": block["content"]}, *shown]
            if part.is_error:
                block["is_error"] = True
            blocks.append(block)
    return blocks


def thinking_block(part: Reasoning) -> dict[str, Any] | None:
    """A thinking part as the API wants it back: whole and signed, or redacted; anything else
    (another vendor's thinking, a block cut off before its signature) is left out, since the
    API refuses a thinking block whose signature does not match it."""
    if part.origin != ORIGIN:
        return None
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def _mid_tool_loop_without_thinking(wire: list[dict[str, Any]]) -> bool:
    """True when thinking cannot be switched on for this request: it continues a tool loop whose
    last assistant turn has no thinking block (the API refuses it: "a final assistant message must
    start with a thinking block"), or it ends with an assistant message (a prefill, such as the
    iteration-limit notice Continue goes on from, which thinking is not compatible with)."""
    if wire and wire[-1]["role"] == "assistant":
        return True
    if not wire or wire[-1]["role"] != "user":
        return False
    if not any(b.get("type") == "tool_result" for b in wire[-1]["content"]):
        return False
    last = next((m for m in reversed(wire) if m["role"] == "assistant"), None)
    if last is None or not last["content"]:
        return False
    return last["content"][0].get("type") not in ("thinking", "redacted_thinking")


def to_anthropic_messages(messages: list[Message], *, images: bool = False) -> list[dict[str, Any]]:
    """Neutral history → Anthropic ``messages`` (system messages go to ``system=``); ``images``: the
    model takes images (``llm/vision.py``), else they go as their notes."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _content(message, images)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            previous = wire[-1]["content"]
            # tool results must come first in a user message
            if role == "user" and any(b["type"] == "tool_result" for b in blocks):
                results = [b for b in blocks if b["type"] == "tool_result"]
                others = [b for b in blocks if b["type"] != "tool_result"]
                wire[-1]["content"] = ([b for b in previous if b["type"] == "tool_result"] + results
                                       + [b for b in previous if b["type"] != "tool_result"] + others)
            else:
                previous.extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


@dataclass
class _Call:
    ordinal: int
    id: str
    name: str
    fragments: list[str] = field(default_factory=list)
    initial: Any = None  # input given whole in content_block_start (not streamed)


class AnthropicProvider(Adapter):
    image_encoding = "base64"  # vision.images_ready encodes off the loop before request() (image_wire)

    def __init__(self, config: ProviderConfig, profile: ProviderProfile = ANTHROPIC) -> None:
        super().__init__(config, profile)
        self._client_obj: anthropic.AsyncAnthropic | None = None

    @property
    def base_url(self) -> str:
        return self.config.base_url or self.profile.default_base_url

    def _client(self) -> anthropic.AsyncAnthropic:
        if self._closed:
            raise RuntimeError("this provider was closed")
        if self._client_obj is None:
            self._client_obj = anthropic.AsyncAnthropic(
                api_key=self.config.api_key or "", base_url=self.base_url,
                timeout=self.config.timeout, max_retries=0,  # Adapter.stream retries (llm/retry.py)
                http_client=anthropic.DefaultAsyncHttpxClient(verify=shared_tls("httpx2")))
        return self._client_obj

    def map_error(self, exc: BaseException, *, started: bool) -> ProviderError:
        return map_anthropic(exc, self.error_context(), started=started)

    def request(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, params: GenerationParams | None = None) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` (public for tests and the benchmark)."""
        kwargs: dict[str, Any] = {"model": self.config.model, "max_tokens": self.config.max_tokens,
                                  "messages": to_anthropic_messages(messages, images=sends_images(self)),
                                  "stream": True}
        text = system_text(messages, system)
        if text:
            kwargs["system"] = text
        if params is not None and params.temperature is not None:
            # The 1.x SDK dropped ``temperature`` from create()'s signature (its migration guide:
            # pass it in extra_body); the API still takes it on models with sampling options,
            # and newer models refuse it with a 400 that reads as one sentence. Only when set.
            kwargs["extra_body"] = {"temperature": params.temperature}
        if params is not None and params.max_output_tokens is not None:
            kwargs["max_tokens"] = params.max_output_tokens
        if (params is not None and params.reasoning and response_schema is None
                and not _mid_tool_loop_without_thinking(kwargs["messages"])):
            # Extended thinking. Forcing a tool (structured output) is refused with thinking on, so
            # respond_json never thinks; the budget must be below max_tokens, which grows to fit it;
            # temperature must be the default (the API refuses any other value with thinking).
            budget = max(MIN_THINKING_BUDGET, params.reasoning_budget or DEFAULT_THINKING_BUDGET)
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if kwargs["max_tokens"] <= budget:
                kwargs["max_tokens"] = budget + kwargs["max_tokens"]
            extra = kwargs.pop("extra_body", None) or {}
            extra.pop("temperature", None)
            if extra:
                kwargs["extra_body"] = extra
        if response_schema is not None:
            schema, _ = response_tool_schema(response_schema)
            kwargs["tools"] = [{"name": RESPONSE_TOOL, "input_schema": schema,
                                "description": "Give your answer as this tool's input; it must match the schema."}]
            kwargs["tool_choice"] = {"type": "tool", "name": RESPONSE_TOOL}
        elif tools:
            kwargs["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                               for t in tools]
            if not self.profile.parallel_tool_calls:
                kwargs["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}
        return kwargs

    async def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                      response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        structured = response_schema is not None
        wrapped = structured and response_tool_schema(response_schema or {})[1]
        await images_ready(self, messages)
        stream = await self._client().messages.create(**self.request(messages, tools, system, response_schema, state.params))
        state.started = True
        calls: dict[int, _Call] = {}
        started_calls = finished_calls = 0
        input_tokens = output_tokens = cache_read = cache_write = 0
        stop_reason: str | None = None
        complete = False
        async with stream:
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    usage = event.message.usage
                    input_tokens = usage.input_tokens or 0
                    output_tokens = usage.output_tokens or 0
                    cache_read = getattr(usage, "cache_read_input_tokens", None) or 0
                    cache_write = getattr(usage, "cache_creation_input_tokens", None) or 0
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "text" and block.text:
                        yield TextDelta(block.text)
                    elif block.type == "thinking":
                        if block.thinking:
                            yield ReasoningDelta(block.thinking, origin=ORIGIN)
                        if block.signature:
                            yield ReasoningDelta(signature=block.signature, origin=ORIGIN)
                    elif block.type == "redacted_thinking":
                        yield ReasoningDelta(redacted=block.data, origin=ORIGIN)
                    elif block.type == "tool_use":
                        call = _Call(started_calls, block.id, block.name, initial=block.input or None)
                        calls[event.index] = call
                        started_calls += 1
                        if not structured:
                            yield ToolCallStart(call.ordinal, call.id, call.name)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        if delta.text:
                            yield TextDelta(delta.text)
                    elif delta.type == "thinking_delta":
                        if delta.thinking:
                            yield ReasoningDelta(delta.thinking, origin=ORIGIN)
                    elif delta.type == "signature_delta":
                        yield ReasoningDelta(signature=delta.signature, origin=ORIGIN)
                    elif delta.type == "input_json_delta" and event.index in calls:
                        call = calls[event.index]
                        if delta.partial_json:
                            call.fragments.append(delta.partial_json)
                            if not structured:
                                yield ToolCallDelta(call.ordinal, delta.partial_json)
                elif kind == "content_block_stop" and event.index in calls:
                    call = calls.pop(event.index)
                    raw = "".join(call.fragments)
                    if not raw and call.initial:
                        raw = json.dumps(call.initial)
                    if structured:
                        yield TextDelta(_unwrap(raw, wrapped))
                    else:
                        finished_calls += 1
                        yield done_from_raw(call.ordinal, call.id, call.name, raw)
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason
                    output_tokens = event.usage.output_tokens or output_tokens
                    if getattr(event.usage, "input_tokens", None):
                        input_tokens = event.usage.input_tokens
                    cache_read = getattr(event.usage, "cache_read_input_tokens", None) or cache_read
                    cache_write = getattr(event.usage, "cache_creation_input_tokens", None) or cache_write
                elif kind == "message_stop":
                    complete = True  # read on: the body ends right after it
        if not complete or calls:
            return  # the base class reports a cut stream
        # Anthropic counts cache reads and writes apart from ``input_tokens``: the prompt is their sum.
        yield Usage(input_tokens + cache_read + cache_write, output_tokens, cached_tokens=cache_read,
                    cache_write_tokens=cache_write)
        reason = "stop" if structured and stop_reason == "tool_use" else stop_reason
        yield Finish(normalize_finish(reason, finished_calls > 0, _FINISH))

    async def count_tokens(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
                           params: GenerationParams | None = None) -> int:
        """The request's input tokens by ``POST /v1/messages/count_tokens`` (``TokenCounter``): the
        same messages, system, tools, tool choice and thinking ``stream`` would send."""

        async def count() -> int:
            await images_ready(self, messages)
            kwargs = self.request(messages, tools, system, None, params)
            counted = {k: kwargs[k] for k in _COUNTED if k in kwargs}
            result = await self._client().messages.count_tokens(**counted)
            return int(result.input_tokens)

        return await self._counted(count)

    async def _list_models(self) -> list[str]:
        return [model.id async for model in self._client().models.list(limit=100)]

    async def _aclose(self) -> None:
        if self._client_obj is not None:
            await self._client_obj.close()
            self._client_obj = None


def _unwrap(raw: str, wrapped: bool) -> str:
    """The forced tool's input as answer text (``{"value": x}`` → ``x`` when we wrapped it)."""
    if not wrapped:
        return raw
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    if isinstance(value, dict) and set(value) == {"value"}:
        return json.dumps(value["value"], ensure_ascii=False)
    return raw


# -- Anthropic ---------------------------------------------------------------------------------

_ANTHROPIC_TYPES = {
    "authentication_error": "auth",
    "permission_error": "auth",
    "not_found_error": "not_found",
    "rate_limit_error": "rate_limited",
    "overloaded_error": "overloaded",
    "api_error": "server_error",
    "timeout_error": "timeout",
    "invalid_request_error": "bad_request",
    "request_too_large": "bad_request",
    "billing_error": "bad_request",
}


def map_anthropic(exc: BaseException, ctx: ErrorContext, *, started: bool) -> ProviderError:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        etype, message = body_error(exc.body)
        status = exc.status_code
        hint = _ANTHROPIC_TYPES.get(etype or "")
        if status == 529:
            hint = "overloaded"
        retry = retry_after_from_headers(exc.response.headers) if status != 200 else None
        return from_status(ctx, status, message=message, hint=hint, retry_after=retry, request=requested(exc))
    if isinstance(exc, anthropic.APITimeoutError):
        return build(ctx, "timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return transport_in_chain(ctx, exc, started) or build(ctx, "stream_cut" if started else "connection")
    return from_transport(ctx, exc, started=started) or unexpected(ctx, exc)
