"""One app-wide rule: the mouse wheel never changes a value the person did not pick.

Qt lets the wheel change a combo box, a spin box or a slider under the pointer even when it has no
focus, so scrolling a long form (Settings, the Add MCP server form) could turn a server's approval
from "always ask" to "never ask" on its way down. ``install`` puts one event filter on the
application: a wheel over such a control that does not have the keyboard focus scrolls the nearest
scrolling area around it instead (or nothing, where there is none). A control the person clicked
or tabbed into has the focus, and the wheel works on it as usual. Such controls also stop taking
the focus from the wheel (``Qt.FocusPolicy.StrongFocus``), so a wheel never focuses one first.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox,
                               QScrollBar, QWidget)

GUARDED = (QComboBox, QAbstractSpinBox, QAbstractSlider)
_NAME = "cksWheelGuard"


class WheelGuard(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(_NAME)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if isinstance(watched, QScrollBar):  # a scroll bar is for scrolling: the wheel is its job
            return False
        kind = event.type()
        if kind == QEvent.Type.Polish and isinstance(watched, GUARDED) \
                and watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        if kind != QEvent.Type.Wheel or not isinstance(watched, GUARDED) or _focused(watched):
            return False
        area = _scroll_area_around(watched)
        if area is not None:
            QCoreApplication.sendEvent(area.viewport(), event)
        return True  # the control's value stays as it was


def _focused(widget: QWidget) -> bool:
    """The control, or the line edit inside a spin box or an editable combo box, has the focus."""
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


def _scroll_area_around(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and not isinstance(parent, GUARDED):
            return parent
        parent = parent.parentWidget()
    return None


def install(app: QCoreApplication) -> None:
    """Put the guard on ``app`` once (calling it again does nothing)."""
    if app.findChild(WheelGuard, _NAME) is None:
        app.installEventFilter(WheelGuard(app))
