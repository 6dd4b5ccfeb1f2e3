"""One session's chat: load it, send a prompt, stop, revert, retry, delete (Qt-free, asyncio).

The controller owns the session's ``ChatModel`` and presenter and the task of
the running turn. ``ai_chat`` does the work and saves the transcript as it
goes; the controller keeps the conversation that the next turn continues
from, and reloads it from the transcript after a Stop so it matches what was
saved. Chats in other sessions keep running while the person looks elsewhere.

Retry answers a message that got no answer (the app was killed, the provider
failed, Stop came first) on its own; Delete removes one whole exchange and
Clear the whole chat from the transcript (never the graph), then the chat is
reloaded from the transcript so the view shows exactly what was kept. None of
these runs while the chat is answering.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cks_desktop.agent import events as ev
from cks_desktop.llm.messages import Message
from cks_desktop.llm.provider import ProviderError
from cks_desktop.tools.approval import Approver, Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from cks_desktop.ui.chat.model import ChatModel, MessageItem, ToolItem
from cks_desktop.ui.chat.presenter import ChatPresenter

if TYPE_CHECKING:
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.ui.providers import ProviderHolder

log = logging.getLogger(__name__)
CONTINUE_PROMPT = "Continue."
REVERT_TOOL = "revert_change"
_revert_ids = itertools.count(1)


@dataclass
class ChatServices:
    store: Any
    registry: "ToolRegistry"
    transcripts: "TranscriptStore"
    approver: Approver
    providers: "ProviderHolder"
    settings: "Settings"


class ChatController:
    def __init__(self, session_id: str, services: ChatServices) -> None:
        self.session_id = session_id
        self.services = services
        self.model = ChatModel()
        self.presenter = ChatPresenter(self.model, self._is_revertable)
        self.messages: list[Message] = []
        self.task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[], None]] = []
        self.loaded = False

    # -- observers (the dock updates Send/Stop and the Continue banner) -------------
    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _state_changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def limit_reached(self) -> bool:
        return self.presenter.limit_reached and not self.running

    # -- loading -----------------------------------------------------------------
    def load(self) -> None:
        history = self.services.transcripts.history(self.session_id)
        self.messages = [saved.message for saved in history]
        self.presenter.load(history)
        self.loaded = True
        self._state_changed()

    def _is_revertable(self, name: str, source: str) -> bool:
        if source != "builtin":
            return False
        spec = self.services.registry.get(name)
        return spec is not None and spec.mutating and self.services.registry.get(REVERT_TOOL) is not None

    # -- a turn --------------------------------------------------------------------
    def send(self, text: str) -> asyncio.Task[None] | None:
        """Start a turn; None when one is already running or the text is blank."""
        text = text.strip()
        if not text or self.running:
            return None
        if not self.loaded:
            self.load()
        self.presenter.add_user(text)
        self.task = asyncio.ensure_future(self._run(text))
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
        self.presenter.retrying(item)
        # Saved: continue the conversation as it is. Not saved (no provider was set up): send it now.
        self.task = asyncio.ensure_future(self._run(None if saved else item.text))
        self.task.add_done_callback(lambda _t: self._state_changed())
        self._state_changed()
        return self.task

    def delete_turn(self, turn: int) -> str | None:
        """Delete exchange ``turn`` from the transcript; None when done, else one sentence why not."""
        if self.running:
            return "The chat is answering; stop it first."
        prompt = next((it.text for it in self.model.items
                       if isinstance(it, MessageItem) and it.role == "user" and it.turn == turn), None)
        try:
            self.services.transcripts.delete_turn(self.session_id, turn, expect_prompt=prompt)
        except LookupError as exc:
            self.load()
            return str(exc)
        except Exception as exc:  # a locked or damaged file: say so, keep the chat as it was
            log.exception("deleting part of the chat failed")
            return f"The messages could not be deleted: {exc}"
        self.load()
        return None

    def clear(self) -> str | None:
        """Delete every message of this chat (the graph stays); None when done, else why not."""
        if self.running:
            return "The chat is answering; stop it first."
        try:
            self.services.transcripts.clear(self.session_id)
        except Exception as exc:
            log.exception("clearing the chat failed")
            return f"The chat could not be cleared: {exc}"
        self.load()
        return None

    def stop(self) -> bool:
        """Stop the running turn: the stream, a running tool call, a pending approval."""
        if not self.running:
            return False
        assert self.task is not None
        self.task.cancel()
        return True

    async def _run(self, prompt: str | None) -> None:
        from cks_desktop.agent.loop import ai_chat

        from cks_desktop.tools.scopes import chat_grant

        services = self.services
        settings = services.settings
        try:
            grant = chat_grant(settings, self.session_id)  # read per turn: a change applies to the next one
            async with services.providers.use() as provider:
                self.messages = await ai_chat(
                    self.session_id, self.messages, prompt, provider=provider, registry=services.registry,
                    store=services.store, approver=services.approver, on_event=self.presenter.handle,
                    max_iterations=settings.max_iterations, allowed_folders=settings.allowed_folders,
                    granted_scopes=grant.scopes, source_grants=grant.by_source,
                    transcript=services.transcripts)
        except ProviderError as exc:  # no provider / no key: said in the chat (not saved), with the way out
            self.presenter.handle(ev.ErrorEvent(exc.message, exc.kind))
            self.presenter.handle(ev.Finished("error"))
        except asyncio.CancelledError:
            self.presenter.cancelled()
            self._reload_messages()
            raise
        except Exception as exc:
            log.exception("the chat turn failed")
            self.presenter.handle(ev.ErrorEvent(f"The answer stopped because of an internal error "
                                                f"({type(exc).__name__}); the details are in the log.", "internal"))
            self.presenter.handle(ev.Finished("error"))
            self._reload_messages()

    def _reload_messages(self) -> None:
        try:
            self.messages = self.services.transcripts.load(self.session_id)
        except Exception:
            log.exception("reloading the transcript failed")

    # -- revert ----------------------------------------------------------------------
    async def revert(self, item: ToolItem) -> bool:
        """Undo the change a tool row made, through the registry's ``revert_change``."""
        if not item.can_revert or item.change_id is None:
            return False
        registry = self.services.registry
        run = Run(self.session_id, Caller.USER, StaticApprover(Decision.ALLOW))  # the click was the approval
        call = ToolCall(f"revert_{next(_revert_ids)}", REVERT_TOOL, {"change_id": item.change_id})
        result = await registry.invoke(call, run)
        if result.is_error:
            self.presenter.reverted(item, False, result.content)
            return False
        try:
            self.services.transcripts.mark_reverted(self.session_id, item.change_id)
        except Exception:
            log.exception("could not record the revert in the transcript")
        self.presenter.reverted(item, True)
        return True
