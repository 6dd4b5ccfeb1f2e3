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
    input_tokens: int = 0
    output_tokens: int = 0
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class Finish:
    reason: str  # "stop", "tool_calls", "length", "error", ...
    type: Literal["finish"] = "finish"


StreamEvent = TextDelta | ToolCallStart | ToolCallDelta | ToolCallDone | Usage | Finish
