"""End-to-end: the whole window against a fake Anthropic server (real SDK, real HTTP)."""

from __future__ import annotations

import asyncio
import json

import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from cks_desktop.ui.chat.model import MessageItem, RowState

from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import model_future, signal_future, wait


def _send(window, qtbot, text: str) -> asyncio.Task:
    panel = window.chat_panel
    qtbot.keyClicks(panel.composer.input, text)
    qtbot.mouseClick(panel.composer.send_button, Qt.MouseButton.LeftButton)
    controller = panel.controller
    assert controller is not None and controller.task is not None
    return controller.task


def _texts(window, role: str) -> list[str]:
    return [i.text for i in window.chat_panel.model.items if isinstance(i, MessageItem) and i.role == role]


def _tool_results(fake) -> list[dict]:
    """The tool_result blocks the SDK sent back in the last request."""
    out = []
    for message in fake.requests[-1].body["messages"]:
        if isinstance(message.get("content"), list):
            out += [b for b in message["content"] if b.get("type") == "tool_result"]
    return out


@pytest.mark.asyncio
async def test_allow_runs_the_tool_and_the_graph_grows(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding Alice."),
                         text_turn("Alice ", "is in the graph."))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        window.sidebar.create_session()
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Add Alice")
        assert window.chat_panel.composer.send_button.text() == "Stop"
        (dialog,) = await wait(opened)
        assert dialog.objectName() == "approvalDialog"
        assert dialog.focusWidget() is dialog.deny_button
        assert '"name": "Alice"' in dialog.arguments_view.toPlainText()
        assert dialog.preview_label is not None and "adds 1 object" in dialog.preview_label.text()
        window.chat_panel.view.flush()
        (row,) = window.chat_panel.view.rows()
        assert row.item.state is RowState.PENDING_APPROVAL and "approval" in row.state_label.text()
        assert _texts(window, "assistant") == ["Adding Alice."]  # the text streamed before the call
        qtbot.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
        await wait(task)
        window.chat_panel.view.flush()
        assert row.item.state is RowState.DONE and row.state_label.text().startswith("done")
        assert "Alice" in window.graph_view.object_names()
        assert _texts(window, "assistant")[-1] == "Alice is in the graph."
        assert window.chat_panel.composer.send_button.text() == "Send"
        assert row.revert_button.isVisibleTo(row)


@pytest.mark.asyncio
async def test_deny_reaches_the_model(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Bob"}),
                         text_turn("OK, you declined, so I did not add Bob."))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        window.sidebar.create_session()
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Add Bob")
        (dialog,) = await wait(opened)
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
        await wait(task)
        (row,) = window.chat_panel.view.rows()
        assert row.item.state is RowState.DENIED
        (result,) = _tool_results(anthropic_fake)
        assert result["is_error"] and "declined" in json.dumps(result["content"])
        assert "declined" in _texts(window, "assistant")[-1]
        assert "Bob" not in window.graph_view.object_names()


@pytest.mark.asyncio
async def test_escape_denies(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Eve"}), text_turn("Understood."))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        window.sidebar.create_session()
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Add Eve")
        (dialog,) = await wait(opened)
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        await wait(task)
        assert window.chat_panel.view.rows()[0].item.state is RowState.DENIED


@pytest.mark.asyncio
async def test_stop_during_streaming_keeps_the_text(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(text=["Thinking about ", "it"], stall_after_text=True), text_turn("Fresh answer."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        task = _send(window, qtbot, "Think")
        controller = panel.controller
        await wait(model_future(panel.model, lambda m: _texts(window, "assistant") == ["Thinking about it"]))
        qtbot.mouseClick(panel.composer.send_button, Qt.MouseButton.LeftButton)  # Stop
        with pytest.raises(asyncio.CancelledError):
            await wait(task)
        assert panel.composer.send_button.text() == "Send" and not controller.running
        assert _texts(window, "assistant") == ["Thinking about it"]
        task = _send(window, qtbot, "Try again")  # the chat goes on after a Stop
        await wait(task)
        assert _texts(window, "assistant")[-1] == "Fresh answer."


@pytest.mark.asyncio
async def test_stop_during_an_approval_closes_the_dialog(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Zed"}))
    async with open_window(home, fake=anthropic_fake, policies={"add_object": "always"}) as window:
        window.sidebar.create_session()
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Add Zed")
        (dialog,) = await wait(opened)
        window.chat_panel.composer.input.setFocus()
        qtbot.keyClick(window.chat_panel.composer.input, Qt.Key.Key_Escape)  # Esc in the chat = Stop
        with pytest.raises(asyncio.CancelledError):
            await wait(task)
        await asyncio.sleep(0)
        assert not shiboken6.isValid(dialog) or not dialog.isVisible()
        window.chat_panel.view.flush()
        assert window.chat_panel.view.rows()[0].item.state is RowState.CANCELLED
        assert "Zed" not in window.graph_view.object_names()


@pytest.mark.asyncio
async def test_reopening_restores_the_chat_and_its_rows(qtbot, home, anthropic_fake) -> None:
    hostile = '<img src="http://evil.example/x.png"> <a href="http://evil.example">click</a>'
    anthropic_fake.queue(
        Turn(text=["Two things."], tool_calls=[ScriptedCall("add_object", {"type": "Tag", "name": hostile}),
                                               ScriptedCall("get_object", {"ref": "nobody"})]),
        text_turn(f"Added {hostile}."))
    async with open_window(home, fake=anthropic_fake) as window:
        session_id = window.sidebar.create_session()
        await wait(_send(window, qtbot, "Go"))
        window.chat_panel.view.flush()
        before = [(r.item.display_name, r.item.state, r.item.result, r.state_label.text())
                  for r in window.chat_panel.view.rows()]
        assert [b[1] for b in before] == [RowState.DONE, RowState.ERROR]
    async with open_window(home, fake=anthropic_fake) as window:
        assert window.current_session == session_id  # the last session reopens
        rows = window.chat_panel.view.rows()
        after = [(r.item.display_name, r.item.state, r.item.result, r.state_label.text()) for r in rows]
        assert after == before
        assert rows[1].property("kind") == "error"
        assert _texts(window, "user") == ["Go"]
        # untrusted text stays text: in the Markdown answer and in the row's result
        answer = window.chat_panel.view.widget_for(len(window.chat_panel.model.items) - 1)
        assert hostile in answer.view.toPlainText()
        rows[0].set_expanded(True)
        assert "<img src=" in rows[0].result_block.view.toPlainText()
        assert hostile in window.graph_view.object_names()


@pytest.mark.asyncio
async def test_esc_anywhere_in_the_window_stops_only_while_answering(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(text=["Slow"], stall_after_text=True))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        assert not window._esc.isEnabled()  # idle: Esc belongs to the widgets (searches, editors)
        task = _send(window, qtbot, "Go slowly")
        assert window._esc.isEnabled() and window.stop_action.isEnabled()
        if QApplication.activeWindow() is not window:  # shortcuts go to the active window
            activated = signal_future(QApplication.instance().focusWindowChanged)
            window.windowHandle().requestActivate()
            await wait(activated)
        window.sidebar.list.setFocus()
        qtbot.keyClick(window.sidebar.list, Qt.Key.Key_Escape)
        with pytest.raises(asyncio.CancelledError):
            await wait(task)
        assert not window._esc.isEnabled() and not window.stop_action.isEnabled()
