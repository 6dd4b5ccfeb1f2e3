"""The document viewer: a session document's text (plain text, never HTML), scrolled to a
passage and highlighted; selecting text lists the objects and relations that came from it.

One viewer per window (``viewer_for``), a non-modal window that is ``show()``n, never
``exec()``ed. The text and every lookup are read on a worker thread. Offsets: the store counts
Python characters (code points), Qt's text positions count UTF-16 units, so a character
outside the BMP (an emoji, some CJK) counts twice in Qt; ``to_qt``/``from_qt`` convert.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import (QDialogButtonBox, QListWidget, QListWidgetItem, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget)

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

Spawn = Callable[[Coroutine[Any, Any, Any]], Any]
ROLE_ID = Qt.ItemDataRole.UserRole + 1
SELECTION_DELAY_MS = 150  # a drag selects many times a second; look up once it settles


def to_qt(text: str, offset: int) -> int:
    """The Qt (UTF-16) position of Python character ``offset`` in ``text``."""
    head = text[:offset]
    return offset + sum(1 for c in head if ord(c) > 0xFFFF)


def from_qt(text: str, position: int) -> int:
    """The Python character offset of Qt (UTF-16) ``position`` in ``text``."""
    if text.isascii():
        return position
    units = 0
    for i, c in enumerate(text):
        if units >= position:
            return i
        units += 2 if ord(c) > 0xFFFF else 1
    return len(text)


def passage_mark(document: QTextDocument, start: int, end: int) -> QTextEdit.ExtraSelection:
    """A source passage ``[start, end)`` (Qt positions) marked in the scheme's colours; drawn again
    by its owner when the theme switches."""
    cursor = QTextCursor(document)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    mark = QTextEdit.ExtraSelection()
    fmt = QTextCharFormat()
    fmt.setBackground(theme.color("passage_mark"))
    fmt.setForeground(theme.color("text"))  # the scheme's own text colour on the mark, readable in both
    mark.format = fmt  # PySide6 exposes the struct's fields as attributes
    mark.cursor = cursor
    return mark


class DocumentViewer(QWidget):
    """A document's text with one highlighted passage; a selection shows what came from it."""

    objectRequested = Signal(str)  # an object listed under the selection was activated
    factsShown = Signal(object)  # the SpanFacts of the current selection (after each lookup)
    opened = Signal()  # a document (and passage) is shown

    def __init__(self, store: Any, spawn: Spawn, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("documentViewer")
        self.setWindowTitle("Document")
        self.store = store
        self.spawn = spawn
        self.session_id: str | None = None
        self.document: Any = None  # documents.model.Document, with its text
        self.passage: tuple[int, int] | None = None
        self._lookup_gen = 0
        lay = QVBoxLayout(self)
        self.title = plain_label(name="viewerTitle", wrap=True)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.where = plain_label(name="viewerWhere", wrap=True)
        self.text = QPlainTextEdit()
        self.text.setObjectName("documentText")
        self.text.setReadOnly(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.facts_label = plain_label("Mark text with the mouse to list what the graph took from it.", name="viewerFactsLabel",
                                       wrap=True)
        self.facts = QListWidget()
        self.facts.setObjectName("viewerFacts")
        self.facts.setToolTip("Double-click an object to show it in the graph")
        self.facts.setMaximumHeight(140)
        self.facts.itemActivated.connect(self._activated)
        self.facts.itemDoubleClicked.connect(self._activated)
        for w in (self.title, self.where):
            lay.addWidget(w)
        lay.addWidget(self.text, 1)
        lay.addWidget(self.facts_label)
        lay.addWidget(self.facts)
        # A visible way out besides Esc and the window manager's title bar: the standard Close.
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.setObjectName("viewerButtons")
        close = self.buttons.button(QDialogButtonBox.StandardButton.Close)
        close.setToolTip(plain_tooltip("Close the document"))
        close.setAutoDefault(False)
        self.buttons.rejected.connect(self.close)
        lay.addWidget(self.buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SELECTION_DELAY_MS)
        self._timer.timeout.connect(self._selection_settled)
        self.text.selectionChanged.connect(self._timer.start)
        self.resize(640, 560)
        manager = theme.manager()
        if manager is not None:  # the passage's mark is drawn in the scheme's colours: redraw on a switch
            manager.themeChanged.connect(self._theme_changed)

    def _theme_changed(self, _scheme: str) -> None:
        if self.passage is not None:
            self.show_passage(*self.passage)

    # -- opening ------------------------------------------------------------------------
    async def open_document(self, session_id: str, document_id: str, start: int | None = None,
                            end: int | None = None) -> bool:
        """Read the document (worker thread), show it, and highlight ``[start, end)``."""
        from cks_desktop.documents.errors import DocumentError
        from cks_desktop.graph.errors import StoreError
        from cks_desktop.runtime.documents import DocumentsUseCase

        try:
            doc = await asyncio.to_thread(DocumentsUseCase(self.store).open, session_id, document_id)
        except (DocumentError, StoreError) as exc:
            self.title.setText("This document is no longer in the session.")
            self.where.setText(str(exc))
            self.text.setPlainText("")
            self.show()
            return False
        if self.document is None or self.document.id != doc.id or self.session_id != session_id:
            self.text.setPlainText(doc.text)
        self.session_id, self.document = session_id, doc
        self.setWindowTitle(f"{doc.name} — Document")
        pages = f", {counted(doc.pages, 'page')}" if doc.pages else ""
        self.title.setText(f"{doc.name} ({doc.media_type}{pages})")
        self.show_passage(start, end)
        self.show()
        self.raise_()
        self.activateWindow()
        self.opened.emit()
        return True

    def show_passage(self, start: int | None, end: int | None) -> None:
        """Highlight ``[start, end)`` (Python offsets) and scroll it into the middle."""
        doc = self.document
        if doc is None:
            return
        if start is None or end is None:
            self.passage = None
            self.text.setExtraSelections([])
            self.where.setText("This source has no passage in the document.")
            return
        start, end = max(0, min(start, len(doc.text))), max(0, min(end, len(doc.text)))
        self.passage = (start, end)
        self.text.setExtraSelections([passage_mark(self.text.document(), to_qt(doc.text, start),
                                                   to_qt(doc.text, end))])
        caret = QTextCursor(self.text.document())
        caret.setPosition(to_qt(doc.text, start))
        self.text.setTextCursor(caret)  # no selection: the passage is marked, not selected
        self.text.centerCursor()
        page = doc.page_of(start)
        self.where.setText((f"Page {page}, " if page else "") + f"characters {start:,}–{end:,}")

    def highlighted_text(self) -> str:
        if self.document is None or self.passage is None:
            return ""
        return str(self.document.text[self.passage[0]:self.passage[1]])

    # -- selection → facts --------------------------------------------------------------
    def selection_span(self) -> tuple[int, int] | None:
        cursor = self.text.textCursor()
        if self.document is None or not cursor.hasSelection():
            return None
        text = self.document.text
        return from_qt(text, cursor.selectionStart()), from_qt(text, cursor.selectionEnd())

    def select(self, start: int, end: int) -> None:
        """Select ``[start, end)`` (Python offsets), as a person dragging over it would."""
        if self.document is None:
            return
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(to_qt(self.document.text, start))
        cursor.setPosition(to_qt(self.document.text, end), QTextCursor.MoveMode.KeepAnchor)
        self.text.setTextCursor(cursor)

    def _selection_settled(self) -> None:
        span = self.selection_span()
        if span is None or self.session_id is None:
            return
        self.spawn(self.look_up(*span))

    async def look_up(self, start: int, end: int) -> Any:
        """List the objects and relations whose sources overlap ``[start, end)``."""
        from cks_desktop.provenance.queries import facts_in_span

        self._lookup_gen += 1
        gen = self._lookup_gen
        sid, doc = self.session_id, self.document
        if sid is None or doc is None:
            return None
        facts = await asyncio.to_thread(facts_in_span, self.store, sid, doc.id, start, end)
        if gen != self._lookup_gen:
            return facts
        self.facts.clear()
        names = {o.id: o.name for o in facts.objects}
        for obj in facts.objects:
            item = QListWidgetItem(f"{obj.name} ({obj.type})")
            item.setData(ROLE_ID, obj.id)
            item.setToolTip(plain_tooltip(obj.id))
            self.facts.addItem(item)
        for rel in facts.relations:
            src, tgt = names.get(rel.source_id, ""), names.get(rel.target_id, "")
            text = f"{src} → {rel.type} → {tgt}" if src and tgt else f"relation {rel.type}"
            item = QListWidgetItem(text)
            item.setData(ROLE_ID, rel.source_id)
            item.setToolTip(plain_tooltip(rel.id))
            self.facts.addItem(item)
        parts = [counted(n, word) for n, word in ((len(facts.objects), "object"), (len(facts.relations), "relation"))
                 if n]
        self.facts_label.setText(f"From the selected text: {' and '.join(parts)}." if parts
                                 else "Nothing in the graph came from the selected text.")
        self.factsShown.emit(facts)
        return facts

    def _activated(self, item: QListWidgetItem) -> None:
        ident = item.data(ROLE_ID)
        if isinstance(ident, str):
            self.objectRequested.emit(ident)


def viewer_for(window: QWidget, store: Any, spawn: Spawn,
               on_object: Callable[[str], Any] | None = None) -> DocumentViewer:
    """The window's one document viewer (made on first use; ``on_object`` hears the objects
    activated in it, connected once)."""
    found = window.findChild(DocumentViewer, "documentViewer")
    if isinstance(found, DocumentViewer):
        return found
    viewer = DocumentViewer(store, spawn, window)
    if on_object is not None:
        viewer.objectRequested.connect(on_object)
    return viewer
