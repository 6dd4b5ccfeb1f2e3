"""Small shared pieces of the settings pages: marking invalid fields."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

def mark(widget: QWidget, problem: str | None, hint: str = "") -> None:
    """Outline an invalid field in the theme's danger colour (the app style sheet's ``invalid``
    rule) and put the reason in its tooltip; a valid field shows ``hint`` there (its own help)."""
    widget.setToolTip(plain_tooltip(problem or hint))
    theme.set_invalid(widget, bool(problem))


def error_label() -> QLabel:
    label = plain_label()
    label.setObjectName("settingsErrors")
    label.setWordWrap(True)
    theme.set_role(label, "error")
    return label


def note_label(text: str = "") -> QLabel:
    label = plain_label(text)
    label.setWordWrap(True)
    return label
