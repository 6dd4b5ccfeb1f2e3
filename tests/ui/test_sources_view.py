"""The inspector's Sources section and the document viewer, in the real window:
each quote with its document and page; a click opens the viewer at the passage, highlighted;
selecting text in the viewer lists what came from it; a new source shows without a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.ui.provenance.viewer import from_qt, to_qt
from tests.documents.files import pdf_bytes
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait

TEXT = "Ada Lovelace met Charles Babbage in London. <b>Babbage</b> designed the 🚂 Analytical Engine."


def _span(text: str, quote: str) -> dict[str, object]:
    start = text.index(quote)
    return {"start": start, "end": start + len(quote), "quote": quote, "alignment": "exact"}


def test_offsets_convert_between_python_and_qt() -> None:
    text = "a🚂b"
    assert [to_qt(text, i) for i in range(4)] == [0, 1, 3, 4]
    assert [from_qt(text, p) for p in (0, 1, 3, 4)] == [0, 1, 2, 3]


@pytest.mark.asyncio
async def test_sources_open_the_viewer_at_the_passage_and_a_selection_shows_its_objects(
        qtbot, home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "letters.pdf").write_bytes(pdf_bytes(["Dear Charles, the Engine", "Yours, Ada in London"]))
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        store = window.services.store
        docs = DocumentStore(store)
        added = docs.add(sid, [read_path(tmp_path / "notes.txt", 10**7), read_path(tmp_path / "letters.pdf", 10**7)])
        txt, pdf = (docs.get(sid, d.id) for d in added.added)
        view = window.graph_view
        arrived = signal_future(window.store_bridge.arrived, lambda e: getattr(e, "session_id", None) == sid)
        ids = store.apply(sid, [
            {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
            {"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$cb"},
            {"op": "add_relation", "source": "$ada", "target": "$cb", "type": "met", "label": "$met"},
            {"op": "add_evidence", "object": "$ada", "document_id": txt.id, **_span(txt.text, "Ada Lovelace")},
            {"op": "add_evidence", "object": "$ada", "document_id": pdf.id, **_span(pdf.text, "Ada in London")},
            {"op": "add_evidence", "object": "$cb", "document_id": txt.id, **_span(txt.text, "<b>Babbage</b>")},
            {"op": "add_evidence", "relation": "$met", "document_id": txt.id,
             **_span(txt.text, "Ada Lovelace met Charles Babbage")},
        ], "extraction").created
        await wait(arrived)
        await wait(view.inspect(ids["$ada"]))
        inspector = view.inspector
        rows = [inspector.sources.list.item(i).text() for i in range(inspector.sources.list.count())]
        assert rows == ["“Ada Lovelace” — notes.txt", "“Ada in London” — letters.pdf, p. 2",
                        "met → Charles Babbage: “Ada Lovelace met Charles Babbage” — notes.txt"]
        assert inspector.sources_label.text() == "Sources (3)"

        # a click on the PDF's quote opens the viewer at page 2, the passage highlighted
        lst = inspector.sources.list
        lst.scrollToItem(lst.item(1))
        opened = signal_future(inspector.viewerOpened)
        QTest.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=lst.visualItemRect(lst.item(1)).center())
        (viewer,) = await wait(opened)
        assert viewer.isVisible() and viewer.document.id == pdf.id
        assert viewer.highlighted_text() == "Ada in London" and len(viewer.text.extraSelections()) == 1
        assert viewer.where.text().startswith("Page 2, characters")
        assert viewer.title.text() == "letters.pdf (application/pdf, 2 pages)"

        # the text document: selecting "Charles Babbage" lists "met"; markup stays text
        reopened = signal_future(viewer.opened)
        QTest.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=lst.visualItemRect(lst.item(0)).center())
        await wait(reopened)
        assert viewer.text.toPlainText() == TEXT
        shown = signal_future(viewer.factsShown)
        start = TEXT.index("Charles")
        viewer.select(start, start + len("Charles Babbage"))
        (facts,) = await wait(shown)
        assert facts.objects == [] and [r.type for r in facts.relations] == ["met"]  # only "met" cites it
        assert viewer.facts_label.text() == "From the selected text: 1 relation."
        shown = signal_future(viewer.factsShown)
        viewer.select(TEXT.index("<b>"), TEXT.index("designed"))
        (facts,) = await wait(shown)
        assert [o.name for o in facts.objects] == ["Charles Babbage"]
        assert viewer.facts.item(0).text() == "Charles Babbage (Person)"

        # double-clicking it shows Charles in the inspector
        loaded = signal_future(inspector.loaded)
        item = viewer.facts.item(0)
        viewer.facts.itemDoubleClicked.emit(item)
        await wait(loaded)
        assert inspector.object is not None and inspector.object.name == "Charles Babbage"

        # a source added later (an evidence-only change) shows without touching the object
        reloaded = signal_future(inspector.loaded)
        store.apply(sid, [{"op": "add_evidence", "object": ids["$cb"], "document_id": pdf.id,
                           **_span(pdf.text, "Dear Charles")}], "extraction")
        await wait(reloaded)
        assert inspector.sources_label.text() == "Sources (3)"  # its own two and the "met" relation's
        assert any("Dear Charles" in inspector.sources.list.item(i).text()
                   for i in range(inspector.sources.list.count()))


def test_a_fact_without_document_sources_says_who_wrote_it(qtbot) -> None:
    from cks_desktop.provenance.model import Authorship
    from cks_desktop.ui.provenance.sources_view import ObjectSources, SourcesView

    view = SourcesView()
    qtbot.addWidget(view)
    view.show_sources(ObjectSources([], [Authorship("c_1", "2026-01-01T00:00:00Z", "person", "user", "adds 1 object"),
                                         Authorship("c_2", "2026-01-01T00:00:01Z", "chat", "model", "changes 1 property")]))
    assert view.list.item(0).text() == "No document sources; written by chat, person."
    assert view.count() == 0


@pytest.mark.asyncio
async def test_mark_as_checked_records_the_review_as_one_undoable_change(qtbot, home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        store = window.services.store
        docs = DocumentStore(store)
        txt = docs.get(sid, docs.add(sid, [read_path(tmp_path / "notes.txt", 10**7)]).added[0].id)
        view = window.graph_view
        arrived = signal_future(window.store_bridge.arrived, lambda e: getattr(e, "session_id", None) == sid)
        ada = store.apply(sid, [
            {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
            {"op": "add_evidence", "object": "$ada", "document_id": txt.id, "review": "pending",
             **_span(txt.text, "Ada Lovelace")}], "extraction").created["$ada"]
        await wait(arrived)
        await wait(view.inspect(ada))
        inspector = view.inspector
        lst = inspector.sources.list
        assert lst.item(0).text() == "“Ada Lovelace” — notes.txt [pending]"

        # the row's menu: every action has an icon and a tooltip; "Mark as checked" writes one change
        menu = inspector.sources.menu_for(lst.item(0))
        assert menu is not None and all(not a.icon().isNull() and a.toolTip() for a in menu.actions())
        (mark,) = [a for a in menu.actions() if a.objectName() == "markSourceChecked"]
        reloaded = signal_future(inspector.loaded, lambda: lst.item(0).text().endswith("[checked]"))
        mark.trigger()
        await wait(reloaded)
        (source,) = [r.source for r in inspector.sources_data.rows]
        assert source.evidence.review == "accepted"
        assert store.list_changes(sid)[0].summary == "marks 1 source as reviewed"
        again = inspector.sources.menu_for(lst.item(0))
        assert again is not None and not [a for a in again.actions() if a.objectName() == "markSourceChecked"]

        # undo (the editor's stack, like every hand edit) puts it back to "pending"
        reloaded = signal_future(inspector.loaded, lambda: lst.item(0).text().endswith("[pending]"))
        assert (await view.editor.undo()).ok
        await wait(reloaded)
