"""A panel's title bar in the app's own look: its name, then "Float" and "Close" as themed icon
buttons with accessible names (the stock dock title bar draws tiny style buttons with no names).

It replaces ``QDockWidget``'s title bar (``setTitleBarWidget``); dragging it still moves the
panel and a double click still floats or docks it (the dock widget handles the mouse events
the title does not). The float button's icon and words follow the panel's state.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QToolButton, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

ICON_PX = 16


class DockTitle(QWidget):
    def __init__(self, dock: QDockWidget) -> None:
        super().__init__(dock)
        self.dock = dock
        self.setObjectName("dockTitle")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        layout.setSpacing(2)
        self.label = plain_label(dock.windowTitle(), name="dockTitleText")
        theme.set_role(self.label, "section")
        layout.addWidget(self.label, 1)
        title = dock.windowTitle()
        self.float_button = self._button("dockFloatButton", "arrow-square-out", f"Float the {title} panel")
        self.float_button.clicked.connect(lambda: dock.setFloating(not dock.isFloating()))
        self.close_button = self._button("dockCloseButton", "x", f"Close the {title} panel")
        self.close_button.clicked.connect(dock.close)
        layout.addWidget(self.float_button)
        layout.addWidget(self.close_button)
        dock.topLevelChanged.connect(self._floating_changed)
        dock.windowTitleChanged.connect(self.label.setText)

    def _button(self, name: str, icon: str, words: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setAutoRaise(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # as the stock ones: Tab goes region to region (View menu)
        button.setIconSize(QSize(ICON_PX, ICON_PX))
        button.setToolTip(plain_tooltip(words))
        button.setAccessibleName(words)
        theme.bind_icon(button, icon, "muted")
        return button

    def _floating_changed(self, floating: bool) -> None:
        title = self.dock.windowTitle()
        words = f"Dock the {title} panel" if floating else f"Float the {title} panel"
        self.float_button.setToolTip(plain_tooltip(words))
        self.float_button.setAccessibleName(words)
        theme.bind_icon(self.float_button, "arrows-in-simple" if floating else "arrow-square-out", "muted")


def install(dock: QDockWidget) -> DockTitle:
    """Give ``dock`` the app's title bar."""
    title = DockTitle(dock)
    dock.setTitleBarWidget(title)
    return title
