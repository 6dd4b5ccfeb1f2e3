"""Every panel of the window has the app's own title bar (no stock dock chrome): its name and
named, themed Float and Close buttons that do what they say (the real window)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from cks_desktop.ui.dock_title import DockTitle
from tests.ui.conftest import open_window


@pytest.mark.asyncio
async def test_each_panel_has_a_named_title_bar_that_floats_and_closes_it(qtbot, home) -> None:
    async with open_window(home) as window:
        docks = window.findChildren(QDockWidget)
        assert {d.objectName() for d in docks} >= {"sessionsDock", "chatDock", "documentsDock"}
        for dock in docks:
            title = dock.titleBarWidget()
            assert isinstance(title, DockTitle), dock.objectName()
            assert title.label.text() == dock.windowTitle()
            for button in (title.float_button, title.close_button):
                assert button.accessibleName().endswith(f"the {dock.windowTitle()} panel")
                assert not button.icon().isNull() and button.toolTip()
                assert button.focusPolicy() == Qt.FocusPolicy.NoFocus  # Tab goes region to region, not via chrome
        chat = window.chat_dock
        title = chat.titleBarWidget()
        assert isinstance(title, DockTitle)
        title.float_button.click()
        assert chat.isFloating() and title.float_button.accessibleName() == "Dock the Chat panel"
        title.float_button.click()
        assert not chat.isFloating() and title.float_button.accessibleName() == "Float the Chat panel"
        title.close_button.click()
        assert not chat.isVisible()


@pytest.mark.asyncio
async def test_the_about_box_shows_the_apps_icon(qtbot, home) -> None:
    async with open_window(home) as window:
        box = window._about()
        try:
            pixmap = box.iconPixmap()
            assert not pixmap.isNull() and pixmap.width() >= 48  # the app's icon, not the style's "i" sign
            assert box.icon() == type(box).Icon.NoIcon
        finally:
            box.close()
