"""The Documents panel and the chat's paperclip, in the real window: the list follows
the session's documents; the paperclip adds through the real file dialog; Open shows the viewer;
Remove asks, naming what would lose its last source, and keeps or removes it as answered;
Extract knowledge is a hook the extraction pipeline connects."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.ui.provenance.viewer import DocumentViewer
from tests.documents.files import pdf_bytes
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_graph_io import _menu, _type_file

TEXT = "Ada Lovelace met Charles Babbage in London."


def _rows(panel) -> list[list[str]]:  # type: ignore[no-untyped-def]
    t = panel.table
    return [[t.item(r, c).text() for c in range(t.columnCount())][:4] for r in range(t.rowCount())]


def _button(box: QMessageBox, text: str):  # type: ignore[no-untyped-def]
    found = [b for b in box.buttons() if b.text() == text]
    assert found, [b.text() for b in box.buttons()]
    return found[0]


@pytest.mark.asyncio
async def test_panel_lists_opens_and_removes_documents_and_the_paperclip_adds_them(qtbot, home: Path,
                                                                                  tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(TEXT)
    (tmp_path / "letters.pdf").write_bytes(pdf_bytes(["Dear Charles", "Yours, Ada"]))
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        store = window.services.store
        panel = window.documents_panel

        # reachable from the View menu, with an icon and a tooltip; a tab beside the chat
        toggle = next(a for a in _menu(window, "View").actions() if a.objectName() == "toggleDocumentsAction")
        assert not toggle.icon().isNull() and toggle.toolTip() and not window.documents_dock.isVisible()
        toggle.trigger()
        assert window.documents_dock.isVisible() and panel.empty.isVisible()

        # the paperclip in the chat input opens the add flow (the real file dialog)
        clip = window.chat_panel.composer.attach_documents_button
        assert not clip.icon().isNull() and "documents" in clip.toolTip()
        opened = signal_future(window.documents.dialogOpened)
        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 1)
        clip.click()
        (files,) = await wait(opened)
        assert isinstance(files, QFileDialog)
        _type_file(files, tmp_path / "letters.pdf")
        files.accept()
        await wait(reloaded)
        assert _rows(panel) == [["letters.pdf", "PDF", "2", panel.table.item(0, 3).text()]]
        assert panel.table.item(0, 3).text().endswith((" B", " KB"))

        # added elsewhere (the store, as a CLI would): the list follows
        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 2)
        docs = DocumentStore(store)
        txt = docs.get(sid, docs.add(sid, [read_path(tmp_path / "notes.txt", 10**6)]).added[0].id)
        await wait(reloaded)
        assert [r[:3] for r in _rows(panel)] == [["letters.pdf", "PDF", "2"], ["notes.txt", "Text", "—"]]

        # Open shows the document in the viewer
        assert panel.select("notes.txt")
        panel.open_button.click()
        viewer = window.findChild(DocumentViewer, "documentViewer")
        assert viewer is not None
        await wait(signal_future(viewer.opened))
        assert viewer.text.toPlainText() == TEXT and viewer.isVisible()

        # facts cited only by notes.txt: Remove asks, Keep them keeps them without a source
        start = TEXT.index("Charles Babbage")
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$c"},
                          {"op": "add_evidence", "object": "$c", "document_id": txt.id, "start": start,
                           "end": start + 15, "quote": "Charles Babbage", "alignment": "exact"}], "extraction")
        assert panel.select("notes.txt")
        asked = signal_future(panel.dialogOpened)
        removed = signal_future(panel.removed)
        panel.remove_button.click()
        (box,) = await wait(asked)
        assert "1 object (Charles Babbage) would have no source left" in box.informativeText()
        _button(box, "Keep them").click()
        (removal,) = await wait(removed)
        assert not removal.orphans_removed and store.counts(sid)["objects"] == 1
        assert panel.status.text() == ("Removed notes.txt and its 1 source. 1 object (Charles Babbage) no longer "
                                       "has a source (kept).")

        # a document nothing cites: a plain question; Esc (and Enter: the default) keeps it
        assert panel.select("letters.pdf")
        asked = signal_future(panel.dialogOpened)
        task = window.tasks.spawn(panel.remove_selected())
        (box,) = await wait(asked)
        assert box.informativeText() == "Nothing in the graph cites it."
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
        qtbot.keyClick(box, Qt.Key.Key_Escape)
        assert await wait(task) is None and len(docs.list_documents(sid)) == 1

        # again, with a source of its own, and "Remove them too"
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada", "label": "$a"},
                          {"op": "add_evidence", "object": "$a", "document_id": docs.list_documents(sid)[0].id,
                           "quote": "Yours, Ada", "alignment": "unaligned"}], "extraction")
        asked = signal_future(panel.dialogOpened)
        task = window.tasks.spawn(panel.remove_selected())
        (box,) = await wait(asked)
        _button(box, "Remove them too").click()
        removal = await wait(task)
        assert removal.orphans_removed and [o.name for o in removal.orphans.objects] == ["Ada"]
        assert store.counts(sid)["objects"] == 1 and docs.list_documents(sid) == []


@pytest.mark.asyncio
async def test_extract_knowledge_is_a_hook_for_the_extraction_pipeline(qtbot, home: Path, tmp_path: Path) -> None:
    from cks_desktop.ui.documents_panel import DocumentsPanel

    (tmp_path / "notes.txt").write_text(TEXT)
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        panel = DocumentsPanel(window.services.documents, window.tasks.spawn)  # one nothing is connected to yet
        qtbot.addWidget(panel)
        panel.set_session(sid)
        doc = DocumentStore(window.services.store).add(sid, [read_path(tmp_path / "notes.txt", 10**6)]).added[0]
        assert panel.table.rowCount() == 0  # hidden: it reads nothing until it is shown
        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 1)
        panel.show()
        await wait(reloaded)
        assert not panel.extract_button.isEnabled() and "not available" in panel.extract_button.toolTip()
        heard: list[tuple[str, str]] = []
        panel.connect_extractor(lambda s, d: heard.append((s, d)))
        assert panel.extract_button.isEnabled()
        panel.extract_button.click()
        assert heard == [(sid, doc.id)]


@pytest.mark.asyncio
async def test_the_window_export_and_import_carry_documents_and_sources(qtbot, home: Path, tmp_path: Path) -> None:
    """File → Export graph… (json) writes the documents and their sources; File → Import graph…
    of that file into another session brings both back (the preview dialog is the real one)."""
    from cks_desktop.provenance.queries import sources_of
    from cks_desktop.ui.graph_io.dialog import ImportPreviewDialog

    (tmp_path / "notes.txt").write_text(TEXT)
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        store = window.services.store
        doc = DocumentStore(store).add(sid, [read_path(tmp_path / "notes.txt", 10**6)]).added[0]
        start = TEXT.index("Charles Babbage")
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$c"},
                          {"op": "add_evidence", "object": "$c", "document_id": doc.id, "start": start,
                           "end": start + 15, "quote": "Charles Babbage", "alignment": "exact"}], "extraction")
        out = await wait(window.graph_io.export_file(tmp_path / "graph.json", "json"))
        assert out is not None
        window.sidebar.create_session()
        other = window.current_session
        assert other != sid
        opened = signal_future(window.graph_io.dialogOpened)
        done = signal_future(window.graph_io.imported)
        task = window.tasks.spawn(window.graph_io.import_file(tmp_path / "graph.json", "json"))
        (box,) = await wait(opened)
        assert isinstance(box, ImportPreviewDialog)
        box.import_button.click()
        await wait(done)
        await wait(task)
        assert [d.name for d in DocumentStore(store).list_documents(other)] == ["notes.txt"]
        charles = store.resolve(other, "Charles Babbage")
        assert [(s.evidence.quote, s.document_name) for s in sources_of(store, other, "object", charles.id)] == [
            ("Charles Babbage", "notes.txt")]


@pytest.mark.asyncio
async def test_the_panel_follows_documents_added_and_removed_by_another_process(qtbot, home: Path,
                                                                               tmp_path: Path) -> None:
    """`documents add|remove` from a terminal (a real second process on the same data folder)
    shows in the open window's panel through the change feed; no sleeps, bounded waits."""
    from tests.ui.test_live_changes import written_elsewhere

    (tmp_path / "notes.txt").write_text(TEXT)
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        panel = window.documents_panel
        window.documents_dock.show()
        await wait(signal_future(panel.reloaded))
        assert panel.table.rowCount() == 0

        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 1)
        proc, _ = await written_elsewhere(home, "documents", "add", "--session", sid, str(tmp_path / "notes.txt"))
        assert proc.returncode == 0, proc.stderr
        await wait(reloaded, 15)
        assert _rows(panel)[0][:2] == ["notes.txt", "Text"]

        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 0)
        proc, _ = await written_elsewhere(home, "documents", "remove", "--session", sid, "notes.txt")
        assert proc.returncode == 0, proc.stderr
        await wait(reloaded, 15)
        assert panel.empty.isVisible()
