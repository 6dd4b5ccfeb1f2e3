"""Ollama adapter: the native ``/api/chat`` endpoint through ``ollama.AsyncClient``.

Not the OpenAI-compatible endpoint, because only the native one lets us set
``options.num_ctx``. Ollama's default context is small, and a prompt longer than
the context is cut silently from the front — taking the tool definitions with
it — so the window is always set explicitly (settings: ``num_ctx``).

Tool calls arrive whole, with ``arguments`` as an object, in a ``done:false``
chunk, and without ids: ids are made up here. The SDK validates tool schemas
into its own model, which keeps only ``type``/``description``/``enum``/``items``
of each property (so does the server), so nested object details do not reach
the model. Results go back as ``role: "tool"`` messages with ``tool_name``; a
failed call's result reads "Error: ...".

The SDK has no retries of its own, and nothing here retries: a 429/5xx answer
(the SDK raises it at the first chunk) goes to ``Adapter.stream``, the one layer
that retries (``llm/retry.py``). The SDK's ``ResponseError`` carries no headers, so the
client is built with an httpx response hook (the SDK passes its keyword arguments to httpx) that
notes an error answer's ``Retry-After`` for the request's task; the error then carries it, and the
policy waits what a proxy in front of Ollama asked.

Thinking: ``think`` (true, or a level for gpt-oss) when the session asks for it;
``message.thinking`` streams as ``ReasoningDelta``s and goes back as ``thinking`` on the
assistant messages of the exchange in progress.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import ollama

from cks_desktop.llm.errors import (
    ErrorContext, build, from_status, from_transport, requested, retry_after_from_headers, says_no_thinking,
    unexpected,
)
from cks_desktop.llm.events import (
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallDone,
    ToolCallStart,
    Usage,
)
from cks_desktop.llm.messages import Message, ToolDef, ToolResultPart
from cks_desktop.llm.providers import image_wire
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderError, ProviderProfile
from cks_desktop.llm.profiles import OLLAMA
from cks_desktop.llm.providers.base import (
    Adapter,
    StreamState,
    current_exchange,
    normalize_finish,
    result_text,
    shared_tls,
    synth_id,
    system_text,
)
from cks_desktop.llm.vision import images_ready, sends_images
from cks_desktop.tools.wire_names import to_wire

DEFAULT_NUM_CTX = 16384
_FINISH = {"stop": "stop", "length": "length", "load": "stop", "unload": "stop"}
ORIGIN = "ollama"
LEVEL_MODELS = ("gpt-oss",)  # models whose ``think`` takes a level ("low"/"medium"/"high"), not true
# The seconds the last error answer of this task's request asked to wait (its ``Retry-After``):
# per task, since parallel extraction parts share one client.
_ASKED_WAIT: contextvars.ContextVar[float | None] = contextvars.ContextVar("ollama_asked_wait", default=None)


async def _note_answer(response: Any) -> None:
    """httpx response hook: keep an error answer's ``Retry-After`` (None for any other answer)."""
    _ASKED_WAIT.set(retry_after_from_headers(response.headers) if response.status_code >= 400 else None)


def to_ollama_messages(messages: list[Message], system: str | None, *, images: bool = False) -> list[dict[str, Any]]:
    """Neutral history → ``messages`` for ``/api/chat``; ``images``: the model takes images (sent in
    the message's ``images`` list as bytes, which the SDK base64-encodes; see ``image_wire``)."""
    wire: list[dict[str, Any]] = []
    text = system_text(messages, system)
    if text:
        wire.append({"role": "system", "content": text})
    current = current_exchange(messages)
    for position, message in enumerate(messages):
        if message.role == "system":
            continue
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                result: dict[str, Any] = {"role": "tool", "content": result_text(part), "tool_name": to_wire(part.name)}
                shown = [i.data for i in part.images if image_wire.usable(i, images)]
                if shown:
                    result["images"] = shown
                wire.append(result)
        body = message.text
        calls = message.tool_calls
        if message.role == "assistant":
            if not body and not calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": body}
            thinking = "".join(p.text for p in message.reasoning if p.origin == ORIGIN)
            if thinking and position >= current:
                # The thinking of the exchange in progress goes back (the tool loop continues from it,
                # as Ollama's own examples append the whole message); the models' templates drop
                # that of earlier exchanges, so it is not sent.
                entry["thinking"] = thinking
            if calls:
                entry["tool_calls"] = [{"function": {"name": to_wire(c.name), "arguments": c.arguments}}
                                       for c in calls]
            wire.append(entry)
        elif message.images:
            shown = [i.data for i in message.images if image_wire.usable(i, images)]
            notes = [image_wire.note(i) for i in message.images if not image_wire.usable(i, images)]
            user: dict[str, Any] = {"role": "user", "content": "\n".join([body, *notes] if body else notes)}
            if shown:
                user["images"] = shown
            wire.append(user)
        elif body:
            wire.append({"role": "user", "content": body})
    return wire


class OllamaProvider(Adapter):
    def __init__(self, config: ProviderConfig, profile: ProviderProfile = OLLAMA) -> None:
        super().__init__(config, profile)
        self._client_obj: ollama.AsyncClient | None = None

    @property
    def base_url(self) -> str:
        return self.config.base_url or self.profile.default_base_url

    def _client(self) -> ollama.AsyncClient:
        if self._closed:
            raise RuntimeError("this provider was closed")
        if self._client_obj is None:
            self._client_obj = ollama.AsyncClient(host=self.base_url, timeout=self.config.timeout,
                                                  verify=shared_tls("httpx"),
                                                  event_hooks={"response": [_note_answer]})
        return self._client_obj

    def map_error(self, exc: BaseException, *, started: bool) -> ProviderError:
        return map_ollama(exc, self.error_context(), started=started, retry_after=_ASKED_WAIT.get())

    def request(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, params: GenerationParams | None = None) -> dict[str, Any]:
        options = self.config.options or {}
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": to_ollama_messages(messages, system, images=sends_images(self)),
            "stream": True,
            "options": {"num_ctx": int(options.get("num_ctx") or DEFAULT_NUM_CTX)},
        }
        if params is not None and params.temperature is not None:
            kwargs["options"]["temperature"] = params.temperature
        if params is not None and params.max_output_tokens is not None:
            kwargs["options"]["num_predict"] = params.max_output_tokens
        if response_schema is not None:
            kwargs["format"] = response_schema
        elif tools:
            kwargs["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools]
        if params is not None and params.reasoning:
            # ``think``: true, or a level for the models that take one (gpt-oss; options["think_level"]
            # forces a level). Off sends nothing: a thinking model still thinks by its own default, and
            # its ``thinking`` is shown apart from the answer either way.
            level = options.get("think_level")
            if not isinstance(level, str) or level not in ("low", "medium", "high"):
                level = params.reasoning_level if self.config.model.startswith(LEVEL_MODELS) else None
            kwargs["think"] = level or True
        return kwargs

    async def _open(self, kwargs: dict[str, Any]) -> tuple[AsyncIterator[Any], Any]:
        """Send the request and wait for its first chunk (an error status is raised there)."""
        _ASKED_WAIT.set(None)
        parts = await self._client().chat(**kwargs)
        try:
            first = await parts.__anext__()
        except BaseException:
            await _close(parts)
            raise
        return parts, first

    async def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                      response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        await images_ready(self, messages)
        parts, part = await self._open(self.request(messages, tools, system, response_schema, state.params))
        state.started = True
        ordinal = 0
        complete = False
        usage = Usage()
        done_reason: str | None = None
        try:
            while True:
                if not complete:
                    message = part.message
                    if message is not None:
                        if message.thinking:
                            yield ReasoningDelta(message.thinking, origin=ORIGIN)
                        if message.content:
                            yield TextDelta(message.content)
                        for call in message.tool_calls or []:
                            call_id, name = synth_id(), call.function.name
                            arguments = dict(call.function.arguments or {})
                            raw = json.dumps(arguments, ensure_ascii=False)
                            yield ToolCallStart(ordinal, call_id, name)
                            yield ToolCallDelta(ordinal, raw)
                            yield ToolCallDone(ordinal, call_id, name, arguments, raw)
                            ordinal += 1
                    if part.done:
                        complete = True
                        done_reason = part.done_reason
                        usage = Usage(part.prompt_eval_count or 0, part.eval_count or 0)
                # read on to the end of the body even after ``done``, so the SDK's
                # generator and the HTTP stream under it finish on their own
                try:
                    part = await parts.__anext__()
                except StopAsyncIteration:
                    break
        finally:
            await _close(parts)
        if not complete:
            return  # the base class reports a cut stream
        yield usage
        yield Finish(normalize_finish(done_reason, ordinal > 0, _FINISH))

    async def reported_capabilities(self) -> list[str]:
        """The model's ``capabilities`` from ``/api/show`` ("completion", "tools", "vision", …; llm/vision.py)."""
        shown = await self._client().show(self.config.model)
        return [str(c) for c in getattr(shown, "capabilities", None) or ()]

    async def reported_context_window(self) -> int | None:
        """The model's own ``<family>.context_length`` from ``/api/show`` (llm/windows.py caps num_ctx by it)."""
        shown = await self._client().show(self.config.model)
        info = getattr(shown, "modelinfo", None) or {}
        for key, value in info.items():
            if str(key).endswith(".context_length") and isinstance(value, int) and value > 0:
                return value
        return None

    async def _list_models(self) -> list[str]:
        listing = await self._client().list()
        return [m.model for m in listing.models if m.model]

    async def _aclose(self) -> None:
        if self._client_obj is not None:
            await self._client_obj.close()  # type: ignore[no-untyped-call]  # the ollama SDK leaves it untyped
            self._client_obj = None


async def _close(parts: Any) -> None:
    aclose = getattr(parts, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


# -- Ollama ------------------------------------------------------------------------------------

def map_ollama(exc: BaseException, ctx: ErrorContext, *, started: bool,
               retry_after: float | None = None) -> ProviderError:
    """``retry_after``: what the error answer's headers asked (the SDK's ``ResponseError`` keeps no
    headers; the adapter reads them from the HTTP response itself)."""
    import ollama

    if isinstance(exc, ollama.ResponseError):
        message = str(exc.error)
        status = exc.status_code if exc.status_code and exc.status_code > 0 else None
        lower = message.lower()
        if "does not support tools" in lower:
            return build(ctx, "no_tool_support", status=status, message=message)
        if says_no_thinking(message):
            return build(ctx, "no_thinking_support", status=status, message=message)
        if "not found" in lower and "model" in lower:
            return build(ctx, "model_not_found", status=status, message=message)
        if status is None:  # an {"error": ...} line in the middle of the stream
            hint = "bad_response" if "parsing tool call" in lower else "server_error"
            if "overload" in lower:
                hint = "overloaded"
            return build(ctx, hint, message=message)
        return from_status(ctx, status, message=message, retry_after=retry_after, request=requested(exc))
    mapped = from_transport(ctx, exc, started=started)
    if mapped is not None:
        return mapped
    if isinstance(exc, json.JSONDecodeError):  # a line cut in half
        return build(ctx, "stream_cut" if started else "bad_response", message=str(exc))
    return unexpected(ctx, exc)
