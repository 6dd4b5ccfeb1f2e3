"""Every control has an accessible name: one app-wide rule for the ones nobody named.

A screen reader reads a control by its accessible name; Qt derives one from a button's text
or a label's buddy, but a search field with only a placeholder, a line edit's clear button, an
editable combo box's inner field or a list without a title are read as nothing. When a control
is polished (shown for the first time) without a name, it gets the best words it already has:
its placeholder, its tooltip's first line, "Clear" + its field's name for a line edit's clear
button, its combo box's name for the combo's field. Explicit names (``setAccessibleName``) are
never replaced. The AT-SPI tree test (tests/ui/test_accessibility_tree.py) checks the result
over D-Bus, as an assistive technology sees it.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSlider, QAbstractSpinBox, QComboBox,
                               QLineEdit, QPlainTextEdit, QTextEdit, QWidget)

from PySide6.QtGui import QTextDocumentFragment

CONTROLS = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QAbstractSpinBox, QAbstractSlider,
            QTextEdit, QPlainTextEdit)
_NAME = "accessibleNames"
LONGEST = 80


def _plain(text: str) -> str:
    """A tooltip's words (``plain_tooltip`` wraps them as escaped rich text)."""
    return QTextDocumentFragment.fromHtml(text).toPlainText() if text.lstrip().startswith("<") else text


def _first_line(text: str) -> str:
    text = _plain(text).strip()
    line = text.splitlines()[0] if text else ""
    return line[:LONGEST].rstrip(" .…") if len(line) > LONGEST else line.rstrip("…").rstrip()


def name_for(widget: QWidget) -> str:
    """The words a nameless control is read by ("" when it has none to give)."""
    parent = widget.parentWidget()
    if isinstance(widget, QLineEdit):
        if isinstance(parent, QComboBox) and parent.accessibleName():
            return parent.accessibleName()
        if widget.placeholderText():
            return _first_line(widget.placeholderText())
    if isinstance(widget, QAbstractButton) and isinstance(parent, QLineEdit) and not widget.text():
        field = parent.accessibleName() or _first_line(parent.placeholderText())
        return f"Clear {field}" if field else "Clear"
    if isinstance(widget, (QTextEdit, QPlainTextEdit)) and widget.placeholderText():
        return _first_line(widget.placeholderText())
    if widget.toolTip():
        return _first_line(widget.toolTip())
    return ""


class AccessibleNames(QObject):
    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.setObjectName(_NAME)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Polish and isinstance(watched, CONTROLS) and not watched.accessibleName():
            words = name_for(watched)
            if words:
                watched.setAccessibleName(words)
        return False


def install(app: QCoreApplication) -> None:
    """Put the rule on ``app`` once (calling it again does nothing)."""
    if app.findChild(AccessibleNames, _NAME) is None:
        app.installEventFilter(AccessibleNames(app))
