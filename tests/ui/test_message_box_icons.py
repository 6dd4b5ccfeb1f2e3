"""Question, warning and error boxes show the theme's icons, not Qt's unthemed standard ones (look.md:
the extraction estimate box's light-blue "?" was the only unthemed icon seen). The class: every box made
by ``ui.labels.plain_message_box`` (confirm, the extraction estimate, Remove document…) and by
``ui.dialogs.choose`` draws a Phosphor glyph in the scheme's colour for its kind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox, QStyle

from cks_desktop.ui import theme
from cks_desktop.ui.dialogs import choose
from cks_desktop.ui.labels import plain_message_box

STANDARD = {QMessageBox.Icon.Question: QStyle.StandardPixmap.SP_MessageBoxQuestion,
            QMessageBox.Icon.Warning: QStyle.StandardPixmap.SP_MessageBoxWarning,
            QMessageBox.Icon.Critical: QStyle.StandardPixmap.SP_MessageBoxCritical,
            QMessageBox.Icon.Information: QStyle.StandardPixmap.SP_MessageBoxInformation}


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[theme.ThemeManager]:
    manager = theme.install(qapp, "light")
    yield manager
    theme.uninstall()


def _themed_glyph(box: QMessageBox, kind: QMessageBox.Icon) -> bool:
    shown = box.iconPixmap().toImage()
    standard = box.style().standardIcon(STANDARD[kind], None, box).pixmap(shown.size()).toImage()
    return not shown.isNull() and shown.convertToFormat(QImage.Format.Format_ARGB32) != \
        standard.convertToFormat(QImage.Format.Format_ARGB32)


@pytest.mark.parametrize("kind", list(STANDARD))
def test_plain_message_boxes_use_the_themes_icon(themed: theme.ThemeManager, kind: QMessageBox.Icon) -> None:
    box = plain_message_box(None, icon=kind, title="Extract knowledge", text="Extract knowledge from a.md?")
    try:
        assert _themed_glyph(box, kind)
    finally:
        box.deleteLater()


def test_no_icon_stays_no_icon(themed: theme.ThemeManager) -> None:
    box = plain_message_box(None, title="t", text="x")
    assert box.iconPixmap().isNull()
    box.deleteLater()


@pytest.mark.asyncio
async def test_choose_boxes_use_the_themes_icon(themed: theme.ThemeManager, qtbot) -> None:
    seen: list[QMessageBox] = []

    async def pick() -> str:
        return await choose(None, "Quit", "Quit now?", [("yes", "Quit"), ("no", "Stay")], default="no", escape="no")

    task = asyncio.ensure_future(pick())
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while not any(isinstance(w, QMessageBox) and w.isVisible() for w in QApplication.topLevelWidgets()):
        assert loop.time() < deadline, "the box did not show"
        await asyncio.sleep(0.01)  # polling a condition with a bound, not a fixed wait
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    seen.append(box)
    assert _themed_glyph(box, QMessageBox.Icon.Warning)
    box.reject()
    assert await asyncio.wait_for(task, 5) == "no"


def test_the_crash_dialog_uses_the_themes_icon(themed: theme.ThemeManager, qtbot, tmp_path) -> None:
    from cks_desktop.ui.crash import CrashReporter, Redactor

    reporter = CrashReporter(tmp_path / "app.log", Redactor())
    reporter.excepthook(RuntimeError, RuntimeError("boom"), None)
    box = next(w for w in QApplication.topLevelWidgets()
               if isinstance(w, QMessageBox) and w.objectName() == "crashDialog" and w.isVisible())
    qtbot.addWidget(box)
    assert _themed_glyph(box, QMessageBox.Icon.Critical)
    box.close()
