"""OpenAI-compatible Chat Completions adapter (``openai.AsyncOpenAI``, streaming).

One adapter serves OpenAI itself and the servers that copy its API (llama.cpp's
server, LM Studio, vLLM, OpenRouter): only ``base_url`` changes. Tool calls
arrive as fragments keyed by ``tool_calls[].index``; the id and name come in
the first fragment of a call (some servers repeat the name, some send the id
late or never, so an id is made up when missing). Several calls may stream
interleaved; each is finished when the choice reports its ``finish_reason``.

Servers differ, so the adapter asks only for what they all accept: usage is
requested with ``stream_options.include_usage`` (``options["stream_usage"] =
False`` turns that off for a server that refuses it), and no max-tokens field
is sent (OpenAI renamed it; compatible servers disagree on which name they read).

Tool results have no error flag in this API, so a failed call's result reads
"Error: ...". Structured output uses ``response_format`` json_schema, with
``strict`` only when the schema meets the strict-mode rules (every object
closed with ``additionalProperties: false`` and every property required);
otherwise the server gets the schema unenforced and ``respond_json`` validates.

Reasoning: ``delta.reasoning_content`` (DeepSeek, vLLM before 0.10, llama.cpp) or
``delta.reasoning`` (OpenRouter, vLLM, LM Studio's gpt-oss) streams as ``ReasoningDelta``s,
never as answer text; it goes back by DeepSeek's documented rule (``_echo_reasoning``).
``params.reasoning`` asks with ``reasoning_effort``. Chat Completions has no reasoning
summaries (OpenAI offers them only in the Responses API).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import openai

from cks_desktop.llm.assembler import done_from_raw
from cks_desktop.llm.events import Finish, ReasoningDelta, StreamEvent, TextDelta
from cks_desktop.llm.messages import Message, ToolDef
from cks_desktop.llm.providers import image_wire
from cks_desktop.llm.providers.compat_stream import CallTracker, UsageReader
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderProfile
from cks_desktop.llm.profiles import OPENAI
from cks_desktop.llm.providers.openai_client import OpenAIClientAdapter
from cks_desktop.llm.providers.base import (
    StreamState,
    normalize_finish,
    result_text,
    synth_id,
    system_text,
)
from cks_desktop.llm.vision import images_ready, sends_images
from cks_desktop.tools.wire_names import to_wire

_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "function_call": "tool_calls", "length": "length",
           "content_filter": "content_filter"}
REASONING_FIELDS = ("reasoning_content", "reasoning")  # DeepSeek/vLLM/llama.cpp, OpenRouter/newer vLLM
ECHO_RULES = ("tool_calls", "never")
_UNSUPPORTED_STRICT = {"patternProperties", "if", "then", "else", "dependentRequired", "dependentSchemas",
                       "unevaluatedProperties", "propertyNames", "not", "contains", "allOf", "oneOf"}


def strict_compatible(schema: Any, *, root: bool = True) -> bool:
    """Whether OpenAI's strict structured-output mode accepts ``schema`` unchanged."""
    if not isinstance(schema, dict):
        return True
    if root and schema.get("type") != "object":
        return False
    if _UNSUPPORTED_STRICT & set(schema):
        return False
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
        if not all(strict_compatible(s, root=False) for s in props.values()):
            return False
    for key in ("items", "anyOf"):
        sub = schema.get(key)
        subs = sub if isinstance(sub, list) else [sub] if sub is not None else []
        if not all(strict_compatible(s, root=False) for s in subs):
            return False
    for defs in (schema.get("$defs"), schema.get("definitions")):
        if isinstance(defs, dict) and not all(strict_compatible(s, root=False) for s in defs.values()):
            return False
    return True


def to_openai_messages(messages: list[Message], system: str | None, *, images: bool = False,
                       reasoning_origin: str = "", echo: str = "tool_calls") -> list[dict[str, Any]]:
    """Neutral history → ``messages`` for Chat Completions; ``images``: the model takes images
    (a tool's images follow its turn's tool messages as a user message: see ``image_wire``)."""
    wire: list[dict[str, Any]] = []
    text = system_text(messages, system)
    if text:
        wire.append({"role": "system", "content": text})
    for message in messages:
        if message.role == "system":
            continue
        for part in message.tool_results:
            wire.append({"role": "tool", "tool_call_id": part.call_id, "content": result_text(part)})
        carried = image_wire.openai_result_images(message.tool_results, images)
        if carried is not None:
            wire.append(carried)
        calls = message.tool_calls
        body = message.text
        if message.role == "assistant":
            if not body and not calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": body or None}
            if calls and echo == "tool_calls":
                _echo_reasoning(entry, message, reasoning_origin)
            if calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": to_wire(c.name), "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                    for c in calls]
            wire.append(entry)
        elif message.images:
            content: list[dict[str, Any]] = [{"type": "text", "text": body}] if body else []
            content += [image_wire.openai_image(i) if image_wire.usable(i, images)
                        else {"type": "text", "text": image_wire.note(i)} for i in message.images]
            wire.append({"role": "user", "content": content})
        elif body:
            wire.append({"role": "user", "content": body})
    return wire


def _echo_reasoning(entry: dict[str, Any], message: Message, origin: str) -> None:
    """Send an assistant turn's reasoning back, as DeepSeek documents it: the ``reasoning_content``
    of a turn that made tool calls goes back in every later request (it refuses the request
    otherwise, 400), and that of a turn without calls is never sent (older deepseek-reasoner
    refused any; the others ignore it). Only to the server that wrote it, under its field name."""
    parts = [p for p in message.reasoning if p.origin == origin and p.text]
    if origin and parts:
        entry[parts[0].wire_field or REASONING_FIELDS[0]] = "".join(p.text for p in parts)


class OpenAICompatProvider(OpenAIClientAdapter):
    image_encoding = "data_url"  # vision.images_ready encodes off the loop before request() (image_wire)

    def __init__(self, config: ProviderConfig, profile: ProviderProfile = OPENAI) -> None:
        super().__init__(config, profile)
        self._usage_refused = False  # the server refused ``stream_options`` once: never sent again

    @property
    def display(self) -> str:
        host = urlsplit(self.base_url).hostname or ""
        return "OpenAI" if host.endswith("openai.com") else "the OpenAI-compatible server"

    @property
    def reasoning_origin(self) -> str:
        """``Reasoning.origin`` of this server's reasoning: sent back only to the same server."""
        return f"{self.profile.name}@{urlsplit(self.base_url).netloc}"

    def _reasoning_request(self, kwargs: dict[str, Any], params: GenerationParams) -> None:
        """Ask for reasoning: ``reasoning_effort`` (OpenAI's o-series and GPT-5, DeepSeek, vLLM's
        gpt-oss; the budget as a level), DeepSeek's ``thinking`` switch at its own host, and
        ``options["reasoning_request"]`` (an object merged into the body) for a server that wants
        something else (vLLM/llama.cpp ``chat_template_kwargs``, OpenRouter's ``reasoning``).
        OpenAI's reasoning models refuse a temperature other than 1: it is not sent to OpenAI."""
        options = self.config.options or {}
        host = urlsplit(self.base_url).hostname or ""
        kwargs["reasoning_effort"] = params.reasoning_level
        extra: dict[str, Any] = {}
        if host.endswith("deepseek.com"):
            extra["thinking"] = {"type": "enabled"}
        custom = options.get("reasoning_request")
        if isinstance(custom, dict):
            extra.update(custom)
        if extra:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **extra}
        if host.endswith("openai.com"):
            kwargs.pop("temperature", None)

    def request(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, params: GenerationParams | None = None) -> dict[str, Any]:
        options = self.config.options or {}
        echo = options.get("reasoning_echo", "tool_calls")
        kwargs: dict[str, Any] = {"model": self.config.model,
                                  "messages": to_openai_messages(messages, system, images=sends_images(self),
                                                                 reasoning_origin=self.reasoning_origin,
                                                                 echo=echo if echo in ECHO_RULES else "tool_calls"),
                                  "stream": True}
        if options.get("stream_usage", True) and not self._usage_refused:
            kwargs["stream_options"] = {"include_usage": True}
        if params is not None and params.temperature is not None:
            kwargs["temperature"] = params.temperature
        if params is not None and params.max_output_tokens is not None:
            # OpenAI's own API wants max_completion_tokens (its reasoning models refuse max_tokens);
            # the compatible servers (llama.cpp, vLLM, LM Studio) know max_tokens.
            vendor = self.base_url.rstrip("/") == self.profile.default_base_url.rstrip("/")
            kwargs["max_completion_tokens" if vendor else "max_tokens"] = params.max_output_tokens
        if response_schema is not None:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "response", "schema": response_schema, "strict": strict_compatible(response_schema)}}
        elif tools:
            kwargs["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools]
            if not self.profile.parallel_tool_calls:  # only sent to turn it off: not every server knows it
                kwargs["parallel_tool_calls"] = False
        if params is not None and params.reasoning:
            self._reasoning_request(kwargs, params)
        return kwargs

    async def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                      response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        await images_ready(self, messages)
        stream = await self._open(self.request(messages, tools, system, response_schema, state.params))
        state.started = True
        calls = CallTracker()  # llm/providers/compat_stream.py: what each server does with index/id
        finish_reason: str | None = None
        usage = UsageReader()
        async with stream:
            async for chunk in stream:
                usage.feed(chunk)
                for choice in chunk.choices or []:
                    if choice.index not in (0, None):
                        continue
                    delta = choice.delta
                    if delta is not None:
                        for name in REASONING_FIELDS:  # never mixed into the answer
                            thought = getattr(delta, name, None)
                            if isinstance(thought, str) and thought:
                                yield ReasoningDelta(thought, origin=self.reasoning_origin, wire_field=name)
                                break
                        if delta.content:
                            yield TextDelta(delta.content)
                        for fragment in delta.tool_calls or []:
                            for event in calls.absorb(fragment):
                                yield event
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        if finish_reason is None:
            return  # the base class reports a cut stream
        started = calls.started()
        for call in started:
            yield done_from_raw(call.ordinal, call.id or synth_id(), call.name, "".join(call.fragments))
        yield usage.usage
        yield Finish(normalize_finish(finish_reason, bool(started), _FINISH))

    async def _open(self, body: dict[str, Any]) -> Any:
        """Start the stream. A server that refuses ``stream_options`` (vLLM before 0.5, older Azure API
        versions, some proxies: a 400 that names it) is asked again without it, and this adapter
        never sends it again; usage then comes where the server puts it, or is estimated."""
        try:
            return await self._client().chat.completions.create(**body)
        except openai.BadRequestError as exc:
            said = f"{exc.message} {exc.body}"
            if "stream_options" not in body or "stream_options" not in said:
                raise
            self._usage_refused = True
            retry = {key: value for key, value in body.items() if key != "stream_options"}
            return await self._client().chat.completions.create(**retry)

    async def reported_context_window(self) -> int | None:
        """The window a compatible server reports in its model list (vLLM, LM Studio, OpenRouter,
        llama.cpp; see llm/windows.py); OpenAI's own list says nothing, so the table answers."""
        from cks_desktop.llm.windows import reported_in_listing

        async for model in self._client().models.list():
            if model.id == self.config.model:
                return reported_in_listing(model.model_dump())
        return None

