"""One session's chat in the window: its view model, and the turn it is running (Qt-free, asyncio).

The controller exists for the chat panel: it owns the session's ``ChatModel``
and presenter, the task of the running turn, and the conversation the next
turn continues from. The turn itself is the core's ``Assistant.run`` (grant,
provider, transcript, errors as events), exactly as ``cks-desktop chat`` runs
it; after a Stop the conversation is reloaded from the transcript so it
matches what was saved. Chats in other sessions keep running while the person
looks elsewhere.

Retry answers a message that got no answer (the app was killed, the provider
failed, Stop came first) on its own; Delete removes one whole exchange and
Clear the whole chat from the transcript (never the graph), then the chat is
reloaded from the transcript so the view shows exactly what was kept. None of
these runs while the chat is answering.

Regenerate drops the last exchange's answer (``delete_answer``: its text,
calls, results, notices and error rows; the person's message stays) and answers it again;
Edit and resend replaces the last exchange whole (``delete_turn``, then the edited text is sent
as a new message). Both check the exchange is the one shown (``expect_prompt``) and reload the
chat from the transcript first, so view, conversation and file agree. Retry drops the saved
error rows after the unanswered message before it answers it again. The graph changes an
earlier answer made stay (Revert on their rows, or Edit → Undo, takes them back).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from cks_desktop.agent.loop import NOT_SAVED
from cks_desktop.callbacks import Callbacks
from cks_desktop.llm.messages import Message
from cks_desktop.runtime.chat import ChatEditRefused, ChatUseCase, StaleExchange
from cks_desktop.ui.chat.model import ChatModel, MessageItem, ToolItem
from cks_desktop.ui.chat.presenter import ChatPresenter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cks_desktop.agent.assistant import Assistant
    from cks_desktop.agent.events import AgentEvent, EventListener
    from cks_desktop.agent.transcript import SavedMessage
    from cks_desktop.tools.images import ImageBlob
    from cks_desktop.tools.approval import Approver

log = logging.getLogger(__name__)
CONTINUE_PROMPT = "Continue."
# ErrorEvent kinds that refuse the person's message before it was saved: the draft goes back
# to the composer (images for a model without; the team database unreachable, agent/loop.py).
REFUSED_KINDS = frozenset({"no_image_support", NOT_SAVED})


class ChatController:
    def __init__(self, session_id: str, assistant: "Assistant", approver: "Approver") -> None:
        self.session_id = session_id
        self.assistant = assistant
        self.approver = approver
        self.model = ChatModel()
        self.presenter = ChatPresenter(self.model, self._is_revertable)
        self.messages: list[Message] = []
        self.task: asyncio.Task[None] | None = None
        self._changed: Callbacks[[]] = Callbacks("chat controller")
        self.loaded = False
        self.usage_line = ""  # the session's tokens and cost, for the panel (refresh_usage)
        self.usage_tip = ""
        # A message the turn refused whole (its images, for a model that reads none: Ollama says so
        # only when asked): (text, images, sentence), for the panel to put back in the composer.
        self.returned_draft: "tuple[str, list[ImageBlob], str] | None" = None

    @property
    def edits(self) -> ChatUseCase:
        """Delete, clear, drop an answer: the chat's edits, in the CLI's words too."""
        return ChatUseCase(self.assistant.transcripts)

    # -- observers (the dock updates Send/Stop and the Continue banner) -------------
    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        return self._changed.subscribe(listener)

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        self._changed.unsubscribe(listener)

    def _state_changed(self) -> None:
        self._changed.emit()

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def limit_reached(self) -> bool:
        return self.presenter.limit_reached and not self.running

    # -- loading -----------------------------------------------------------------
    def load(self) -> None:
        history = self._with_images(self.assistant.transcripts.history(self.session_id))
        self.messages = [saved.message for saved in history if not saved.is_error]  # what a request sends
        self.presenter.load(history)
        self.loaded = True
        self.refresh_usage(history)
        self._state_changed()

    def refresh_usage(self, history: "list[SavedMessage] | None" = None) -> None:
        """Tokens and cost on each exchange's answer and for the session, from the saved usage rows
        (a small read of one session's rows); a failure leaves the chat without the numbers."""
        from cks_desktop.agent import usage
        from cks_desktop.settings import Agent
        from cks_desktop.ui.chat import usage_marks

        try:
            transcripts = self.assistant.transcripts
            answers = usage.answers(transcripts, self.session_id, self.assistant.settings.section(Agent).prices)
            rows = history if history is not None else transcripts.history(self.session_id)
            usage_marks.apply(self.model, answers, usage.exchanges(answers, rows))
        except Exception:
            log.exception("reading the chat's token usage failed")
            return
        total = usage.session_total(answers)
        self.usage_line = usage_marks.session_line(total, len(answers))
        self.usage_tip = usage_marks.session_tip(total, len(answers)) if answers else ""

    def _with_images(self, history: "list[SavedMessage]") -> "list[SavedMessage]":
        """The saved chat with its image references' bytes read from the session's store (thumbnails,
        and the next request); a chat without images is returned as it is."""
        from dataclasses import replace

        from cks_desktop.agent.images import ImageStore
        from cks_desktop.llm.vision import has_images

        if not has_images(saved.message for saved in history):
            return history
        try:
            messages = ImageStore(self.assistant.store).hydrate(self.session_id, [s.message for s in history])
        except Exception:  # the rows then show "image not available"; the chat still loads
            log.exception("reading the chat's images failed")
            return history
        return [replace(saved, message=message) for saved, message in zip(history, messages)]

    def _is_revertable(self, name: str, source: str) -> bool:
        return self.assistant.can_revert(name, source)

    # -- a turn --------------------------------------------------------------------
    def send(self, text: str, images: "Sequence[ImageBlob]" = ()) -> asyncio.Task[None] | None:
        """Start a turn; None when one is already running or the text is blank (and no image).
        ``images``: the person's pasted or dropped images (validated), stored in the session and
        sent with the message."""
        text = text.strip()
        if (not text and not images) or self.running:
            return None
        if not self.loaded:
            self.load()
        if images:
            from cks_desktop.agent.images import part_of

            self.presenter.add_user(text, [part_of(blob) for blob in images])
            self.task = asyncio.ensure_future(self._run_with_images(text, images))
        else:
            self.presenter.add_user(text)
            self.task = asyncio.ensure_future(self._run_text(text))
        self.task.add_done_callback(lambda _t: self._state_changed())
        self._state_changed()
        return self.task

    def continue_(self) -> asyncio.Task[None] | None:
        return self.send(CONTINUE_PROMPT)

    def retry(self, item: MessageItem) -> asyncio.Task[None] | None:
        """Answer the unanswered message ``item`` again (the chat's last message); None if not possible."""
        if self.running or not item.retryable:
            return None
        last = self.messages[-1] if self.messages else None
        saved = last is not None and last.role == "user" and last.text.strip() == item.text.strip()
        if saved and self._drop_errors():  # the saved error rows go: this answer replaces them
            item = self._reloaded_prompt(item.turn) or item
        self.presenter.retrying(item)
        # Saved: continue the conversation as it is. Not saved (no provider was set up): send it now.
        self.task = asyncio.ensure_future(self._run(None if saved else item.text))
        self.task.add_done_callback(lambda _t: self._state_changed())
        self._state_changed()
        return self.task

    def _drop_errors(self) -> bool:
        """Delete the error rows after the last message (Retry); True when some were deleted."""
        removed = self.edits.drop_trailing_errors(self.session_id)
        if removed:
            self.load()
        return bool(removed)

    def _reloaded_prompt(self, turn: int) -> MessageItem | None:
        return next((it for it in self.model.items
                     if isinstance(it, MessageItem) and it.role == "user" and it.turn == turn), None)

    def regenerate(self, item: MessageItem) -> asyncio.Task[None] | str | None:
        """Drop the last answer (``item`` is one of its messages) and answer its message again.
        Returns the task, or a sentence why not (None: nothing to do)."""
        if self.running:
            return "The chat is answering; stop it first."
        if not item.last_answer:
            return None
        prompt = self._reloaded_prompt(item.turn)
        try:
            self.edits.drop_answer(self.session_id, item.turn, expect_prompt=prompt.text if prompt else None)
        except StaleExchange as exc:
            self.load()
            return str(exc)
        except ChatEditRefused as exc:
            return str(exc)
        self.load()
        fresh = self._reloaded_prompt(item.turn)
        if fresh is None:
            return None
        self.presenter.retrying(fresh)
        self.task = asyncio.ensure_future(self._run(None))
        self.task.add_done_callback(lambda _t: self._state_changed())
        self._state_changed()
        return self.task

    def resend_edited(self, item: MessageItem, text: str,
                      images: "Sequence[ImageBlob]" = ()) -> asyncio.Task[None] | str | None:
        """Replace the person's last message ``item`` (and its whole answer) with ``text`` (and the
        images attached while editing), then send it. Returns the task, or a sentence why not
        (None: blank text and no image)."""
        text = text.strip()
        if self.running:
            return "The chat is answering; stop it first."
        if not text and not images:
            return None
        if not item.last_prompt:
            return "Only your last message can be edited and sent again."
        try:
            self.edits.delete_exchange(self.session_id, item.turn, expect_prompt=item.text)
        except StaleExchange as exc:
            if item.turn <= self.edits.saved_prompts(self.session_id):  # the chat changed since it was shown
                self.load()
                return str(exc)
            # else it was never saved (no provider was set up): there is nothing to delete
        except ChatEditRefused as exc:
            return str(exc)
        self.load()
        return self.send(text, images)

    def delete_turn(self, turn: int) -> str | None:
        """Delete exchange ``turn`` from the transcript; None when done, else one sentence why not."""
        if self.running:
            return "The chat is answering; stop it first."
        prompt = next((it.text for it in self.model.items
                       if isinstance(it, MessageItem) and it.role == "user" and it.turn == turn), None)
        try:
            self.edits.delete_exchange(self.session_id, turn, expect_prompt=prompt)
        except StaleExchange as exc:
            self.load()
            return str(exc)
        except ChatEditRefused as exc:  # a locked or damaged file: said, the chat kept as it was
            return str(exc)
        self.load()
        return None

    def clear(self) -> str | None:
        """Delete every message of this chat (the graph stays); None when done, else why not."""
        if self.running:
            return "The chat is answering; stop it first."
        try:
            self.edits.clear(self.session_id)
        except ChatEditRefused as exc:
            return str(exc)
        self.load()
        return None

    def stop(self) -> bool:
        """Stop the running turn: the stream, a running tool call, a pending approval."""
        if not self.running:
            return False
        assert self.task is not None
        self.task.cancel()
        return True

    async def _run_with_images(self, text: str, images: "Sequence[ImageBlob]") -> None:
        """Store the person's images in the session (off the loop when large), then send them."""
        from cks_desktop.agent.images import ImageStore, part_of
        from cks_desktop.llm.messages import Part, Text

        store = ImageStore(self.assistant.store)
        parts: list[Part] = [Text(text)] if text else []
        for blob in images:
            try:
                parts.append(await store.store_async(self.session_id, blob))
            except Exception:  # kept for this turn only; the transcript names what it cannot show
                log.exception("storing an image failed")
                parts.append(part_of(blob))
        refused: list[str] = []
        await self._run(Message("user", parts), self._refusals(refused))
        if refused:
            self._give_back(text, list(images), refused[0])

    async def _run_text(self, text: str) -> None:
        """A text message; when the turn could not save it (the team database is unreachable)
        nothing went to the model and the text goes back to the composer with the sentence."""
        refused: list[str] = []
        await self._run(text, self._refusals(refused))
        if refused:
            self._give_back(text, [], refused[0])

    def _refusals(self, refused: list[str]) -> "EventListener":
        """The presenter's listener, except that a refusal of the message before it was saved
        (``REFUSED_KINDS``) is collected in ``refused`` instead of shown as a chat row."""
        from cks_desktop.agent.events import ErrorEvent

        def on_event(event: "AgentEvent") -> None:
            if isinstance(event, ErrorEvent) and event.kind in REFUSED_KINDS:
                refused.append(event.message)  # nothing was saved; the draft goes back
                return
            self.presenter.handle(event)

        return on_event

    def _give_back(self, text: str, images: "list[ImageBlob]", sentence: str) -> None:
        """The turn refused the message before saving it: the draft (text and images) goes back to
        the composer with the sentence, the chat shows what was saved (not the unsaved message,
        whose Retry would resend the text alone), and the images stored for it are dropped."""
        self.returned_draft = (text, images, sentence)
        try:
            self.assistant.transcripts.sweep_images(self.session_id)
        except Exception:  # the rows go with the next Delete or Clear
            log.exception("dropping the refused message's images failed")
        try:
            self.load()
        except Exception:  # the database is unreachable: keep the rows shown, without the unsaved one
            log.info("the chat could not be reloaded after a refused message", exc_info=True)
            items = self.model.items
            if items and getattr(items[-1], "role", "") == "user":
                self.model.reset(items[:-1])
            self._state_changed()

    def take_returned_draft(self) -> "tuple[str, list[ImageBlob], str] | None":
        draft, self.returned_draft = self.returned_draft, None
        return draft

    async def _run(self, prompt: str | Message | None, on_event: "EventListener | None" = None) -> None:
        try:
            turn = await self.assistant.run(self.session_id, prompt, approver=self.approver,
                                            on_event=on_event or self.presenter.handle, history=self.messages)
        except asyncio.CancelledError:
            self.presenter.cancelled()
            self.messages = self.assistant.saved_messages(self.session_id, fallback=self.messages)
            self.refresh_usage()
            raise
        self.messages = turn.messages
        self.refresh_usage()

    # -- revert ----------------------------------------------------------------------
    async def revert(self, item: ToolItem) -> bool:
        """Undo the change a tool row made (the core's ``Assistant.revert``)."""
        if not item.can_revert or item.change_id is None:
            return False
        problem = await self.assistant.revert(self.session_id, item.change_id)
        if problem is not None:
            self.presenter.reverted(item, False, problem)
            return False
        self.presenter.reverted(item, True)
        return True

    def on_store_event(self, event: object) -> None:
        """A change that reverts one of this chat's rows, made elsewhere (the inspector's
        history, a terminal's ``revert_change``, an MCP host): the row shows "reverted"
        and offers Revert no more."""
        from cks_desktop.graph.events import GraphChanged

        if not isinstance(event, GraphChanged) or not event.reverts or event.session_id != self.session_id:
            return
        for item in self.model.tools():
            if item.change_id == event.reverts and not item.reverted:
                self.presenter.reverted(item, True)
