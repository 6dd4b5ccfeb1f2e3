"""What ``ai_chat`` tells its listeners (the chat dock, the CLI, tests).

One small union of frozen dataclasses, each with a ``type`` literal, so a
listener can ``match`` on the class or switch on ``event.type``, and the CLI's
``--json`` mode can print every event with one function (``event_to_json``).
Events describe what happened; they never carry live objects a listener could
use to steer the loop (approvals are answered through the ``Approver``).

Every consumer dispatches with ``match event:`` over ``AgentEvent`` and ends in
``case _: assert_never(event)``, so a new event that a consumer does not handle
fails the type check (mypy) instead of being dropped silently.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from cks_desktop.agent.citations import AnswerCitations
from cks_desktop.llm.events import wait_text
from cks_desktop.llm.messages import Message
from cks_desktop.tools.approval import Decision
from cks_desktop.tools.types import Outcome, ToolResult

FinishReason = Literal["stop", "limit", "error", "cancelled", "repeated_failure"]


class CallState(str, enum.Enum):
    """How a tool call's chat row ended, as the transcript stores it (``chat_tool_calls.state``).

    The values are the strings earlier builds wrote, so every existing database reads back.
    ``INTERRUPTED`` is only ever read: a call the app died during (``transcript._repair``).
    """

    DONE = "done"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, outcome: Outcome) -> "CallState":
        """The row state of a finished call; a timeout shows as an error (its text says why)."""
        match outcome:
            case Outcome.OK:
                return cls.DONE
            case Outcome.ERROR | Outcome.TIMEOUT:
                return cls.ERROR
            case Outcome.DENIED:
                return cls.DENIED
            case Outcome.CANCELLED:
                return cls.CANCELLED
            case _:
                assert_never(outcome)

    @classmethod
    def parse(cls, stored: str) -> "CallState":
        """A stored state; a value no build ever wrote reads as an error rather than failing the load."""
        try:
            return cls(stored)
        except ValueError:
            return cls.ERROR


class Notice(str, enum.Enum):
    """What a message the loop wrote itself (not the model) is about."""

    ITERATION_LIMIT = "iteration_limit"  # the turn used its model turns; "Continue" offers more
    REPEATED_FAILURE = "repeated_failure"  # the same call failed three times in a row
    SUMMARY = "summary"  # earlier messages were summarised to fit the context window (agent/context.py)
    BUDGET = "budget"  # the answer used its token or money budget (agent/budget.py); "Continue" offers more

    def __str__(self) -> str:
        return self.value


ApprovalAnswer = Decision | Literal["cancelled"]
"""How an approval request ended: the approver's decision, or "cancelled" when Stop withdrew it."""


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
class ReasoningDelta:
    """A piece of the model's thinking as it streams.

    Never part of the answer: the chat shows it in a collapsed "Thinking…" block above
    the answer text, the CLI prints it only when asked. The finished blocks (with how long
    the model thought) arrive as ``Reasoning`` parts of the ``AssistantMessage``.
    """

    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    name: str  # internal name (or the unknown wire name exactly as the model sent it)
    display_name: str
    arguments: dict[str, Any] | None  # as the model sent them (None: unparseable JSON)
    source: str  # "builtin", "mcp:<server>", or "unknown"
    type: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True)
class ToolCallPreparing:
    """The model began a tool call and is still streaming its arguments.

    Sent at the stream's first event of the call (``llm.events.ToolCallStart``) and again as
    the arguments grow (at most every ``PREPARING_EVERY_S``), so the chat shows the row at
    once with "preparing…" and the size so far, instead of seconds of nothing while a long
    argument streams. ``ToolCallStarted`` for the same call follows when it runs; a call
    cut off mid-stream never runs and its row ends with the turn.
    """

    call_id: str
    name: str  # internal name when known (else the wire name as the model sent it)
    display_name: str
    source: str  # "builtin", "mcp:<server>", or "unknown"
    arguments_chars: int = 0  # characters of argument JSON received so far
    type: Literal["tool_call_preparing"] = "tool_call_preparing"


@dataclass(frozen=True)
class ToolCallProgress:
    """A running call reported progress (an MCP server's ``notifications/progress``).

    ``total`` None: the amount of work is unknown (the row shows the message and a busy bar).
    Sent at most every 0.1 s per call (``mcp/connection.py`` thins a flood).
    """

    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None
    type: Literal["tool_call_progress"] = "tool_call_progress"


@dataclass(frozen=True)
class ApprovalRequested:
    call_id: str
    reason: str = ""
    preview: str | None = None
    type: Literal["approval_requested"] = "approval_requested"


@dataclass(frozen=True)
class ApprovalResolved:
    call_id: str
    decision: ApprovalAnswer
    type: Literal["approval_resolved"] = "approval_resolved"


@dataclass(frozen=True)
class ToolCallFinished:
    """A call ended; how is ``result.outcome`` (``state`` is the chat row's word for it)."""

    call_id: str
    result: ToolResult
    duration_ms: float
    type: Literal["tool_call_finished"] = "tool_call_finished"

    @property
    def state(self) -> CallState:
        return CallState.of(self.result.outcome)

    @property
    def change_id(self) -> str | None:
        """The change the call wrote (what the row's Revert reverts)."""
        return self.result.change_id


@dataclass(frozen=True)
class AssistantMessage:
    """A finished assistant message (model text and calls, or a notice from the loop)."""

    message: Message
    notice: Notice | None = None  # written by the loop (cap, repeated failure), not by the model
    # The finished answer's citations of the passages its turn retrieved, checked (agent/citations.py);
    # None: not an answer that cites them (or a message before its tool calls).
    citations: AnswerCitations | None = None
    type: Literal["assistant_message"] = "assistant_message"


@dataclass(frozen=True)
class ErrorEvent:
    message: str  # one sentence for a person
    kind: str  # ProviderError.kind (an open set), or the loop's own: "repeated_failure", "internal", "save_failed"
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class IterationLimit:
    """The turn reached its cap of model turns (the typed fact; the notice text is for people).

    ``kind`` "budget": the answer's token or money budget was used up instead (``agent/budget.py``;
    ``limit`` is then the model turns used); either way the chat offers Continue."""

    limit: int
    message: str = ""
    kind: Literal["iterations", "budget"] = "iterations"
    type: Literal["iteration_limit"] = "iteration_limit"


@dataclass(frozen=True)
class ContextUsage:
    """How full the next request is, before it is sent (the composer's meter).

    ``tokens`` is the estimate for the request as sent, ``budget`` what it may use (the
    window minus the answer's room and a margin); the counts say what was compacted.
    """

    tokens: int
    window: int
    budget: int
    stubbed: int = 0  # old tool results sent as stubs
    cut: int = 0  # parts shortened with a notice
    summarised: int = 0  # transcript messages a summary stands for
    dropped: int = 0  # earlier messages left out entirely (nothing else fitted)
    type: Literal["context_usage"] = "context_usage"


@dataclass(frozen=True)
class Waiting:
    """The request failed before any output (rate limited, overloaded, a server error, a dropped
    connection): the provider's stream waits ``seconds`` and tries again (``llm/retry.py``).
    ``resumed`` True: the wait is over and attempt ``attempt`` starts (the notice goes)."""

    seconds: float
    kind: str  # the failure's ProviderError kind: "rate_limited", "overloaded", "server_error", ...
    attempt: int
    resumed: bool = False
    type: Literal["waiting"] = "waiting"

    @property
    def text(self) -> str:
        return wait_text(self.seconds, self.kind)


@dataclass(frozen=True)
class Finished:
    reason: FinishReason
    iterations: int = 0  # model turns used
    type: Literal["finished"] = "finished"


AgentEvent = (
    TurnStarted | TextDelta | ReasoningDelta | ToolCallPreparing | ToolCallStarted | ToolCallProgress | ApprovalRequested
    | ApprovalResolved
    | ToolCallFinished | AssistantMessage | ErrorEvent | IterationLimit | ContextUsage | Waiting | Finished
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
        elif isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, AnswerCitations):
            value = value.to_json()
        elif value is None and name == "citations":  # printed only for an answer that cites passages
            continue
        data[name] = value
    if isinstance(event, ToolCallFinished):  # derived from the result, printed as before
        data["state"] = event.state.value
        data["change_id"] = event.change_id
    if isinstance(event, AssistantMessage):  # scripts read ``notice`` as a flag; the kind beside it
        data["notice"] = event.notice is not None
        data["notice_kind"] = event.notice.value if event.notice else None
    return data
