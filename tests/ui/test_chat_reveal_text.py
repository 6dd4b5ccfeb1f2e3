"""The chat scrolls to a message the graph's search found, by the message's text."""

from __future__ import annotations

from cks_desktop.ui.chat.model import MessageItem


def test_reveal_text_scrolls_to_the_message_and_selects_its_words(qtbot) -> None:
    from cks_desktop.ui.chat.controller import ChatController
    from cks_desktop.ui.chat.panel import ChatPanel

    controller = ChatController("s1", assistant=None, approver=None)  # type: ignore[arg-type]
    controller.loaded = True
    items = [MessageItem("user" if i % 2 else "assistant", f"Filler message number {i} about nothing much.\n" * 4)
             for i in range(60)]
    items[3] = MessageItem("user", "The quince   harvest moved\nto the ninth of October.")
    controller.model.reset(items)
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(480, 600)
    panel.show()
    panel.set_controller(controller)
    bar = panel.view.verticalScrollBar()
    bar.setValue(bar.maximum())
    bottom = bar.value()
    panel.reveal_text("The quince   harvest moved\nto the ninth of October.")  # as the search returns it
    assert bar.value() < bottom
    assert panel.view.widget_for(3).view.textCursor().selectedText() == "The quince   harvest moved"
