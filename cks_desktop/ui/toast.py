"""A short note where the person is looking: "Reverted: Add object", "Imported notes.json: 3 objects".

Every action that changes something says so at once (the status bar alone is easy to miss):
``show_toast(widget, text, tone)`` puts one small themed card at the bottom centre of
``widget``'s window, over its content, for a few seconds. It is a child widget, not a window: it
never takes focus or activates anything, a click or Esc elsewhere is untouched, and a second
note replaces the first instead of stacking. Assistive technology hears it: the card's
accessible name is the text and an announcement event is sent (Qt 6.8+), politely.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label

Tone = Literal["success", "danger", "info"]
ICONS: dict[Tone, tuple[str, str]] = {"success": ("check-circle", "success"), "danger": ("warning-circle", "danger"),
                                      "info": ("info", "accent")}
SHOW_MS = 4000  # long enough to read a line, short enough not to sit over the work
MARGIN = 16  # from the window's bottom edge (above the status bar)


class Toast(QFrame):
    """The window's one note card (``show_toast`` makes it on first use)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("toast")
        theme.set_role(self, "card")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)  # never in the way of a click
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(8)
        self.icon = plain_label(name="toastIcon")
        layout.addWidget(self.icon)
        self.label = plain_label(name="toastText")
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.tone: Tone = "info"
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.hide)
        window.installEventFilter(self)  # follow the window's size
        self.hide()

    def say(self, text: str, tone: Tone = "info", ms: int = SHOW_MS) -> None:
        self.tone = tone
        name, role = ICONS[tone]
        size = self.fontMetrics().height()
        self.icon.setPixmap(theme.icon(name, role).pixmap(size, size))
        self.label.setText(text)
        self.setAccessibleName(text)
        self._place()
        self.show()
        self.raise_()
        self.timer.start(ms)
        event = QAccessibleAnnouncementEvent(self, text)
        event.setPoliteness(QAccessible.AnnouncementPoliteness.Polite)
        QAccessible.updateAccessibility(event)

    def _place(self) -> None:
        parent = self.parentWidget()
        if parent is None:
            return
        width = min(520, max(200, parent.width() - 2 * MARGIN))
        self.setFixedWidth(width)
        self.adjustSize()
        bottom = parent.height() - MARGIN
        status = getattr(parent, "statusBar", None)
        if callable(status):
            bar = status()
            if bar is not None and bar.isVisible():
                bottom -= bar.height()
        self.move((parent.width() - width) // 2, max(0, bottom - self.height()))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False


def show_toast(widget: QWidget, text: str, tone: Tone = "info", ms: int = SHOW_MS) -> Toast:
    """Say ``text`` on ``widget``'s window (its one toast; a new text replaces the old)."""
    window = widget.window()
    toast = window.findChild(Toast, "toast", Qt.FindChildOption.FindDirectChildrenOnly)
    if toast is None:
        toast = Toast(window)
    toast.say(text, tone, ms)
    return toast
