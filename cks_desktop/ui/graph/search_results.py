"""What the graph's search field found beyond the graph: objects, passages and chat messages.

A list under the search field, filled by the ask use case's ``search`` (words and meaning, on a
worker thread). The field keeps the focus: Up/Down move through the list, Enter opens the chosen
result (the object in the graph, the document at the passage, the chat at the message), Esc
closes the list. Every text in it is untrusted (documents, model output, tool results): plain
text, one line, never rich text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

Kind = Literal["object", "passage", "message"]
LINE_CHARS = 110


@dataclass(frozen=True)
class Result:
    """One row: what it opens and how it reads."""

    kind: Kind
    label: str
    object_id: str = ""
    document_id: str = ""
    start: int = 0
    end: int = 0
    message_text: str = ""


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= LINE_CHARS else flat[:LINE_CHARS - 1] + "…"


class SearchResults(QListWidget):
    """The list; ``opened`` carries the chosen ``Result``."""

    opened = Signal(object)
    filled = Signal()  # a search's results are in the list (shown, or hidden when there are none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphSearchResults")
        self.setAccessibleName("Search results")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the field keeps the focus and the keys
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setUniformItemSizes(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # long lines end in "…"
        self.setSpacing(2)
        self.itemActivated.connect(self._activated)
        self.itemClicked.connect(self._activated)
        self.hide()

    def show_results(self, results: list[Result], note: str = "") -> None:
        self.clear()
        for r in results:
            prefix = {"object": "Object", "passage": "Passage", "message": "Message"}[r.kind]
            item = QListWidgetItem(f"{prefix} · {_line(r.label)}")
            item.setData(Qt.ItemDataRole.UserRole, r)
            item.setToolTip(_line(r.label))
            self.addItem(item)
        if note:
            item = QListWidgetItem(_line(note))
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)
        if self.count():
            self.setCurrentRow(0)
        self.setVisible(bool(self.count()))
        self.filled.emit()

    def step(self, step: int) -> None:
        rows = [i for i in range(self.count()) if self.item(i).flags() & Qt.ItemFlag.ItemIsEnabled]
        if not rows:
            return
        current = self.currentRow()
        at = rows.index(current) if current in rows else -1
        self.setCurrentRow(rows[max(0, min(len(rows) - 1, at + step))])

    def open_current(self) -> bool:
        item = self.currentItem()
        if item is None or not self.isVisible():
            return False
        return self._activated(item)

    def _activated(self, item: QListWidgetItem) -> bool:
        result = item.data(Qt.ItemDataRole.UserRole)
        if not isinstance(result, Result):
            return False
        self.hide()
        self.opened.emit(result)
        return True
