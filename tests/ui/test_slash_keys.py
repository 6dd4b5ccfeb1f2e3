"""The "/" prompt list is driven from the keyboard as a person would: keys go where Qt sends
them (the open list, else the focused input), against a real MCP server subprocess."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.slash_commands import PromptForm, install_mcp_features

from tests.ui.test_mcp_composer import library


def press(key: Qt.Key) -> None:
    """A key press where the window system delivers it: the open popup first, else the focus."""
    target = QApplication.activePopupWidget() or QApplication.focusWidget()
    assert target is not None
    QTest.keyClick(target, key)


@pytest.mark.asyncio
async def test_arrow_keys_move_in_the_list_and_enter_opens_that_prompt_once(qtbot, tmp_path):
    conn = await library(tmp_path)
    try:
        composer = Composer()
        qtbot.addWidget(composer)
        composer.show()
        features = install_mcp_features(composer, lambda: {"lib": conn})
        sent: list[str] = []
        composer.sendClicked.connect(sent.append)
        composer.input.setFocus()
        QTest.keyClicks(composer.input, "/lib:")
        popup = features.completer.popup()
        assert popup.isVisible() and features.completer.completionCount() == 2
        assert popup.currentIndex().row() == 0  # the first command is marked at once: Enter takes it
        press(Qt.Key.Key_Down)
        assert popup.currentIndex().data() == "/lib:report"
        press(Qt.Key.Key_Up)
        press(Qt.Key.Key_Down)
        press(Qt.Key.Key_Return)
        forms = composer.findChildren(PromptForm)
        assert [f.command.text for f in forms if f.isVisible()] == ["/lib:report"]  # that one, once
        assert sent == [] and composer.input.toPlainText() == "/lib:report"
        forms[0].reject()

        composer.input.clear()
        composer.input.setFocus()
        QTest.keyClicks(composer.input, "/lib:g")
        press(Qt.Key.Key_Return)  # the one match, marked: Enter opens it, nothing is sent
        visible = [f.command.text for f in composer.findChildren(PromptForm) if f.isVisible()]
        assert visible == ["/lib:greet"] and sent == []
        for form in composer.findChildren(PromptForm):
            form.reject()

        composer.input.clear()
        composer.input.setFocus()
        QTest.keyClicks(composer.input, "/lib:")
        press(Qt.Key.Key_Escape)  # closes the list, keeps the text, sends nothing
        assert not popup.isVisible() and composer.input.toPlainText() == "/lib:" and sent == []
    finally:
        await conn.stop()
