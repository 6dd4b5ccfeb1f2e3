"""Focus never disappears after Send: typed with Enter or clicked, through an approval dialog,
the person can type the next message at once (the real window, the fake Anthropic server).
``window.focusWidget()`` is the window's focus (what has it whenever the window is active)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.fakes.script import call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait


@pytest.mark.asyncio
async def test_the_input_has_the_focus_after_an_answer_however_it_was_sent(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("Hello."),
                         call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding Alice."),
                         text_turn("Alice is in the graph."))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        window.sidebar.create_session()
        composer = window.chat_panel.composer
        composer.input.setFocus()
        assert window.focusWidget() is composer.input
        QTest.keyClicks(composer.input, "Hi")
        QTest.keyClick(composer.input, Qt.Key.Key_Return)  # Enter sends
        await wait(window.chat_panel.controller.task)
        assert window.focusWidget() is composer.input

        composer.input.setPlainText("Add Alice")
        opened = signal_future(window.approvalDialogOpened)
        QTest.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)  # the button takes the focus
        task = window.chat_panel.controller.task
        (dialog,) = await wait(opened)
        QTest.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
        await wait(task)
        assert composer.send_button.text() == "Send"
        focused = window.focusWidget()
        assert focused is composer.input, focused
