"""Attach an MCP server's resource to the next message: the picker and the attachment bar.

``ResourcePicker`` (window-modal, opened with ``open()``, never ``exec()``): a server list
(the ready servers that offer resources), a search field filtering that server's resources
and templates by name, title, URI and description, and for a template one field per
variable, with the server's completions (``completion/complete``) offered as the person
types. *Attach* reads the resource (bounded: ``resources.MAX_READ_CHARS``, with the notice
shown) and hands the ``ReadOutcome`` to ``attached``.

``AttachmentBar`` shows what will go with the next message, each with a remove button; the
composer's message decorator (``slash_commands.install_mcp_features``) appends each one as
``resources.attachment_text``: data inside the person's message, never a system prompt.
Names, titles and descriptions from a server are shown as plain text (``Qt.PlainText``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (QCompleter, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QListWidget, QListWidgetItem, QPushButton, QComboBox, QVBoxLayout, QWidget)

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection
    from cks_desktop.mcp.resources import ReadOutcome

log = logging.getLogger(__name__)

Connections = Callable[[], Mapping[str, "McpConnection"]]
COMPLETION_DELAY_MS = 200


def plain_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


class CompletingField(QLineEdit):
    """A line edit that asks ``suggest(text)`` (debounced) and offers the answers in a completer."""

    def __init__(self, suggest: Callable[[str], Any] | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._suggest = suggest
        self.suggestions = QStringListModel(self)
        completer = QCompleter(self.suggestions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        self.setCompleter(completer)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(COMPLETION_DELAY_MS)
        self._timer.timeout.connect(self._ask)
        self._task: asyncio.Future[Any] | None = None
        self.textEdited.connect(lambda _t: self._timer.start())
        self.asked = 0

    def _ask(self) -> None:
        if self._suggest is None:
            return
        if self._task is not None and not self._task.done():
            self._task.cancel()  # only the latest text matters
        self._task = asyncio.ensure_future(self._fetch(self.text()))

    def ask_now(self) -> "asyncio.Future[Any]":
        self._timer.stop()
        self._ask()
        assert self._task is not None
        return self._task

    async def _fetch(self, text: str) -> None:
        assert self._suggest is not None
        values = await self._suggest(text)
        self.asked += 1
        if self.text() != text:
            return  # typed on meanwhile; a newer request follows
        self.suggestions.setStringList(list(values))
        if values and self.hasFocus():
            self.completer().complete()


class ResourcePicker(QDialog):
    attached = Signal(object)  # ReadOutcome

    def __init__(self, connections: Connections, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach a resource")
        self.setObjectName("resourcePicker")
        self._connections = connections
        self._fields: dict[str, CompletingField] = {}
        layout = QVBoxLayout(self)
        self.server_box = QComboBox()
        self.server_box.setAccessibleName("MCP server")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search resources…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search resources")
        self.items = QListWidget()
        self.items.setAccessibleName("Resources")
        self.details = plain_label()
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.notice = plain_label()
        self.notice.setObjectName("resourceNotice")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.attach_button = self.buttons.addButton("Attach", QDialogButtonBox.ButtonRole.AcceptRole)
        self.attach_button.setEnabled(False)
        top = QHBoxLayout()
        top.addWidget(self.server_box)
        top.addWidget(self.search, 1)
        layout.addLayout(top)
        layout.addWidget(self.items, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.form_host)
        layout.addWidget(self.notice)
        layout.addWidget(self.buttons)
        self.resize(560, 460)

        self.server_box.currentIndexChanged.connect(lambda _i: self.refresh())
        self.search.textChanged.connect(lambda _t: self._fill())
        self.items.currentItemChanged.connect(lambda _a, _b: self._chosen())
        self.items.itemDoubleClicked.connect(lambda _i: self.attach_button.click())
        self.buttons.rejected.connect(self.reject)
        self.attach_button.clicked.connect(self._attach_clicked)
        self.task: asyncio.Future[Any] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._servers()

    # -- servers and items ----------------------------------------------------------
    def _servers(self) -> None:
        from cks_desktop.mcp.resources import supports_resources

        self.server_box.clear()
        for name, conn in sorted(self._connections().items()):
            if conn.ready and supports_resources(conn):
                self.server_box.addItem(name, name)
        if self.server_box.count() == 0:
            self.notice.setText("No connected MCP server offers resources. Add or start one in Settings → MCP servers.")
        self.refresh()

    def connection(self) -> "McpConnection | None":
        name = self.server_box.currentData()
        return self._connections().get(name) if isinstance(name, str) else None

    def refresh(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        conn = self.connection()
        if conn is not None:  # a list_changed while the picker is open shows at once
            self._unsubscribe = conn.features.subscribe_events(
                lambda e: self._fill() if e.kind == "resources" else None)
            note = conn.features.notices.get("resources", "")
            self.notice.setText(note)
        self._fill()

    def done(self, result: int) -> None:  # noqa: D401 - Qt's name
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().done(result)

    def _fill(self) -> None:
        self.items.clear()
        conn = self.connection()
        if conn is None:
            self._chosen()
            return
        needle = self.search.text().strip().lower()
        f = conn.features
        rows: list[tuple[str, str, Any]] = []
        for r in f.resources:
            label = r.title or r.name
            rows.append((f"{label} — {r.uri}", " ".join([r.name, r.title or "", r.uri, r.description or ""]), r))
        for t in f.templates:
            label = t.title or t.name
            rows.append((f"{label} — {t.uri_template} (template)",
                         " ".join([t.name, t.title or "", t.uri_template, t.description or "", "template"]), t))
        for text, haystack, value in rows:
            if needle and needle not in haystack.lower():
                continue
            item = QListWidgetItem(text)  # QListWidgetItem text is plain text
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setToolTip("")  # tool tips render rich text: none from a server
            self.items.addItem(item)
        if self.items.count():
            self.items.setCurrentRow(0)
        self._chosen()

    def chosen(self) -> Any:
        item = self.items.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _chosen(self) -> None:
        import mcp_types as types

        from cks_desktop.mcp.resources import template_variables

        while self.form.rowCount():
            self.form.removeRow(0)
        self._fields = {}
        value = self.chosen()
        self.attach_button.setEnabled(value is not None)
        if value is None:
            self.details.setText("")
            return
        mime = f" [{value.mime_type}]" if value.mime_type else ""
        self.details.setText(f"{value.description or ''}{mime}".strip())
        if isinstance(value, types.ResourceTemplate):
            conn = self.connection()
            for name in template_variables(value.uri_template):
                field = CompletingField(self._suggester(conn, value.uri_template, name))
                field.setObjectName(f"templateArg:{name}")
                field.setAccessibleName(name)
                self._fields[name] = field
                self.form.addRow(plain_label(name), field)

    def _suggester(self, conn: "McpConnection | None", template: str, name: str) -> Callable[[str], Any]:
        async def suggest(text: str) -> list[str]:
            import mcp_types as types

            from cks_desktop.mcp.prompts import complete

            if conn is None:
                return []
            context = {k: f.text() for k, f in self._fields.items() if k != name and f.text()}
            return await complete(conn, types.ResourceTemplateReference(uri=template), name, text, context)

        return suggest

    def fields(self) -> dict[str, CompletingField]:
        return dict(self._fields)

    # -- attaching -------------------------------------------------------------------
    def _attach_clicked(self) -> None:
        self.task = asyncio.ensure_future(self.attach())

    async def attach(self) -> "ReadOutcome | None":
        import mcp_types as types

        from cks_desktop.mcp.requests import RequestFailed
        from cks_desktop.mcp.resources import expand_template, read_resource

        conn, value = self.connection(), self.chosen()
        if conn is None or value is None:
            return None
        try:
            if isinstance(value, types.ResourceTemplate):
                uri = expand_template(value.uri_template, {k: f.text().strip() for k, f in self._fields.items()})
            else:
                uri = value.uri
        except ValueError as exc:
            self.notice.setText(str(exc))
            return None
        self.attach_button.setEnabled(False)
        self.notice.setText(f"Reading {uri}…")
        try:
            outcome = await read_resource(conn, uri)
        except RequestFailed as exc:
            self.notice.setText(str(exc))
            self.attach_button.setEnabled(True)
            return None
        self.notice.setText(outcome.notice)
        self.attached.emit(outcome)
        self.accept()
        return outcome


class AttachmentBar(QWidget):
    """The resources going with the next message; hidden while there are none."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachmentBar")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addStretch(1)
        self.items: list["ReadOutcome"] = []
        self.setVisible(False)

    def add(self, outcome: "ReadOutcome") -> None:
        self.items.append(outcome)
        chip = QWidget()
        row = QHBoxLayout(chip)
        row.setContentsMargins(4, 0, 0, 0)
        size = sum(c.size for c in outcome.contents)
        label = plain_label(f"{outcome.server}: {outcome.uri} ({size:,})" + (" — cut" if outcome.notice else ""))
        label.setWordWrap(False)
        label.setToolTip("")
        remove = QPushButton("×")
        remove.setAccessibleName(f"Remove the attachment {outcome.uri}")
        remove.setFlat(True)
        remove.clicked.connect(lambda: self._remove(outcome, chip))
        row.addWidget(label)
        row.addWidget(remove)
        self._layout.insertWidget(self._layout.count() - 1, chip)
        self.setVisible(True)
        self.changed.emit()

    def _remove(self, outcome: "ReadOutcome", chip: QWidget) -> None:
        if outcome in self.items:
            self.items.remove(outcome)
        chip.deleteLater()
        self.setVisible(bool(self.items))
        self.changed.emit()

    def take_into(self, text: str) -> str:
        """The message with every attachment appended as data; the bar is emptied."""
        from cks_desktop.mcp.resources import attachment_text

        if not self.items:
            return text
        blocks = [attachment_text(o) for o in self.items]
        self.items = []
        while self._layout.count() > 1:
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.setVisible(False)
        self.changed.emit()
        return "\n\n".join([text, *blocks])
