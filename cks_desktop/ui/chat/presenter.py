"""Turns agent events and saved transcripts into chat items (Qt-free).

Live: ``handle(event)`` for each event ``ai_chat`` emits. Reopening a session:
``load(history)`` rebuilds the same items from the transcript's messages and
per-call records, so rows come back exactly as they were (state, duration,
change, reverted). Every item carries its exchange number (``turn``, counted
the way the transcript counts: one per message of the person's), so Delete can
remove a whole exchange; a message of the person's that got no answer is
marked ``unanswered``, and the last such one offers Retry. The view knows nothing of providers or the registry; the
presenter asks ``is_revertable(name, source)`` whether a row gets "Revert".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import assert_never

from cks_desktop.agent import events as ev
from cks_desktop.agent.events import Notice
from cks_desktop.agent.transcript import SavedMessage
from cks_desktop.tools.approval import Decision
from cks_desktop.ui.chat.model import ChatModel, ChatItem, MessageItem, RowState, ToolItem

Revertable = Callable[[str, str], bool]


def _state_of(state: ev.CallState) -> RowState:
    """The row state of a finished call (every ``CallState`` is a row state of the same value)."""
    match state:
        case ev.CallState.DONE:
            return RowState.DONE
        case ev.CallState.ERROR:
            return RowState.ERROR
        case ev.CallState.DENIED:
            return RowState.DENIED
        case ev.CallState.CANCELLED:
            return RowState.CANCELLED
        case ev.CallState.INTERRUPTED:
            return RowState.INTERRUPTED
        case _:
            assert_never(state)


class ChatPresenter:
    def __init__(self, model: ChatModel, is_revertable: Revertable = lambda name, source: False) -> None:
        self.model = model
        self._is_revertable = is_revertable
        self._streaming: MessageItem | None = None
        self.limit_reached = False
        self._last_error: str | None = None
        self._turn = 0
        self._prompt: MessageItem | None = None  # the person's message of the running exchange
        self._answered = False

    # -- live events --------------------------------------------------------
    def add_user(self, text: str) -> None:
        """A new turn starts with the person's message."""
        self.limit_reached = False
        self._streaming = None
        self._last_error = None
        self._turn += 1
        self._clear_retry()
        self._prompt = MessageItem("user", text, turn=self._turn)
        self._answered = False
        self.model.append(self._prompt)

    def retrying(self, item: MessageItem) -> None:
        """Retry answers ``item`` again: it is no longer unanswered while that runs."""
        self.limit_reached = False
        self._streaming = None
        self._last_error = None
        item.unanswered = item.retryable = False
        self._prompt, self._answered = item, False
        self.model.changed(item)

    def _clear_retry(self) -> None:
        for item in self.model.items:
            if isinstance(item, MessageItem) and item.retryable:
                item.retryable = False
                self.model.changed(item)

    def _append(self, item: ChatItem) -> None:
        item.turn = self._turn
        if not (isinstance(item, MessageItem) and item.role == "error"):
            self._answered = True  # an error message is no answer; text, a notice or a call is
        self.model.append(item)

    def handle(self, event: ev.AgentEvent) -> None:
        """Every event kind has its case; a new one fails the type check until it gets one."""
        match event:
            case ev.TurnStarted():
                self._on_turn_started(event)
            case ev.TextDelta():
                self._on_text_delta(event)
            case ev.ToolCallStarted():
                self._on_tool_call_started(event)
            case ev.ApprovalRequested():
                self._on_approval_requested(event)
            case ev.ApprovalResolved():
                self._on_approval_resolved(event)
            case ev.ToolCallFinished():
                self._on_tool_call_finished(event)
            case ev.AssistantMessage():
                self._on_assistant_message(event)
            case ev.ErrorEvent():
                self._on_error(event)
            case ev.IterationLimit():
                self._on_iteration_limit(event)
            case ev.Finished():
                self._on_finished(event)
            case _:
                assert_never(event)

    def _on_turn_started(self, event: ev.TurnStarted) -> None:
        self._end_stream()

    def _on_text_delta(self, event: ev.TextDelta) -> None:
        if self._streaming is None:
            self._streaming = MessageItem("assistant", "", streaming=True)
            self._append(self._streaming)
        self._streaming.text += event.text
        self.model.changed(self._streaming)

    def _on_assistant_message(self, event: ev.AssistantMessage) -> None:
        text = event.message.text
        if event.notice is not None:
            self._end_stream()
            if text and text != self._last_error:
                self._append(MessageItem("notice", text))
            return
        if self._streaming is not None:
            self._streaming.text = text or self._streaming.text
            self._end_stream()
        elif text:
            self._append(MessageItem("assistant", text))

    def _end_stream(self) -> None:
        item, self._streaming = self._streaming, None
        if item is not None:
            item.streaming = False
            self.model.changed(item)

    def _on_tool_call_started(self, event: ev.ToolCallStarted) -> None:
        self._end_stream()
        self._append(ToolItem(
            call_id=event.call_id, name=event.name, display_name=event.display_name, source=event.source,
            arguments=event.arguments, state=RowState.RUNNING, started_at=time.monotonic(),
            revertable=self._is_revertable(event.name, event.source)))

    def _on_approval_requested(self, event: ev.ApprovalRequested) -> None:
        item = self.model.tool(event.call_id)
        if item is not None:
            item.state = RowState.PENDING_APPROVAL
            self.model.changed(item)

    def _on_approval_resolved(self, event: ev.ApprovalResolved) -> None:
        item = self.model.tool(event.call_id)
        if item is None:
            return
        match event.decision:
            case Decision.DENY:
                item.state = RowState.DENIED
            case "cancelled":
                item.state = RowState.CANCELLED
            case Decision.ALLOW | Decision.ALLOW_FOR_RUN:
                item.state = RowState.RUNNING
                item.started_at = time.monotonic()  # "running 3 s" counts from the approval, not the ask
            case _:
                assert_never(event.decision)
        self.model.changed(item)

    def _on_tool_call_finished(self, event: ev.ToolCallFinished) -> None:
        item = self.model.tool(event.call_id)
        if item is None:
            return
        item.state = _state_of(event.state)
        item.duration_ms = event.duration_ms  # the same number the transcript keeps for this row
        item.result = event.result.content
        item.change_id = event.change_id
        self.model.changed(item)

    def _on_error(self, event: ev.ErrorEvent) -> None:
        self._end_stream()
        self._last_error = event.message
        self._append(MessageItem("error", event.message))

    def _on_iteration_limit(self, event: ev.IterationLimit) -> None:
        self.limit_reached = True

    def _on_finished(self, event: ev.Finished) -> None:
        self._end_stream()
        for item in self.model.tools():  # nothing may look "running" after the turn ended
            if not item.state.finished:
                item.state = RowState.CANCELLED
                self.model.changed(item)
        prompt, self._prompt = self._prompt, None
        if prompt is not None and not self._answered and not prompt.unanswered:
            prompt.unanswered = prompt.retryable = True  # as the transcript will say when reopened
            self.model.changed(prompt)

    def handle_problem(self, text: str) -> None:
        """A sentence about a chat action that failed (Delete, Clear); shown, not saved."""
        self.model.append(MessageItem("error", text, turn=self._turn))

    def cancelled(self) -> None:
        """The turn was stopped (the loop also sends Finished("cancelled"), this is the backstop)."""
        self._on_finished(ev.Finished("cancelled"))

    # -- reverts -------------------------------------------------------------
    def reverted(self, item: ToolItem, ok: bool, error: str | None = None) -> None:
        item.reverted = ok
        item.revert_error = None if ok else error
        self.model.changed(item)

    # -- restoring a saved chat ---------------------------------------------
    def load(self, history: Sequence[SavedMessage]) -> None:
        self._streaming = None
        self._prompt = None
        items: list[ChatItem] = []
        by_call: dict[str, ToolItem] = {}
        last_notice_limit = False  # the chat ends with the iteration-limit notice: offer Continue
        self._turn = 0
        for saved in history:
            message = saved.message
            self._turn = saved.turn
            if message.role == "user":
                items.append(MessageItem("user", message.text, turn=saved.turn, unanswered=saved.unanswered))
                last_notice_limit = False
            elif message.role == "assistant":
                if message.text:
                    items.append(MessageItem("notice" if saved.notice is not None else "assistant", message.text,
                                             turn=saved.turn))
                last_notice_limit = saved.notice is Notice.ITERATION_LIMIT
                records = {c.call_id: c for c in saved.calls}
                for part in message.tool_calls:
                    record = records.get(part.id)
                    source = record.source if record else "unknown"
                    item = ToolItem(
                        call_id=part.id, name=part.name,
                        display_name=record.display_name if record else part.name, source=source,
                        arguments=part.arguments,
                        state=_state_of(record.state) if record else RowState.DONE,
                        duration_ms=record.duration_ms if record else None,
                        change_id=record.change_id if record else None,
                        reverted=record.reverted if record else False,
                        revertable=self._is_revertable(part.name, source), turn=saved.turn)
                    items.append(item)
                    by_call[part.id] = item
            elif message.role == "tool":
                for result in message.tool_results:
                    row = by_call.get(result.call_id)
                    if row is None:
                        continue
                    row.result = result.content
                    if row.state is RowState.DONE and result.is_error:
                        row.state = RowState.ERROR
        self.limit_reached = last_notice_limit
        last = items[-1] if items else None
        if isinstance(last, MessageItem) and last.role == "user" and last.unanswered:
            last.retryable = True
        self.model.reset(items)

