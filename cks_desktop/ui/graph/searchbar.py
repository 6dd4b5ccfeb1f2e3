"""The search field: full-text search over the session (the store's FTS5 index).

Typing searches after a short pause (so a fast typist does not run a query
per key); Enter goes to the next match, Shift+Enter to the previous one, Esc
clears. The bar only collects the query and shows "3 of 12"; the view runs
the search and moves the highlight.

While the list of what the search found beyond the graph (``search_results.py``:
objects, passages, chat messages) shows, Up/Down move through it, Enter opens the
chosen result and Esc closes the list (a second Esc clears the field).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QToolButton, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.graph.search_results import SearchResults
from cks_desktop.ui.labels import plain_label

DEBOUNCE_MS = 220


class SearchField(QLineEdit):
    stepRequested = Signal(int)
    cleared = Signal()
    results: SearchResults | None = None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        shown = self.results is not None and self.results.isVisible()
        if shown and self.results is not None:
            if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                self.results.step(1 if event.key() == Qt.Key.Key_Down else -1)
                return
            plain = not event.modifiers() & Qt.KeyboardModifier.ShiftModifier  # Shift+Enter still steps the graph
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and plain and self.results.open_current():
                return
            if event.key() == Qt.Key.Key_Escape:
                self.results.hide()
                return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.stepRequested.emit(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
            return
        if event.key() == Qt.Key.Key_Escape:
            self.clear()
            self.cleared.emit()
            return
        super().keyPressEvent(event)


class SearchBar(QWidget):
    queryChanged = Signal(str)  # after the debounce (or at once on Enter with a new query)
    stepRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphSearchBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.field = SearchField()
        self.field.setObjectName("graphSearch")
        self.field.setPlaceholderText("Search the graph, documents, chat…")
        self.field.setClearButtonEnabled(True)
        self.field.setMinimumWidth(140)
        self.field.setMaximumWidth(260)
        self.field.setToolTip("Search objects, document passages and chat messages. Up/Down: choose a result, "
                              "Enter: open it (or the next match in the graph), Esc: close the list")
        self.count = plain_label("")
        self.count.setObjectName("graphSearchCount")
        self.count.setMinimumWidth(56)
        self.count.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.prev = QToolButton()
        self.prev.setObjectName("graphSearchPrev")
        self.prev.setText("‹")
        self.prev.setToolTip("Previous match (Shift+Enter)")
        self.next = QToolButton()
        self.next.setObjectName("graphSearchNext")
        self.next.setText("›")
        self.next.setToolTip("Next match (Enter)")
        for w in (self.field, self.count, self.prev, self.next):
            layout.addWidget(w)
        theme.bind_icon(self.prev, "caret-left")
        theme.bind_icon(self.next, "caret-right")
        self._search_icon = self.field.addAction(theme.icon("magnifying-glass"),
                                                 QLineEdit.ActionPosition.LeadingPosition)
        theme.bind_icon(self._search_icon, "magnifying-glass")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._fire)
        self._sent = ""
        self.field.textChanged.connect(lambda _: self._timer.start())
        self.field.stepRequested.connect(self._step)
        self.field.cleared.connect(self._fire)
        self.prev.clicked.connect(lambda: self._step(-1))
        self.next.clicked.connect(lambda: self._step(1))
        self.set_result("", 0, -1)

    def _fire(self) -> None:
        self._timer.stop()
        text = self.field.text().strip()
        if text != self._sent:
            self._sent = text
            self.queryChanged.emit(text)

    def _step(self, step: int) -> None:
        if self.field.text().strip() != self._sent:
            self._fire()  # Enter on a fresh query searches first; the view then shows match 1
            return
        self.stepRequested.emit(step)

    def set_result(self, query: str, total: int, position: int) -> None:
        if not query:
            self.count.setText("")
        elif total == 0:
            self.count.setText("no match")
        else:
            self.count.setText(f"{position + 1} of {total}")
        self.prev.setEnabled(total > 1)
        self.next.setEnabled(total > 1)
        # Shown only while there is a query: their room goes to the graph tool bar otherwise.
        for w in (self.count, self.prev, self.next):
            w.setVisible(bool(query))

    def focus(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()
