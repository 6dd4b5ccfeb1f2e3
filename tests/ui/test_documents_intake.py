"""File → Add documents… and a drop onto the real window. The file dialog is the
real one, opened with ``open()``; waits follow signals, bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from cks_desktop.documents.store import DocumentStore
from tests.documents.files import docx_file, pdf_bytes, scanned_pdf
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_graph_io import _menu, _type_file


@pytest.mark.asyncio
async def test_file_menu_adds_documents_through_the_dialog(qtbot, home, tmp_path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(pdf_bytes(["Ada", "Bob"]))
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        intake = window.documents
        assert intake.action in _menu(window, "File").actions()
        opened = signal_future(intake.dialogOpened)
        intake.action.trigger()
        (files,) = await wait(opened)
        assert isinstance(files, QFileDialog) and files.isModal()
        done = signal_future(intake.added)
        _type_file(files, paper)
        files.accept()
        result, refused = await wait(done)
        assert [d.name for d in result.added] == ["paper.pdf"] and refused == []
        assert DocumentStore(window.services.store).get(sid, "paper.pdf").page_starts == (0, 5)


@pytest.mark.asyncio
async def test_dropping_files_adds_the_readable_and_names_the_rest(qtbot, home, tmp_path) -> None:
    word = docx_file(tmp_path / "letter.docx", ["Dear Ada"])
    scan = scanned_pdf(tmp_path / "scan.pdf")
    async with open_window(home) as window:
        window.sidebar.create_session()
        sid = window.current_session
        intake = window.documents
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(word)), QUrl.fromLocalFile(str(scan))])
        done = signal_future(intake.added)
        opened = signal_future(intake.dialogOpened)
        enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(window, enter)  # a real drag enters before it drops
        assert enter.isAccepted()
        drop = QDropEvent(QPointF(QPoint(20, 20)), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                          Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(window, drop)
        assert drop.isAccepted()
        result, refused = await wait(done)
        assert [d.name for d in result.added] == ["letter.docx"]
        assert len(refused) == 1 and "scan.pdf has no text layer" in refused[0]
        (box,) = await wait(opened)
        assert isinstance(box, QMessageBox) and "scan.pdf has no text layer" in box.informativeText()
        box.accept()
        assert [d.name for d in DocumentStore(window.services.store).list_documents(sid)] == ["letter.docx"]
