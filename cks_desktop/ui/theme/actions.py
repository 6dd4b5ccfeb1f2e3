"""Tooltips that name the shortcut ("Fit (F)"), for every action of a menu bar or tool bar.

One pass after the menus are built, so a new action gets its shortcut named without anyone
remembering to: an action with a shortcut whose tooltip does not show it gets " (Ctrl+N)"
appended (in the platform's spelling, e.g. ⌘N on macOS); an action without a tooltip gets its text.
Menus show tooltips too (``QMenu.setToolTipsVisible``).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from cks_desktop.ui.text import plain_tooltip


def shortcut_text(action: QAction) -> str:
    return action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)


def plain_text(action: QAction) -> str:
    """The action's text without mnemonics or a trailing ellipsis: "&Settings…" → "Settings"."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("….").strip()


def walk(actions: Iterable[QAction]) -> Iterator[QAction]:
    """Every action, submenus included (a submenu's own action too)."""
    for action in actions:
        if action.isSeparator():
            continue
        yield action
        menu = action.menu()
        if isinstance(menu, QMenu):
            menu.setToolTipsVisible(True)
            yield from walk(menu.actions())


_WRAP = "<p style='white-space:pre-wrap'>"


def tooltip_text(action: QAction) -> str:
    """The tooltip as plain text (``plain_tooltip`` wraps it in escaped HTML)."""
    tip = action.toolTip()
    if tip.startswith(_WRAP) and tip.endswith("</p>"):
        return html.unescape(tip[len(_WRAP):-4])
    return tip


def name_shortcuts(widget: QWidget) -> None:
    """Give each action under ``widget`` (a QMenuBar, QToolBar, QMenu) a tooltip naming its shortcut."""
    for action in walk(widget.actions()):
        keys = shortcut_text(action)
        tip = tooltip_text(action)
        if not tip or tip == action.text() or tip == plain_text(action):
            tip = plain_text(action)
        if keys and keys not in tip and keys.replace("-", "−") in tip:
            tip = tip.replace(keys.replace("-", "−"), keys)  # "Zoom out (−)": the key is the hyphen
        if keys and keys not in tip:
            tip = f"{tip} ({keys})"
        if tip != tooltip_text(action) or not action.toolTip().startswith(_WRAP):
            action.setToolTip(plain_tooltip(tip))
