"""MCP prompts as slash commands in the chat input, and the composer's MCP hooks.

Typing ``/`` at the start of the message offers every prompt of the ready servers as
``/server:prompt`` (a completer under the input, filtered as the person types). Sending a
message that is exactly such a command opens ``PromptForm`` instead of sending: one field
per argument (required ones marked), each offering the server's completions
(``completion/complete``, debounced) as the person types. *Insert* gets the prompt
(``prompts/get``) and puts its text in the message box as plain text, for the person to read,
edit and send; it never goes into a system prompt. A server's prompt list change
(``prompts/list_changed``, coalesced in ``mcp/features.py``) shows at the next ``/``.

``install_mcp_features(composer, connections)`` wires this and the resource picker
(``resource_picker.py``) into a ``Composer`` through its two small hooks (``submit_hooks``,
``message_decorators``) and an *Attach…* button, so the composer itself stays MCP-free.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QAbstractItemView, QCompleter, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QToolButton,
                               QVBoxLayout, QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.chat.resource_picker import AttachmentBar, CompletingField, Connections, ResourcePicker, plain_label

if TYPE_CHECKING:
    import mcp_types as types

    from cks_desktop.mcp.connection import McpConnection
    from cks_desktop.ui.chat.composer import Composer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SlashCommand:
    server: str
    prompt: "types.Prompt"

    @property
    def text(self) -> str:
        return f"/{self.server}:{self.prompt.name}"


def slash_commands(connections: Mapping[str, "McpConnection"]) -> list[SlashCommand]:
    """Every prompt of every ready server, as commands, sorted."""
    out: list[SlashCommand] = []
    for name, conn in sorted(connections.items()):
        if conn.ready:
            out += [SlashCommand(name, p) for p in conn.features.prompts]
    return out


def find_command(connections: Mapping[str, "McpConnection"], text: str) -> SlashCommand | None:
    text = text.strip()
    if not text.startswith("/") or any(ch.isspace() for ch in text):
        return None
    return next((c for c in slash_commands(connections) if c.text == text), None)


class PromptForm(QDialog):
    """The arguments of one prompt; *Insert* fills it in (``inserted`` carries the text)."""

    def __init__(self, conn: "McpConnection", command: SlashCommand, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("promptForm")
        self.setWindowTitle(f"{command.text}")
        self.conn, self.command = conn, command
        self.result_text: str | None = None
        prompt = command.prompt
        layout = QVBoxLayout(self)
        title = prompt.title or prompt.name
        layout.addWidget(plain_label(f"{title} — a prompt of MCP server '{command.server}'"))
        if prompt.description:
            layout.addWidget(plain_label(prompt.description))
        form = QFormLayout()
        self.fields: dict[str, CompletingField] = {}
        for arg in prompt.arguments or []:
            field = CompletingField(self._suggester(arg.name))
            field.setObjectName(f"promptArg:{arg.name}")
            field.setAccessibleName(arg.name)
            if arg.description:
                field.setPlaceholderText(arg.description[:200])
            self.fields[arg.name] = field
            form.addRow(plain_label(arg.name + (" *" if arg.required else "")), field)
        layout.addLayout(form)
        self.notice = plain_label()
        self.notice.setObjectName("promptNotice")
        layout.addWidget(self.notice)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.insert_button = self.buttons.addButton("Insert", QDialogButtonBox.ButtonRole.AcceptRole)
        layout.addWidget(self.buttons)
        self.buttons.rejected.connect(self.reject)
        self.insert_button.clicked.connect(self._insert_clicked)
        self.task: asyncio.Future[Any] | None = None

    def _suggester(self, name: str) -> Any:
        async def suggest(text: str) -> list[str]:
            import mcp_types as types

            from cks_desktop.mcp.prompts import complete

            context = {k: f.text() for k, f in self.fields.items() if k != name and f.text()}
            return await complete(self.conn, types.PromptReference(name=self.command.prompt.name), name, text, context)

        return suggest

    def _insert_clicked(self) -> None:
        self.task = asyncio.ensure_future(self.insert())

    async def insert(self) -> str | None:
        from cks_desktop.mcp.prompts import check_arguments, get_prompt
        from cks_desktop.mcp.requests import RequestFailed

        values = {k: f.text() for k, f in self.fields.items() if f.text()}
        try:
            checked = check_arguments(self.command.prompt, values)
        except ValueError as exc:
            self.notice.setText(str(exc))
            return None
        self.insert_button.setEnabled(False)
        self.notice.setText("Getting the prompt…")
        try:
            filled = await get_prompt(self.conn, self.command.prompt.name, checked)
        except RequestFailed as exc:
            self.notice.setText(str(exc))
            self.insert_button.setEnabled(True)
            return None
        self.result_text = filled.text
        self.accept()
        return filled.text


def _popup(completer: QCompleter) -> QAbstractItemView:
    popup = completer.popup()
    assert popup is not None  # a QCompleter always makes its popup
    return popup


class _SlashKeys(QObject):
    """While the command list is open: Up/Down move in it (the list's own keys), Enter or Tab
    opens the marked command once, Esc closes the list and keeps the text.

    Installed on the input and on the list itself, after ``QCompleter``'s own filter (so it runs
    first): when the list is open the window system sends keys to the list, and the completer
    would otherwise pass Enter on to the input, sending the half-typed command as a message."""

    def __init__(self, completer: QCompleter) -> None:
        super().__init__(completer)
        self._completer = completer

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        popup = _popup(self._completer)
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress and popup.isVisible():
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab):
                index = popup.currentIndex()
                text = index.data() if index.isValid() else self._completer.currentCompletion()
                popup.hide()
                if text:
                    self._completer.activated.emit(text)
                return True
            if event.key() == Qt.Key.Key_Escape:
                popup.hide()
                return True
        return False


class McpComposerFeatures:
    """The composer's MCP parts: the attachment bar, *Attach…*, and slash commands."""

    def __init__(self, composer: "Composer", connections: Connections) -> None:
        self.composer = composer
        self.connections = connections
        self.bar = AttachmentBar()
        self.picker: ResourcePicker | None = None
        self.form: PromptForm | None = None
        layout = composer.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(0, self.bar)
        self.attach_button = QToolButton()  # an icon: the composer's row is narrow (see composer.py)
        self.attach_button.setText("Attach…")
        self.attach_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.attach_button.setAutoRaise(True)
        theme.bind_icon(self.attach_button, "paperclip")
        self.attach_button.setObjectName("attachResourceButton")
        self.attach_button.setAccessibleName("Attach an MCP resource")
        self.attach_button.setToolTip("Attach… a resource of an MCP server to the next message")
        self.attach_button.clicked.connect(self.open_picker)
        for i in range(layout.count()):
            item = layout.itemAt(i)
            row = item.layout() if item is not None else None
            if isinstance(row, QHBoxLayout) and row.indexOf(composer.send_button) >= 0:
                row.insertWidget(row.indexOf(composer.send_button), self.attach_button)
                break
        self.model = QStringListModel(self.composer)
        self.completer = QCompleter(self.model, composer)
        self.completer.setWidget(composer.input)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchFlag.MatchStartsWith)
        self.completer.activated.connect(self._command_chosen)
        self._keys = _SlashKeys(self.completer)
        composer.input.installEventFilter(self._keys)
        _popup(self.completer).installEventFilter(self._keys)  # after the completer's own filter: runs first
        composer.input.textChanged.connect(self._typed)
        composer.submit_hooks.append(self._submitting)
        composer.message_decorators.append(self.bar.take_into)

    # -- slash commands ---------------------------------------------------------------
    def _typed(self) -> None:
        text = self.composer.input.toPlainText()
        if not text.startswith("/") or any(ch.isspace() for ch in text):
            _popup(self.completer).hide()
            return
        commands = [c.text for c in slash_commands(self.connections())]
        self.model.setStringList(commands)
        self.completer.setCompletionPrefix(text)
        if self.completer.completionCount():
            rect = self.composer.input.cursorRect()
            popup = _popup(self.completer)
            rect.setWidth(max(240, popup.sizeHintForColumn(0) + 24))
            self.completer.complete(rect)
            # The first command is marked at once, so Enter takes it and Down goes to the second.
            popup.setCurrentIndex(self.completer.completionModel().index(0, 0))
        else:
            _popup(self.completer).hide()

    def _command_chosen(self, text: str) -> None:
        self.composer.input.setPlainText(text)
        self.open_form(text)

    def _submitting(self, text: str) -> bool:
        return self.open_form(text)

    def open_form(self, text: str) -> bool:
        """Open the form of the command ``text``; False when it names no prompt (the text is sent)."""
        connections = self.connections()
        command = find_command(connections, text)
        if command is None:
            return False
        form = PromptForm(connections[command.server], command, self.composer)
        form.accepted.connect(lambda: self._fill_from(form))
        self.form = form
        form.open()
        return True

    def _fill_from(self, form: PromptForm) -> None:
        if form.result_text is not None:
            self.composer.input.setPlainText(form.result_text)
            self.composer.input.setFocus()

    # -- resources ---------------------------------------------------------------------
    def open_picker(self) -> ResourcePicker:
        picker = ResourcePicker(self.connections, self.composer)
        picker.attached.connect(self.bar.add)
        self.picker = picker
        picker.open()
        return picker


def install_mcp_features(composer: "Composer", connections: Connections) -> McpComposerFeatures:
    return McpComposerFeatures(composer, connections)
