"""The chat's look: code blocks, tool-row summaries and details, the column.

Real widgets under pytest-qt; the duration bullet (approval wait excluded) is
tests/ui/test_chat_duration.py, driven through a real turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextDocument
from PySide6.QtWidgets import QApplication

from cks_desktop.ui import theme
from cks_desktop.ui.chat import highlight
from cks_desktop.ui.chat.chat_view import ChatView
from cks_desktop.ui.chat.code_block import CodeBlock, LINE_CHUNK
from cks_desktop.ui.chat.markdown_view import DISPLAY_MAX
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import ChatModel, MessageItem, RowState, ToolItem
from cks_desktop.ui.chat.segments import split_markdown
from cks_desktop.ui.chat.summary import tool_summary
from cks_desktop.ui.chat.tool_row import DETAIL_MAX_HEIGHT, ToolCallRow
from cks_desktop.ui.theme.tokens import contrast_ratio, load

CODE = 'def greet(name):\n    # say hello\n    return f"<b>hi</b> {name}" + 42 * "!"\n'
ANSWER = f"Here it is:\n\n```python\n{CODE}```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n"


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[theme.ThemeManager]:
    manager = theme.install(qapp, "light")
    yield manager
    theme.uninstall()


def _colours(document: QTextDocument) -> set[str]:
    found = set()
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.hasProperty(fmt.Property.ForegroundBrush):
                found.add(fmt.foreground().color().name())
            it += 1
        block = block.next()
    return found


# -- code blocks -----------------------------------------------------------------------------------------------
def test_a_fenced_block_is_highlighted_and_copy_copies_exactly_the_code(qtbot, themed) -> None:
    widget = MessageWidget(MessageItem("assistant", ANSWER), model_name="claude-sonnet-5")
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.show()
    [block] = widget.code_blocks()
    assert block.caption.text() == "python"
    assert block.code() == CODE.rstrip("\n")  # the fence's content, exactly
    assert len(_colours(block.view.document())) >= 3  # keyword, string, comment, number… in colours
    shown = block.view.toPlainText()
    assert '"<b>hi</b>' in shown  # markup inside code is characters, never interpreted
    assert "<b>" not in block.view.document().toHtml().replace("&lt;b&gt;", "")
    qtbot.mouseClick(block.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == CODE.rstrip("\n")
    assert widget.model_label is not None and widget.model_label.text() == "claude-sonnet-5"
    prose = "".join(v.toPlainText() for v in widget.text_views())
    assert "Here it is:" in prose and "one" in prose and "```" not in prose


def test_streaming_code_grows_in_the_same_block(qtbot, themed) -> None:
    item = MessageItem("assistant", "Look:\n\n```js\nlet a", streaming=True)
    widget = MessageWidget(item)
    qtbot.addWidget(widget)
    [first] = widget.code_blocks()
    item.text += " = 1;\n```\nAfter."
    widget.refresh()
    [again] = widget.code_blocks()
    assert again is first and again.code() == "let a = 1;"
    assert "After." in widget.text_views()[-1].toPlainText()


def test_fences_are_found_like_commonmark() -> None:
    assert [s.kind for s in split_markdown("a\n```\nx\n```\nb")] == ["markdown", "code", "markdown"]
    assert split_markdown("use ```inline``` here")[0].kind == "markdown"
    assert split_markdown("~~~ Rust extra\nfn x\n~~~~")[-1].language == "rust"
    assert [s.kind for s in split_markdown("- item\n\n      ```\n      x\n      ```")] == ["markdown"]
    assert split_markdown("```py\nunclosed")[-1].text == "unclosed"  # a half-streamed block


def test_syntax_colours_are_readable_on_the_code_background() -> None:
    tokens = load()
    for scheme, colours in highlight.SYNTAX.items():
        background = tokens.palette(scheme)["code_background"]
        for role, colour in colours.items():
            assert contrast_ratio(colour, background) >= 4.5, (scheme, role, colour)


def test_a_huge_code_line_is_shown_broken_and_copied_whole(qtbot, themed) -> None:
    line = "x = '" + "y" * (3 * LINE_CHUNK) + "'"
    block = CodeBlock(line, "python")
    qtbot.addWidget(block)
    assert block.view.document().blockCount() >= 3  # display breaks
    block.copy()
    assert QGuiApplication.clipboard().text() == line


def test_a_huge_answer_stays_plain_text_without_blocks(qtbot, themed) -> None:
    text = "```python\n" + "print(1)\n" * (DISPLAY_MAX // 9 + 10) + "```"
    widget = MessageWidget(MessageItem("assistant", text))
    qtbot.addWidget(widget)
    assert widget.code_blocks() == []  # the huge-text rule first: its beginning, as plain text
    assert "only its beginning" in widget.view.toPlainText()


def test_theme_switch_recolours_the_code(qtbot, themed) -> None:
    view = ChatView(ChatModel([MessageItem("assistant", ANSWER)]))
    qtbot.addWidget(view)
    view.set_model(view.model)
    widget = view.widget_for(0)
    assert isinstance(widget, MessageWidget)
    light = _colours(widget.code_blocks()[0].view.document())
    themed.set_mode("dark")
    dark = _colours(widget.code_blocks()[0].view.document())
    assert light and dark and light.isdisjoint(dark)


# -- tool rows ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, arguments, expected", [
    ("get_object", {"session_id": "8f3c2a", "ref": "Irène Joliot-Curie"}, 'ref="Irène Joliot-Curie"'),
    ("search_objects", {"session_id": "8f3c2a", "limit": 5, "query": "Curie"}, 'query="Curie"'),
    ("add_relation", {"session_id": "s", "properties": {}, "source": "Marie", "type": "married_to",
                      "target": "Pierre"}, 'source="Marie", type="married_to", target="Pierre"'),
    ("evolve_knowledge", {"session_id": "s", "operations": [{"op": "add_object"}, {"op": "add_object"},
                                                            {"op": "add_relation"}]},
     "3 operations: 2 add_object, 1 add_relation"),
    ("read_text_file", {"max_bytes": 4096, "path": "/home/me/notes.txt"}, 'path="/home/me/notes.txt"'),
    ("mcp:notes:search_notes", {"limit": 3, "options": {"fuzzy": True}, "query": "Curie"}, 'query="Curie"'),
    ("mcp:web:fetch", {"timeout": 10, "url": "https://example.org"}, 'url="https://example.org"'),
    ("mcp:x:tool", {"count": 3, "blob": "hello there"}, 'blob="hello there"'),  # its first text argument
    ("mcp:x:tool", {"count": 3, "flag": True}, "count=3, flag=true"),  # nothing stands out: all of them
])
def test_the_summary_shows_the_telling_argument(qtbot, name: str, arguments: dict, expected: str) -> None:
    assert tool_summary(name, arguments) == expected
    row = ToolCallRow(ToolItem(call_id="c", name=name, display_name=name, source="builtin", arguments=arguments,
                               state=RowState.DONE, duration_ms=3.0))
    qtbot.addWidget(row)
    assert row.summary_label.full_text() == expected
    assert "session_id" not in row.summary_label.toolTip()


def test_rows_have_an_icon_per_source_and_the_state_as_a_chip(qtbot, themed) -> None:
    rows = {}
    for source in ("builtin", "mcp:notes"):
        row = ToolCallRow(ToolItem(call_id=source, name="x", display_name="x", source=source, arguments={},
                                   state=RowState.DONE, duration_ms=728.0))
        qtbot.addWidget(row)
        rows[source] = row
    assert rows["builtin"]._icon_key != rows["mcp:notes"]._icon_key
    assert not rows["builtin"].icon_label.pixmap().isNull()
    chip = rows["builtin"].state_label
    assert chip.text() == "done · 728 ms"
    assert chip.property("cksRole") == "chip" and chip.property("cksTone") == "success"


COMPACT = '{"id":"o1","names":["Marie","Pierre"],"note":"<img src=\\"http://x\\">","n":1.50}'


def test_expanded_json_is_pretty_highlighted_and_copy_copies_the_original(qtbot, themed) -> None:
    item = ToolItem(call_id="c", name="get_object", display_name="Get object", source="builtin",
                    arguments={"session_id": "s", "ref": "Marie"}, state=RowState.DONE, duration_ms=2.0,
                    result=COMPACT)
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    row.resize(600, 40)
    row.show()
    row.set_expanded(True)
    assert row.result_block is not None and row.arguments_block is not None
    shown = row.result_block.view.toPlainText()
    assert shown == json.dumps(json.loads(COMPACT), indent=2, ensure_ascii=False)  # pretty
    assert '<img src=\\"http://x\\">' in shown  # literal
    assert len(_colours(row.result_block.view.document())) >= 2  # keys and values highlighted
    qtbot.mouseClick(row.result_block.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == COMPACT  # exactly what the tool returned ("1.50" too)
    qtbot.mouseClick(row.arguments_block.copy_button, Qt.MouseButton.LeftButton)
    assert json.loads(QGuiApplication.clipboard().text()) == item.arguments


def test_details_are_sized_to_their_content_up_to_a_maximum(qtbot, themed) -> None:
    short = ToolItem(call_id="a", name="get_object", display_name="Get object", source="builtin",
                     arguments={"ref": "Marie"}, state=RowState.DONE, duration_ms=1.0, result="ok")
    long = ToolItem(call_id="b", name="get_object", display_name="Get object", source="builtin",
                    arguments={"ref": "Marie"}, state=RowState.DONE, duration_ms=1.0,
                    result=json.dumps([{"name": f"object {i}"} for i in range(200)]))
    heights = {}
    for item in (short, long):
        row = ToolCallRow(item)
        qtbot.addWidget(row)
        row.resize(600, 40)
        row.show()
        row.set_expanded(True)
        assert row.result_block is not None
        heights[item.call_id] = row.result_block.view.height()
    line = row.result_block.view.fontMetrics().lineSpacing()
    assert heights["a"] < 4 * line  # one line of text: one line tall (plus the margins)
    assert heights["b"] == DETAIL_MAX_HEIGHT  # 800 lines: capped, it scrolls inside


# -- the column -----------------------------------------------------------------------------------------------
def test_nothing_gets_wider_than_a_narrow_chat(qtbot, themed) -> None:
    items = [MessageItem("user", "A long question about Marie Curie and her husband Pierre " * 3),
             MessageItem("assistant", ANSWER),
             ToolItem(call_id="c", name="evolve_knowledge", display_name="Evolve knowledge", source="builtin",
                      arguments={"operations": [{"op": "add_object"}] * 5}, state=RowState.DONE, duration_ms=3.0,
                      change_id="ch", revertable=True)]
    view = ChatView(ChatModel())
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.set_model(ChatModel(items))
    view.show()
    QApplication.processEvents()
    container = view.widget()
    cap = container.layout().contentsMargins()
    assert cap.left() > 12  # a wide chat: the reading column is capped and centred
    view.resize(300, 600)  # then the dock gets narrow
    QApplication.processEvents()
    assert container.width() <= view.viewport().width()
    bubble = view.widget_for(0).bubble
    assert bubble is not None and bubble.width() <= container.width()
