"""Chat widgets: safe Markdown, tool rows, the lazy chat view, the composer."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QGuiApplication, QTextDocument

from cks_desktop.ui.chat.chat_view import INITIAL, ChatView
from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.markdown_view import MarkdownView
from cks_desktop.ui.chat.model import ChatModel, MessageItem, RowState, ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow, state_text

HOSTILE = 'See <img src="http://evil.example/x.png"> and <a href="http://evil.example">click</a>'


def test_markdown_shows_html_as_literal_text_and_loads_nothing(qtbot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_markdown(f"**bold** {HOSTILE}\n\n![cat](http://evil.example/cat.png)\n\n<script>x</script>")
    text = view.toPlainText()
    assert '<img src="http://evil.example/x.png">' in text
    assert '<a href="http://evil.example">click</a>' in text
    assert "<script>x</script>" in text
    assert "[image: cat]" in text  # a Markdown image becomes a link to click, not a fetch
    assert "<img" not in view.document().toHtml().replace("&lt;img", "")
    assert view.loadResource(int(QTextDocument.ResourceType.ImageResource),
                             QUrl("http://evil.example/x.png")) is None
    bold = view.document().find("bold")
    assert bold.charFormat().fontWeight() >= 600  # Markdown itself still renders


def test_links_open_only_for_safe_schemes(qtbot, monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr("cks_desktop.ui.chat.markdown_view.QDesktopServices.openUrl",
                        lambda url: opened.append(url.toString()) or True)
    view = MarkdownView()
    qtbot.addWidget(view)
    view.anchorClicked.emit(QUrl("https://example.org/a"))
    view.anchorClicked.emit(QUrl("file:///etc/passwd"))
    view.anchorClicked.emit(QUrl("javascript:alert(1)"))
    assert opened == ["https://example.org/a"]


def test_markdown_view_grows_with_its_text(qtbot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(300, 10)
    view.show()
    view.set_markdown("one line")
    short = view.height()
    view.set_markdown("\n\n".join(f"paragraph {i}" for i in range(10)))
    assert view.height() > short * 3


def _tool(state: RowState = RowState.DONE, **kw) -> ToolItem:
    base = dict(call_id="c1", name="add_object", display_name="Add object", source="builtin",
                arguments={"name": "Alice", "type": "Person", "properties": {"age": 3}}, state=state,
                duration_ms=1234.0, result='{"id": "o1", "note": "<img src=\\"http://x\\">"}', change_id="ch1",
                revertable=True)
    base.update(kw)
    return ToolItem(**base)


def test_tool_row_collapsed_and_expanded(qtbot) -> None:
    row = ToolCallRow(_tool())
    qtbot.addWidget(row)
    row.resize(520, 40)  # a chat's width (a narrower row elides the name)
    row.show()
    assert row.objectName() == "toolCallRow"
    assert row.name_label.text() == "Add object"
    summary = row.summary_label.full_text()
    assert summary == 'name="Alice", type="Person"'  # the telling arguments (tests/ui/test_chat_look.py)
    assert "properties={…}" in row.summary_label.toolTip()  # every argument in the tooltip
    assert row.state_label.text() == "done · 1.2 s"
    assert not row.is_expanded() and row.details is None and row.property("expanded") in (None, False)
    assert row.revert_button.isVisibleTo(row)
    qtbot.mouseClick(row.toggle_button, Qt.MouseButton.LeftButton)
    assert row.is_expanded() and row.property("expanded") is True
    assert "expanded" in row.accessibleDescription()
    assert row.arguments_block is not None and row.result_block is not None
    assert '"properties": {\n    "age": 3\n  }' in row.arguments_block.view.toPlainText()
    result_text = row.result_block.view.toPlainText()
    assert '<img src=\\"http://x\\">' in result_text  # literal, in a plain-text view
    assert row.result_block.view.isReadOnly()
    qtbot.mouseClick(row.result_block.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == row.item.result  # the original, not its pretty form


def test_tool_row_states(qtbot) -> None:
    item = _tool(RowState.RUNNING, started_at=time.monotonic() - 3, duration_ms=None, result=None)
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    assert row.state_label.text().startswith("running 3")
    assert not row.revert_button.isVisibleTo(row)
    for state, words, kind in [(RowState.PENDING_APPROVAL, "waiting for your approval", "attention"),
                               (RowState.DENIED, "denied", "muted"), (RowState.CANCELLED, "cancelled", "muted")]:
        item.state = state
        row.refresh()
        assert row.state_label.text() == words and row.property("kind") == kind
    item.state, item.duration_ms = RowState.ERROR, 40.0
    row.refresh()
    assert row.state_label.text() == "error · 40 ms" and row.property("kind") == "error"
    item.state, item.reverted = RowState.DONE, True
    row.refresh()
    assert state_text(item) == "reverted" and not row.revert_button.isVisibleTo(row)


def test_revert_button_emits_the_item(qtbot) -> None:
    item = _tool()
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    row.show()
    emitted: list[object] = []
    row.revertRequested.connect(emitted.append)
    qtbot.mouseClick(row.revert_button, Qt.MouseButton.LeftButton)
    assert emitted == [item]


def _long_chat(n_messages: int) -> ChatModel:
    items = []
    for i in range(n_messages // 2):
        items.append(MessageItem("user", f"Question {i}: what about **item {i}**?"))
        items.append(MessageItem("assistant", f"Answer {i} with a [link](https://example.org/{i}) and `code`."))
        items.append(_tool(call_id=f"c{i}"))
    model = ChatModel()
    model.reset(items)
    return model


@pytest.mark.slow  # a wall-clock budget: bench/chat_render.py measures it beside its floor
def test_a_thousand_messages_open_in_under_a_second(qtbot) -> None:
    model = _long_chat(1000)
    started = time.perf_counter()
    view = ChatView(ChatModel())
    qtbot.addWidget(view)
    view.resize(480, 700)
    view.set_model(model)
    view.show()
    QGuiApplication.processEvents()
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, f"opening took {elapsed:.2f} s"
    assert view.built_count() == INITIAL
    bar = view.verticalScrollBar()
    assert bar.value() == bar.maximum()  # opened at the newest message
    built = view.build_older()
    assert built > 0 and view.built_count() == INITIAL + built
    target = len(model.items) - INITIAL - built - 5  # just above what is built
    view.scroll_to_index(target)
    assert view.widget_for(target) is not None
    assert view.built_count() < len(model.items) // 2  # still only what was asked for


def test_view_follows_new_items_and_updates(qtbot) -> None:
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    item = MessageItem("assistant", "Hel", streaming=True)
    model.append(item)
    item.text += "lo **there**"
    model.changed(item)
    view.flush()
    widget = view.widget_for(0)
    assert widget is not None and widget.view.toPlainText() == "Hello there"
    model.append(_tool(RowState.RUNNING, started_at=time.monotonic()))
    assert len(view.rows()) == 1 and view._tick_timer.isActive()


@pytest.mark.parametrize("enter_sends, modifiers, sends", [
    (True, Qt.KeyboardModifier.NoModifier, True),
    (True, Qt.KeyboardModifier.ShiftModifier, False),
    (True, Qt.KeyboardModifier.ControlModifier, True),
    (False, Qt.KeyboardModifier.NoModifier, False),
    (False, Qt.KeyboardModifier.ShiftModifier, True),
    (False, Qt.KeyboardModifier.ControlModifier, True),
])
def test_enter_sends_or_breaks_the_line(qtbot, enter_sends: bool, modifiers, sends: bool) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.input.set_enter_sends(enter_sends)
    sent: list[str] = []
    composer.sendClicked.connect(sent.append)
    qtbot.keyClicks(composer.input, "hello")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return, modifiers)
    if sends:
        assert sent == ["hello"] and composer.input.toPlainText() == ""
    else:
        assert sent == [] and composer.input.toPlainText() == "hello\n"


def test_send_becomes_stop_and_esc_stops(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    assert composer.send_button.objectName() == "sendButton" and composer.send_button.text() == "Send"
    composer.set_running(True)
    assert composer.send_button.text() == "Stop"
    stops: list[bool] = []
    composer.stopClicked.connect(lambda: stops.append(True))
    qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    qtbot.keyClick(composer.input, Qt.Key.Key_Escape)
    assert stops == [True, True]
    sent: list[str] = []
    composer.sendClicked.connect(sent.append)
    qtbot.keyClicks(composer.input, "not now")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    assert sent == []  # nothing is sent while a turn runs


def test_provider_picker_reports_choices(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show_provider("ollama", "llama3.1", ["llama3.1", "qwen3"])
    chosen: list[tuple[str, str]] = []
    composer.providerChosen.connect(lambda p, m: chosen.append((p, m)))
    composer.model_box.setEditText("qwen3")
    composer.model_box.lineEdit().editingFinished.emit()
    assert chosen == [("ollama", "qwen3")]


def test_find_in_chat_steps_through_matches(qtbot) -> None:
    from cks_desktop.ui.chat.controller import ChatController
    from cks_desktop.ui.chat.find import find_matches, mentioned_ids
    from cks_desktop.ui.chat.panel import ChatPanel

    controller = ChatController("s1", assistant=None, approver=None)  # type: ignore[arg-type]
    controller.loaded = True
    controller.model.reset([MessageItem("user", "Where is Paris?"), MessageItem("assistant", "Paris is in France."),
                            _tool(arguments={"name": "Paris"}, result='{"id": "o_01M8MVPG078N4X0DAVFX82H6C5"}')])
    assert find_matches(controller.model.items, "PARIS") == [0, 1, 2]
    assert mentioned_ids(controller.model.items[2]) == ["o_01M8MVPG078N4X0DAVFX82H6C5"]
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(480, 600)
    panel.show()
    panel.set_controller(controller)
    panel.show_find()
    qtbot.keyClicks(panel.find_bar.edit, "paris")
    assert panel.find_bar.count.text() == "3 of 3"
    row = panel.view.rows()[0]
    assert row.is_expanded()  # the newest match, a tool row, is opened
    qtbot.keyClick(panel.find_bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert panel.find_bar.count.text() == "2 of 3"
    assert panel.view.widget_for(1).view.textCursor().selectedText() == "Paris"
    qtbot.keyClick(panel.find_bar.edit, Qt.Key.Key_Escape)
    assert not panel.find_bar.isVisible()
