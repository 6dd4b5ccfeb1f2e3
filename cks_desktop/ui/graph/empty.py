"""The empty graph as a call to action: what to do first, as three buttons, not a grey sentence.

An empty session is where every new user starts; a centred line of muted text ("This session's
graph is empty…") told them what to do but gave them nothing to press. This card floats
in the middle of the canvas's free part (clear of the inspector sheet) and offers the three ways
to fill a graph: add an object by hand (the same action as the toolbar's Add, shortcut A), import
a file (File → Import graph…), or ask the assistant (focus the chat input).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.graph.viewport import clear_width
from cks_desktop.ui.labels import plain_label

TITLE = "This session's graph is empty"
HINT = "Start it by hand, from a file, or let the assistant build it from what you tell it."


class EmptyState(QFrame):
    """A small card of three actions; the owner connects the signals and places it."""

    addRequested = Signal()
    importRequested = Signal()
    assistantRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphEmptyState")
        theme.set_role(self, "card")
        self._box = box = QVBoxLayout(self)
        box.setContentsMargins(24, 20, 24, 20)
        box.setSpacing(12)
        title = plain_label(TITLE)
        theme.set_role(title, "title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = plain_label(HINT)
        theme.set_role(hint, "secondary")
        hint.setWordWrap(True)
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        box.addWidget(title)
        box.addWidget(hint)
        self.row = row = QHBoxLayout()
        row.setSpacing(8)
        self.add_button = self._button("Add an object (A)", "plus-circle", self.addRequested, "on_accent")
        theme.set_role(self.add_button, "primary")
        self.import_button = self._button("Import a graph…", "file-arrow-up", self.importRequested)
        self.ask_button = self._button("Ask the assistant", "chat-circle-text", self.assistantRequested)
        for b in (self.add_button, self.import_button, self.ask_button):
            row.addWidget(b)
        box.addLayout(row)

    def _button(self, text: str, icon_name: str, signal: SignalInstance, role: str = "normal") -> QPushButton:
        button = QPushButton(text, self)
        try:
            theme.bind_icon(button, icon_name, role)
        except Exception:  # an icon that is missing must not take the empty state with it
            pass
        button.clicked.connect(signal.emit)
        return button

    def place(self, width: int, height: int, covered_right: int) -> None:
        """Centre the card in the part of the canvas (``width`` × ``height``) not under the sheet."""
        free = max(1, int(clear_width(width, covered_right)))
        self._stack_if_narrow(free - 24)
        hint = self.sizeHint()
        w = min(hint.width(), max(1, free - 24))
        h = self.heightForWidth(w) if self.hasHeightForWidth() else hint.height()
        h = max(h, hint.height())
        self.setGeometry((free - w) // 2, max(0, (height - h) // 2), w, h)

    def _stack_if_narrow(self, room: int) -> None:
        """The three buttons side by side when they fit in ``room``, one under the other when not:
        squeezed in one row (a wide chat dock at 1024 px) Qt cut "Add an object (A)" to "(A"."""
        self.row.setDirection(QBoxLayout.Direction.LeftToRight)
        self._box.activate()
        wide = self.sizeHint().width()
        self.row.setDirection(QBoxLayout.Direction.LeftToRight if wide <= room
                              else QBoxLayout.Direction.TopToBottom)
        self._box.activate()
