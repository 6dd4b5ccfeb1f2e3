"""The dialog for an MCP server's ``elicitation/create``: a form built from its schema, or a URL.

It names the server and shows why it asks (the server's message), all as plain text with
hidden characters revealed (the server wrote it). Form mode builds one widget per field
(``mcp/elicit_form.py``): text for strings, a text box checked as a number for numbers and
integers (so an optional number can stay empty), a checkbox for booleans, a list for a single
choice and checkable items for several; defaults are filled in, required fields are marked,
and Submit checks every value (``check_answer``) and says what is wrong under the field
instead of closing. Decline and Cancel map to the protocol's actions; Esc and closing the
window are Cancel (the person made no choice). URL mode shows the address in full and opens
the system browser only when the person presses "Open in browser".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from cks_desktop.mcp.elicit_form import FormField, check_answer, content_of
from cks_desktop.mcp.host import ElicitAction, ElicitationAnswer, ElicitationRequest
from cks_desktop.ui.labels import plain_label
from cks_desktop.untrusted_text import reveal


def _number(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return text  # check_value says "it must be a number"
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


class _FieldEditor:
    """One field's widget and its reading."""

    def __init__(self, f: FormField) -> None:
        self.field = f
        self.widget: QWidget
        if f.kind == "boolean":
            box = QCheckBox(reveal(f.label))
            box.setChecked(bool(f.default))
            self.widget = box
        elif f.kind == "enum":
            combo = QComboBox()
            if not f.required or not f.has_default:
                combo.addItem("", None)
            for value, label in f.options:
                combo.addItem(reveal(label), value)
            if f.has_default:
                combo.setCurrentIndex(max(0, combo.findData(f.default)))
            self.widget = combo
        elif f.kind == "multi":
            items = QListWidget()
            chosen = set(f.default) if isinstance(f.default, list) else set()
            for value, label in f.options:
                item = QListWidgetItem(reveal(label))
                item.setData(Qt.ItemDataRole.UserRole, value)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if value in chosen else Qt.CheckState.Unchecked)
                items.addItem(item)
            items.setMaximumHeight(min(160, 24 * len(f.options) + 8))
            self.widget = items
        else:
            edit = QLineEdit()
            if f.has_default and f.default is not None:
                edit.setText(str(f.default))
            if f.kind in ("number", "integer"):
                bounds = [f"at least {f.minimum:g}" if f.minimum is not None else "",
                          f"at most {f.maximum:g}" if f.maximum is not None else ""]
                hint = " and ".join(b for b in bounds if b)
                edit.setPlaceholderText(("a whole number" if f.kind == "integer" else "a number")
                                        + (f", {hint}" if hint else ""))
            elif f.fmt:
                edit.setPlaceholderText({"email": "name@example.com", "uri": "https://…", "date": "2025-01-31",
                                         "date-time": "2025-01-31T12:00:00Z"}.get(f.fmt, ""))
            self.widget = edit
        self.widget.setObjectName(f"elicitField_{f.name}")
        self.error = plain_label("", name=f"elicitError_{f.name}", wrap=True)
        self.error.setProperty("cksRole", "error")
        self.error.hide()
        # A changed value takes its complaint away at once (Submit checks every field again):
        # "a value is required." under a field the person has just filled in reads as a fault.
        w = self.widget
        if isinstance(w, QCheckBox):
            w.toggled.connect(self._edited)
        elif isinstance(w, QComboBox):
            w.currentIndexChanged.connect(self._edited)
        elif isinstance(w, QListWidget):
            w.itemChanged.connect(self._edited)
        elif isinstance(w, QLineEdit):
            w.textChanged.connect(self._edited)

    def _edited(self, *_: object) -> None:
        self.show_error(None)

    def value(self) -> Any:
        f, w = self.field, self.widget
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, QComboBox):
            return w.currentData()
        if isinstance(w, QListWidget):
            return [w.item(i).data(Qt.ItemDataRole.UserRole) for i in range(w.count())
                    if w.item(i).checkState() == Qt.CheckState.Checked]
        assert isinstance(w, QLineEdit)
        return _number(w.text()) if f.kind in ("number", "integer") else w.text()

    def show_error(self, text: str | None) -> None:
        self.error.setText(text or "")
        self.error.setVisible(bool(text))


class ElicitationDialog(QDialog):
    # How an address reaches the system browser (a test gives a recorder instead).
    browser: Callable[[QUrl], object] = staticmethod(QDesktopServices.openUrl)

    def __init__(self, request: ElicitationRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.action: ElicitAction = "cancel"
        self.content: dict[str, Any] | None = None
        self.editors: list[_FieldEditor] = []
        self.setObjectName("elicitationDialog")
        self.setWindowTitle(f"{reveal(request.server)} asks for input")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        heading = plain_label(f"The MCP server '{reveal(request.server)}' asks:", name="elicitationServer", wrap=True)
        heading.setProperty("cksRole", "heading")
        layout.addWidget(heading)
        layout.addWidget(plain_label(reveal(request.message), name="elicitationMessage", wrap=True, selectable=True))
        if request.mode == "url":
            self._build_url(layout)
        else:
            self._build_form(layout)

    # -- form mode ----------------------------------------------------------------------
    def _build_form(self, layout: QVBoxLayout) -> None:
        body = QWidget()
        form = QFormLayout(body)
        for f in self.request.form.fields:
            editor = _FieldEditor(f)
            self.editors.append(editor)
            cell = QWidget()
            cell_layout = QVBoxLayout(cell)
            cell_layout.setContentsMargins(0, 0, 0, 0)
            cell_layout.addWidget(editor.widget)
            if f.description:
                note = plain_label(reveal(f.description), wrap=True)
                note.setProperty("cksRole", "hint")
                cell_layout.addWidget(note)
            cell_layout.addWidget(editor.error)
            label = "" if f.kind == "boolean" else reveal(f.label) + (" *" if f.required else "")
            form.addRow(label, cell)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        layout.addWidget(scroll, 1)
        if any(f.required for f in self.request.form.fields):
            layout.addWidget(plain_label("* required"))
        self.submit_button = QPushButton("Submit")
        self.submit_button.setObjectName("elicitSubmit")
        self.submit_button.setDefault(True)
        self.submit_button.clicked.connect(self.submit)
        self._buttons(layout, self.submit_button)

    def values(self) -> dict[str, Any]:
        return {e.field.name: e.value() for e in self.editors}

    def submit(self) -> None:
        values = self.values()
        problems = check_answer(self.request.form, values)
        for editor in self.editors:
            editor.show_error(problems.get(editor.field.name))
        if problems:
            return
        self.action, self.content = "accept", content_of(self.request.form, values)
        self.accept()

    # -- URL mode ------------------------------------------------------------------------
    def _build_url(self, layout: QVBoxLayout) -> None:
        layout.addWidget(plain_label("It asks you to open this address in your browser:", wrap=True))
        url = plain_label(reveal(self.request.url), name="elicitationUrl", wrap=True, selectable=True)
        url.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(url)
        layout.addWidget(plain_label("Nothing is opened unless you choose to.", wrap=True))
        self.open_button = QPushButton("Open in browser")
        self.open_button.setObjectName("elicitOpen")
        self.open_button.clicked.connect(self.open_url)
        self._buttons(layout, self.open_button)
        self.opened_url: str | None = None

    def open_url(self) -> None:
        """The person agreed: only now is the browser asked to open the address."""
        self.opened_url = self.request.url
        self.browser(QUrl(self.request.url))
        self.action = "accept"
        self.accept()

    # -- common ----------------------------------------------------------------------------
    def _buttons(self, layout: QVBoxLayout, primary: QPushButton) -> None:
        row = QHBoxLayout()
        self.decline_button = QPushButton("Decline")
        self.decline_button.setObjectName("elicitDecline")
        self.decline_button.setAutoDefault(False)
        self.decline_button.clicked.connect(self._decline)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("elicitCancel")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self.reject)
        row.addStretch(1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.decline_button)
        row.addWidget(primary)
        layout.addLayout(row)

    def _decline(self) -> None:
        self.action = "decline"
        self.reject()

    def reject(self) -> None:  # Esc, the window's close button, Cancel: no choice made
        if self.action not in ("decline", "accept"):
            self.action = "cancel"
        super().reject()

    def answer(self) -> ElicitationAnswer:
        return ElicitationAnswer(self.action, self.content if self.action == "accept" else None)


def error_label(dialog: ElicitationDialog, name: str) -> QLabel:
    return next(e.error for e in dialog.editors if e.field.name == name)
