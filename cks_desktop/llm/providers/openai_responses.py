"""OpenAI Responses API adapter (``openai.AsyncOpenAI().responses.create(stream=True)``).

Chosen with the OpenAI provider's setting ``api = "responses"`` (``ProviderProfile.alternate_apis``);
Chat Completions (``openai_compat.py``) stays the default because every compatible server speaks
it. The Responses API is the only one where OpenAI shows what its reasoning models thought (the
reasoning *summary*), so this adapter exists to show it.

The stream is typed SSE (``event: <type>`` / ``data: {"type": ..., "sequence_number": n, ...}``):
``response.output_text.delta`` is answer text; ``response.reasoning_summary_text.delta`` (and
``response.reasoning_text.delta``, the raw reasoning gpt-oss servers send) is thinking, yielded as
``ReasoningDelta`` and never as text; a function call is an output item of type
``function_call`` (``call_id`` is the id its result must name, ``id`` the item's own ``fc_…``)
whose arguments stream as ``response.function_call_arguments.delta``; the turn ends with
``response.completed`` (usage), ``response.incomplete`` (max tokens, content filter) or
``response.failed`` / ``error`` (an error object inside a 200 stream).

Requests are ``store: false`` (nothing kept at OpenAI, as with Chat Completions), so with the
session's thinking switch on the request also asks for ``include: ["reasoning.encrypted_content"]``
and every reasoning item comes back with an encrypted copy. The API's rules for the tool loop
(the 400s it answers otherwise, played by tests/fakes/openai_responses_fake.py): a function call
sent with its item id needs its reasoning item right before it ("Item 'fc_…' of type
'function_call' was provided without its required 'reasoning' item"), a reasoning item needs
the item it produced right after it, and with ``store: false`` a reasoning item without
``encrypted_content`` is "not found". So a reasoning item is kept in a ``Reasoning`` part whose
``signature`` holds ``{"id", "encrypted_content"}`` as JSON (opaque to everyone else), the call's
``fc_…`` id in the ``ToolCallPart``'s metadata, and both go back only for the exchange in
progress, only to the server that issued them (``Reasoning.origin``), and only together: a call
whose reasoning cannot go back is sent without its item id, which the API accepts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit


from cks_desktop.llm.assembler import done_from_raw
from cks_desktop.llm.errors import from_status
from cks_desktop.llm.events import Finish, ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta, ToolCallStart, Usage
from cks_desktop.llm.messages import Message, Reasoning, ToolCallPart, ToolDef
from cks_desktop.llm.provider import GenerationParams, ProviderError
from cks_desktop.llm.providers import image_wire
from cks_desktop.llm.providers.openai_client import OpenAIClientAdapter
from cks_desktop.llm.providers.base import StreamState, current_exchange, result_text, system_text
from cks_desktop.llm.providers.openai_compat import strict_compatible
from cks_desktop.llm.vision import images_ready, sends_images
from cks_desktop.tools.wire_names import to_wire

ITEM_KEY = "responses_item"  # ToolCallPart.metadata: the function_call item's own id (fc_…)
ORIGIN_KEY = "responses_origin"  # … and the server that issued it
_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}
# Error codes inside the stream (``response.failed``'s ``error.code``, an ``error`` event's ``code``).
_STREAM_CODES = {"rate_limit_exceeded": "rate_limited", "insufficient_quota": "rate_limited",
                 "server_error": "server_error", "context_length_exceeded": "prompt_too_long",
                 "invalid_prompt": "bad_request", "invalid_api_key": "auth"}


def reasoning_item(part: Reasoning) -> dict[str, Any] | None:
    """The input item that gives a reasoning item back, or None when ``part`` holds no usable copy
    (no id or no encrypted content: with ``store: false`` the API would answer "not found")."""
    try:
        kept = json.loads(part.signature or "")
    except ValueError:
        return None
    if not isinstance(kept, dict) or not kept.get("id") or not kept.get("encrypted_content"):
        return None
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    return {"type": "reasoning", "id": kept["id"], "summary": summary, "encrypted_content": kept["encrypted_content"]}


def _call_item(call: ToolCallPart, item_id: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call", "call_id": call.id, "name": to_wire(call.name),
                            "arguments": json.dumps(call.arguments, ensure_ascii=False)}
    if item_id:
        item["id"] = item_id
    return item


def _item_id(call: ToolCallPart, origin: str) -> str | None:
    metadata = call.metadata or {}
    value = metadata.get(ITEM_KEY) if metadata.get(ORIGIN_KEY) == origin else None
    return value if isinstance(value, str) and value else None


def _assistant_items(message: Message, origin: str, current: bool) -> list[dict[str, Any]]:
    """An assistant turn as input items: its text first (it has no item id, so it cannot stand
    between a reasoning item and its call), then its calls and — exchange in progress, same
    server — its reasoning items, in the order the model produced them, so each reasoning item
    is right before the call it produced and the calls carry their item ids. The two go back
    together or not at all; a reasoning item with nothing after it is left out."""
    items: list[dict[str, Any]] = [{"role": "assistant", "content": message.text}] if message.text else []
    calls = message.tool_calls
    kept = {id(p): item for p in message.reasoning if current and calls and p.origin == origin
            for item in [reasoning_item(p)] if item is not None}
    together = bool(kept) and any(_item_id(c, origin) for c in calls)
    tail: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            tail.append(_call_item(part, _item_id(part, origin) if together else None))
        elif isinstance(part, Reasoning) and together and id(part) in kept:
            tail.append(kept[id(part)])
    while tail and tail[-1].get("type") == "reasoning":
        tail.pop()
    return items + tail


def _input_image(part: Any) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image_wire.data_url(part)}


def to_responses_input(messages: list[Message], *, origin: str, images: bool = False) -> list[dict[str, Any]]:
    """Neutral history → the Responses API's ``input`` items (the system text goes in
    ``instructions``); ``images``: the model takes images."""
    items: list[dict[str, Any]] = []
    start = current_exchange(messages)
    for number, message in enumerate(messages):
        if message.role == "system":
            continue
        for result in message.tool_results:
            items.append({"type": "function_call_output", "call_id": result.call_id, "output": result_text(result)})
        shown: list[dict[str, Any]] = []
        for result in message.tool_results:  # a tool's images follow as one user message naming the call
            usable = [p for p in result.images if image_wire.usable(p, images)]
            if usable:
                shown.append({"type": "input_text", "text": image_wire.result_caption(result)})
                shown += [_input_image(p) for p in usable]
        if shown:
            items.append({"role": "user", "content": shown})
        if message.role == "assistant":
            items += _assistant_items(message, origin, number > start)
        elif message.images:
            content: list[dict[str, Any]] = [{"type": "input_text", "text": message.text}] if message.text else []
            content += [_input_image(i) if image_wire.usable(i, images)
                        else {"type": "input_text", "text": image_wire.note(i)} for i in message.images]
            items.append({"role": "user", "content": content})
        elif message.role == "user" and message.text:
            items.append({"role": "user", "content": message.text})
    return items


def _usage(response: Any) -> Usage | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", 0) or 0
    reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", 0) or 0
    return Usage(usage.input_tokens or 0, usage.output_tokens or 0, cached_tokens=cached, reasoning_tokens=reasoning)


@dataclass
class _Call:
    ordinal: int
    call_id: str
    name: str
    fragments: list[str] = field(default_factory=list)
    done: bool = False


class OpenAIResponsesProvider(OpenAIClientAdapter):
    image_encoding = "data_url"  # vision.images_ready encodes off the loop before request() (image_wire)

    @property
    def display(self) -> str:
        host = urlsplit(self.base_url).hostname or ""
        return "OpenAI" if host.endswith("openai.com") else "the Responses API server"

    @property
    def reasoning_origin(self) -> str:
        """Reasoning items and call ids go back only to the server that issued them (and never to
        the Chat Completions adapter, whose origin is ``openai@<host>``)."""
        return f"openai-responses@{urlsplit(self.base_url).netloc}"

    def stream_error(self, code: str | None, message: str | None) -> ProviderError:
        """An error object inside a 200 stream (``response.failed``, an ``error`` event)."""
        hint = _STREAM_CODES.get(code or "", "server_error")
        if "overload" in (message or "").lower():
            hint = "overloaded"
        return from_status(self.error_context(), None, message=message or code or "", hint=hint)

    def request(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, params: GenerationParams | None = None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.config.model, "stream": True, "store": False,
            "input": to_responses_input(messages, origin=self.reasoning_origin, images=sends_images(self))}
        instructions = system_text(messages, system)
        if instructions:
            kwargs["instructions"] = instructions
        if params is not None and params.temperature is not None:
            kwargs["temperature"] = params.temperature
        if params is not None and params.max_output_tokens is not None:
            kwargs["max_output_tokens"] = params.max_output_tokens
        if response_schema is not None:
            kwargs["text"] = {"format": {"type": "json_schema", "name": "response", "schema": response_schema,
                                         "strict": strict_compatible(response_schema)}}
        elif tools:
            # ``strict`` defaults to true in this API; our tools' schemas rarely meet its rules.
            kwargs["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                                "parameters": t.parameters, "strict": strict_compatible(t.parameters)}
                               for t in tools]
            if not self.profile.parallel_tool_calls:
                kwargs["parallel_tool_calls"] = False
        if params is not None and params.reasoning:
            # A summary of the thinking, and its encrypted copy to give back in the tool loop;
            # OpenAI's reasoning models refuse a temperature.
            kwargs["reasoning"] = {"effort": params.reasoning_level, "summary": "auto"}
            kwargs["include"] = ["reasoning.encrypted_content"]
            kwargs.pop("temperature", None)
        return kwargs

    async def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                      response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        await images_ready(self, messages)
        stream = await self._client().responses.create(
            **self.request(messages, tools, system, response_schema, state.params))
        state.started = True
        origin = self.reasoning_origin
        calls: dict[str, _Call] = {}  # item id → call
        summaries: dict[str, int] = {}  # reasoning item id → the summary part being streamed
        async with stream:
            async for event in stream:
                kind = getattr(event, "type", "")
                if kind == "response.output_text.delta" or kind == "response.refusal.delta":
                    if event.delta:
                        yield TextDelta(event.delta)
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    index = getattr(event, "summary_index", getattr(event, "content_index", 0)) or 0
                    previous = summaries.get(event.item_id)
                    summaries[event.item_id] = index
                    if previous is not None and index != previous:
                        yield ReasoningDelta("\n\n", origin=origin)  # the next summary part
                    if event.delta:
                        yield ReasoningDelta(event.delta, origin=origin)
                elif kind == "response.output_item.added" and getattr(event.item, "type", "") == "function_call":
                    item = event.item
                    call = _Call(len(calls), item.call_id, item.name)
                    calls[item.id or item.call_id] = call
                    yield ToolCallStart(call.ordinal, call.call_id, call.name)
                elif kind == "response.function_call_arguments.delta":
                    call = calls.get(event.item_id)  # type: ignore[assignment]
                    if call is not None and event.delta:
                        call.fragments.append(event.delta)
                        yield ToolCallDelta(call.ordinal, event.delta)
                elif kind == "response.output_item.done":
                    for done in self._item_done(event.item, calls, origin):
                        yield done
                elif kind in ("response.completed", "response.incomplete"):
                    for call in calls.values():  # a server that never sent the item's "done"
                        if not call.done:
                            yield done_from_raw(call.ordinal, call.call_id, call.name, "".join(call.fragments))
                    usage = _usage(event.response)
                    if usage is not None:
                        yield usage
                    yield Finish(self._finish(kind, event.response, bool(calls)))
                    return
                elif kind == "response.failed":
                    error = getattr(event.response, "error", None)
                    raise self.stream_error(getattr(error, "code", None), getattr(error, "message", None))
                elif kind == "error":
                    raise self.stream_error(getattr(event, "code", None), getattr(event, "message", None))
        # no terminal event: the base class reports a cut stream

    def _item_done(self, item: Any, calls: dict[str, _Call], origin: str) -> list[StreamEvent]:
        kind = getattr(item, "type", "")
        if kind == "function_call":
            call = calls.get(item.id or item.call_id)
            if call is None:  # a server that sent the item only when done
                call = _Call(len(calls), item.call_id, item.name)
                calls[item.id or item.call_id] = call
                started: list[StreamEvent] = [ToolCallStart(call.ordinal, call.call_id, call.name)]
            else:
                started = []
            call.done = True
            raw = item.arguments or "".join(call.fragments)
            metadata = {ITEM_KEY: item.id, ORIGIN_KEY: origin} if item.id else None
            return [*started, done_from_raw(call.ordinal, call.call_id, call.name, raw, metadata)]
        if kind == "reasoning":
            encrypted = getattr(item, "encrypted_content", None)
            if item.id and encrypted:  # closes the thinking block with what must go back
                return [ReasoningDelta(signature=json.dumps({"id": item.id, "encrypted_content": encrypted}),
                                       origin=origin)]
        return []

    @staticmethod
    def _finish(kind: str, response: Any, has_calls: bool) -> str:
        if kind == "response.incomplete":
            reason = getattr(getattr(response, "incomplete_details", None), "reason", None) or "length"
            return _INCOMPLETE.get(reason, reason)
        return "tool_calls" if has_calls else "stop"


