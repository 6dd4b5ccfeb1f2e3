"""File → Add documents… and dropping files onto the window: documents into the current session.

Reading runs on a worker thread (a PDF of thousands of pages takes seconds; the event loop never
waits on it); a read that lasts shows a progress dialog ("Reading big.pdf: page 1,200 of 3,000")
whose Cancel stops it with nothing added (``documents/progress.py``); the store writes all readable files of one request in one transaction. Each file
that cannot be read is named with its one sentence in a message box opened with ``open()``
(never ``exec()``); the others are added. The file dialog is window-modal, also ``open()``ed.
The flow itself is the documents use case (``runtime/documents.py``); its filter lists the formats
the reader registry has.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QDropEvent, QKeySequence
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel, QMenu, QMessageBox, QProgressDialog

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label, plain_message_box
from cks_desktop.ui.text import plain_tooltip
from cks_desktop.ui.dialogs import run_dialog

if TYPE_CHECKING:
    from cks_desktop.runtime.documents import AddOutcome
    from cks_desktop.ui.main_window import MainWindow


class DocumentIntake(QObject):
    """The window's way in for documents; one per window."""

    dialogOpened = Signal(object)  # the file dialog or the problems box, once open
    progressShown = Signal(object)  # the progress dialog of a read that lasts, once visible
    added = Signal(object, object)  # (AddOutcome, list of refusal sentences)
    failed = Signal(str)

    def __init__(self, window: "MainWindow") -> None:
        super().__init__(window)
        self.window = window
        self.action = QAction("Add &documents…", window)
        self.action.setObjectName("addDocumentsAction")
        self.action.setShortcut(QKeySequence("Ctrl+Shift+D"))
        tip = "Add text, Markdown, HTML, PDF or Word files to this session (or drop them onto the window)"
        self.action.setToolTip(plain_tooltip(tip))
        self.action.setStatusTip(tip)
        theme.bind_icon(self.action, "file-plus")
        self.action.triggered.connect(lambda *_: window.tasks.spawn(self.add_via_dialog(), name="add-documents"))
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def install(self, file_menu: QMenu, before: QAction | None = None) -> None:
        if before is not None:
            file_menu.insertAction(before, self.action)
        else:
            file_menu.addAction(self.action)

    # -- drag and drop ----------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.window and event.type() in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            if isinstance(event, QDropEvent) and self._local_files(event):  # QDragMoveEvent/EnterEvent are drops
                event.acceptProposedAction()
                return True
        if watched is self.window and event.type() == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            paths = self._local_files(event)
            if paths:
                event.acceptProposedAction()
                self.window.tasks.spawn(self.add_paths(paths), name="drop-documents")
                return True
        return super().eventFilter(watched, event)

    @staticmethod
    def _local_files(event: Any) -> list[Path]:
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return []
        return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]

    # -- adding -----------------------------------------------------------------------------
    async def _run(self, dialog: QDialog) -> int:
        return await run_dialog(dialog, self.dialogOpened.emit)

    async def add_via_dialog(self) -> "AddOutcome | None":
        if not self.window.current_session:
            self._fail("Open a session first.")
            return None
        dialog = QFileDialog(self.window, "Add documents to this session")
        dialog.setObjectName("addDocumentsFileDialog")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters([self.window.services.documents.file_filter(), "All files (*)"])
        try:
            if not await self._run(dialog) or not dialog.selectedFiles():
                return None
            paths = [Path(p) for p in dialog.selectedFiles()]
        finally:
            dialog.deleteLater()
        return await self.add_paths(paths)

    async def add_paths(self, paths: list[Path]) -> "AddOutcome | None":
        """Read ``paths`` on a worker, add the readable ones (one transaction), report the rest."""
        from cks_desktop.graph.errors import StoreError

        sid = self.window.current_session
        if not sid:
            self._fail("Open a session first.")
            return None
        from cks_desktop.documents.progress import ReadCancelled, ReadProgress

        documents = self.window.services.documents
        self._say(f"Reading {counted(len(paths), 'file')}…")
        loop = asyncio.get_running_loop()
        dialog = self._progress_dialog()
        posted = [0.0]

        def step(name: str, done: int, total: int) -> None:  # on the worker: at most 20 updates a second
            now = time.monotonic()
            if now - posted[0] >= 0.05 or done == total:
                posted[0] = now
                loop.call_soon_threadsafe(self._show_progress, dialog, name, done, total)

        progress = ReadProgress(step)
        dialog.canceled.connect(progress.cancel.set)
        try:
            result = await asyncio.to_thread(documents.add_files, sid, paths, progress)
        except ReadCancelled as exc:
            self._fail(str(exc))
            return None
        except StoreError as exc:
            self._fail(f"Nothing was added: {exc}")
            return None
        finally:
            dialog.canceled.disconnect()
            dialog.reset()
            dialog.deleteLater()
        refused = [r.error for r in result.refused]
        parts = []
        if result.added:
            parts.append(f"Added {counted(len(result.added), 'document')}")
        if result.already:
            parts.append(f"{counted(len(result.already), 'document')} already in the session")
        if refused:
            parts.append(f"{counted(len(refused), 'file')} could not be read")
        self._say("; ".join(parts) + ".")
        self.added.emit(result, refused)
        if refused:
            await self._show_refused(refused)
        return result

    def _progress_dialog(self) -> QProgressDialog:
        """A dialog that shows itself only if the read lasts over 0.4 s; Cancel stops the read."""
        dialog = QProgressDialog("Reading…", "Cancel", 0, 0, self.window)
        dialog.setObjectName("documentsReadProgress")
        dialog.setLabel(plain_label("Reading…", name="documentsReadProgressText"))  # file names: literal
        dialog.setWindowTitle("Adding documents")
        dialog.setWindowModality(Qt.WindowModality.NonModal)
        dialog.setMinimumDuration(400)
        dialog.setAutoReset(False)
        dialog.setAutoClose(False)
        dialog.setValue(0)  # starts the 0.4 s clock
        return dialog

    def _show_progress(self, dialog: QProgressDialog, name: str, done: int, total: int) -> None:
        try:
            if dialog.wasCanceled():
                return
            dialog.setMaximum(total)  # 0: busy (the file is being opened)
            label = dialog.findChild(QLabel, "documentsReadProgressText")
            if label is not None:
                label.setText(f"Reading {name}: page {done:,} of {total:,}" if total else f"Opening {name}…")
            dialog.setValue(done)
        except RuntimeError:  # the read ended and the dialog went meanwhile
            return
        if dialog.isVisible() and not dialog.property("announced"):  # it shows itself after 0.4 s
            dialog.setProperty("announced", True)
            self.progressShown.emit(dialog)

    async def _show_refused(self, refused: list[str]) -> None:
        box = plain_message_box(self.window, icon=QMessageBox.Icon.Warning, title="Some files were not added",
                                text="These files could not be read and were not added:",
                                informative="\n".join(refused),  # file names: shown literally
                                buttons=QMessageBox.StandardButton.Ok)
        box.setObjectName("documentsRefusedBox")
        try:
            await self._run(box)
        finally:
            box.deleteLater()

    def _say(self, text: str) -> None:
        self.window.graph_view._say(text)

    def _fail(self, text: str) -> None:
        self._say(text)
        self.failed.emit(text)


def install(window: "MainWindow", file_menu: QMenu, before: QAction | None = None) -> DocumentIntake:
    intake = DocumentIntake(window)
    intake.install(file_menu, before)
    return intake
