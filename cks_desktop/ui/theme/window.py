"""Icons and shortcut tooltips for the main window's menus, in one place.

The window builds its menus; ``decorate(window)`` then gives every action its Phosphor icon (by
object name, or by the dock it toggles) and a tooltip naming its shortcut. Keeping the table here
keeps ``main_window.py`` about composition. An action missing from the table keeps no icon, and
``tests/ui/test_theme.py`` names it.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QToolBar, QToolButton

from cks_desktop.ui import theme
from cks_desktop.ui.theme.actions import name_shortcuts, walk

ICONS = {
    "newSessionAction": "plus", "settingsAction": "gear", "quitAction": "sign-out",
    "findAction": "magnifying-glass", "sendAction": "paper-plane-right", "stopAction": "stop",
    "clearChatAction": "trash", "openLogsAction": "folder-open", "aboutAction": "info", "askDocumentsAction": "quotes",
    "mainThemesAction": "lightbulb",
    "toggleChatAction": "chat-circle-text", "toggleSessionsAction": "list",
    # names other menus are likely to use (File → Import/Export, Edit → Undo/Redo)
    "undoAction": "arrow-counter-clockwise", "redoAction": "arrow-clockwise",
    "importGraphAction": "download-simple", "exportGraphAction": "export", "exportChatAction": "export",
    "sessionSettingsAction": "sliders-horizontal", "renameSessionAction": "pencil-simple",
    "deleteSessionAction": "trash",
}
# Actions the window makes without an object name, by their text (mnemonics removed).
BY_TEXT = {"Open the log folder": "openLogsAction", "About CKS Desktop": "aboutAction"}
DOCK_TOGGLES = {"sessionsDock": "toggleSessionsAction", "chatDock": "toggleChatAction"}


def decorate(window: QMainWindow) -> None:
    for dock_name, action_name in DOCK_TOGGLES.items():
        dock = window.findChild(QDockWidget, dock_name)
        if dock is not None and not dock.toggleViewAction().objectName():
            dock.toggleViewAction().setObjectName(action_name)
    bar = window.menuBar()
    titles = set(map(id, bar.actions()))  # File, Edit, View…: menu titles carry no icons
    for action in walk(bar.actions()):
        if id(action) in titles:
            continue
        if not action.objectName():
            name = BY_TEXT.get(action.text().replace("&", ""))
            if name:
                action.setObjectName(name)
        icon = ICONS.get(action.objectName())
        if icon:
            theme.bind_icon(action, icon)
    name_shortcuts(bar)
    for toolbar in window.findChildren(QToolBar):  # their shortcuts may be set after decorate_toolbar
        name_shortcuts(toolbar)



def decorate_toolbar(toolbar: QToolBar, icons: dict[str, str], *, icon_only: bool = True) -> None:
    """Icons (by the actions' object names) on a tool bar, icon-only at the token icon size; every
    action keeps a tooltip that names it and its shortcut. Buttons added as widgets (a "More" menu
    button) are found by object name too."""
    size = theme.size("icon")
    toolbar.setIconSize(QSize(size, size))
    if icon_only:
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
    for action in toolbar.actions():
        icon = icons.get(action.objectName())
        if icon:
            theme.bind_icon(action, icon)
    for button in toolbar.findChildren(QToolButton):
        icon = icons.get(button.objectName())
        if icon:
            theme.bind_icon(button, icon)
            button.setIconSize(QSize(size, size))
            if icon_only:
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
    name_shortcuts(toolbar)
