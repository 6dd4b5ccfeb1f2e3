"""The small union of stream events every provider adapter yields.

Providers translate their wire streams into these; one assembler
(``assembler.py``) turns deltas into finished parts. Tools run only on a
finished call (``ToolCallDone``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's thinking: never part of the answer text.

    ``text`` grows the open thinking block. ``signature`` (Anthropic's ``signature_delta``,
    Gemini's thought signature) closes the open block with the vendor's opaque signature,
    which must go back unchanged; the next text starts a new block. ``redacted`` is a whole
    Anthropic ``redacted_thinking`` block (encrypted data, nothing to show). ``origin`` and
    ``wire_field`` say where it came from (see ``messages.Reasoning``).
    """

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    origin: str = ""
    wire_field: str = ""
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class ToolCallStart:
    index: int
    id: str
    name: str  # wire name as the model sent it
    type: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    arguments_fragment: str
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True)
class ToolCallDone:
    """A finished call. ``arguments`` is None when the JSON could not be parsed;
    ``error`` then says why, and the loop returns it to the model as an error result.
    ``metadata``: provider data that must travel back with the call in the history
    (Gemini's thought signature); copy it onto the ``ToolCallPart``."""

    index: int
    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None
    type: Literal["tool_call_done"] = "tool_call_done"
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts of one model turn, as the provider reported them.

    ``input_tokens`` counts the whole prompt, cached part included (Anthropic reports
    the uncached rest apart; its adapter adds them up), so ``cached_tokens`` is a
    subset of it. ``cache_write_tokens``: prompt tokens written to the cache this turn
    (Anthropic only). ``reasoning_tokens``: thinking, a subset of ``output_tokens``
    where the vendor counts it there (OpenAI) and added to it where not (Gemini).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    type: Literal["usage"] = "usage"
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None  # what the server says the turn cost (OpenRouter's ``usage.cost``)


@dataclass(frozen=True)
class Finish:
    reason: str  # "stop", "tool_calls", "length", "error", ...
    type: Literal["finish"] = "finish"


@dataclass(frozen=True)
class RetryWait:
    """The request failed before any output and is tried again after ``seconds`` (``llm/retry.py``).

    No part of the answer: assemblers skip it; the chat shows "waiting N s". ``kind`` is the
    failure's (``rate_limited``, ``overloaded``, ``server_error``, ...); ``attempt`` the retry
    about to be made (1-based). ``resumed`` True: the wait is over and that retry is being sent.
    """

    seconds: float
    kind: str
    attempt: int
    resumed: bool = False
    type: Literal["retry_wait"] = "retry_wait"

    @property
    def text(self) -> str:
        return wait_text(self.seconds, self.kind)


_WAIT_WHY = {"rate_limited": "rate limited", "overloaded": "overloaded", "server_error": "server error",
             "connection": "connection failed", "stream_cut": "connection dropped", "timeout": "gateway timeout"}


def wait_text(seconds: float, kind: str) -> str:
    """What a person is shown while a request waits to be tried again: "waiting 8 s (rate limited)"
    (the chat's notice line, the extraction's progress)."""
    why = _WAIT_WHY.get(kind, kind.replace("_", " "))
    return f"waiting {max(1, round(seconds))} s ({why})"


StreamEvent = TextDelta | ReasoningDelta | ToolCallStart | ToolCallDelta | ToolCallDone | Usage | Finish | RetryWait
