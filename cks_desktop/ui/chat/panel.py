"""The chat dock's content: messages, the find bar, notices, and the composer.

It shows one session's ``ChatController`` at a time; switching sessions swaps
the controller, while chats elsewhere keep running in the background.

Delete this exchange… and Clear chat… (from a message's menu, or
``request_clear``) ask first, in a window-modal box that never blocks the
loop; the graph is never touched. Retry on an unanswered message sends it
again on its own.

Edit on the person's last message puts its text in the composer with an
"Editing" bar (Cancel, or Esc in the bar, leaves it); Send then replaces that exchange
(``ChatController.resend_edited``). Regenerate on the last answer answers again
(``ChatController.regenerate``). A refusal (the chat changed, it is answering) is one
sentence in the chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QFileDialog, QFrame, QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from cks_desktop.ui.chat.chat_view import ChatView
from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.controller import ChatController
from cks_desktop.ui.chat.find import find_matches, mentioned_ids
from cks_desktop.ui.chat.markdown_view import MarkdownView
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import ChatModel, MessageItem, ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow
from cks_desktop.ui.dialogs import confirm
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.labels import plain_label, rich_label
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.ui.chat.session_settings_dialog import SessionSettingsDialog


def _safe_name(title: str) -> str:
    """A file name from a session title (letters, digits, spaces, dashes)."""
    return "".join(c for c in title if c.isalnum() or c in " -_").strip()[:60]


EMPTY_CHAT = ("Ask the assistant about this session's graph, or paste a text and ask it to add the people, "
              "places and ideas in it.")
NO_SESSION = "Create or pick a session to chat."


class _FindBar(QFrame):
    def __init__(self, panel: "ChatPanel") -> None:
        super().__init__()
        self.panel = panel
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.edit = QLineEdit()
        self.edit.setObjectName("chatFind")
        self.edit.setPlaceholderText("Find in this chat (Enter: next, Shift+Enter: previous, Esc: close)")
        self.edit.setClearButtonEnabled(True)
        self.count = plain_label()
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.hide_bar)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.count)
        layout.addWidget(close)
        self.edit.textChanged.connect(lambda _t: self.search(0))
        self.edit.returnPressed.connect(lambda: self.search(+1))
        self.edit.installEventFilter(self)
        self._matches: list[int] = []
        self._position = -1

    def eventFilter(self, obj: object, event: object) -> bool:  # noqa: N802
        if isinstance(event, QKeyEvent) and event.type() == QKeyEvent.Type.KeyPress:
            if event.key() == Qt.Key.Key_Escape:
                self.hide_bar()
                return True
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) \
                    and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.search(-1)
                return True
        return False

    def show_bar(self) -> None:
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def hide_bar(self) -> None:
        self.hide()
        self.panel.composer.input.setFocus()

    def search(self, step: int) -> None:
        needle = self.edit.text()
        self._matches = find_matches(self.panel.model.items, needle)
        if not self._matches:
            self._position = -1
            self.count.setText("no matches" if needle.strip() else "")
            return
        if step == 0:
            self._position = len(self._matches) - 1  # newest first, like reading upwards
        else:
            self._position = (self._position + step) % len(self._matches)
        self.count.setText(f"{self._position + 1} of {len(self._matches)}")
        self.panel.reveal(self._matches[self._position], needle)


LIMIT_TEXTS = {"iterations": "The answer used all its model turns. Continue lets the assistant go on.",
               "budget": "The answer reached its budget. Continue lets the assistant go on."}


class ChatPanel(QWidget):
    settingsRequested = Signal(str)  # settings page: "providers", "agent", "mcp"
    objectsMentioned = Signal(list)  # object ids of a clicked tool-call row
    runningChanged = Signal(bool)  # the shown chat started or stopped answering
    citationOpened = Signal(str, object)  # session id, a checked citation's source: show the passage
    providerChosen = Signal(str, str)
    exported = Signal(str)  # the path a chat export was written to
    useOllamaRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPanel")
        self.controller: ChatController | None = None
        self.model = ChatModel()
        self.tasks = TaskTracker()
        self._running = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)

        self.find_bar = _FindBar(self)
        self.find_bar.hide()
        layout.addWidget(self.find_bar)

        self.setup_notice = rich_label()  # our own markup; its one dynamic part (a URL) is escaped
        self.setup_notice.setObjectName("noProviderNotice")
        self.setup_notice.setWordWrap(True)
        self.setup_notice.setOpenExternalLinks(False)
        self.setup_notice.setMargin(10)
        self.setup_notice.setFrameShape(QFrame.Shape.StyledPanel)
        self.setup_notice.linkActivated.connect(self._notice_link)
        layout.addWidget(self.setup_notice)

        self.view = ChatView(self.model)
        layout.addWidget(self.view, 1)

        self.empty_label = plain_label()
        self.empty_label.setWordWrap(True)
        self.empty_label.setMargin(10)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.empty_label, 1)

        self.limit_banner = QFrame()
        self.limit_banner.setObjectName("limitBanner")
        self.limit_banner.setFrameShape(QFrame.Shape.StyledPanel)
        banner = QHBoxLayout(self.limit_banner)
        banner.setContentsMargins(8, 4, 8, 4)
        # The one way on at the limit (the notice in the chat states the fact and no other hint).
        self.limit_label = plain_label("The answer used all its model turns. Continue lets the assistant go on.")
        self.limit_label.setWordWrap(True)
        self.continue_button = QPushButton("Continue")
        self.continue_button.setObjectName("continueButton")
        self.continue_button.setAutoDefault(False)
        self.continue_button.setToolTip("Let the assistant go on from where it stopped")
        banner.addWidget(self.limit_label, 1)
        banner.addWidget(self.continue_button)
        self.limit_banner.hide()
        layout.addWidget(self.limit_banner)

        self.edit_bar = QFrame()
        self.edit_bar.setObjectName("editBar")
        edit_row = QHBoxLayout(self.edit_bar)
        edit_row.setContentsMargins(8, 4, 8, 0)
        self.edit_label = plain_label("Editing your last message: Send replaces it and its answer.")
        self.edit_label.setWordWrap(True)
        self.edit_cancel = QPushButton("Cancel")
        self.edit_cancel.setObjectName("cancelEditButton")
        self.edit_cancel.setAutoDefault(False)
        self.edit_cancel.clicked.connect(self.cancel_edit)
        edit_row.addWidget(self.edit_label, 1)
        edit_row.addWidget(self.edit_cancel)
        self.edit_bar.hide()
        layout.addWidget(self.edit_bar)
        self._editing: MessageItem | None = None
        self.session_dialog: "SessionSettingsDialog | None" = None  # the last one opened (tests)
        self.export_dialog: QFileDialog | None = None

        # The session's tokens and cost so far: one quiet line, the details on hover.
        self.usage_label = plain_label("", name="chatSessionUsage", wrap=True)
        self.usage_label.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.usage_label.setContentsMargins(8, 2, 8, 0)
        self.usage_label.hide()
        layout.addWidget(self.usage_label)

        self.composer = Composer()
        layout.addWidget(self.composer)

        self.composer.sendClicked.connect(self._send)
        self.composer.image_support = self._image_support
        self.composer.stopClicked.connect(self.stop)
        self.composer.providerChosen.connect(self.providerChosen)
        self.composer.fetchModelsRequested.connect(self.fetch_models)
        self.continue_button.clicked.connect(self._continue)
        self.view.revertRequested.connect(self._revert)
        self.view.rowActivated.connect(self._row_activated)
        self.view.retryRequested.connect(self._retry)
        self.view.editRequested.connect(self.start_edit)
        self.view.regenerateRequested.connect(self.regenerate)
        self.view.deleteRequested.connect(self.request_delete)
        self.view.clearRequested.connect(self.request_clear)
        self.view.citationActivated.connect(self._open_citation)
        self.set_setup_notice(None)
        self._sync()

    def _open_citation(self, source: object) -> None:
        """A checked citation of an answer was clicked: the window opens its document at the passage."""
        if self.controller is not None:
            self.citationOpened.emit(self.controller.session_id, source)

    # -- which chat --------------------------------------------------------------
    def set_controller(self, controller: ChatController | None) -> None:
        if self.controller is controller:
            return
        self.cancel_edit()  # an edit belongs to the chat it started in
        if self.controller is not None:
            self.controller.unsubscribe(self._sync)
            self.controller.model.unsubscribe(self)
            self.controller.presenter.context_listeners.unsubscribe(self.composer.show_context)
        self.controller = controller
        self.model = controller.model if controller is not None else ChatModel()
        self.model.subscribe(self)  # for the empty-chat hint
        self.view.set_model(self.model)
        if controller is not None:
            controller.subscribe(self._sync)
            if not controller.loaded:
                controller.load()
            # The meter shows this session's last numbers, or nothing.
            controller.presenter.context_listeners.subscribe(self.composer.show_context)
        self.composer.show_context(controller.presenter.context_usage if controller is not None else None)
        self._sync()

    # ChatModelListener (only to toggle the hint)
    def items_reset(self) -> None:
        self._sync()

    def item_inserted(self, index: int) -> None:
        if index == 0:
            self._sync()

    def item_changed(self, index: int) -> None:
        pass

    def _sync(self) -> None:
        controller = self.controller
        running = controller is not None and controller.running
        if running != self._running:
            self._running = running
            self.runningChanged.emit(running)
        self.composer.set_running(running)
        self.view.editable = controller is not None and not running
        self.composer.setEnabled(controller is not None)
        draft = controller.take_returned_draft() if controller is not None else None
        if draft is not None:  # the turn refused the message (images for a model without): nothing lost
            self.composer.restore_draft(*draft)
        self.limit_banner.setVisible(controller is not None and controller.limit_reached)
        if controller is not None and controller.limit_reached:
            self.limit_label.setText(LIMIT_TEXTS.get(controller.presenter.limit_kind, LIMIT_TEXTS["iterations"]))
        self.usage_label.setText(controller.usage_line if controller is not None else "")
        self.usage_label.setToolTip(plain_tooltip(controller.usage_tip) if controller is not None else "")
        self.usage_label.setVisible(bool(self.usage_label.text()))
        empty = controller is None or not self.model.items
        self.empty_label.setText(EMPTY_CHAT if controller is not None else NO_SESSION)
        self.empty_label.setVisible(empty)
        self.view.setVisible(not empty)

    # -- actions -------------------------------------------------------------------
    def _send(self, text: str) -> None:
        if self.controller is None:
            return
        self.view.scroll_to_bottom()
        editing, self._editing = self._editing, None
        self.edit_bar.hide()
        images = self.composer.take_images()
        if editing is not None:
            outcome = self.controller.resend_edited(editing, text, images)
            if isinstance(outcome, str) and images:  # not sent: the images stay attached
                self.composer.restore_draft("", images, "")
            self._report(outcome)
        else:
            self.controller.send(text, images)

    def _image_support(self) -> str | None:
        """Why the model shown in the composer takes no images (one sentence), or None when it does
        or only its server can say (Ollama: the turn asks, and refuses with the same sentence)."""
        from cks_desktop.llm.profiles import PROFILES
        from cks_desktop.llm.vision import known_images, refusal_text

        controller = self.controller
        name = str(self.composer.provider_box.currentData() or "")
        model = self.composer.model_box.currentText().strip()
        profile = PROFILES.get(name)
        if controller is None or profile is None:
            return None
        try:
            section = controller.assistant.settings.provider_entry(name).options(("images",))
        except Exception:  # an unreadable settings section: the turn decides
            return None
        if known_images(profile, model, section) is not False:
            return None
        return refusal_text(model, profile.display_name)

    # -- edit and resend, regenerate --------------------------------------------------
    def start_edit(self, item: object) -> None:
        """Put the person's last message in the composer; Send replaces that exchange."""
        if self.controller is None or self.controller.running or not isinstance(item, MessageItem) \
                or not item.last_prompt:
            return
        self._editing = item
        self.composer.input.setPlainText(item.text)
        cursor = self.composer.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.composer.input.setTextCursor(cursor)
        self.edit_bar.show()
        self.composer.input.setFocus()

    def cancel_edit(self) -> None:
        if self._editing is None:
            return
        self._editing = None
        self.edit_bar.hide()
        self.composer.input.clear()

    def regenerate(self, item: object) -> None:
        if self.controller is not None and isinstance(item, MessageItem):
            self.view.scroll_to_bottom()
            self._report(self.controller.regenerate(item))

    # -- session settings, export -------------------------------------
    def open_session_settings(self) -> "SessionSettingsDialog | None":
        """This session's instructions and model parameters, in a window-modal dialog (``open()``)."""
        from cks_desktop.ui.chat.session_settings_dialog import SessionSettingsDialog

        controller = self.controller
        if controller is None:
            return None
        assistant = controller.assistant
        dialog = SessionSettingsDialog(assistant.store, assistant.settings, controller.session_id, self.window())
        dialog.finished.connect(dialog.deleteLater)
        self.session_dialog = dialog
        dialog.open()
        return dialog

    def export_chat(self) -> QFileDialog | None:
        """File → Export chat…: a save dialog (``open()``, never ``exec()``); the file is written
        off the loop, Markdown or JSON by the chosen filter or the name's suffix."""
        from cks_desktop.agent.chat_export import SUFFIXES

        controller = self.controller
        if controller is None:
            return None
        title = controller.assistant.store.get_session(controller.session_id).title
        dialog = QFileDialog(self.window(), "Export chat")
        dialog.setObjectName("exportChatDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(["Markdown (*.md)", "JSON (*.json)"])
        dialog.setDefaultSuffix("md")
        dialog.selectFile(f"{_safe_name(title) or 'chat'}{SUFFIXES['markdown']}")
        dialog.filterSelected.connect(lambda f: dialog.setDefaultSuffix("json" if "json" in f.lower() else "md"))
        dialog.fileSelected.connect(lambda path: self.tasks.spawn(self.write_export(controller, path),
                                                                  name="export-chat"))
        dialog.finished.connect(dialog.deleteLater)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    async def write_export(self, controller: ChatController, path: str) -> str | None:
        """Write the chat to ``path``; None when written, else the sentence shown in the chat."""
        import asyncio

        from cks_desktop.agent.chat_export import export_chat, format_for, write_export

        store = controller.assistant.store
        try:
            text = export_chat(store, controller.session_id, format_for(path))
            await asyncio.to_thread(write_export, path, text)
        except OSError as exc:
            problem = f"The chat could not be exported to {path}: {exc.strerror or exc}."
            controller.presenter.handle_problem(problem)
            return problem
        self.exported.emit(path)
        return None

    # -- the model picker's list -------------------------------------------------------------
    def fetch_models(self) -> None:
        if self.controller is not None:
            self.tasks.spawn(self.load_models(), name="fetch-models")

    async def load_models(self) -> list[str] | None:
        """Ask the chat's provider which models it has (``list_models``) and offer them."""
        controller = self.controller
        if controller is None:
            return None
        from cks_desktop.llm.provider import ProviderError

        self.composer.set_fetching(True)
        try:
            async with controller.assistant.providers.use() as provider:
                models = await provider.list_models()
        except ProviderError as exc:
            self.composer.set_fetching(False, exc.message)
            return None
        self.composer.set_fetching(False)
        self.composer.set_models(models)
        return models

    def _report(self, outcome: object) -> None:
        if isinstance(outcome, str) and self.controller is not None:
            self.controller.presenter.handle_problem(outcome)

    def _continue(self) -> None:
        if self.controller is not None:
            self.controller.continue_()

    def stop(self) -> bool:
        return self.controller.stop() if self.controller is not None else False

    def _retry(self, item: object) -> None:
        if self.controller is not None and isinstance(item, MessageItem):
            self.view.scroll_to_bottom()
            self.controller.retry(item)

    # -- deleting (ask first; the graph stays) -------------------------------------------
    def request_delete(self, item: object) -> None:
        if self.controller is not None and not self.controller.running and isinstance(item, (MessageItem, ToolItem)):
            self.tasks.spawn(self.delete_exchange(item.turn), name="delete-exchange")

    def request_clear(self) -> None:
        if self.controller is not None and not self.controller.running:
            self.tasks.spawn(self.clear_chat(), name="clear-chat")

    async def delete_exchange(self, turn: int) -> bool:
        controller = self.controller
        if controller is None:
            return False
        ok = await confirm(self.window(), "Delete messages",
                           "Delete this exchange: your message and the assistant's whole answer to it?",
                           informative="Tool calls and their results go with it. The graph is not changed, "
                                       "and this cannot be undone.", accept_text="Delete", destructive=True)
        return ok and self._done(controller, controller.delete_turn(turn))

    async def clear_chat(self) -> bool:
        controller = self.controller
        if controller is None:
            return False
        ok = await confirm(self.window(), "Clear chat", "Delete every message of this chat?",
                           informative="The graph is not changed, and this cannot be undone.",
                           accept_text="Clear chat", destructive=True)
        return ok and self._done(controller, controller.clear())

    def _done(self, controller: ChatController, problem: str | None) -> bool:
        if problem is not None:
            controller.presenter.handle_problem(problem)
        return problem is None

    def _revert(self, item: object) -> None:
        if self.controller is not None and isinstance(item, ToolItem):
            self.tasks.spawn(self.revert(item), name="revert")

    async def revert(self, item: ToolItem) -> bool:
        """A row's Revert: asks first when later changes built upon it (ui/revert_ask.py)."""
        from cks_desktop.ui.revert_ask import confirm_revert

        controller = self.controller
        if controller is None or not item.can_revert or item.change_id is None:
            return False
        if not await confirm_revert(self.window(), controller.assistant.store, controller.session_id,
                                    item.change_id):
            return False
        from cks_desktop.ui.toast import show_toast

        ok = await controller.revert(item)
        if ok:  # said where the person is looking, not only on the row
            show_toast(self, f"Reverted: {item.display_name}", "success")
        elif item.revert_error:
            show_toast(self, f"Could not revert {item.display_name}: {item.revert_error}", "danger")
        return ok

    def _row_activated(self, item: object) -> None:
        if isinstance(item, ToolItem):
            ids = mentioned_ids(item)
            if ids:
                self.objectsMentioned.emit(ids)

    def insert_reference(self, text: str) -> None:
        """Put a reference to graph objects into the message being written ("Ask about this")."""
        editor = self.composer.input
        cursor = editor.textCursor()
        before = editor.toPlainText()[:cursor.position()]
        cursor.insertText(("" if not before or before.endswith((" ", "\n")) else " ") + text + " ")
        editor.setFocus()

    def focus_input(self) -> None:
        self.composer.input.setFocus()

    def show_find(self) -> None:
        self.find_bar.show_bar()

    def reveal_text(self, text: str) -> None:
        """Scroll to the first chat item holding ``text`` (a message the graph's search found)."""
        needle = next((line.strip() for line in text.splitlines() if line.strip()), "")[:80]
        for index in find_matches(self.model.items, needle)[:1]:
            self.reveal(index, needle)

    def reveal(self, index: int, needle: str) -> None:
        self.view.scroll_to_index(index)
        widget = self.view.widget_for(index)
        if isinstance(widget, ToolCallRow):
            widget.set_expanded(True)
        elif isinstance(widget, MessageWidget):
            view: MarkdownView = widget.view
            cursor = view.textCursor()
            cursor.movePosition(cursor.MoveOperation.Start)
            view.setTextCursor(cursor)
            view.find(needle)

    # -- set-up notice -------------------------------------------------------------
    def set_setup_notice(self, html: str | None) -> None:
        """Shown when no provider is set up (the text comes from ``ui/chat/setup.py``)."""
        self.setup_notice.setVisible(bool(html))
        if html:
            self.setup_notice.setText(html)

    def _notice_link(self, link: str) -> None:
        if link == "use-ollama":
            self.useOllamaRequested.emit()
        elif link.startswith("settings:"):
            self.settingsRequested.emit(link.split(":", 1)[1])
