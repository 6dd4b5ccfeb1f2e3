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
from tests.ui.graph.test_view import open_view

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
