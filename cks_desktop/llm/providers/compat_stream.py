"""Reading what OpenAI-compatible servers stream, where they differ from OpenAI.

Tool calls. OpenAI keys each ``tool_calls[]`` fragment by ``index``; the id, type and name come
in a call's first fragment, the arguments in pieces after. The servers people run differ
(tests/fakes/llamacpp_fake.py, lmstudio_fake.py, vllm_fake.py, openrouter_fake.py):

- llama.cpp sends a call's whole arguments with its name in one fragment; vLLM sends the name
  with no ``arguments`` key and its last piece with the finish reason; LM Studio before 0.3.16
  repeated an empty name; none of that needs more than "name once, arguments appended";
- Gemini's OpenAI-compatible endpoint and proxies in front of it omit ``index``: a fragment
  with an id the open call does not have starts a new call, one without continues the last;
- Ollama's ``/v1`` labels every call of a turn ``index: 0``: a new id (or another name) under an
  index in use starts a new call, it never merges two calls into one;
- Nebius and Cerebras have sent continuation pieces under an index that never started a call,
  with neither id nor name: they belong to the call opened last.

Usage. OpenAI sends it in a ``choices: []`` chunk when asked (``stream_options``); llama.cpp
builds before that was honoured, OpenRouter always, and vLLM with ``continuous_usage_stats``
put it on other chunks (the last one wins); llama.cpp also reports ``timings`` (``prompt_n``
evaluated, ``cache_n`` from its cache, ``predicted_n``), used when there is no ``usage``;
OpenRouter adds ``prompt_tokens_details.cache_write_tokens``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from cks_desktop.llm.events import StreamEvent, ToolCallDelta, ToolCallStart, Usage
from cks_desktop.llm.providers.base import synth_id


@dataclass
class StreamedCall:
    ordinal: int
    id: str | None = None
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    started: bool = False


class CallTracker:
    """The calls of one streamed answer, in the order they started."""

    def __init__(self) -> None:
        self.calls: list[StreamedCall] = []
        self._by_index: dict[int, StreamedCall] = {}
        self._last: StreamedCall | None = None

    def _new(self, index: int | None) -> StreamedCall:
        call = StreamedCall(len(self.calls))
        self.calls.append(call)
        if index is not None:
            self._by_index[index] = call  # a reused index now means the newest call
        self._last = call
        return call

    def _target(self, index: int | None, call_id: str, name: str) -> StreamedCall:
        call = self._by_index.get(index) if index is not None else self._last
        if call is None:
            if index is not None and not call_id and not name and self._last is not None:
                return self._last  # a piece under an index that never started a call
            return self._new(index)
        if call_id and call.id and call_id != call.id:
            return self._new(index)  # another call under a reused (or no) index
        if name and call.name and name != call.name:
            return self._new(index)  # a call's name never changes: this is the next call
        if index is None and name and call.name and not call_id and _complete(call):
            return self._new(index)  # no index, no id: a name after a whole call opens the next one
        return call

    def absorb(self, fragment: Any) -> list[StreamEvent]:
        """Fold one ``tool_calls[]`` fragment into its call; start the call once its name is known."""
        index = getattr(fragment, "index", None)
        index = index if isinstance(index, int) and not isinstance(index, bool) else None
        call_id = str(getattr(fragment, "id", None) or "")
        function = getattr(fragment, "function", None)
        name = str(getattr(function, "name", None) or "")
        arguments = getattr(function, "arguments", None)
        call = self._target(index, call_id, name)
        events: list[StreamEvent] = []
        if call_id and not call.id:
            call.id = call_id
        if name and not call.name:
            call.name = name
        if not call.started and call.name:
            call.started = True
            call.id = call.id or synth_id()
            events.append(ToolCallStart(call.ordinal, call.id, call.name))
            events += [ToolCallDelta(call.ordinal, f) for f in call.fragments]
        if isinstance(arguments, str) and arguments:
            call.fragments.append(arguments)
            if call.started:
                events.append(ToolCallDelta(call.ordinal, arguments))
        return events

    def started(self) -> list[StreamedCall]:
        return [call for call in self.calls if call.started]


def _complete(call: StreamedCall) -> bool:
    """Whether the call's arguments so far are a whole JSON object (a repeated name then means a new call)."""
    text = "".join(call.fragments).strip()
    if not text.endswith("}"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _field(raw: Any, name: str) -> Any:
    """A field of an SDK object or of a plain dict (extra fields the SDK keeps as they came)."""
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def usage_of(raw: Any) -> Usage:
    """Prompt/completion tokens, with the cached, cache-write and reasoning details where sent."""
    prompt = _field(raw, "prompt_tokens_details")
    completion = _field(raw, "completion_tokens_details")
    cost = _field(raw, "cost")  # OpenRouter: credits, which are US dollars
    return Usage(_int(_field(raw, "prompt_tokens")), _int(_field(raw, "completion_tokens")),
                 cached_tokens=_int(_field(prompt, "cached_tokens")),
                 cache_write_tokens=_int(_field(prompt, "cache_write_tokens")),
                 reasoning_tokens=_int(_field(completion, "reasoning_tokens")),
                 cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool)
                 and cost >= 0 else None)


def usage_from_timings(timings: Any) -> Usage | None:
    """llama.cpp's ``timings`` as usage: the prompt is what it evaluated plus what its cache held."""
    if not isinstance(timings, dict) or "predicted_n" not in timings:
        return None
    cached = _int(timings.get("cache_n"))
    return Usage(_int(timings.get("prompt_n")) + cached, _int(timings.get("predicted_n")), cached_tokens=cached)


class UsageReader:
    """The answer's usage from its chunks: the last ``usage`` any chunk carried; llama.cpp's
    ``timings`` only while no chunk carried ``usage``."""

    def __init__(self) -> None:
        self._reported: Usage | None = None
        self._timed: Usage | None = None

    def feed(self, chunk: Any) -> None:
        raw = getattr(chunk, "usage", None)
        if raw is not None:
            self._reported = usage_of(raw)
            return
        extra = getattr(chunk, "model_extra", None) or {}
        timed = usage_from_timings(extra.get("timings")) if isinstance(extra, dict) else None
        if timed is not None:
            self._timed = timed

    @property
    def usage(self) -> Usage:
        return self._reported or self._timed or Usage()
