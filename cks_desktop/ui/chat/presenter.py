"""Turns agent events and saved transcripts into chat items (Qt-free).

Live: ``handle(event)`` for each event ``ai_chat`` emits. Reopening a session:
``load(history)`` rebuilds the same items from the transcript's messages and
per-call records, so rows come back exactly as they were (state, duration,
change, reverted). Every item carries its exchange number (``turn``, counted
the way the transcript counts: one per message of the person's), so Delete can
remove a whole exchange; a message of the person's that got no answer is
marked ``unanswered``, and the last such one offers Retry. The view knows nothing of providers or the registry; the
presenter asks ``is_revertable(name, source)`` whether a row gets "Revert".

How tool calls show:
- A tool call's row appears at the stream's first event of the call (``ToolCallPreparing``),
  "preparing…" with the size of its arguments so far; it runs under the same row.
- Identical calls in a row (same tool, same arguments, nothing else between, the earlier one
  finished without a change to revert) fold into one row counted "× N", live and on reopen
  alike (``_fold_target``). While a possible repeat is still being written, the row it may
  fold into shows "preparing…"; if its arguments turn out different, the row gets its own
  state back and the new call its own row.
- A stopped answer is marked ``stopped``; a saved error row shows as the error it was; the
  person's last message offers Edit and resend, the last answer Regenerate (``_mark_last``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, assert_never

from cks_desktop.callbacks import Callbacks
from cks_desktop.agent import events as ev
from cks_desktop.agent.events import Notice
from cks_desktop.agent.transcript import Mark, SavedMessage, sign_in_of
from cks_desktop.agent.images import part_of
from cks_desktop.agent.reasoning import shown as _reasoning_of
from cks_desktop.llm.messages import ImagePart
from cks_desktop.tools.approval import Decision
from cks_desktop.ui.chat.model import ChatModel, ChatItem, ItemRole, MessageItem, RowState, ToolItem

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
        self._thinking_since = 0.0  # time.monotonic() when the streaming item began thinking
        self._wait_item: MessageItem | None = None  # the "waiting N s (rate limited)" line, while shown
        self._turn_text: MessageItem | None = None  # the text streamed in the current model turn
        self.limit_reached = False
        self.limit_kind = "iterations"  # or "budget": which limit the Continue banner names
        self._last_error: str | None = None
        self._turn = 0
        self._prompt: MessageItem | None = None  # the person's message of the running exchange
        self._answered = False
        # A finished row that a call still being written may fold into, with the state it shows
        # once the call turns out to be a different one: (row, call id, saved state).
        self._candidate: tuple[ToolItem, str, RowState] | None = None
        # The last ``ContextUsage`` and who wants each one (the composer's meter).
        self.context_usage: ev.ContextUsage | None = None
        self.context_listeners: Callbacks[[ev.ContextUsage]] = Callbacks("chat context usage")

    # -- live events --------------------------------------------------------
    def add_user(self, text: str, images: Sequence[ImagePart] = ()) -> None:
        """A new turn starts with the person's message (and the images sent with it)."""
        self.limit_reached = False
        self._streaming = None
        self._last_error = None
        self._turn += 1
        self._clear_retry()
        self._clear_last()
        self._prompt = MessageItem("user", text, turn=self._turn, images=tuple(images))
        self._answered = False
        self.model.append(self._prompt)

    def retrying(self, item: MessageItem) -> None:
        """Retry answers ``item`` again: it is no longer unanswered while that runs."""
        self.limit_reached = False
        self._streaming = None
        self._last_error = None
        item.unanswered = item.retryable = False
        self._clear_last()
        self._prompt, self._answered = item, False
        self.model.changed(item)

    def _clear_last(self) -> None:
        """While a turn runs nothing offers Edit or Regenerate (they are set again at its end)."""
        for item in self.model.items:
            if isinstance(item, MessageItem) and (item.last_prompt or item.last_answer):
                item.last_prompt = item.last_answer = False
                self.model.changed(item)

    def _mark_last(self, items: list[ChatItem] | None = None, *, notify: bool = True) -> None:
        """The person's last message offers Edit and resend; the last answer of that exchange
        (the assistant's text or the loop's notice) offers Regenerate."""
        items = self.model.items if items is None else items
        prompt = next((it for it in reversed(items) if isinstance(it, MessageItem) and it.role == "user"), None)
        if prompt is not None and prompt.from_ask:
            prompt = None  # the Ask window answered it, not the chat: nothing to edit or regenerate
        answer = None
        if prompt is not None:
            answer = next((it for it in reversed(items) if isinstance(it, MessageItem)
                           and it.role in ("assistant", "notice") and not it.summary and it.turn == prompt.turn
                           and it is not prompt), None)
        for item in items:
            if not isinstance(item, MessageItem):
                continue
            want = (item is prompt, item is answer)
            if (item.last_prompt, item.last_answer) != want:
                item.last_prompt, item.last_answer = want
                if notify:
                    self.model.changed(item)

    def _clear_retry(self) -> None:
        for item in self.model.items:
            if isinstance(item, MessageItem) and item.retryable:
                item.retryable = False
                self.model.changed(item)

    def _append(self, item: ChatItem) -> None:
        item.turn = self._turn
        if isinstance(item, MessageItem) and item.role == "assistant":
            item.continues = _answer_started(self.model.items, self._turn)
        if not (isinstance(item, MessageItem) and (item.role == "error" or item.summary)):
            self._answered = True  # an error or a summary of earlier messages is no answer; text, a notice or a call is
        self.model.append(item)

    def handle(self, event: ev.AgentEvent) -> None:
        """Every event kind has its case; a new one fails the type check until it gets one."""
        match event:
            case ev.TurnStarted():
                self._on_turn_started(event)
            case ev.TextDelta():
                self._on_text_delta(event)
            case ev.ReasoningDelta():
                self._on_reasoning_delta(event)
            case ev.ToolCallPreparing():
                self._on_tool_call_preparing(event)
            case ev.ToolCallStarted():
                self._on_tool_call_started(event)
            case ev.ToolCallProgress():
                self._on_tool_call_progress(event)
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
            case ev.ContextUsage():  # how full the context is: the composer's meter reads it
                self.context_usage = event
                self.context_listeners.emit(event)
            case ev.Waiting():
                self._on_waiting(event)
            case ev.Finished():
                self._drop_wait()
                self._on_finished(event)
            case _:
                assert_never(event)

    def _on_waiting(self, event: ev.Waiting) -> None:
        """A "waiting 8 s (rate limited)" notice line while the loop waits; gone when the retry starts."""
        if event.resumed:
            self._drop_wait()
            return
        item = self._wait_item
        if item is None:
            item = self._wait_item = MessageItem("notice", event.text)
            item.turn = self._turn
            self.model.append(item)  # not ``_append``: a wait is no answer
        else:
            item.text = event.text
            self.model.changed(item)

    def _drop_wait(self) -> None:
        item, self._wait_item = self._wait_item, None
        if item is not None and self.model.index_of(item) is not None:
            self.model.reset([it for it in self.model.items if it is not item])

    def _on_turn_started(self, event: ev.TurnStarted) -> None:
        self._end_stream()
        self._turn_text = None

    def _on_reasoning_delta(self, event: ev.ReasoningDelta) -> None:
        """The model's thinking: into the answer item's collapsed "Thinking…" block, never its text."""
        if self._streaming is None:
            self._streaming = self._turn_text = MessageItem("assistant", "", streaming=True)
            self._append(self._streaming)
        item = self._streaming
        if not item.thinking:
            item.thinking = True
            self._thinking_since = time.monotonic() - (item.reasoning_seconds or 0.0)
        item.reasoning += event.text
        self.model.changed(item)

    def _end_thinking(self, item: MessageItem) -> None:
        if item.thinking:
            item.thinking = False
            item.reasoning_seconds = time.monotonic() - self._thinking_since

    def _on_text_delta(self, event: ev.TextDelta) -> None:
        if self._streaming is None:
            self._streaming = self._turn_text = MessageItem("assistant", "", streaming=True)
            self._append(self._streaming)
        self._end_thinking(self._streaming)
        self._streaming.text += event.text
        self.model.changed(self._streaming)

    def _on_assistant_message(self, event: ev.AssistantMessage) -> None:
        text = event.message.text
        if event.notice is not None:
            self._end_stream()
            if text and text != self._last_error:
                self._append(MessageItem("notice", text, summary=event.notice is Notice.SUMMARY))
            return
        # The text streamed in this model turn, even when a tool row (preparing) came after it.
        target = self._streaming or self._turn_text
        self._turn_text = None
        thought = _reasoning_of(event.message.reasoning)
        if target is not None:
            target.text = text or target.text
            target.citations = event.citations
            self._end_thinking(target)
            if thought[0]:  # the saved blocks' words and time (the transcript shows the same on reopen)
                target.reasoning, target.reasoning_seconds = thought
            if self._streaming is None:
                self.model.changed(target)
            self._end_stream()
        elif text or thought[0]:
            self._append(MessageItem("assistant", text, reasoning=thought[0], reasoning_seconds=thought[1],
                                     citations=event.citations))

    def _end_stream(self) -> None:
        item, self._streaming = self._streaming, None
        if item is not None:
            item.streaming = False
            self._end_thinking(item)
            self.model.changed(item)

    def _fold_target(self, name: str, arguments: dict[str, Any] | None = None, *, by_name: bool = False
                     ) -> ToolItem | None:
        """The row a new call folds into: the chat's last item, a finished identical call of this
        exchange (``by_name``: the arguments are not known yet, only the tool)."""
        last = self.model.items[-1] if self.model.items else None
        if not isinstance(last, ToolItem) or last.turn != self._turn:
            return None
        if by_name:
            probe = last.arguments
            return last if probe is not None and last.same_call(name, probe) else None
        return last if last.same_call(name, arguments) else None

    def _on_tool_call_preparing(self, event: ev.ToolCallPreparing) -> None:
        item = self.model.tool(event.call_id)
        if item is not None:
            if item.state is RowState.PREPARING:
                item.arguments_chars = event.arguments_chars
                self.model.changed(item)
            return
        self._end_stream()
        head = self._fold_target(event.name, by_name=True)
        if head is not None and self._candidate is None:
            self._candidate = (head, event.call_id, head.state)
            self.model.alias(event.call_id, head)
            head.state, head.arguments_chars = RowState.PREPARING, event.arguments_chars
            self.model.changed(head)
            return
        row = ToolItem(call_id=event.call_id, name=event.name, display_name=event.display_name, source=event.source,
                       arguments=None, state=RowState.PREPARING, arguments_chars=event.arguments_chars,
                       revertable=self._is_revertable(event.name, event.source))
        row.turn = self._turn
        self.model.append(row)  # not an answer yet: a call cut off mid-stream never runs

    def _preparing_row(self, event: ev.ToolCallStarted) -> ToolItem | None:
        """The row this call was being written in (by id; else, when the provider's stream and
        its finished call use different ids, the oldest row of that tool still preparing)."""
        item = self.model.tool(event.call_id)
        if item is not None:
            return item
        for row in self.model.tools():
            if row.turn == self._turn and row.state is RowState.PREPARING and row.name == event.name:
                self.model.alias(event.call_id, row)
                return row
        return None

    def _on_tool_call_started(self, event: ev.ToolCallStarted) -> None:
        self._end_stream()
        candidate, self._candidate = self._candidate, None
        if candidate is not None:
            head, _call_id, saved = candidate
            head.state, head.arguments_chars = saved, 0  # back to what it showed, then compare
            if head.same_call(event.name, event.arguments):
                self._fold(head, event)
                return
            self.model.changed(head)  # a different call: it gets its own row below
        row = self._preparing_row(event)
        if row is not None and row.state is RowState.PREPARING:
            row.call_id, row.arguments, row.arguments_chars = event.call_id, event.arguments, 0
            row.display_name, row.source = event.display_name, event.source
            row.state, row.started_at = RowState.RUNNING, time.monotonic()
            self.model.alias(event.call_id, row)
            self._answered = True
            self.model.changed(row)
            return
        target = self._fold_target(event.name, event.arguments)
        if target is not None:
            self._fold(target, event)
            return
        self._append(ToolItem(
            call_id=event.call_id, name=event.name, display_name=event.display_name, source=event.source,
            arguments=event.arguments, state=RowState.RUNNING, started_at=time.monotonic(),
            revertable=self._is_revertable(event.name, event.source)))

    def _fold(self, head: ToolItem, event: ev.ToolCallStarted) -> None:
        """Count an identical call on the row of the previous one ("× N")."""
        head.repeats += 1
        head.repeat_ids.append(event.call_id)
        head.state, head.started_at, head.arguments_chars = RowState.RUNNING, time.monotonic(), 0
        self.model.alias(event.call_id, head)
        self._answered = True
        self.model.changed(head)

    def _on_tool_call_progress(self, event: ev.ToolCallProgress) -> None:
        """An MCP server's progress for a running call: the row's bar and message (tool_row)."""
        item = self.model.tool(event.call_id)
        if item is not None and item.state is RowState.RUNNING:
            item.progress = (event.progress, event.total, event.message or "")
            self.model.changed(item)

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
        item.sign_in_server = sign_in_of(event.result.structured)  # mcp/connection.py: a call that needs a sign-in
        item.images = tuple(part_of(blob) for blob in event.result.images)  # thumbnails
        self.model.changed(item)

    def _on_error(self, event: ev.ErrorEvent) -> None:
        self._end_stream()
        self._last_error = event.message
        self._append(MessageItem("error", event.message))

    def _on_iteration_limit(self, event: ev.IterationLimit) -> None:
        self.limit_reached = True
        self.limit_kind = event.kind

    def _on_finished(self, event: ev.Finished) -> None:
        self._end_stream()
        candidate, self._candidate = self._candidate, None
        if candidate is not None and candidate[0].state is RowState.PREPARING:  # the repeat never ran
            candidate[0].state, candidate[0].arguments_chars = candidate[2], 0
            self.model.changed(candidate[0])
        for item in self.model.tools():  # nothing may look "running" after the turn ended
            if not item.state.finished:
                item.state = RowState.CANCELLED
                self.model.changed(item)
        prompt, self._prompt = self._prompt, None
        if prompt is not None and event.reason == "cancelled":
            self._mark_stopped(prompt.turn)
        if prompt is not None and not self._answered and not prompt.unanswered:
            prompt.unanswered = prompt.retryable = True  # as the transcript will say when reopened
            self.model.changed(prompt)
        if prompt is not None:
            self._mark_last()

    def _mark_stopped(self, turn: int) -> None:
        """Stop cut the answer short: its last text (kept, and saved marked so) says "stopped"."""
        for item in reversed(self.model.items):
            if item.turn != turn:
                break
            if isinstance(item, MessageItem) and item.role == "assistant":
                if not item.stopped:
                    item.stopped = True
                    self.model.changed(item)
                return

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
                items.append(MessageItem("user", message.text, turn=saved.turn, unanswered=saved.unanswered,
                                         images=tuple(message.images), from_ask=saved.mark is Mark.ASK))
                last_notice_limit = False
            elif saved.mark is Mark.ERROR:  # the sentence of a failure, kept so it shows again
                items.append(MessageItem("error", message.text, turn=saved.turn))
            elif message.role == "assistant":
                thought = _reasoning_of(message.reasoning)
                if message.text or (thought[0] and saved.notice is None):
                    role: ItemRole = "notice" if saved.notice is not None else "assistant"
                    items.append(MessageItem(role, message.text,
                                             turn=saved.turn, summary=saved.notice is Notice.SUMMARY,
                                             reasoning=thought[0], reasoning_seconds=thought[1],
                                             continues=role == "assistant" and _answer_started(items, saved.turn),
                                             from_ask=saved.mark is Mark.ASK, citations=saved.citations))
                if saved.mark is Mark.STOPPED:
                    _stopped_in(items, saved.turn)
                last_notice_limit = saved.notice in (Notice.ITERATION_LIMIT, Notice.BUDGET)  # both offer Continue
                if last_notice_limit:
                    self.limit_kind = "budget" if saved.notice is Notice.BUDGET else "iterations"
                records = {c.call_id: c for c in saved.calls}
                for part in message.tool_calls:
                    record = records.get(part.id)
                    source = record.source if record else "unknown"
                    head = items[-1] if items else None
                    if isinstance(head, ToolItem) and head.turn == saved.turn and head.same_call(part.name,
                                                                                             part.arguments):
                        head.repeats += 1  # identical calls fold into one row, as they did live
                        head.repeat_ids.append(part.id)
                        head.state = _state_of(record.state) if record else RowState.DONE
                        head.duration_ms = record.duration_ms if record else None
                        by_call[part.id] = head
                        continue
                    item = ToolItem(
                        call_id=part.id, name=part.name,
                        display_name=record.display_name if record else part.name, source=source,
                        arguments=part.arguments,
                        state=_state_of(record.state) if record else RowState.DONE,
                        duration_ms=record.duration_ms if record else None,
                        change_id=record.change_id if record else None,
                        reverted=record.reverted if record else False,
                        revertable=self._is_revertable(part.name, source), turn=saved.turn,
                        sign_in_server=record.sign_in if record else None)  # its row offers Sign in again
                    items.append(item)
                    by_call[part.id] = item
            elif message.role == "tool":
                for result in message.tool_results:
                    row = by_call.get(result.call_id)
                    if row is None:
                        continue
                    row.result = result.content
                    row.images = result.images  # references, bytes filled by the controller (agent/images.py)
                    if row.state is RowState.DONE and result.is_error:
                        row.state = RowState.ERROR
        self.limit_reached = last_notice_limit
        # Retry: the last message of the person's, unanswered, with nothing after it but errors.
        tail = [it for it in items if not (isinstance(it, MessageItem) and it.role == "error")]
        last = tail[-1] if tail else None
        if isinstance(last, MessageItem) and last.role == "user" and last.unanswered:
            last.retryable = True
        self._mark_last(items, notify=False)
        self.model.reset(items)


def _answer_started(items: Sequence[ChatItem], turn: int) -> bool:
    """Whether exchange ``turn`` already shows assistant text (so its next model turn continues it)."""
    for item in reversed(items):
        if item.turn != turn:
            return False
        if isinstance(item, MessageItem) and item.role == "assistant":
            return True
    return False


def _stopped_in(items: list[ChatItem], turn: int) -> None:
    """Mark the last assistant text of exchange ``turn`` as stopped (as the live chat did)."""
    for item in reversed(items):
        if item.turn != turn:
            return
        if isinstance(item, MessageItem) and item.role == "assistant":
            item.stopped = True
            return

