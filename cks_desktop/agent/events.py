"""What ``ai_chat`` tells its listeners (the chat dock, the CLI, tests).

One small union of frozen dataclasses, each with a ``type`` literal, so a
listener can ``match`` on the class or switch on ``event.type``, and the CLI's
``--json`` mode can print every event with one function (``event_to_json``).
Events describe what happened; they never carry live objects a listener could
use to steer the loop (approvals are answered through the ``Approver``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cks_desktop.llm.messages import Message
from cks_desktop.tools.types import ToolResult

CallState = Literal["done", "error", "denied", "cancelled"]
FinishReason = Literal["stop", "limit", "error", "cancelled", "repeated_failure"]


@dataclass(frozen=True)
class TurnStarted:
    """A model round-trip begins (``iteration`` counts from 1)."""

    iteration: int
    type: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str  # internal name (or the unknown wire name exactly as the model sent it)
    display_name: str
    arguments: dict[str, Any] | None  # as the model sent them (None: unparseable JSON)
    source: str  # "builtin", "mcp:<server>", or "unknown"
    type: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True)
class ApprovalRequested:
    call_id: str
    reason: str = ""
    preview: str | None = None
    type: Literal["approval_requested"] = "approval_requested"


@dataclass(frozen=True)
class ApprovalResolved:
    call_id: str
    decision: str  # a Decision value, or "cancelled" when Stop withdrew the request
    type: Literal["approval_resolved"] = "approval_resolved"


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    result: ToolResult
    duration_ms: float
    state: CallState
    change_id: str | None = None
    type: Literal["tool_call_finished"] = "tool_call_finished"


@dataclass(frozen=True)
class AssistantMessage:
    """A finished assistant message (model text and calls, or a notice from the loop)."""

    message: Message
    notice: bool = False  # written by the loop (cap, repeated failure), not by the model
    type: Literal["assistant_message"] = "assistant_message"


@dataclass(frozen=True)
class ErrorEvent:
    message: str  # one sentence for a person
    kind: str  # ProviderError.kind, or "repeated_failure", "internal"
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class IterationLimit:
    limit: int
    message: str = ""
    type: Literal["iteration_limit"] = "iteration_limit"


@dataclass(frozen=True)
class Finished:
    reason: FinishReason
    iterations: int = 0  # model turns used
    type: Literal["finished"] = "finished"


AgentEvent = (
    TurnStarted | TextDelta | ToolCallStarted | ApprovalRequested | ApprovalResolved
    | ToolCallFinished | AssistantMessage | ErrorEvent | IterationLimit | Finished
)
EventListener = Callable[[AgentEvent], None]


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """A JSON-able dict for one event (``cks-desktop chat --json`` prints one per line)."""
    data: dict[str, Any] = {"type": event.type}
    for name in event.__dataclass_fields__:
        if name == "type":
            continue
        value = getattr(event, name)
        if isinstance(value, ToolResult):
            value = value.to_json()
        elif isinstance(value, Message):
            value = value.to_json()
        data[name] = value
    return data
