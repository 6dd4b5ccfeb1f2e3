"""How far focus mode reaches (1–3 relations), as actions rather than a spin box.

Why actions: a widget on a ``QToolBar`` (a spin box, a button with its own menu) is left out of
the tool bar's overflow (») menu when the bar is too narrow, so it silently became unreachable at
common window widths. An action with a menu of three radio choices goes into the overflow menu as
a submenu, and into the window's Graph menu the same way. ``value()``, ``setValue()`` and
``valueChanged`` keep the spin box's surface for the code that reads it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QWidget

from cks_desktop.plural import counted
from cks_desktop.ui.text import plain_tooltip

HOP_ICONS = {1: "number-circle-one", 2: "number-circle-two", 3: "number-circle-three"}


class HopChoice(QObject):
    """The focus reach: ``action`` (its menu holds the choices) shows the current value."""

    valueChanged = Signal(int)

    def __init__(self, parent: QWidget, minimum: int = 1, maximum: int = 3) -> None:
        super().__init__(parent)
        self._value = minimum
        self.menu = QMenu("Focus reach", parent)
        self.menu.setObjectName("graphFocusHopsMenu")
        self.menu.setToolTipsVisible(True)
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.choices: dict[int, QAction] = {}
        for k in range(minimum, maximum + 1):
            choice = QAction(counted(k, "hop"), self)
            choice.setObjectName(f"graphFocusHops{k}")
            choice.setCheckable(True)
            choice.setToolTip(plain_tooltip(f"Focus shows what is up to {counted(k, 'relation')} away"))
            choice.triggered.connect(lambda _checked=False, k=k: self.setValue(k))
            self.group.addAction(choice)
            self.menu.addAction(choice)
            self.choices[k] = choice
        self.action = QAction(self)
        self.action.setObjectName("graphFocusHops")
        self.action.setMenu(self.menu)
        self._show()

    def value(self) -> int:
        return self._value

    def setValue(self, value: int) -> None:  # noqa: N802 (the spin box's name, kept for callers)
        value = max(min(self.choices), min(max(self.choices), int(value)))
        if value == self._value:
            self._show()
            return
        self._value = value
        self._show()
        self.valueChanged.emit(value)

    def _show(self) -> None:
        self.choices[self._value].setChecked(True)
        self.action.setText(f"Reach: {counted(self._value, 'hop')}")
        self.action.setToolTip(plain_tooltip(f"How many relations away focus mode reaches "
                                             f"(now {counted(self._value, 'hop')})"))
