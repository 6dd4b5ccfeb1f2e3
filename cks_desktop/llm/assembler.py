"""The one place where stream events become a finished assistant ``Message``.

Every adapter yields the same event grammar, and this module is where that
grammar is written down and checked:

    (TextDelta | ReasoningDelta | ToolCallStart ToolCallDelta* ToolCallDone)*  Usage?  Finish

Tool calls may interleave with each other and with text (OpenAI streams
parallel calls by index), but each call starts once, receives fragments only
while open, and is finished once; ``Finish`` is last. In ``strict`` mode (the
tests) a violation raises ``EventOrderError`` so an adapter bug cannot hide; in
normal use the assembler is forgiving: a call that started but never got its
``ToolCallDone`` is parsed from its fragments when the stream ends.

The assembled message keeps calls in the order they started. A call whose
arguments could not be parsed is kept (with ``{}`` as its arguments) so the
transcript still pairs every call with a result; ``calls`` keeps the
``ToolCallDone`` with its ``error`` for the loop to report back to the model.

Thinking (``ReasoningDelta``) becomes ``Reasoning`` parts in stream order, never
part of ``text``: consecutive pieces grow one block, a signature closes it (the
next piece starts a new block), a redacted block stands alone. Each block
records how long the model thought: from the previous non-thinking event (or
the start of the turn) to its last piece.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from cks_desktop.llm.events import (
    Finish,
    ReasoningDelta,
    RetryWait,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallDone,
    ToolCallStart,
    Usage,
)
from cks_desktop.llm.messages import Message, Part, Reasoning, Text, ToolCallPart


class EventOrderError(AssertionError):
    """An adapter broke the event grammar (strict mode only)."""


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(arguments, error)`` for a tool call's argument text; empty text means ``{}``."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return None, f"the arguments are a JSON {type(value).__name__}, not an object"
    return value, None


def done_from_raw(index: int, call_id: str, name: str, raw: str,
                  metadata: dict[str, Any] | None = None) -> ToolCallDone:
    arguments, error = parse_arguments(raw)
    return ToolCallDone(index, call_id, name, arguments, raw, error, metadata=metadata)


@dataclass
class _Thinking:
    """A thinking block being streamed (becomes a ``Reasoning`` part)."""

    started: float
    ended: float
    origin: str = ""
    wire_field: str = ""
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    closed: bool = False

    def part(self) -> Reasoning:
        return Reasoning("".join(self.text), self.signature, self.redacted, self.origin, self.wire_field,
                         round(max(0.0, self.ended - self.started), 3))


class StreamAssembler:
    """Feed it every event of one model turn; read ``text``, ``calls``, ``message()``.

    ``clock``: where the thinking time comes from (tests pass their own)."""

    def __init__(self, *, strict: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.strict = strict
        self.events: list[StreamEvent] = []
        self._text: list[str] = []
        # Text parts, thinking blocks, or the index of a call (in start order)
        self._parts: list[Part | _Thinking | int] = []
        self._clock = clock
        self._mark = clock()  # the start of the turn, then the last event that was not thinking
        self._open: dict[int, tuple[str, str, list[str]]] = {}
        self._started: list[int] = []
        self._done: dict[int, ToolCallDone] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None

    # -- feeding -------------------------------------------------------------------------
    def feed(self, event: StreamEvent) -> None:
        if isinstance(event, RetryWait):  # a wait between requests: no part of the answer
            return
        if self.finish_reason is not None:
            self._violation(f"{type(event).__name__} after Finish")
        self.events.append(event)
        if not isinstance(event, ReasoningDelta):
            self._mark = self._clock()
        match event:
            case ReasoningDelta():
                self._think(event)
            case TextDelta():
                if event.text:
                    self._text.append(event.text)
                    if self._parts and isinstance(self._parts[-1], Text):
                        self._parts[-1] = Text(self._parts[-1].text + event.text)
                    else:
                        self._parts.append(Text(event.text))
            case ToolCallStart():
                if event.index in self._open or event.index in self._done:
                    self._violation(f"tool call {event.index} started twice")
                if not event.id or not event.name:
                    self._violation(f"tool call {event.index} started without an id or a name")
                self._open[event.index] = (event.id, event.name, [])
                self._started.append(event.index)
                self._parts.append(event.index)
            case ToolCallDelta():
                if event.index not in self._open:
                    self._violation(f"arguments for tool call {event.index}, which is not open")
                    return
                self._open[event.index][2].append(event.arguments_fragment)
            case ToolCallDone():
                opened = self._open.pop(event.index, None)
                if opened is None:
                    self._violation(f"tool call {event.index} finished without being started")
                    self._started.append(event.index)
                    self._parts.append(event.index)
                elif opened[0] != event.id or opened[1] != event.name:
                    self._violation(f"tool call {event.index} finished with another id or name")
                self._done[event.index] = event
            case Usage():
                if self.usage is not None:
                    self._violation("two Usage events")
                if self._open:
                    self._violation("Usage while tool calls are still open")
                self.usage = event
            case Finish():
                if self._open:
                    self._violation(f"Finish while tool calls {sorted(self._open)} are still open")
                self.finish_reason = event.reason
            case RetryWait():  # returned above
                pass
            case _:  # the union is closed: a new event kind fails the type check here first
                assert_never(event)

    def _think(self, event: ReasoningDelta) -> None:
        now = self._clock()
        if event.redacted is not None:
            block = _Thinking(now, now, event.origin, event.wire_field, redacted=event.redacted, closed=True)
            self._parts.append(block)
            return
        if not event.text and event.signature is None:
            return
        last = self._parts[-1] if self._parts else None
        if not isinstance(last, _Thinking) or last.closed:
            last = _Thinking(self._mark, now, event.origin, event.wire_field)
            self._parts.append(last)
        if event.text:
            last.text.append(event.text)
        last.ended = now
        if event.signature is not None:
            last.signature = event.signature
            last.closed = True

    def feed_all(self, events: Iterable[StreamEvent]) -> "StreamAssembler":
        for event in events:
            self.feed(event)
        return self

    def _violation(self, what: str) -> None:
        if self.strict:
            raise EventOrderError(what)

    # -- reading -------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> list[Reasoning]:
        """The thinking blocks so far (also of a turn that failed or was stopped)."""
        return [item.part() for item in self._parts if isinstance(item, _Thinking)]

    def cut(self) -> list[Reasoning]:
        """The thinking blocks of a stream cut off (Stop, a timeout, a failure) before Finish.

        When thinking was the last thing that streamed, the person watched "Thinking… N s"
        until the cut, so that block ran until now, not to its last piece (a model that
        stalls after its thinking would otherwise read "Thought for less than a second")."""
        last = self._parts[-1] if self._parts else None
        if isinstance(last, _Thinking) and self.finish_reason is None:
            last.ended = max(last.ended, self._clock())
        return self.reasoning

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    @property
    def calls(self) -> list[ToolCallDone]:
        """Finished calls in start order; open ones are completed from their fragments."""
        result = []
        for index in self._started:
            done = self._done.get(index)
            if done is None and index in self._open:
                call_id, name, fragments = self._open[index]
                done = done_from_raw(index, call_id, name, "".join(fragments))
            if done is not None:
                result.append(done)
        return result

    def message(self, internal_name: Callable[[str], str | None] | None = None) -> Message:
        """The assistant message; ``internal_name`` maps wire names back (unknown → kept as sent)."""
        calls = {c.index: c for c in self.calls}
        parts: list[Part] = []
        for item in self._parts:
            if isinstance(item, int):
                call = calls.get(item)
                if call is None:
                    continue
                name = (internal_name(call.name) if internal_name else None) or call.name
                parts.append(ToolCallPart(call.id, name, dict(call.arguments or {}), metadata=call.metadata))
            elif isinstance(item, _Thinking):
                parts.append(item.part())
            else:
                parts.append(item)
        return Message("assistant", parts)


async def collect(stream: Any, *, strict: bool = False,
                  on_wait: Callable[[RetryWait], None] | None = None) -> StreamAssembler:
    """Consume an event stream completely into an assembler (closing it on the way out).

    ``on_wait``: told each ``RetryWait`` (a wait begins, a wait is over), which is no part of the answer."""
    assembler = StreamAssembler(strict=strict)
    try:
        async for event in stream:
            if on_wait is not None and isinstance(event, RetryWait):
                on_wait(event)
            assembler.feed(event)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return assembler
