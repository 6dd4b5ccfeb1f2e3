"""What the chat shows, as plain data (Qt-free).

The chat is a flat list of items: messages (the person's, the assistant's,
notices and errors) and tool-call rows under the assistant message that made
them. The view observes the model through ``ChatModelListener``; the presenter
is the only writer. Keeping this free of Qt means the event → row logic is
tested in microseconds, and the widgets only draw.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from cks_desktop.callbacks import Callbacks
from cks_desktop.llm.messages import ImagePart

if TYPE_CHECKING:
    from cks_desktop.agent.citations import AnswerCitations


class RowState(str, enum.Enum):
    PREPARING = "preparing"  # the model is still streaming the call's arguments (not run yet)
    PENDING_APPROVAL = "pending_approval"
    RUNNING = "running"
    DONE = "done"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    @property
    def finished(self) -> bool:
        return self not in (RowState.PREPARING, RowState.PENDING_APPROVAL, RowState.RUNNING)

    @property
    def failed(self) -> bool:
        return self in (RowState.ERROR, RowState.INTERRUPTED)


STATE_WORDS = {
    RowState.PREPARING: "preparing…",
    RowState.PENDING_APPROVAL: "waiting for your approval",
    RowState.RUNNING: "running",
    RowState.DONE: "done",
    RowState.ERROR: "error",
    RowState.DENIED: "denied",
    RowState.CANCELLED: "cancelled",
    RowState.INTERRUPTED: "interrupted",
}


ItemRole = Literal["user", "assistant", "notice", "error"]
"""Whose words a message item shows: the person's, the model's, the loop's notice, or a problem."""


@dataclass
class MessageItem:
    role: ItemRole
    text: str
    streaming: bool = False
    turn: int = 0  # the exchange it belongs to (the transcript's numbering; Delete removes a whole one)
    unanswered: bool = False  # a message of the person's that got no answer (crash, failure, Stop)
    retryable: bool = False  # unanswered and the chat's last message: offers Retry
    stopped: bool = False  # an answer Stop cut short (what arrived is kept; the transcript says so too)
    last_prompt: bool = False  # the person's last message: offers Edit and resend
    last_answer: bool = False  # the assistant's last answer: offers Regenerate
    summary: bool = False  # the loop's "Earlier messages were summarised" notice: shown collapsed
    images: tuple[ImagePart, ...] = ()  # the person's images sent with this message
    # The model's thinking before this answer: shown collapsed above the text
    # ("Thought for 12 s"), never part of ``text``. ``thinking``: it is still streaming.
    reasoning: str = ""
    reasoning_seconds: float | None = None
    thinking: bool = False
    # What the exchange's answer used (ui/chat/usage_marks.py): a short line
    # under the answer ("1,234 in · 56 out · $0.0042") and the details on hover.
    usage_line: str = ""
    usage_tip: str = ""
    # Another model turn of an answer that already has its "Assistant" header above (after a
    # tool-call round): shown without a second header, so one answer reads as one.
    continues: bool = False
    # An exchange the Ask window answered from the documents (the transcript's ``Mark.ASK``): the
    # answer says so in its header, and neither message offers Edit or Regenerate.
    from_ask: bool = False
    # The answer's citations of the passages its turn retrieved, checked in the core: checked ones
    # are links to the passage, unsupported ones are marked (ui/chat/citation_marks.py).
    citations: "AnswerCitations | None" = None


@dataclass
class ToolItem:
    call_id: str
    name: str
    display_name: str
    source: str  # "builtin" | "mcp:<server>" | "unknown"
    arguments: dict[str, Any] | None
    state: RowState = RowState.RUNNING
    started_at: float | None = None  # time.monotonic() when it began running
    duration_ms: float | None = None
    result: str | None = None
    change_id: str | None = None
    reverted: bool = False
    revertable: bool = False  # a built-in tool that changes the graph
    revert_error: str | None = None
    turn: int = 0  # the exchange it belongs to
    arguments_chars: int = 0  # while PREPARING: characters of arguments received so far
    repeats: int = 1  # identical calls folded into this row ("× 8"), see ``same_call``
    repeat_ids: list[str] = field(default_factory=list)  # the call ids folded in (after this row's own)
    # While RUNNING: the server's last progress report (done, total or None, message); see tool_row's bar.
    progress: tuple[float, float | None, str] | None = None
    # A call refused for want of an OAuth sign-in (structured "needs_sign_in"): the server to sign in to.
    sign_in_server: str | None = None
    # The images the tool returned: thumbnails under the row's header.
    images: tuple[ImagePart, ...] = ()

    def same_call(self, name: str, arguments: dict[str, Any] | None) -> bool:
        """Another call of the same tool with the same arguments, which may fold into this row:
        only after this row finished, and not when it made a change (each change keeps its
        own row, so each keeps its own Revert)."""
        return (self.state.finished and self.state is not RowState.INTERRUPTED and not self.change_id
                and self.name == name and self.arguments is not None and self.arguments == arguments)

    @property
    def can_revert(self) -> bool:
        return self.revertable and self.state is RowState.DONE and bool(self.change_id) and not self.reverted

    def elapsed_ms(self, now: float | None = None) -> float | None:
        if self.state is RowState.RUNNING and self.started_at is not None:
            return ((now if now is not None else time.monotonic()) - self.started_at) * 1000
        return self.duration_ms


ChatItem = MessageItem | ToolItem


def size_words(chars: int) -> str:
    """A size of text for the "preparing…" row: "312 characters", "4.2 k characters"."""
    if chars < 1000:
        return f"{chars} character{'s' if chars != 1 else ''}"
    if chars < 1_000_000:
        return f"{chars / 1000:.1f} k characters"
    return f"{chars / 1_000_000:.1f} M characters"


def status_extra(item: ToolItem) -> str:
    """What a tool row's state adds to its word: the arguments' size while the model writes
    them, and "× N" for identical calls folded into one row."""
    if item.state is RowState.PREPARING:
        return f" {size_words(item.arguments_chars)}" if item.arguments_chars else ""
    return f" · × {item.repeats}" if item.repeats > 1 else ""


class ChatModelListener(Protocol):
    def items_reset(self) -> None: ...
    def item_inserted(self, index: int) -> None: ...
    def item_changed(self, index: int) -> None: ...


@dataclass
class ChatModel:
    """The chat's rows; listeners (the chat view) hear of resets, insertions and changes.

    Each kind of news goes through the core's ``Callbacks``, so a listener that raises is
    logged and skipped: the row is still added, and the other listeners still hear of it.
    """

    items: list[ChatItem] = field(default_factory=list)
    _reset: Callbacks[[]] = field(default_factory=lambda: Callbacks("chat model reset"), repr=False,
                                  compare=False)
    _inserted: Callbacks[[int]] = field(default_factory=lambda: Callbacks("chat model insert"), repr=False,
                                        compare=False)
    _changed: Callbacks[[int]] = field(default_factory=lambda: Callbacks("chat model change"), repr=False,
                                       compare=False)
    _by_call: dict[str, int] = field(default_factory=dict)

    def subscribe(self, listener: ChatModelListener) -> Callable[[], None]:
        """Tell ``listener`` of every change; the returned function unsubscribes it."""
        self._reset.subscribe(listener.items_reset)
        self._inserted.subscribe(listener.item_inserted)
        self._changed.subscribe(listener.item_changed)
        return lambda: self.unsubscribe(listener)

    def unsubscribe(self, listener: ChatModelListener) -> None:
        self._reset.unsubscribe(listener.items_reset)  # bound methods compare equal by object and function
        self._inserted.unsubscribe(listener.item_inserted)
        self._changed.unsubscribe(listener.item_changed)

    def reset(self, items: list[ChatItem]) -> None:
        self.items = items
        self._by_call = {it.call_id: i for i, it in enumerate(items) if isinstance(it, ToolItem)}
        self._reset.emit()

    def append(self, item: ChatItem) -> int:
        self.items.append(item)
        index = len(self.items) - 1
        if isinstance(item, ToolItem):
            self._by_call[item.call_id] = index
        self._inserted.emit(index)
        return index

    def alias(self, call_id: str, item: ToolItem) -> None:
        """Route the events of call ``call_id`` to ``item``'s row (a folded repeat, or a row
        that appeared under the stream's id and runs under another)."""
        index = self.index_of(item)
        if index is not None:
            self._by_call[call_id] = index

    def changed(self, item: ChatItem) -> None:
        index = self.index_of(item)
        if index is None:
            return
        self._changed.emit(index)

    def index_of(self, item: ChatItem) -> int | None:
        if isinstance(item, ToolItem):
            index = self._by_call.get(item.call_id)
            if index is not None and self.items[index] is item:
                return index
        for i in range(len(self.items) - 1, -1, -1):
            if self.items[i] is item:
                return i
        return None

    def tool(self, call_id: str) -> ToolItem | None:
        index = self._by_call.get(call_id)
        item = self.items[index] if index is not None else None
        return item if isinstance(item, ToolItem) else None

    def tools(self) -> list[ToolItem]:
        return [it for it in self.items if isinstance(it, ToolItem)]
