"""One model round-trip: stream it into the llm package's assembler, showing text as it arrives.

The assembler is created by the caller and filled in place, so when the
stream fails or Stop cancels it, the loop still has the text that was already
shown (and keeps it in the transcript). Tool calls are taken only from a
stream that ended normally; a call cut off mid-stream is never run.

The request carries ``request_messages(messages)``, never the raw list: every
part bounded and unanswered prompts left out (see ``agent/request.py``).

``on_call`` hears of a tool call as soon as the stream opens it
(``ToolCallStart``) and of its arguments' growing size, reported when the size has doubled
since the last report or ``PREPARING_EVERY_S`` has passed (a few dozen reports for any
size, never one per fragment): the chat shows the row at once with "preparing…",
never seconds of nothing while a long argument streams. ``params`` (temperature, max
output tokens) goes to the provider only when set, so providers that predate it work.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, TYPE_CHECKING

from cks_desktop.agent.request import request_messages
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm.events import ReasoningDelta, RetryWait, TextDelta, ToolCallDelta, ToolCallStart
from cks_desktop.llm.messages import Message, ToolDef
from cks_desktop.llm.provider import GenerationParams

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider

PREPARING_EVERY_S = 0.1  # at most one "arguments so far" report per call in this time

CallListener = Callable[[str, str, int], None]
"""``(call id, wire name, characters of arguments so far)``."""

WaitListener = Callable[[float, str, int, bool], None]
"""``(seconds, kind, attempt, resumed)``: a wait before a retry begins, or (resumed) it is over."""

class _Progress:
    """Per call of one stream: its id, name, the argument size, and when it was last reported."""

    def __init__(self, on_call: CallListener | None) -> None:
        self._on_call = on_call
        self._calls: dict[int, list[Any]] = {}  # index -> [id, name, chars, last report, chars reported]

    def start(self, event: ToolCallStart) -> None:
        self._calls[event.index] = [event.id, event.name, 0, time.monotonic(), 0]
        if self._on_call is not None:
            self._on_call(event.id, event.name, 0)

    def grow(self, event: ToolCallDelta) -> None:
        call = self._calls.get(event.index)
        if call is None:
            return
        call[2] += len(event.arguments_fragment)
        now = time.monotonic()
        if self._on_call is not None and call[2] > call[4] and (
                call[2] >= 2 * call[4] or now - call[3] >= PREPARING_EVERY_S):
            call[3], call[4] = now, call[2]
            self._on_call(call[0], call[1], call[2])


async def stream_turn(provider: "Provider", messages: list[Message], tools: list[ToolDef], system: str | None,
                      assembler: StreamAssembler, on_text: Callable[[str], None],
                      on_call: CallListener | None = None,
                      params: GenerationParams | None = None, *, prepared: bool = False,
                      on_wait: WaitListener | None = None,
                      on_reasoning: Callable[[str], None] | None = None) -> StreamAssembler:
    """Consume one provider stream; ProviderError and CancelledError propagate (the stream is closed).

    Nothing here retries: the adapter's stream is the one layer that does (``llm/retry.py``), and
    its ``RetryWait`` events (a wait begins, a wait is over) are told to ``on_wait``.

    ``prepared``: ``messages`` is already the request's view (``agent/context.fit`` built it
    from ``request_messages``), so it is sent as it is. ``on_reasoning`` hears the model's
    thinking as it streams (never ``on_text``: it is no part of the answer)."""
    extra: dict[str, Any] = {"params": params} if params is not None and not params.empty else {}
    sent = messages if prepared else request_messages(messages)
    return await _one_stream(provider, sent, tools, system, assembler, on_text, on_call, extra, on_reasoning,
                             on_wait)


async def _one_stream(provider: "Provider", sent: list[Message], tools: list[ToolDef], system: str | None,
                      assembler: StreamAssembler, on_text: Callable[[str], None], on_call: CallListener | None,
                      extra: dict[str, Any], on_reasoning: Callable[[str], None] | None = None,
                      on_wait: WaitListener | None = None) -> StreamAssembler:
    stream = provider.stream(sent, tools, system=system, **extra)
    progress = _Progress(on_call)
    async with contextlib.aclosing(stream):
        async for event in stream:
            if isinstance(event, RetryWait):
                if on_wait is not None:
                    on_wait(event.seconds, event.kind, event.attempt, event.resumed)
                continue
            assembler.feed(event)
            if isinstance(event, TextDelta):
                if event.text:
                    on_text(event.text)
            elif isinstance(event, ReasoningDelta):
                if event.text and on_reasoning is not None:
                    on_reasoning(event.text)
            elif isinstance(event, ToolCallStart):
                progress.start(event)
            elif isinstance(event, ToolCallDelta):
                progress.grow(event)
    return assembler
