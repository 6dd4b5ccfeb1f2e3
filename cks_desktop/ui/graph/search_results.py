"""What the graph's search field found beyond the graph: objects, passages and chat messages.

A list under the search field, filled by the ask use case's ``search`` (words and meaning, on a
worker thread). The field keeps the focus: Up/Down move through the list, Enter opens the chosen
result (the object in the graph, the document at the passage, the chat at the message), Esc
closes the list. Every text in it is untrusted (documents, model output, tool results): plain
text, never rich text, each result flattened to one paragraph of at most ``LINE_CHARS``.

Nothing is elided by the list: it is as wide as its longest entry, up to the room the graph view
has (``widest``, placed by the view), and an entry longer than that wraps onto more lines, each
item as tall as its wrapped text at the width it has (``wrapped_items``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QStyleOptionViewItem, QWidget

from cks_desktop.ui.wrapped_items import WrappedTextDelegate, text_rect_width
from cks_desktop.ui.text import plain_tooltip

Kind = Literal["object", "passage", "message"]
LINE_CHARS = 160  # about two wrapped lines in a 1024 px window's graph view


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
        self.setWordWrap(True)  # a long entry takes another line, never a "…" in the middle of it
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setItemDelegate(WrappedTextDelegate(self))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
            item.setToolTip(plain_tooltip(_line(r.label)))
            self.addItem(item)
        if note:
            item = QListWidgetItem(_line(note))
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)
        if self.count():
            self.setCurrentRow(0)
        self.setVisible(bool(self.count()))
        self.filled.emit()

    def widest(self) -> int:
        """The list's width that shows its longest entry on one line: the text, the item's padding
        and text margins, the spacing and the frame."""
        option = QStyleOptionViewItem()
        option.initFrom(self)
        option.widget = self
        probe = 400
        chrome = probe - text_rect_width(option, probe) + 2 * self.spacing() + 2 * self.frameWidth()
        texts = [self.item(i).text() for i in range(self.count())]
        return max((self.fontMetrics().horizontalAdvance(t) for t in texts), default=0) + chrome + 2

    def content_height(self) -> int:
        """The height that shows every item, at the width the list has now (items wrap to it)."""
        if not self.count():
            return 2 * self.frameWidth()
        self.doItemsLayout()
        last: QRect = self.visualItemRect(self.item(self.count() - 1))
        return last.bottom() + 1 + self.verticalScrollBar().value() + self.spacing() + 2 * self.frameWidth()

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
