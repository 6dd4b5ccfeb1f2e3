"""the chat features people expect.

A real window on a real data folder, the real Anthropic adapter talking to the fake server
(``tests/fakes``); reopening is a second window on the same folder. Waits are on the chat
model's changes or the turn's task, never fixed sleeps.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from cks_desktop.agent.transcript import Mark, TranscriptStore
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem, RowState, ToolItem
from cks_desktop.ui.chat.tool_row import state_text

from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import model_future, wait
from tests.ui.test_window import _send, _texts


def _widget(panel, item) -> MessageWidget:
    panel.view.flush()
    index = panel.model.index_of(item)
    widget = panel.view.widget_for(index)
    assert isinstance(widget, MessageWidget)
    return widget


def _item(panel, role: str, index: int = -1) -> MessageItem:
    return [i for i in panel.model.items if isinstance(i, MessageItem) and i.role == role][index]


def _roles(home_window, sid: str) -> list[tuple[str, str]]:
    rows = TranscriptStore.for_store(home_window.services.store).history(sid)
    return [(r.message.role, r.message.text) for r in rows]


@pytest.mark.asyncio
async def test_copy_regenerate_and_edit_and_resend(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("One."), text_turn("Two."), text_turn("Two, again."), text_turn("Edited answer."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        await wait(_send(window, qtbot, "first"))
        await wait(_send(window, qtbot, "second"))
        sid = panel.controller.session_id
        # Copy: the answer's text, as written.
        answer = _item(panel, "assistant")
        widget = _widget(panel, answer)
        assert widget.copy_button.isVisibleTo(widget)
        qtbot.mouseClick(widget.copy_button, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == "Two."
        # Only the last answer offers Regenerate, only the last message of the person's Edit.
        first_answer = _item(panel, "assistant", 0)
        assert not _widget(panel, first_answer).regenerate_button.isVisibleTo(_widget(panel, first_answer))
        assert widget.regenerate_button.isVisibleTo(widget)
        first = _item(panel, "user", 0)
        assert not _widget(panel, first).edit_button.isVisibleTo(_widget(panel, first))
        # Regenerate: the last answer is dropped and the same message answered again.
        qtbot.mouseClick(widget.regenerate_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert _texts(window, "assistant") == ["One.", "Two, again."]
        sent = anthropic_fake.requests[-1].body["messages"]
        assert sent[-1]["role"] == "user" and "Two." not in str(sent)
        assert _roles(window, sid) == [("user", "first"), ("assistant", "One."), ("user", "second"),
                                       ("assistant", "Two, again.")]
        # Edit and resend: the text goes to the composer; Send replaces the whole exchange.
        last = _item(panel, "user")
        edit = _widget(panel, last)
        assert edit.edit_button.isVisibleTo(edit)
        qtbot.mouseClick(edit.edit_button, Qt.MouseButton.LeftButton)
        assert panel.composer.input.toPlainText() == "second" and panel.edit_bar.isVisibleTo(panel)
        panel.composer.input.clear()
        await wait(_send(window, qtbot, "second, edited"))
        assert not panel.edit_bar.isVisibleTo(panel)
        assert _texts(window, "user") == ["first", "second, edited"]
        assert _texts(window, "assistant") == ["One.", "Edited answer."]
        sent = anthropic_fake.requests[-1].body["messages"]
        assert "Two, again." not in str(sent) and "'second'" not in str(sent)
        assert _roles(window, sid) == [("user", "first"), ("assistant", "One."), ("user", "second, edited"),
                                       ("assistant", "Edited answer.")]


@pytest.mark.asyncio
async def test_a_stopped_answer_keeps_its_text_and_mark_after_reopening(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(text=["Half of the ", "answer"], stall_after_text=True))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        task = _send(window, qtbot, "Tell me everything")
        sid = panel.controller.session_id
        await wait(model_future(panel.model, lambda m: any(
            isinstance(i, MessageItem) and i.text == "Half of the answer" for i in m.items)))
        assert panel.stop()
        with pytest.raises(BaseException):
            await wait(task)
        answer = _item(panel, "assistant")
        assert answer.text == "Half of the answer" and answer.stopped and not answer.streaming
        widget = _widget(panel, answer)
        assert widget.stopped_label.isVisibleTo(widget)
        history = TranscriptStore.for_store(window.services.store).history(sid)
        assert [(h.message.role, h.mark) for h in history] == [("user", None), ("assistant", Mark.STOPPED)]
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.select(sid)
        panel = window.chat_panel
        answer = _item(panel, "assistant")
        assert answer.text == "Half of the answer" and answer.stopped
        widget = _widget(panel, answer)
        assert widget.stopped_label.isVisibleTo(widget) and widget.regenerate_button.isVisibleTo(widget)


@pytest.mark.asyncio
async def test_a_provider_error_is_saved_shown_after_reopening_and_retried(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(status=401), text_turn("Answered at last."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        await wait(_send(window, qtbot, "Are you there?"))
        sid = panel.controller.session_id
        (error,) = _texts(window, "error")
        assert _item(panel, "user").retryable
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.select(sid)
        panel = window.chat_panel
        assert _texts(window, "error") == [error]  # the same sentence, read back from the transcript
        prompt = _item(panel, "user")
        assert prompt.unanswered and prompt.retryable
        widget = _widget(panel, prompt)
        assert widget.retry_button.isVisibleTo(widget)
        qtbot.mouseClick(widget.retry_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert _texts(window, "assistant") == ["Answered at last."] and _texts(window, "error") == []
        assert [m["role"] for m in anthropic_fake.requests[-1].body["messages"]] == ["user"]
        assert _roles(window, sid) == [("user", "Are you there?"), ("assistant", "Answered at last.")]


@pytest.mark.asyncio
async def test_a_tool_row_shows_while_its_arguments_stream(qtbot, home, anthropic_fake) -> None:
    big = {"type": "Note", "name": "Long", "properties": {"text": "x" * 6000}}
    anthropic_fake.queue(Turn(tool_calls=[ScriptedCall("add_object", big)], stall_in_arguments=True,
                              split_arguments=6))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        task = _send(window, qtbot, "Write a long note")
        await wait(model_future(panel.model, lambda m: any(
            isinstance(i, ToolItem) and i.state is RowState.PREPARING and i.arguments_chars > 1000
            for i in m.items)))
        (row,) = panel.view.rows()
        panel.view.flush()
        assert row.item.display_name and row.state_label.text().startswith("preparing…")
        assert "characters" in row.state_label.text()
        assert panel.stop()
        with pytest.raises(BaseException):
            await wait(task)
        assert row.item.state is RowState.CANCELLED  # it never ran; nothing looks "preparing" afterwards
        assert window.services.store.counts(panel.controller.session_id)["objects"] == 0


@pytest.mark.asyncio
async def test_identical_calls_fold_into_one_row_and_continue_is_the_one_way_on(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(*[call_turn("graph_summary", {}) for _ in range(8)], text_turn("Done now."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.services.settings.max_iterations = 8
        window.sidebar.create_session()
        panel = window.chat_panel
        await wait(_send(window, qtbot, "Summarize"))
        sid = panel.controller.session_id
        (row,) = panel.view.rows()
        panel.view.flush()
        assert row.item.repeats == 8 and "× 8" in state_text(row.item)
        assert "× 8" in row.state_label.text()
        (notice,) = _texts(window, "notice")
        assert "iteration limit" in notice and "Send another message" not in notice
        assert panel.limit_banner.isVisibleTo(panel) and panel.continue_button.isVisibleTo(panel)
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.select(sid)
        panel = window.chat_panel
        (item,) = panel.model.tools()
        assert item.repeats == 8
        assert panel.limit_banner.isVisibleTo(panel)
        qtbot.mouseClick(panel.continue_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert _texts(window, "assistant")[-1] == "Done now."


def test_the_model_picker_applies_on_enter_or_a_choice_only(qtbot) -> None:
    from cks_desktop.ui.chat.composer import Composer

    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.show_provider("anthropic", "claude-test")
    chosen: list[tuple[str, str]] = []
    composer.providerChosen.connect(lambda name, model: chosen.append((name, model)))
    edit = composer.model_box.lineEdit()
    edit.selectAll()
    qtbot.keyClicks(edit, "claude-other")
    composer.input.setFocus()  # leaving the box applies nothing
    assert chosen == []
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert chosen == [("anthropic", "claude-other")]
    # A name with a space is refused with a sentence, and nothing is applied.
    edit.selectAll()
    qtbot.keyClicks(edit, "bad name")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert chosen == [("anthropic", "claude-other")] and "no spaces" in composer.model_hint.text()
    # After Fetch models, the list offers them; a name outside it needs a second Enter.
    composer.set_models(["claude-a", "claude-b"])
    assert [composer.model_box.itemText(i) for i in range(composer.model_box.count())] == ["claude-a", "claude-b"]
    edit.selectAll()
    qtbot.keyClicks(edit, "claude-z")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert chosen[-1] == ("anthropic", "claude-other") and "press Enter again" in composer.model_hint.text()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert chosen[-1] == ("anthropic", "claude-z")
    composer.model_box.activated.emit(1)  # a choice from the list applies at once
    composer.model_box.setCurrentIndex(1)
    composer.model_box.activated.emit(1)
    assert chosen[-1] == ("anthropic", "claude-b")


@pytest.mark.asyncio
async def test_fetch_models_fills_the_picker_from_the_provider(qtbot, home, anthropic_fake) -> None:
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        assert panel.composer.fetch_button.isEnabled()
        models = await wait(panel.load_models())
        assert models and anthropic_fake.default_model in models
        box = panel.composer.model_box
        assert anthropic_fake.default_model in [box.itemText(i) for i in range(box.count())]


@pytest.mark.asyncio
async def test_session_settings_from_the_chat_menu_reach_the_request(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("Aye."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        window.session_settings_action.trigger()
        dialog = panel.session_dialog
        assert dialog is not None and dialog.isVisible()
        dialog.temperature.setText("7")
        assert not dialog.save() and "from 0 to 2" in dialog.error_label.text() and dialog.isVisible()
        dialog.instructions.setPlainText("Speak like a sailor.")
        dialog.temperature.setText("0.4")
        dialog.max_tokens.setText("555")
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        assert not dialog.isVisible()
        await wait(_send(window, qtbot, "Hello"))
        body = anthropic_fake.requests[-1].body
        assert body["temperature"] == 0.4 and body["max_tokens"] == 555
        assert "Speak like a sailor." in str(body["system"])


@pytest.mark.asyncio
async def test_export_chat_from_the_file_menu(qtbot, home, anthropic_fake, tmp_path) -> None:
    import json

    anthropic_fake.queue(call_turn("add_object", {"type": "Person", "name": "Ada"}, text="Adding."),
                         text_turn("Added **Ada**."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        await wait(_send(window, qtbot, "Add Ada"))
        window.export_chat_action.trigger()
        dialog = panel.export_dialog
        assert dialog is not None and dialog.isVisible() and dialog.windowTitle() == "Export chat"
        dialog.reject()
        for name in ("chat.md", "chat.json"):
            assert await wait(panel.write_export(panel.controller, str(tmp_path / name))) is None
        markdown = (tmp_path / "chat.md").read_text(encoding="utf-8")
        assert "## You · exchange 1" in markdown and "Add Ada" in markdown and "Added **Ada**." in markdown
        assert "**Tool call**" in markdown and "(`add_object`)" in markdown and '"name": "Ada"' in markdown
        data = json.loads((tmp_path / "chat.json").read_text(encoding="utf-8"))
        assert data["format"] == "cks-desktop-chat" and data["session"]["id"] == panel.controller.session_id
        calls = [p for m in data["messages"] for p in m["parts"] if p.get("kind") == "tool_call"]
        assert calls and calls[0]["name"] == "add_object" and calls[0]["arguments"]["name"] == "Ada"
        assert any(m["role"] == "tool" for m in data["messages"])
