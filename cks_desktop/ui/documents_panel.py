"""The Documents panel: the shown session's documents — name, type, pages, size,
when added — with Add, Open (the document viewer), Remove and Extract knowledge.

Removing asks first, with what would lose its last source (``provenance.documents``): a
document that supports nothing gets a plain "Remove?"; one whose removal leaves objects or
relations without any source offers to remove them too or keep them. The answer runs on a
worker thread as one graph change plus the document's removal.

"Extract knowledge" only emits ``extractRequested(session_id, document_id)``: the extraction
pipeline connects with ``connect_extractor(slot)``; until something does, the
button says so and stays disabled. Every dialog is ``open()``ed (``run_dialog``), never ``exec()``ed. The list follows
the documents store's own notifications (this process) and the store's change feed
(``SessionEvent("documents")``: another process's ``documents add|remove``), both on any
thread, brought to the GUI thread by a signal; a hidden panel reads nothing and catches up
when shown.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QMessageBox, QPushButton, QSizePolicy,
                               QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget)

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.labels import plain_label, plain_message_box
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.runtime.documents import OrphanChoice, Removal
    from cks_desktop.runtime.documents import DocumentsUseCase

ROLE_ID = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Name", "Type", "Pages", "Size", "Added")
HIDE_ORDER = (4, 2, 1, 3)  # the columns that give way to Name in a narrow panel, first to last
NAME_CHARS = 22  # what Name keeps room for before another column hides


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def added_text(at: str) -> str:
    try:
        return datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone().strftime("%d %b %Y")
    except ValueError:
        return at


class DocumentsPanel(QWidget):
    """The list of the shown session's documents and what can be done with them."""

    extractRequested = Signal(str, str)  # (session id, document id): the extraction pipeline listens
    openRequested = Signal(str, str)  # (session id, document id): the window opens its viewer
    dialogOpened = Signal(object)  # a question box, once open (tests, screenshots)
    removed = Signal(object)  # a provenance.documents.Removal
    reloaded = Signal()  # the list was read again
    _documents_changed = Signal(str)  # from the documents store's listener, on any thread

    def __init__(self, documents: "DocumentsUseCase", spawn: Any, add_action: QAction | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentsPanel")
        self.documents_use = documents  # runtime/documents.py: list, remove (the window's one add flow is ui/documents.py)
        self.store = documents.store
        self.spawn = spawn
        self.session_id = ""
        self.documents: list["Document"] = []
        self._gen = 0
        self._extractor_connected = False
        self._stale = True  # the list does not show the session's documents yet
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("documentsTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)  # a tab of the chat's width
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_selected())
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.empty = plain_label("No documents in this session. Add text, Markdown, HTML, PDF or Word files "
                                 "with Add, the paperclip in the chat, or by dropping them onto the window.",
                                 name="documentsEmpty", wrap=True)
        buttons = QHBoxLayout()
        self.add_button = QToolButton()
        self.add_button.setObjectName("documentsAdd")
        if add_action is not None:
            self.add_button.setDefaultAction(add_action)
        self.add_button.setText("Add…")
        self.add_button.setToolTip("Add documents to this session")
        self.add_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.open_button = self._button("Open", "documentsOpen", "book-open",
                                        "Open the selected document's text", self.open_selected)
        self.remove_button = self._button("Remove…", "documentsRemove", "trash",
                                          "Remove the selected document and its sources from this session",
                                          lambda: self.spawn(self.remove_selected()))
        self.extract_button = self._button("Extract knowledge", "documentsExtract", "magic-wand",
                                           "Extract objects and relations from the selected document",
                                           self._extract)
        buttons.addWidget(self.add_button)
        for b in (self.open_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        second = QHBoxLayout()  # two rows: the panel is a tab of the chat dock's width (~330 px)
        second.addStretch(1)
        second.addWidget(self.extract_button)
        self.status = plain_label(name="documentsStatus", wrap=True)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.empty)
        lay.addLayout(buttons)
        lay.addLayout(second)
        lay.addWidget(self.status)
        self._documents_changed.connect(self._store_changed)
        self._unsubscribe = documents.subscribe(self._heard)
        self._unsubscribe_feed = self.store.subscribe(self._heard_store)  # other processes (graph/feed.py)
        self.destroyed.connect(lambda *_: (self._unsubscribe(), self._unsubscribe_feed()))
        self._update_buttons()

    def set_add_action(self, action: QAction) -> None:
        """Add runs the window's File → Add documents… (one add flow: ``ui/documents.py``)."""
        self.add_button.setDefaultAction(action)
        self.add_button.setText("Add…")

    def _button(self, text: str, name: str, icon: str, tip: str, slot: Any) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setToolTip(plain_tooltip(tip))
        theme.bind_icon(button, icon)
        button.clicked.connect(lambda *_: slot())
        return button

    # -- the list -----------------------------------------------------------------------
    def set_session(self, session_id: str) -> None:
        """Show ``session_id``'s documents (read now when the panel is shown, else when it is)."""
        if (session_id or "") != self.session_id:
            self.session_id = session_id or ""
            self.status.setText("")
            self._stale = True
        self._reload_if_shown()

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._reload_if_shown()
        self._fit_columns()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Name stretches and keeps room for about NAME_CHARS characters; the other columns fit
        their contents, and the least telling hide first when the panel is narrower (Added, Pages,
        Type, then Size: each row's tooltip still names them). At the chat dock's ~325 px all five
        columns left Name "curie-…"."""
        table, header = self.table, self.table.horizontalHeader()
        room = table.viewport().width() - table.fontMetrics().averageCharWidth() * NAME_CHARS
        needed = {col: max(header.sectionSizeHint(col), table.sizeHintForColumn(col)) for col in range(1, len(COLUMNS))}
        shown = set(needed)
        for col in HIDE_ORDER:
            if sum(needed[c] for c in shown) <= room:
                break
            shown.discard(col)
        for col in needed:
            table.setColumnHidden(col, col not in shown)

    def _reload_if_shown(self) -> None:
        """A hidden panel reads nothing: it catches up when it is shown."""
        if self._stale and self.isVisible():
            self._stale = False
            self.spawn(self.reload())

    def _heard(self, session_id: str) -> None:
        """The documents store's listener (any thread): hand over to the GUI thread."""
        try:
            self._documents_changed.emit(session_id)
        except RuntimeError:  # the panel is gone (its window closed) but not yet unsubscribed
            self._unsubscribe()

    def _heard_store(self, event: Any) -> None:
        """A store event (any thread): the feed's "documents" event of another process."""
        from cks_desktop.graph.events import SessionEvent

        if isinstance(event, SessionEvent) and event.kind == "documents":
            try:
                self._documents_changed.emit(event.session.id)
            except RuntimeError:  # the panel is gone but not yet unsubscribed
                self._unsubscribe_feed()

    def _store_changed(self, session_id: str) -> None:
        if session_id == self.session_id:
            self._stale = True
            self._reload_if_shown()

    async def reload(self) -> None:
        """Read the session's documents on a worker thread and show them."""
        from cks_desktop.graph.errors import StoreError

        self._gen += 1
        gen, sid = self._gen, self.session_id
        docs: list["Document"] = []
        if sid:
            try:
                docs = await asyncio.to_thread(self.documents_use.list, sid)
            except StoreError as exc:  # the session went meanwhile
                self.status.setText(str(exc))
        if gen != self._gen:
            return
        selected = self.selected()
        self.documents = docs
        self.table.setRowCount(0)
        for doc in docs:
            row = self.table.rowCount()
            self.table.insertRow(row)
            values = (doc.name, self.documents_use.type_name(doc.media_type), str(doc.pages) if doc.pages else "—",
                      size_text(doc.size), added_text(doc.added_at))
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(ROLE_ID, doc.id)
                item.setToolTip(plain_tooltip("\n".join(x for x in (doc.name, doc.source, f"{doc.size:,} bytes, added "
                                                                     f"{doc.added_at}", doc.id) if x)))
                self.table.setItem(row, col, item)
            if selected is not None and doc.id == selected.id:
                self.table.selectRow(row)
        if self.documents and self.selected() is None:
            self.table.selectRow(0)
        self.empty.setVisible(not docs)
        self.table.setVisible(bool(docs))
        self._fit_columns()
        self._update_buttons()
        self.reloaded.emit()

    def selected(self) -> "Document | None":
        rows = {i.row() for i in self.table.selectedItems()}
        if len(rows) != 1:
            return None
        item = self.table.item(rows.pop(), 0)
        ident = item.data(ROLE_ID) if item is not None else None
        return next((d for d in self.documents if d.id == ident), None)

    def select(self, name_or_id: str) -> bool:
        for row, doc in enumerate(self.documents):
            if name_or_id in (doc.name, doc.id):
                self.table.selectRow(row)
                return True
        return False

    def _update_buttons(self) -> None:
        chosen = self.selected() is not None
        self.open_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)
        wired = self._extractor_connected
        self.extract_button.setEnabled(chosen and wired)
        self.extract_button.setToolTip("Extract objects and relations from the selected document" if wired else
                                       "Extraction is not available in this build yet")
        self.add_button.setEnabled(bool(self.session_id))

    def connect_extractor(self, slot: Any) -> None:
        """Connect the extraction pipeline: ``slot(session_id, document_id)`` runs on "Extract
        knowledge" (the button is disabled, saying why, until something is connected)."""
        self.extractRequested.connect(slot)
        self._extractor_connected = True
        self._update_buttons()

    # -- actions ------------------------------------------------------------------------
    def open_selected(self) -> None:
        doc = self.selected()
        if doc is not None and self.session_id:
            self.openRequested.emit(self.session_id, doc.id)

    def _extract(self) -> None:
        doc = self.selected()
        if doc is not None and self.session_id:
            self.extractRequested.emit(self.session_id, doc.id)

    async def remove_selected(self) -> "Removal | None":
        """Ask (naming what would lose its last source), then remove the selected document."""
        from cks_desktop.documents.errors import DocumentError
        from cks_desktop.graph.errors import StoreError
        from cks_desktop.runtime.documents import orphan_words

        doc, sid = self.selected(), self.session_id
        if doc is None or not sid:
            return None
        try:
            _doc, orphans = await asyncio.to_thread(self.documents_use.preview_removal, sid, doc.id)
        except (DocumentError, StoreError) as exc:
            self.status.setText(str(exc))
            return None
        sources = counted(len(orphans.evidence), "source")
        if orphans.empty:
            box = plain_message_box(self, icon=QMessageBox.Icon.Question, title="Remove document",
                                    text=f"Remove {doc.name} from this session?",
                                    informative=(f"Its {sources} will be removed from the graph's objects and "
                                                 "relations; they keep their other sources." if orphans.evidence
                                                 else "Nothing in the graph cites it."))
            remove = box.addButton("Remove", QMessageBox.ButtonRole.DestructiveRole)
            cancel = box.addButton(QMessageBox.StandardButton.Cancel)
            keep = None
        else:
            what = orphan_words(orphans)
            box = plain_message_box(self, icon=QMessageBox.Icon.Warning, title="Remove document",
                                    text=f"Remove {doc.name} from this session?",
                                    informative=f"{what[0].upper()}{what[1:]} would have no source left. Remove "
                                                "them too, or keep them without a source?")
            remove = box.addButton("Remove them too", QMessageBox.ButtonRole.DestructiveRole)
            keep = box.addButton("Keep them", QMessageBox.ButtonRole.AcceptRole)
            cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)  # Enter and Esc both remove nothing
        box.setEscapeButton(cancel)
        box.setObjectName("removeDocumentBox")
        try:
            await run_dialog(box, self.dialogOpened.emit)
            clicked = box.clickedButton()
        finally:
            box.deleteLater()
        if clicked is not remove and (keep is None or clicked is not keep):
            return None
        choice: "OrphanChoice" = "remove" if (clicked is remove and keep is not None) else "keep"
        try:
            removal = await asyncio.to_thread(self.documents_use.remove, sid, doc.id, choice, "user")
        except (DocumentError, StoreError) as exc:
            self.status.setText(f"Nothing was removed: {exc}")
            return None
        self.status.setText(removal.sentence().replace(" (kept; remove them with --orphans remove)", " (kept)"))
        self.removed.emit(removal)
        return removal
