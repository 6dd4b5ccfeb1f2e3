"""The chat never clips its own content at any dock width: from 280 to 900 pixels, an answer with
a wide table and a long code line, a tool card with its state chip, the Copy label and the usage
line all stay inside the chat's viewport; what is wider than the column (the table, the code)
scrolls sideways inside its own block instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QTextEdit, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.chat.chat_view import ChatView
from cks_desktop.ui.chat.model import ChatModel, MessageItem, RowState, ToolItem

WIDE_TABLE = ("| " + " | ".join(f"column {i} heading" for i in range(9)) + " |\n"
              "|" + "---|" * 9 + "\n| " + " | ".join(f"value_{i}_without_spaces" for i in range(9)) + " |\n")
LONG_LINE = "x = " + " + ".join(f'"segment{i}"' for i in range(40))
ANSWER = (f"Here is the comparison:\n\n{WIDE_TABLE}\nAnd the code:\n\n```python\n{LONG_LINE}\n```\n\n"
          "Marie Curie discovered polonium and radium.")


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[theme.ThemeManager]:
    manager = theme.install(qapp, "light")
    yield manager
    theme.uninstall()


def _inside_a_scroller(widget: QWidget, stop: QWidget) -> bool:
    """Whether ``widget`` sits in a scroll area's viewport below ``stop`` (it may be wider: it scrolls)."""
    node = widget.parentWidget()
    while node is not None and node is not stop:
        if isinstance(node, QAbstractScrollArea) and node.viewport().isAncestorOf(widget):
            return True
        node = node.parentWidget()
    return False


def _clipped(view: ChatView) -> list[str]:
    viewport = view.viewport()
    bounds = QRect(QPoint(0, 0), viewport.size())
    out = []
    for child in view.widget().findChildren(QWidget):
        if not child.isVisible() or _inside_a_scroller(child, view):
            continue
        top_left = child.mapTo(viewport, QPoint(0, 0))
        right = top_left.x() + child.width()
        if top_left.x() < bounds.left() or right > bounds.right() + 1:
            out.append(f"{type(child).__name__}#{child.objectName()} x={top_left.x()} right={right} "
                       f"viewport={viewport.width()}")
    return out


def test_nothing_in_the_chat_is_cut_at_any_dock_width(qtbot, themed) -> None:
    items = [MessageItem("user", "Compare the Curies' discoveries in a table, with the code to list them."),
             MessageItem("assistant", ANSWER, usage_line="12,345 in · 678 out · $0.0421", last_answer=True),
             ToolItem(call_id="c", name="evolve_knowledge", display_name="Evolve knowledge", source="builtin",
                      arguments={"operations": [{"op": "add_object", "name": "Polonium"}] * 4},
                      state=RowState.DONE, duration_ms=12.0, change_id="ch", revertable=True)]
    view = ChatView(ChatModel())
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.set_model(ChatModel(items))
    view.show()
    for width in range(280, 901, 62):
        view.resize(width, 700)
        QApplication.processEvents()
        QApplication.processEvents()
        assert not _clipped(view), (width, _clipped(view))
        assert view.horizontalScrollBar().maximum() == 0 or not view.horizontalScrollBar().isVisible(), width
        answer = view.widget_for(1)
        for block in answer.code_blocks():
            assert block.width() <= view.viewport().width(), width
        for edit in view.widget().findChildren(QTextEdit):  # the text: wrapped to its width, or scrolling
            if edit.isVisible():
                content = edit.document().size().width()
                assert content <= edit.viewport().width() + 1 or edit.horizontalScrollBar().maximum() > 0, (
                    width, edit.toPlainText()[:60], content, edit.viewport().width())


def test_the_checked_pieces_are_really_there(qtbot, themed) -> None:
    """The pieces the width sweep checks are on screen at 280 px: the usage line, Copy, the tool card,
    and the wide table or the long line scroll inside their block (wider content than the block)."""
    from PySide6.QtWidgets import QAbstractButton, QLabel

    items = [MessageItem("assistant", ANSWER, usage_line="12,345 in · 678 out · $0.0421", last_answer=True),
             ToolItem(call_id="c", name="evolve_knowledge", display_name="Evolve knowledge", source="builtin",
                      arguments={}, state=RowState.DONE, duration_ms=12.0)]
    view = ChatView(ChatModel())
    qtbot.addWidget(view)
    view.resize(280, 700)
    view.set_model(ChatModel(items))
    view.show()
    QApplication.processEvents()
    shown = [w for w in view.widget().findChildren(QWidget) if w.isVisible()]
    texts = [w.text() for w in shown if isinstance(w, (QLabel, QAbstractButton))]
    assert any("12,345 in" in t for t in texts), texts
    assert any("Copy" in t for t in texts), texts
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    assert any(isinstance(w, ToolCallRow) for w in shown)
    edits = [w for w in shown if isinstance(w, QTextEdit)]
    assert edits
    for edit in edits:  # its text fits its width (wrapped), or it scrolls sideways: never cut
        content = edit.document().size().width()
        assert content <= edit.viewport().width() + 1 or edit.horizontalScrollBar().maximum() > 0, (
            edit.objectName(), content, edit.viewport().width(), edit.toPlainText()[:60])


def test_the_session_total_is_never_cut_at_any_dock_width(qtbot, themed) -> None:
    """The session's total under the chat (the panel's line, not an answer's) stays whole inside the
    panel at every width the panel can take (the composer sets its narrowest) up to 900 pixels: it
    wraps rather than widening the panel or running past its edge."""
    from PySide6.QtGui import QFontMetrics

    from cks_desktop.agent.usage import Tokens
    from cks_desktop.ui.chat.controller import ChatController
    from cks_desktop.ui.chat.panel import ChatPanel
    from cks_desktop.ui.chat.usage_marks import session_line, session_tip

    total = Tokens(input_tokens=12_345_678, output_tokens=987_654, cached_tokens=4_321_000,
                   reasoning_tokens=55_555, turns=321, cost=1234.5678)
    controller = ChatController("s1", assistant=None, approver=None)  # type: ignore[arg-type]
    controller.loaded = True
    controller.model.reset([MessageItem("user", "Hello"), MessageItem("assistant", "Hi.", last_answer=True)])
    controller.usage_line, controller.usage_tip = session_line(total, 42), session_tip(total, 42)
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    panel.set_controller(controller)
    label = panel.usage_label
    assert label.isVisible() and label.text().startswith("Session:")
    assert label.minimumSizeHint().width() <= 280  # it never is what keeps the panel wide
    for width in range(panel.minimumSizeHint().width(), 901, 62):
        panel.resize(width, 700)
        QApplication.processEvents()
        QApplication.processEvents()
        assert panel.width() == width, (width, panel.width())
        left = label.mapTo(panel, QPoint(0, 0)).x()
        assert left >= 0 and left + label.width() <= panel.width(), (width, left, label.width())
        inner = label.contentsRect()
        metrics = QFontMetrics(label.font())
        drawn = metrics.boundingRect(inner, int(label.alignment()) | int(Qt.TextFlag.TextWordWrap),
                                     label.text())
        assert drawn.width() <= inner.width() and drawn.height() <= inner.height() + 1, (
            width, drawn, inner, label.text())
