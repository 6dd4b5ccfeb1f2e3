"""Gemini adapter (``google.genai.Client(...).aio.models.generate_content_stream``).

Tools go out as function declarations with their JSON Schema as
``parameters_json_schema`` (the full schema, not the OpenAPI subset of
``parameters``); automatic function calling is off, since tools run only in our
loop. Function calls arrive whole, usually without ids, so ids are made up;
made-up ids are never sent back as if Gemini had issued them.

Thought signatures: Gemini 3 models attach an opaque ``thought_signature`` to a
function call and reject the next request (400) if the call comes back without
it. It travels in ``ToolCallDone.metadata`` / ``ToolCallPart.metadata``
(base64 text, so transcripts stay JSON). A model turn that has calls but no
signature (written by another provider, or before this existed) gets Google's
documented placeholder, ``skip_thought_signature_validator``, on its first call.

Results go back as ``function_response`` parts in a user turn, with the output
under ``output`` or, for a failed call, under ``error``. A
``MALFORMED_FUNCTION_CALL`` finish (the model wrote a call Gemini could not
parse; there is no call to answer) is reported as a ``bad_response`` error.

Retries: google-genai would retry 408/429/5xx when given retry options; it is given
none (``retry_options=None``: one attempt), because ``Adapter.stream`` is the one
layer that retries (``llm/retry.py``), reading the ``RetryInfo`` delay.

Thoughts: with ``params.reasoning`` the config asks for thought summaries
(``include_thoughts``, and ``thinking_budget`` when set); ``thought`` parts stream as
``ReasoningDelta``s, their signatures with them, and go back as ``thought`` parts; a
signature on the answer's last part goes back on that part.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from google import genai
from google.genai import types

from cks_desktop.llm.errors import (
    ErrorContext, build, from_status, from_transport, kind_for_status, requested, retry_after_from_headers,
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
from cks_desktop.llm.messages import ImagePart, Message, Reasoning, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.providers import image_wire
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderError, ProviderProfile
from cks_desktop.llm.profiles import GEMINI
from cks_desktop.llm.providers.base import (
    Adapter,
    StreamState,
    is_synthetic_id,
    normalize_finish,
    shared_tls,
    synth_id,
    system_text,
)
from cks_desktop.llm.vision import images_ready, sends_images
from cks_desktop.tools.wire_names import to_wire

SIGNATURE_KEY = "thought_signature"
SKIP_SIGNATURE = b"skip_thought_signature_validator"
ORIGIN = "gemini"  # ``Reasoning.origin`` of thoughts this adapter sends back
_FILTERED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
             "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION")
_FINISH = {"stop": "stop", "max_tokens": "length", "finish_reason_unspecified": "stop",
           **{name.lower(): "content_filter" for name in _FILTERED}}


def _signature(metadata: dict[str, Any] | None) -> bytes | None:
    value = (metadata or {}).get(SIGNATURE_KEY)
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _thought_part(part: Reasoning, parts: list[dict[str, Any]]) -> None:
    """A thought back into ``parts``: a summary as a ``thought`` part with its signature; a bare
    signature (Gemini put it on the answer's last text part) back onto the part before it, as
    received. Another vendor's thinking is left out."""
    if part.origin != ORIGIN:
        return
    signature = _signature({SIGNATURE_KEY: part.signature})
    if part.text:
        entry: dict[str, Any] = {"text": part.text, "thought": True}
        if signature is not None:
            entry["thought_signature"] = signature
        parts.append(entry)
    elif signature is not None and parts and "thought_signature" not in parts[-1]:
        parts[-1]["thought_signature"] = signature


def to_gemini_contents(messages: list[Message], *, images: bool = False) -> list[dict[str, Any]]:
    """Neutral history → ``contents`` (dict form; system text goes to ``system_instruction``);
    ``images``: the model takes images (``inline_data`` parts; a tool's after the function responses)."""
    contents: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        parts: list[dict[str, Any]] = []
        carried: list[dict[str, Any]] = []  # a tool's images, after the function responses
        signed = False
        for part in message.parts:
            if isinstance(part, Text):
                if part.text:
                    parts.append({"text": part.text})
            elif isinstance(part, Reasoning):
                _thought_part(part, parts)
            elif isinstance(part, ImagePart):
                parts.append(image_wire.gemini_image(part) if image_wire.usable(part, images)
                             else {"text": image_wire.note(part)})
            elif isinstance(part, ToolCallPart):
                call: dict[str, Any] = {"name": to_wire(part.name), "args": part.arguments}
                if not is_synthetic_id(part.id):
                    call["id"] = part.id
                entry: dict[str, Any] = {"function_call": call}
                signature = _signature(part.metadata)
                if signature is None and not signed:
                    signature = SKIP_SIGNATURE
                if signature is not None:
                    entry["thought_signature"] = signature
                    signed = True
                parts.append(entry)
            elif isinstance(part, ToolResultPart):
                response: dict[str, Any] = {"name": to_wire(part.name),
                                            "response": {"error" if part.is_error else "output": part.content}}
                if not is_synthetic_id(part.call_id):
                    response["id"] = part.call_id
                parts.append({"function_response": response})
                shown = [image_wire.gemini_image(i) for i in part.images if image_wire.usable(i, images)]
                if shown:
                    carried += [{"text": image_wire.result_caption(part)}, *shown]
        parts += carried
        if not parts:
            continue
        role = "model" if message.role == "assistant" else "user"
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return contents


class GeminiProvider(Adapter):
    def __init__(self, config: ProviderConfig, profile: ProviderProfile = GEMINI) -> None:
        super().__init__(config, profile)
        self._client_obj: genai.Client | None = None

    @property
    def base_url(self) -> str:
        return self.config.base_url or self.profile.default_base_url

    def _client(self) -> genai.Client:
        if self._closed:
            raise RuntimeError("this provider was closed")
        if self._client_obj is None:
            context = shared_tls("httpx2")  # google-genai would build two per client
            http = types.HttpOptions(base_url=self.config.base_url or None,
                                     timeout=max(1, int(self.config.timeout * 1000)), retry_options=None,
                                     client_args={"verify": context},
                                     async_client_args={"verify": context, "ssl": context})
            self._client_obj = genai.Client(api_key=self.config.api_key or "", http_options=http)
        return self._client_obj

    def map_error(self, exc: BaseException, *, started: bool) -> ProviderError:
        return map_gemini(exc, self.error_context(), started=started)

    def request(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                response_schema: dict[str, Any] | None, params: GenerationParams | None = None) -> dict[str, Any]:
        # No max_output_tokens: on thinking models it also caps the thinking, and the
        # model's own limit is the better default (``max_tokens`` is Anthropic's, which requires one).
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        text = system_text(messages, system)
        if text:
            config["system_instruction"] = text
        if params is not None and params.temperature is not None:
            config["temperature"] = params.temperature
        if params is not None and params.max_output_tokens is not None:  # only when the person set one
            config["max_output_tokens"] = params.max_output_tokens
        if params is not None and params.reasoning:
            # Thought summaries (``include_thoughts``) and the budget where one is set (-1 would be
            # "dynamic", the model's default anyway); Gemini 3 reads the budget as its nearest level.
            config["thinking_config"] = types.ThinkingConfig(include_thoughts=True,
                                                             thinking_budget=params.reasoning_budget)
        if response_schema is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = response_schema
        elif tools:
            config["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description, "parameters_json_schema": t.parameters}
                for t in tools]}]
        return {"model": self.config.model, "contents": to_gemini_contents(messages, images=sends_images(self)),
                "config": types.GenerateContentConfig(**config)}

    async def _events(self, messages: list[Message], tools: list[ToolDef], system: str | None,
                      response_schema: dict[str, Any] | None, state: StreamState) -> AsyncGenerator[StreamEvent, None]:
        await images_ready(self, messages)
        chunks = await self._client().aio.models.generate_content_stream(
            **self.request(messages, tools, system, response_schema, state.params))
        ordinal = 0
        finish: str | None = None
        usage = Usage()
        async with contextlib.aclosing(chunks):  # type: ignore[type-var]  # an async generator, typed as an iterator by the SDK
            async for chunk in chunks:
                state.started = True
                meta = chunk.usage_metadata
                if meta is not None:
                    # Gemini counts thinking apart from the candidates: output is their sum.
                    thoughts = meta.thoughts_token_count or 0
                    usage = Usage(meta.prompt_token_count or 0, (meta.candidates_token_count or 0) + thoughts,
                                  cached_tokens=meta.cached_content_token_count or 0, reasoning_tokens=thoughts)
                if not chunk.candidates:
                    feedback = chunk.prompt_feedback
                    if feedback is not None and feedback.block_reason:
                        finish = "SAFETY"
                    continue
                candidate = chunk.candidates[0]
                content = candidate.content
                for part in (content.parts or []) if content is not None else []:
                    signature = (base64.b64encode(part.thought_signature).decode("ascii")
                                 if part.thought_signature else None)
                    if part.thought:  # a thought summary (include_thoughts): never in the answer
                        yield ReasoningDelta(part.text or "", signature=signature, origin=ORIGIN)
                        continue
                    if part.function_call is not None:
                        for event in _call_events(ordinal, part):
                            yield event
                        ordinal += 1
                        continue
                    if part.text:
                        yield TextDelta(part.text)
                    if signature is not None:  # on the answer's last part: kept to go back with it
                        yield ReasoningDelta(signature=signature, origin=ORIGIN)
                if candidate.finish_reason is not None:
                    finish = str(getattr(candidate.finish_reason, "value", candidate.finish_reason))
                    if finish == "MALFORMED_FUNCTION_CALL":
                        raise build(self.error_context(), "bad_response",
                                    message=candidate.finish_message or "it wrote a malformed function call")
        if finish is None:
            return  # the base class reports a cut stream
        yield usage
        yield Finish(normalize_finish(finish, ordinal > 0, _FINISH))

    async def count_tokens(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
                           params: GenerationParams | None = None) -> int:
        """The request's input tokens by ``models.countTokens`` (``TokenCounter``).

        The Gemini Developer API counts ``contents`` only (google-genai refuses a system instruction
        or tools there), so the system text and the tools' declarations are counted as one leading
        text part: the same words, a few tokens of framing apart.
        """

        async def count() -> int:
            await images_ready(self, messages)
            contents = to_gemini_contents(messages, images=sends_images(self))
            fixed = [system_text(messages, system)]
            fixed += [json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters},
                                 ensure_ascii=False) for t in tools]
            head = "\n".join(p for p in fixed if p)
            if head:
                contents = [{"role": "user", "parts": [{"text": head}]}, *contents]
            result = await self._client().aio.models.count_tokens(model=self.config.model, contents=contents)
            return int(result.total_tokens or 0)

        return await self._counted(count)

    async def _list_models(self) -> list[str]:
        pager = await self._client().aio.models.list()
        return [m.name.removeprefix("models/") async for m in pager if m.name]

    async def _aclose(self) -> None:
        if self._client_obj is not None:
            await self._client_obj.aio.aclose()
            self._client_obj.close()
            self._client_obj = None


def _call_events(ordinal: int, part: Any) -> list[StreamEvent]:
    call = part.function_call
    call_id = call.id or synth_id()
    arguments = dict(call.args or {})
    raw = json.dumps(arguments, ensure_ascii=False)
    metadata = None
    if part.thought_signature:
        metadata = {SIGNATURE_KEY: base64.b64encode(part.thought_signature).decode("ascii")}
    name = call.name or ""
    return [ToolCallStart(ordinal, call_id, name), ToolCallDelta(ordinal, raw),
            ToolCallDone(ordinal, call_id, name, arguments, raw, metadata=metadata)]


# -- Gemini ------------------------------------------------------------------------------------

_RPC_STATUS = {
    "UNAUTHENTICATED": "auth",
    "PERMISSION_DENIED": "auth",
    "NOT_FOUND": "not_found",
    "RESOURCE_EXHAUSTED": "rate_limited",
    "UNAVAILABLE": "overloaded",  # Gemini's 503: "The model is overloaded" / "currently unavailable"
    "INTERNAL": "server_error",
    "DEADLINE_EXCEEDED": "timeout",
}
_DELAY = re.compile(r"^\s*([0-9.]+)s\s*$")


def _gemini_details(details: Any) -> tuple[str | None, float | None]:
    """(ErrorInfo reason, RetryInfo delay in seconds) from a Google RPC error body."""
    reason, delay = None, None
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("@type", ""))
        if kind.endswith("ErrorInfo"):
            reason = item.get("reason")
        elif kind.endswith("RetryInfo"):
            match = _DELAY.match(str(item.get("retryDelay", "")))
            delay = float(match.group(1)) if match else None
    return reason, delay


def map_gemini(exc: BaseException, ctx: ErrorContext, *, started: bool) -> ProviderError:
    from google.genai import errors as gerrors

    if isinstance(exc, gerrors.APIError):
        status = exc.code if isinstance(exc.code, int) else None
        message = exc.message
        reason, delay = _gemini_details(exc.details)
        hint = _RPC_STATUS.get(str(exc.status or ""))
        if reason in ("API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED") or status in (401, 403):
            hint = "auth"
        if hint is None or (hint == "server_error" and status is not None and status < 500):
            hint = kind_for_status(status)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        retry = delay if delay is not None else retry_after_from_headers(headers)
        return from_status(ctx, status, message=message, hint=hint, retry_after=retry, request=requested(exc))
    if isinstance(exc, gerrors.UnknownApiResponseError):
        return build(ctx, "stream_cut" if started else "bad_response", message=str(exc))
    return from_transport(ctx, exc, started=started) or unexpected(ctx, exc)
