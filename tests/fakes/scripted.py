"""An in-process ``Provider`` that plays ``script.Turn``s as neutral stream events.

No socket and no SDK: for loop-logic tests, where the wire protocol is not the
point (the HTTP fakes cover that). It behaves like an adapter would: tool-call
arguments arrive as fragments split mid-token, then a finished call; HTTP
statuses and in-stream errors become ``ProviderError``s with the kinds the real
adapters use; ``stall_after_text`` hangs until cancelled, so Stop can be tested
without sleeps. Every request is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

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
from cks_desktop.llm.messages import Message, ToolDef
from cks_desktop.llm.provider import ProviderConfig, ProviderError, ProviderProfile

from tests.fakes.script import Turn

_STATUS_KINDS: dict[int, tuple[str, str]] = {
    400: ("bad_request", "The provider rejected the request."),
    401: ("auth", "The API key was rejected."),
    404: ("model_not_found", "The model was not found."),
    429: ("rate_limited", "The provider is rate limiting requests; try again in a moment."),
    500: ("server_error", "The provider had an internal error."),
    529: ("overloaded", "The provider is overloaded; try again in a moment."),
}


@dataclass
class Request:
    messages: list[Message]
    tools: list[ToolDef]
    system: str | None
    response_schema: dict[str, Any] | None


def split(text: str, pieces: int) -> list[str]:
    """Cut ``text`` into ``pieces`` fragments at fixed positions (mid-token on purpose)."""
    if pieces <= 1 or len(text) < 2:
        return [text]
    size = max(1, len(text) // pieces)
    cuts = [text[i:i + size] for i in range(0, len(text), size)]
    return cuts


class ScriptedProvider:
    """Plays one ``Turn`` per ``stream`` call; runs out → an error, so tests notice."""

    def __init__(self, turns: list[Turn] | None = None, *, name: str = "scripted",
                 structured: bool = True) -> None:
        self.turns: list[Turn] = list(turns or [])
        self.requests: list[Request] = []
        self.params: list[Any] = []  # the GenerationParams of each request (None: the provider's defaults)
        self.profile = ProviderProfile(name=name, display_name="Scripted", native_structured_output=structured)
        self.config = ProviderConfig(name=name, model="scripted-1", max_retries=0)  # scripted errors are not retried
        self.stalled = asyncio.Event()  # set when a stalling turn reaches its stall point
        self.closed = False
        self._counter = 0

    def add(self, *turns: Turn) -> None:
        self.turns.extend(turns)

    async def list_models(self) -> list[str]:
        return [self.config.model]

    async def aclose(self) -> None:
        self.closed = True

    def stream(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
               response_schema: dict[str, Any] | None = None, params: Any = None) -> AsyncGenerator[StreamEvent, None]:
        self.params.append(params)
        self.requests.append(Request([Message(m.role, list(m.parts)) for m in messages], list(tools), system,
                                     response_schema))
        if not self.turns:
            raise AssertionError("ScriptedProvider ran out of turns")
        return self._play(self.turns.pop(0))

    async def _play(self, turn: Turn) -> AsyncGenerator[StreamEvent, None]:
        await asyncio.sleep(0)  # a real stream yields to the loop before its first byte
        if turn.status is not None and turn.status >= 400:
            kind, text = _STATUS_KINDS.get(turn.status, ("server_error", f"HTTP {turn.status}."))
            raise ProviderError(text, kind, retryable=turn.status in (429, 500, 529))
        for chunk in turn.thinking:  # thinking first, signed at its end when the turn has a signature
            yield ReasoningDelta(chunk, origin=self.profile.name)
            await asyncio.sleep(0)
        if turn.thinking_signature:
            yield ReasoningDelta(signature=turn.thinking_signature, origin=self.profile.name)
        for chunk in turn.text:
            yield TextDelta(chunk)
            await asyncio.sleep(0)
        if turn.error_mid_stream:
            raise ProviderError("The provider is overloaded; try again in a moment.", "overloaded")
        if turn.cut_after_text:
            raise ProviderError("The connection was cut before the answer was complete.", "stream_cut")
        if turn.stall_after_text:
            self.stalled.set()
            await asyncio.Event().wait()  # until cancelled
        for index, call in enumerate(turn.tool_calls):
            self._counter += 1
            call_id = call.id or f"call_{self._counter}"
            raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments or {})
            yield ToolCallStart(index, call_id, call.name)
            for fragment in split(raw, turn.split_arguments):
                yield ToolCallDelta(index, fragment)
            try:
                parsed = json.loads(raw) if raw.strip() else {}
                error = None if isinstance(parsed, dict) else "the arguments are not a JSON object"
            except json.JSONDecodeError as exc:
                parsed, error = None, f"{exc.msg} at column {exc.colno}"
            yield ToolCallDone(index, call_id, call.name, parsed if error is None else None, raw, error)
        yield Usage(turn.input_tokens, turn.output_tokens, reasoning_tokens=turn.reasoning_tokens)
        yield Finish(turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop"))
