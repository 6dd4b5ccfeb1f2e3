"""One message in the chat: who said it, and the text (Markdown for the assistant).

The header has a "⋯" menu (Delete this exchange…, Clear chat…; the chat view
fills it) and, on a message of the person's that got no answer, a plain "no
answer" mark and a Retry button.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QSizePolicy, QStyle, QToolButton, QVBoxLayout, QWidget

from cks_desktop.ui.chat.markdown_view import MarkdownView
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.labels import plain_label

ROLE_TITLES = {"user": "You", "assistant": "Assistant", "notice": "Note", "error": "Problem"}


UNANSWERED_TEXT = "No answer: the app stopped or the request failed before the assistant replied."


class MessageWidget(QFrame):
    retryRequested = Signal(object)  # the MessageItem
    menuRequested = Signal(object, object)  # the MessageItem, the global position for the menu

    def __init__(self, item: MessageItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setObjectName(f"chatMessage_{item.role}")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.setSpacing(0)
        head = QHBoxLayout()
        head.setSpacing(4)
        if item.role in ("notice", "error"):
            icon = QStyle.StandardPixmap.SP_MessageBoxWarning if item.role == "error" \
                else QStyle.StandardPixmap.SP_MessageBoxInformation
            size = self.fontMetrics().height()
            badge = plain_label()
            badge.setPixmap(self.style().standardIcon(icon).pixmap(size, size))
            head.addWidget(badge)
        title = plain_label(ROLE_TITLES.get(item.role, item.role))
        font = title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 0.9)
        title.setFont(font)
        head.addWidget(title)
        self.unanswered_label = plain_label("no answer", name="unansweredLabel")
        self.unanswered_label.setToolTip(UNANSWERED_TEXT)
        head.addWidget(self.unanswered_label)
        head.addStretch(1)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName("retryButton")
        self.retry_button.setAutoDefault(False)
        self.retry_button.setToolTip("Send this message again and wait for the answer")
        self.retry_button.clicked.connect(lambda: self.retryRequested.emit(self.item))
        head.addWidget(self.retry_button)
        self.menu_button = QToolButton()
        self.menu_button.setObjectName("messageMenuButton")
        self.menu_button.setText("⋯")
        self.menu_button.setAutoRaise(True)
        self.menu_button.setToolTip("Delete this exchange or clear the chat")
        self.menu_button.setAccessibleName("Message actions")
        self.menu_button.clicked.connect(
            lambda: self.menuRequested.emit(self.item, self.menu_button.mapToGlobal(self.menu_button.rect().bottomLeft())))
        head.addWidget(self.menu_button)
        layout.addLayout(head)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(lambda pos: self.menuRequested.emit(self.item, self.mapToGlobal(pos)))
        self.view = MarkdownView()
        self.view.setAccessibleName(f"{ROLE_TITLES.get(item.role, item.role)} message")
        layout.addWidget(self.view)
        if item.role == "user":
            self.setAutoFillBackground(True)
            self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.refresh()

    def refresh(self) -> None:
        self.unanswered_label.setVisible(self.item.unanswered)
        self.retry_button.setVisible(self.item.retryable)
        self.menu_button.setVisible(not self.item.streaming)
        if self.item.role == "assistant":
            self.view.set_markdown(self.item.text)
        else:
            self.view.set_plain(self.item.text)  # what the person typed, and our own notices, verbatim
