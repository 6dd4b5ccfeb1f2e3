"""Small shared pieces of the settings pages: marking invalid fields."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

INVALID_STYLE = "border: 1px solid #d9534f; border-radius: 2px;"


def mark(widget: QWidget, problem: str | None) -> None:
    """Outline an invalid field in red and put the reason in its tooltip."""
    widget.setStyleSheet(INVALID_STYLE if problem else "")
    widget.setToolTip(plain_tooltip(problem or ""))
    widget.setProperty("invalid", bool(problem))


def error_label() -> QLabel:
    label = plain_label()
    label.setObjectName("settingsErrors")
    label.setWordWrap(True)
    label.setStyleSheet("color: #d9534f;")
    return label


def note_label(text: str = "") -> QLabel:
    label = plain_label(text)
    label.setWordWrap(True)
    return label
