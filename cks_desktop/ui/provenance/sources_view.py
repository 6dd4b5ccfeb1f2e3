"""The inspector's "Sources" section: where the shown object and its relations came from.

Each source is one row — the quote, its document and page — for the object itself, then for
each of its relations (prefixed with the relation). Activating a row opens the window's
document viewer at that passage, highlighted. A row's context menu offers "Mark as checked"
(``reviewRequested(Source, "accepted")``: the inspector records it with the batch op
``set_evidence_review``, one undoable change). Facts without any document source say who wrote
them instead (the person, the chat, another app: derived from the change log, see
``provenance/model.py``). Reading happens with the inspector's own read, on its worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QMenu, QVBoxLayout, QWidget

from cks_desktop.ui.text import one_line, plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.graph.model import Relation
    from cks_desktop.provenance.model import Authorship, Source

ROLE_SOURCE = Qt.ItemDataRole.UserRole + 7
QUOTE_CHARS = 160
CHECKED = ("accepted", "edited")  # review states a person set


@dataclass(frozen=True)
class SourceRow:
    """One row: a source, and the relation it supports (None: the object itself)."""

    source: "Source"
    relation: "Relation | None" = None


@dataclass
class ObjectSources:
    """What the section shows for one object (read on a worker thread by ``read_sources``)."""

    rows: list[SourceRow]
    authors: list["Authorship"]


def read_sources(store: Any, session_id: str, object_id: str, relations: list["Relation"]) -> ObjectSources:
    """The object's sources, then its relations'; and who wrote it. Runs off the event loop."""
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.provenance.queries import authorship, sources_of, sources_of_many

    rows = [SourceRow(s) for s in sources_of(store, session_id, "object", object_id)]
    by_relation = sources_of_many(store, session_id, "relation", [r.id for r in relations])
    for rel in relations:
        rows += [SourceRow(s, rel) for s in by_relation.get(rel.id, ())]
    messages = TranscriptStore.for_store(store).messages_for_changes
    return ObjectSources(rows, authorship(store, session_id, object_id, 5, messages))


def row_text(row: SourceRow, label_of: Callable[["Relation"], str] | None = None) -> str:
    """"“quote” — notes.pdf, p. 2", prefixed with the relation's label for a relation's source."""
    e = row.source.evidence
    where = row.source.document_name or ("a removed document" if e.document_id else "")
    if e.page:
        where += f", p. {e.page}"
    quote = f"“{one_line(e.quote, QUOTE_CHARS)}”" if e.quote else "(no quote)"
    text = f"{quote} — {where}" if where else quote
    if e.alignment in ("fuzzy", "unaligned") or e.review == "pending":
        text += f" [{e.alignment if e.alignment != 'exact' else e.review}]"
    elif e.review in CHECKED:
        text += " [checked]"
    if row.relation is None:
        return text
    return f"{label_of(row.relation) if label_of else row.relation.type}: {text}"


class SourcesView(QWidget):
    """The list of sources; ``openRequested(Source)`` when one is activated,
    ``reviewRequested(Source, review)`` when the person marks one as checked."""

    openRequested = Signal(object)
    reviewRequested = Signal(object, str)

    def __init__(self, label_of: Callable[["Relation"], str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label_of = label_of
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("inspectorSources")
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setToolTip("Click a source to open its document at the passage")
        self.list.itemClicked.connect(self._activated)
        self.list.itemActivated.connect(self._activated)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._context_menu)
        lay.addWidget(self.list)
        self.shown: ObjectSources | None = None

    def show_sources(self, data: ObjectSources) -> None:
        self.shown = data
        self.list.clear()
        for row in data.rows:
            item = QListWidgetItem(row_text(row, self.label_of))
            item.setData(ROLE_SOURCE, row.source)
            e = row.source.evidence
            detail = [e.quote or "(no quote)"]
            if e.start is not None:
                detail.append(f"characters {e.start}–{e.end}; aligned: {e.alignment}; review: {e.review}")
            item.setToolTip(plain_tooltip("\n".join(detail)))
            self.list.addItem(item)
        if not data.rows:
            who = sorted({a.author for a in data.authors})
            text = ("No document sources; written by " + ", ".join(who) + ".") if who else "No sources."
            self.list.addItem(QListWidgetItem(text))
        self.list.doItemsLayout()
        rows = sum(self.list.sizeHintForRow(k) for k in range(self.list.count()))
        self.list.setFixedHeight(min(220, rows + 2 * self.list.frameWidth() + 4))

    def count(self) -> int:
        return len(self.shown.rows) if self.shown else 0

    def menu_for(self, item: QListWidgetItem) -> QMenu | None:
        """The row's menu (Open, and Mark as checked while no person has checked it)."""
        from cks_desktop.ui import theme

        source = item.data(ROLE_SOURCE)
        if source is None:
            return None
        menu = QMenu(self)
        menu.setObjectName("sourceMenu")
        opened = menu.addAction("Open the passage", lambda: self.openRequested.emit(source))
        theme.bind_icon(opened, "book-open")
        opened.setToolTip("Open the document at this passage, highlighted")
        if source.evidence.review not in CHECKED:
            checked = menu.addAction("Mark as checked", lambda: self.reviewRequested.emit(source, "accepted"))
            checked.setObjectName("markSourceChecked")
            theme.bind_icon(checked, "check-circle")
            checked.setToolTip("Record that you checked this source against its document (undo with Ctrl+Z)")
        return menu

    def _context_menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        menu = self.menu_for(item) if item is not None else None
        if menu is not None:
            menu.popup(self.list.viewport().mapToGlobal(pos))

    def _activated(self, item: QListWidgetItem) -> None:
        source = item.data(ROLE_SOURCE)
        if source is not None:
            self.openRequested.emit(source)
