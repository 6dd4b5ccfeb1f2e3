"""Delete this exchange…, Clear chat…, and Retry.

The window runs on a real data folder with the real Anthropic adapter talking
to the fake server. The unanswered prompt comes from a real ``cks-desktop
chat`` process killed with SIGKILL while the provider held its request.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem, ToolItem

from tests.agent.test_chat_cli import BASE_ENV
from tests.fakes.script import call_turn, text_turn
from tests.reliability.test_crash_unanswered import kill_mid_turn, user_texts
from tests.ui.conftest import open_window
from tests.ui.helpers import wait
from tests.ui.test_window import _send, _texts


async def answer_confirm(qtbot, accept: bool, needle: str) -> None:
    await asyncio.sleep(0)
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert needle in box.text() and "graph is not changed" in box.informativeText()
    assert box.defaultButton().objectName() == "confirmCancelButton"
    name = "confirmAcceptButton" if accept else "confirmCancelButton"
    qtbot.mouseClick(box.findChild(type(box.defaultButton()), name), Qt.MouseButton.LeftButton)


def action(menu, name: str):
    return next(a for a in menu.actions() if a.objectName() == name)


@pytest.mark.asyncio
async def test_delete_exchange_and_clear_chat_from_the_message_menu(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("One."),
                         call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding."),
                         text_turn("Two."), text_turn("Three."), text_turn("Fresh."), text_turn("Five."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        for prompt in ("first", "second", "third"):
            await wait(_send(window, qtbot, prompt))
        sid = panel.controller.session_id
        tool = next(i for i in panel.model.items if isinstance(i, ToolItem))
        assert tool.turn == 2
        # Cancel first: nothing changes.
        menu = panel.view.show_menu(tool, QPoint(0, 0))
        action(menu, "deleteExchangeAction").trigger()
        await answer_confirm(qtbot, False, "Delete this exchange")
        assert _texts(window, "user") == ["first", "second", "third"]
        # Then delete the exchange with the tool call, from the row's own menu.
        menu = panel.view.show_menu(tool, QPoint(0, 0))
        action(menu, "deleteExchangeAction").trigger()
        await answer_confirm(qtbot, True, "Delete this exchange")
        for _ in range(5):
            await asyncio.sleep(0)
        assert _texts(window, "user") == ["first", "third"] and not panel.model.tools()
        transcript = TranscriptStore.for_store(window.services.store)
        assert [m.role for m in transcript.load(sid)] == ["user", "assistant", "user", "assistant"]
        assert window.services.store.resolve(sid, "Alice").type == "Person"  # the graph stays
        # The chat continues; then Clear chat from a message's "⋯" button.
        await wait(_send(window, qtbot, "fourth"))
        assert "second" not in str(anthropic_fake.requests[-1].body["messages"])
        widget = next(w for w in panel.view._widgets.values() if isinstance(w, MessageWidget))
        qtbot.mouseClick(widget.menu_button, Qt.MouseButton.LeftButton)
        action(panel.view.menu, "clearChatAction").trigger()
        await answer_confirm(qtbot, True, "Delete every message")
        for _ in range(5):
            await asyncio.sleep(0)
        assert panel.model.items == [] and transcript.load(sid) == []
        assert panel.empty_label.isVisibleTo(panel)
        assert window.services.store.resolve(sid, "Alice").type == "Person"
        # Chat → Clear chat… in the menu bar does the same, so it can be found without a message.
        await wait(_send(window, qtbot, "fifth"))
        chat_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Chat")
        assert window.clear_chat_action in chat_menu.actions()
        window.clear_chat_action.trigger()
        await answer_confirm(qtbot, True, "Delete every message")
        for _ in range(5):
            await asyncio.sleep(0)
        assert panel.model.items == [] and transcript.load(sid) == []


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_prompt_killed_mid_turn_shows_unanswered_with_retry(qtbot, home, anthropic_fake) -> None:
    made = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "sessions", "create",
                           "Crashed"], capture_output=True, text=True, timeout=60, env=BASE_ENV)
    sid = made.stdout.strip()
    assert made.returncode == 0 and sid, made.stderr
    kill_mid_turn(home, sid, "The question that was cut off")
    anthropic_fake.queue(text_turn("Answered at last."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.select(sid)
        panel = window.chat_panel
        (item,) = panel.model.items
        assert isinstance(item, MessageItem) and item.unanswered and item.retryable
        widget = panel.view.widget_for(0)
        assert widget.retry_button.isVisibleTo(widget) and widget.unanswered_label.isVisibleTo(widget)
        qtbot.mouseClick(widget.retry_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert user_texts(anthropic_fake.requests[-1].body) == ["The question that was cut off"]
        assert _texts(window, "assistant") == ["Answered at last."]
        assert not item.unanswered and not item.retryable
        panel.view.flush()
        assert not widget.retry_button.isVisibleTo(widget)
        history = TranscriptStore.for_store(window.services.store).history(sid)
        assert [h.message.role for h in history] == ["user", "assistant"] and not history[0].unanswered


def test_a_failed_turn_marks_its_prompt_unanswered_until_the_next_one() -> None:
    from cks_desktop.agent import events as ev
    from cks_desktop.llm.messages import Message
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.presenter import ChatPresenter

    model = ChatModel()
    presenter = ChatPresenter(model)
    presenter.add_user("hello")
    presenter.handle(ev.AssistantMessage(Message("assistant", [])))
    presenter.handle(ev.TextDelta("Hi"))
    presenter.handle(ev.Finished("stop"))
    presenter.add_user("second")
    presenter.handle(ev.ErrorEvent("The provider is down.", "network"))
    presenter.handle(ev.Finished("error"))
    first, _answer, second, _error = model.items
    assert not first.unanswered and second.unanswered and second.retryable and second.turn == 2
    presenter.add_user("third")
    assert second.unanswered and not second.retryable  # only the chat's last message offers Retry
