"""The applied design: live theme switch, icons and shortcut tooltips everywhere, bundled fonts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QPushButton, QToolBar, QToolButton

from cks_desktop.ui import theme
from cks_desktop.ui.theme import fonts, icons
from cks_desktop.ui.theme.actions import shortcut_text, tooltip_text, walk

from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[theme.ThemeManager]:
    manager = theme.install(qapp, "light")
    yield manager
    theme.uninstall()


def test_fonts_load_and_become_the_app_font(themed: theme.ThemeManager, qapp: QApplication) -> None:
    loaded = fonts.load_bundled_fonts()
    assert len(loaded) == 6 and all(loaded.values())
    families = fonts.families()
    assert {"Inter", "JetBrains Mono"} <= families
    assert qapp.font().family() == "Inter"
    assert qapp.font().pointSizeF() >= 9  # the system size, never below the scale's minimum
    assert theme.code_font().family() == "JetBrains Mono"
    assert "JetBrains Mono" in QFontDatabase.families()


def test_every_font_file_has_its_licence_beside_it() -> None:
    names = {p.name for p in fonts.FONTS_DIR.iterdir()}
    assert {"Inter-OFL.txt", "JetBrainsMono-OFL.txt"} <= names
    for licence in ("Inter-OFL.txt", "JetBrainsMono-OFL.txt"):
        assert "SIL OPEN FONT LICENSE Version 1.1" in (fonts.FONTS_DIR / licence).read_text(encoding="utf-8")


def test_icons_come_from_phosphor_in_explicit_colours(themed: theme.ThemeManager) -> None:
    assert icons.phosphor_dir() is not None
    assert icons.has_icon("magnifying-glass")
    light = theme.icon("gear").pixmap(18, 18).toImage()
    themed.set_mode("dark")
    dark = theme.icon("gear").pixmap(18, 18).toImage()
    assert light != dark  # the colour is part of the icon, so a switch must re-make it
    assert theme.icon("no-such-icon").isNull()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_view_theme_switches_live_and_is_kept_in_settings(qtbot, home, themed) -> None:
    async with open_window(home) as window:
        menu = window.theme_menu
        assert [a.objectName() for a in menu.actions()] == ["themeSystemAction", "themeLightAction",
                                                            "themeDarkAction"]
        button = window.sidebar.new_button
        before_palette = QApplication.palette().color(QPalette.ColorRole.Window).name()
        before_canvas = window.graph_view.canvas.style_.background.name()
        gear_before = window.settings_action.icon().pixmap(16, 16).toImage()
        changed = signal_future(themed.themeChanged)
        menu.actions_by_mode["dark"].trigger()
        assert await changed == ("dark",)
        assert menu.actions_by_mode["dark"].isChecked()
        assert all(a.icon().isNull() for a in menu.actions())  # no icon in the place of the check mark
        # palette, style sheet, the graph and bound icons all changed, without a restart
        assert QApplication.palette().color(QPalette.ColorRole.Window).name() != before_palette
        assert QApplication.palette().color(QPalette.ColorRole.Window).name().upper() == theme.hex_color("background")
        assert theme.current_tokens().palette("dark")["surface"] in QApplication.instance().styleSheet()
        assert window.graph_view.canvas.style_.background.name() != before_canvas
        assert window.graph_view.canvas.style_.dark
        assert window.settings_action.icon().pixmap(16, 16).toImage() != gear_before
        assert button.palette().color(QPalette.ColorRole.Window).name().upper() == theme.hex_color("surface")
        saved = json.loads(window.services.settings.path.read_text(encoding="utf-8"))
        assert saved["ui"]["theme"] == "dark"
        # back to following the system (offscreen reports no dark scheme: light)
        changed = signal_future(themed.themeChanged)
        menu.actions_by_mode["system"].trigger()
        assert await changed == (themed.system_scheme(),)
        assert json.loads(window.services.settings.path.read_text(encoding="utf-8"))["ui"]["theme"] == "system"


def test_a_stored_theme_that_makes_no_sense_means_system() -> None:
    assert theme.normal_mode("purple") == "system"
    assert theme.normal_mode(None) == "system"
    assert theme.normal_mode("dark") == "dark"


def _all_actions(window) -> list:
    out = []
    titles = set(map(id, window.menuBar().actions()))
    out += [a for a in walk(window.menuBar().actions()) if id(a) not in titles]
    for bar in window.findChildren(QToolBar):
        out += [a for a in walk(bar.actions()) if a.isVisible() or True]
    return out


@pytest.mark.asyncio
async def test_every_menu_and_toolbar_action_has_an_icon_and_names_its_shortcut(qtbot, home, themed) -> None:
    async with open_window(home) as window:
        missing, unnamed = [], []
        for action in _all_actions(window):
            if action.isSeparator():
                continue
            widget_action = action.metaObject().className() == "QWidgetAction"
            choice = action.isCheckable() and action.actionGroup() is not None and action.actionGroup().isExclusive()
            # one of several choices (View → Theme) shows a check mark, where an icon would hide it
            if not choice and not widget_action and action.icon().isNull():
                missing.append(action.objectName() or action.text())
            keys = shortcut_text(action)
            if keys and keys not in tooltip_text(action):
                unnamed.append(f"{action.text()} ({keys}): {tooltip_text(action)!r}")
            if not widget_action:
                assert tooltip_text(action), action.text()
        assert missing == []
        assert unnamed == []
        for button in window.graph_view.toolbar.findChildren(QToolButton):
            if button.objectName() == "graphMore":
                assert not button.icon().isNull()
        assert "(F)" in tooltip_text(window.graph_view.fit_action)
        assert "Ctrl+N" in tooltip_text(window.new_session_action)


@pytest.mark.asyncio
async def test_the_app_icon_is_on_the_application_and_its_windows(qtbot, home, themed) -> None:
    from PySide6.QtGui import QIcon

    from cks_desktop.app import _icon_path

    path = _icon_path()
    assert path is not None
    QApplication.setWindowIcon(QIcon(str(path)))
    async with open_window(home) as window:
        assert not QApplication.windowIcon().isNull()
        assert not window.windowIcon().isNull()
        assert window.windowHandle() is not None and not window.windowHandle().icon().isNull()


def test_about_credits_the_icon_set_and_fonts() -> None:
    from cks_desktop.ui.theme.credits import credits_text

    text = credits_text()
    assert "Phosphor" in text and "Inter" in text and "JetBrains Mono" in text and "Open Font License" in text


def test_one_app_wide_sheet_covers_the_classes_the_app_uses(themed: theme.ThemeManager) -> None:
    sheet = themed.stylesheet
    for selector in ("QGroupBox", "QTabBar::tab", "QHeaderView::section", "QSplitter::handle", "QToolBar",
                     "QSpinBox::up-arrow", "QComboBox::down-arrow", "QCheckBox::indicator", "QListView::indicator",
                     "QMenu::item", "QScrollBar", "QDockWidget::title", "QToolTip", "QTreeView::branch"):
        assert selector in sheet, selector
    assert "px;" in sheet and "font-size" in sheet
    assert not [line for line in sheet.splitlines() if "font-size" in line and "px" in line.split("font-size")[1][:12]]
    for path in themed.stylesheet.split("url(")[1:]:
        from pathlib import Path

        assert Path(path.split(")")[0]).is_file()


def test_roles_and_invalid_marks_restyle_a_widget(qtbot, themed: theme.ThemeManager) -> None:
    button = QPushButton("Save")
    qtbot.addWidget(button)
    theme.set_role(button, "primary")
    button.ensurePolished()
    assert button.property("cksRole") == "primary"
    from cks_desktop.ui.settings.widgets import mark
    from PySide6.QtWidgets import QLineEdit

    edit = QLineEdit()
    qtbot.addWidget(edit)
    mark(edit, "Not a URL.")
    assert edit.property("invalid") is True and edit.styleSheet() == ""
    mark(edit, None)
    assert edit.property("invalid") is False
