"""View → Theme: System / Light / Dark, exclusive, applied live and kept in settings (``ui.theme``).

The settings object is duck-typed (``data["ui"]`` and ``save()``): the same ``Settings`` the
window holds, so the choice is written like every other UI preference (atomically, keys of other
processes kept). A save that fails leaves the theme switched and logs the reason: the person
sees the change, it only will not survive a restart.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QWidget

from cks_desktop.settings import Ui
from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip

log = logging.getLogger(__name__)
CHOICES = (("system", "&System", "Follow the system's light or dark setting"),
           ("light", "&Light", "Always light"),
           ("dark", "&Dark", "Always dark"))


class ThemeMenu(QMenu):
    def __init__(self, settings: Any, parent: QWidget | None = None) -> None:
        super().__init__("&Theme", parent)
        self.setObjectName("themeMenu")
        self.settings = settings
        self.group = QActionGroup(self)
        self.group.setExclusive(True)
        self.actions_by_mode: dict[str, QAction] = {}
        for mode, text, tip in CHOICES:
            action = QAction(text, self)
            action.setObjectName(f"theme{mode.capitalize()}Action")
            action.setCheckable(True)
            action.setToolTip(plain_tooltip(tip))
            action.setStatusTip(tip)
            # no icon: a menu item with one shows it where the check mark goes, and the current
            # choice could not be told from the others
            action.triggered.connect(lambda _checked=False, m=mode: self.choose(m))
            self.group.addAction(action)
            self.addAction(action)
            self.actions_by_mode[mode] = action
        theme.bind_icon(self.menuAction(), "palette")
        self.sync_from_settings()

    def current(self) -> str:
        return theme.normal_mode(self.settings.section(Ui).theme)

    def sync_from_settings(self) -> None:
        """Check the stored choice and apply it (also after another process changed the file)."""
        mode = self.current()
        self.actions_by_mode[mode].setChecked(True)
        manager = theme.manager()
        if manager is not None and manager.mode != mode:
            manager.set_mode(mode)

    def choose(self, mode: str) -> None:
        self.actions_by_mode[mode].setChecked(True)
        manager = theme.manager()
        if manager is not None:
            manager.set_mode(mode)
        ui = self.settings.section(Ui)
        if ui.theme == mode:
            return
        self.settings.set_section(replace(ui, theme=mode))
        try:
            self.settings.save()
        except OSError as exc:
            log.warning("could not save the theme choice: %s", exc)
