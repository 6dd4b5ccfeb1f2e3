"""Small shared pieces of the settings pages: marking invalid fields."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

INVALID_STYLE = "border: 1px solid #d9534f; border-radius: 2px;"


def mark(widget: QWidget, problem: str | None) -> None:
    """Outline an invalid field in red and put the reason in its tooltip."""
    widget.setStyleSheet(INVALID_STYLE if problem else "")
    widget.setToolTip(problem or "")
    widget.setProperty("invalid", bool(problem))


def error_label() -> QLabel:
    label = QLabel()
    label.setObjectName("settingsErrors")
    label.setWordWrap(True)
    label.setStyleSheet("color: #d9534f;")
    return label


def note_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label
