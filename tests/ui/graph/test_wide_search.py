"""The graph's search field finds objects, document passages and chat messages: arrows choose,
Enter opens (the object in the graph, the document at the passage, the chat at the message), Esc
closes the list."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message
from cks_desktop.tools.registry import ToolRegistry
from tests.retrieval.conftest import DISTRACTORS, add_text
from tests.ui.graph.conftest import until
from tests.ui.graph.test_view import open_view, screen_pos

PASSAGE = "The quince orchard behind the mill was planted by Oskar Lind in 1911."


@pytest.fixture
def session(store: GraphStore) -> str:
    sid = store.create_session("orchard").id
    add_text(store, sid, "orchard.txt", PASSAGE)
    for i, t in enumerate(DISTRACTORS):
        add_text(store, sid, f"d{i}.txt", t)
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Oskar Lind",
                       "properties": {"description": "Miller who planted the quince orchard."}},
                      {"op": "add_object", "type": "Place", "name": "Mill"}], "test")
    TranscriptStore.for_store(store).append(sid, [Message.user("How big was the quince harvest in 1912?")])
    return sid


def _rows(view: Any) -> list[str]:
    return [view.results.item(i).text() for i in range(view.results.count())]


@pytest.mark.asyncio
async def test_the_search_field_lists_objects_passages_and_messages_and_opens_them(
        store: GraphStore, registry: ToolRegistry, session: str) -> None:
    async with open_view(store, registry, session) as view:
        field = view.search.field
        field.setFocus()
        opened_documents: list[tuple[str, str, int, int]] = []
        opened_messages: list[str] = []
        view.documentRequested.connect(lambda *a: opened_documents.append(a))
        view.messageRequested.connect(opened_messages.append)
        QTest.keyClicks(field, "quince")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        rows = _rows(view)
        kinds = [r.split(" · ")[0] for r in rows]
        assert kinds[0] == "Object" and "Oskar Lind (Person)" in rows[0]
        assert "Passage" in kinds and "Message" in kinds
        assert all("\n" not in r for r in rows)
        # Down to the passage, Enter: the document at the passage's span
        for _ in range(kinds.index("Passage")):
            QTest.keyClick(field, Qt.Key.Key_Down)
        QTest.keyClick(field, Qt.Key.Key_Return)
        assert not view.results.isVisible()
        ((sid, doc_id, start, end),) = opened_documents
        assert sid == session and DocumentStore(store).get(sid, doc_id).text[start:end] == PASSAGE
        # a new search, Up from below the list's end stays on the last row; Enter on a message
        QTest.keyClicks(field, " harvest")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        kinds = [r.split(" · ")[0] for r in _rows(view)]
        for _ in range(len(kinds) + 3):
            QTest.keyClick(field, Qt.Key.Key_Down)
        assert view.results.currentRow() == len(kinds) - 1
        while _rows(view)[view.results.currentRow()].split(" · ")[0] != "Message":
            QTest.keyClick(field, Qt.Key.Key_Up)
        QTest.keyClick(field, Qt.Key.Key_Enter)
        assert opened_messages and "quince harvest in 1912" in opened_messages[0]
        # Esc closes the list and keeps the words; a second Esc clears the field
        QTest.keyClicks(field, "s")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        QTest.keyClick(field, Qt.Key.Key_Escape)
        assert not view.results.isVisible() and field.text() == "quince harvests"
        QTest.keyClick(field, Qt.Key.Key_Escape)
        assert field.text() == ""
        # an object row selects the object in the graph
        QTest.keyClicks(field, "Oskar Lind")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        QTest.keyClick(field, Qt.Key.Key_Return)
        oskar = store.resolve(session, "Oskar Lind")
        assert view.state.selection == [oskar.id]
        # Shift+Enter still steps through the graph's matches while the list shows; a session switch closes it
        field.setText("quince")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        QTest.keyClick(field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        assert view.results.isVisible()
        await view.set_session(None)
        assert not view.results.isVisible()


@pytest.mark.asyncio
async def test_indexing_for_the_search_is_shown_in_the_status_line(
        store: GraphStore, registry: ToolRegistry, session: str) -> None:
    async with open_view(store, registry, session) as view:
        said: list[str] = []
        view._indexing.connect(said.append)
        view.search.field.setText("quince")
        await until(view.results.filled, lambda: view.results.isVisible(), 30)
        total = 1 + len(DISTRACTORS)
        assert said[0].startswith("Indexing ") and said[0].endswith(f"for search: document 1 of {total}…")
        assert len(said) == total


LONG_PASSAGE = "The quince orchard behind the old water mill at Kellby was planted by Oskar Lind in the spring of 1911."


@pytest.mark.asyncio
async def test_each_result_shows_its_whole_text_in_a_narrow_graph_view(store: GraphStore, registry: ToolRegistry,
                                                                        qapp) -> None:
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QStyle, QStyleOptionViewItem

    from cks_desktop.ui import theme

    theme.install(qapp, "light")  # the theme pads each entry: the padding must fit too
    sid = store.create_session("orchard").id
    add_text(store, sid, "kellby-orchard-notes.txt", LONG_PASSAGE)
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Oskar Lind",
                       "properties": {"description": "Miller who planted the quince orchard."}},
                      {"op": "add_object", "type": "Place", "name": "Mill"}], "test")
    try:
        async with open_view(store, registry, sid) as view:
            view.resize(540, 640)  # the graph's room in a 1024 px window
            view.search.field.setText("quince orchard")
            await until(view.results.filled, lambda: view.results.isVisible(), 30)
            results = view.results
            assert results.width() <= view.width() - 16
            assert results.geometry().right() < view.width()
            style, fm = results.style(), results.fontMetrics()
            texts = []
            for i in range(results.count()):
                item = results.item(i)
                rect = results.visualItemRect(item)
                option = QStyleOptionViewItem()
                option.initFrom(results)
                option.rect = QRect(rect)
                text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, results)
                margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, option, results) + 1
                width = text.width() - 2 * margin
                needed = fm.boundingRect(QRect(0, 0, width, 10_000), Qt.TextFlag.TextWordWrap, item.text())
                assert needed.width() <= width and needed.height() <= rect.height(), (item.text(), needed, rect)
                assert results.viewport().rect().contains(rect), (item.text(), rect)  # every row in view
                texts.append(item.text())
                if fm.horizontalAdvance(item.text()) <= width:
                    assert needed.height() <= fm.height() + 1  # a short entry stays on one line
            passage = next(t for t in texts if t.startswith("Passage"))
            assert "…" not in passage and passage.endswith("Oskar Lind in the spring of 1911.")
            assert fm.horizontalAdvance(passage) > results.viewport().width()  # it did need a second line
            oskar = store.resolve(sid, "Oskar Lind").id
            assert view.state.search_matches == [oskar]  # the graph's match, centred: not under the list
            at = view.canvas.mapTo(view, screen_pos(view, oskar).toPoint())
            assert not results.geometry().contains(at), (at, results.geometry())
            vp = view.canvas.viewport  # a match the list covers (centred while the list was shorter)...
            inside = view.canvas.mapFrom(view, results.geometry().center())
            vp.cy += (screen_pos(view, oskar).y() - inside.y()) / vp.scale
            vp.cx += (screen_pos(view, oskar).x() - inside.x()) / vp.scale
            assert results.geometry().contains(view.canvas.mapTo(view, screen_pos(view, oskar).toPoint()))
            view._place_results()  # ...moves below it when the list is placed
            at = view.canvas.mapTo(view, screen_pos(view, oskar).toPoint())
            assert not results.geometry().contains(at) and view.canvas.rect().contains(screen_pos(view, oskar).toPoint())
    finally:
        theme.uninstall()
