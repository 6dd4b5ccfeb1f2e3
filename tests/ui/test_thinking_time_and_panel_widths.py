"""The thinking time of an answer, and panels that keep their words at the dock's width, held in place.

A stream cut off while the model still thought says how long the person waited, and its empty
answer leaves no gap; the Documents panel keeps the Name readable at the chat dock's width; the
source viewer has a Close button; the graph's empty-state card stacks its buttons when it is
narrow rather than cutting "Add an object (A)"; the MCP editor's two forms share one label column.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFormLayout, QPushButton

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm.events import ReasoningDelta, Usage
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.graph.empty import EmptyState
from cks_desktop.ui.provenance.viewer import DocumentViewer
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.tasks import TaskTracker
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_settings import services  # noqa: F401 - the fixture


def test_a_stream_cut_while_thinking_counts_until_the_cut() -> None:
    ticks = iter([0.0, 1.0, 1.2, 1.3, 6.3])  # the turn starts, two pieces, a usage event, the cut 5 s later
    assembler = StreamAssembler(strict=True, clock=lambda: next(ticks))
    assembler.feed_all([ReasoningDelta("Polonium was ", origin="x"), ReasoningDelta("named after Poland.", origin="x"),
                        Usage(10, 0)])
    assert [r.seconds for r in assembler.reasoning] == [1.2]  # to its last piece while it streams
    (cut,) = assembler.cut()  # Stop, a timeout or a failure: the person watched "Thinking…" until now
    assert cut.seconds == 6.3 and cut.text == "Polonium was named after Poland."


def test_a_finished_answer_keeps_its_thinking_time() -> None:
    from cks_desktop.llm.events import Finish, TextDelta

    ticks = iter([0.0, 1.0, 2.0, 9.0])
    assembler = StreamAssembler(strict=True, clock=lambda: next(ticks))
    assembler.feed_all([ReasoningDelta("a", origin="x"), TextDelta("Hi"), Finish("stop")])
    assert [r.seconds for r in assembler.cut()] == [1.0]  # text came after it: nothing to extend


def test_an_answer_of_only_thinking_leaves_no_blank_gap(qtbot) -> None:
    item = MessageItem("assistant", "", reasoning="Polonium was named after Poland.", reasoning_seconds=5.2)
    widget = MessageWidget(item)
    qtbot.addWidget(widget)
    widget.resize(330, 200)
    widget.show()
    widget.refresh()
    QApplication.processEvents()
    assert widget.reasoning_view is not None and widget.reasoning_view.headline == "Thought for 5 s"
    assert not widget.view.isVisible()
    thought_bottom = widget.reasoning_view.mapTo(widget, widget.reasoning_view.rect().bottomLeft()).y()
    actions_top = widget.actions_bar.mapTo(widget, widget.actions_bar.rect().topLeft()).y()
    assert actions_top - thought_bottom <= 12, (thought_bottom, actions_top)
    item.text = "It was found in 1898."
    widget.refresh()
    assert widget.view.isVisible()


@pytest.mark.asyncio
async def test_documents_name_column_stays_readable_at_the_dock_width(qtbot, home: Path, tmp_path: Path) -> None:
    name = "curie-radium-notebook-1902.txt"
    (tmp_path / name).write_text("Marie Curie isolated radium chloride in 1902.")
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        panel = window.documents_panel
        window.documents_dock.show()
        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 1)
        docs = DocumentStore(window.services.store)
        docs.add(sid, [read_path(tmp_path / name, 10**6)])
        await wait(reloaded)
        QApplication.processEvents()
        table = panel.table
        cell = table.item(0, 0)
        assert name in cell.toolTip()  # the full name, escaped (plain_tooltip)
        assert table.columnWidth(0) >= table.fontMetrics().horizontalAdvance(name), \
            [(table.isColumnHidden(c), table.columnWidth(c)) for c in range(table.columnCount())]
        assert panel.width() < 420 and table.isColumnHidden(4), panel.width()  # Added gave way first
        window.documents_dock.setFloating(True)
        window.documents_dock.resize(900, 400)
        qtbot.waitUntil(lambda: not any(table.isColumnHidden(c) for c in range(table.columnCount())), timeout=3000)


def test_the_source_viewer_has_a_close_button(qtbot) -> None:
    viewer = DocumentViewer(None, lambda coro: coro.close())
    qtbot.addWidget(viewer)
    viewer.show()
    box = viewer.findChild(QDialogButtonBox)
    assert box is not None
    close = box.button(QDialogButtonBox.StandardButton.Close)
    assert isinstance(close, QPushButton) and close.isVisible() and close.toolTip()
    close.click()
    qtbot.waitUntil(lambda: not viewer.isVisible(), timeout=2000)


@pytest.mark.parametrize("room", [260, 420, 900])
def test_the_empty_graph_card_never_cuts_its_buttons(qtbot, room: int) -> None:
    card = EmptyState()
    qtbot.addWidget(card)
    card.show()
    card.place(room, 600, 0)
    QApplication.processEvents()
    for button in (card.add_button, card.import_button, card.ask_button):
        needed = button.fontMetrics().horizontalAdvance(button.text())
        assert button.width() >= needed, (button.text(), button.width(), needed)
        assert button.geometry().right() <= card.width()
    assert card.geometry().right() <= room


def test_the_mcp_editors_forms_share_one_label_column(qtbot, services) -> None:  # noqa: F811
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.resize(720, 700)
    editor.show()
    for transport in ("http", "stdio"):
        editor.transport_box.setCurrentIndex(editor.transport_box.findData(transport))
        QApplication.processEvents()
        page = editor.url_edit if transport == "http" else editor.command_edit
        lefts = {field.mapTo(editor, field.rect().topLeft()).x() for field in (editor.name_edit, page)}
        assert len(lefts) == 1, (transport, lefts)
    assert len({form.labelAlignment() for form in editor._label_forms}) == 1
    assert all(isinstance(form, QFormLayout) for form in editor._label_forms)
