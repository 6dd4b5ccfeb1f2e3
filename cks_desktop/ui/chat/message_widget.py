"""One message in the chat: who said it, and the text (Markdown for the assistant)."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QStyle, QVBoxLayout, QHBoxLayout, QWidget

from cks_desktop.ui.chat.markdown_view import MarkdownView
from cks_desktop.ui.chat.model import MessageItem

ROLE_TITLES = {"user": "You", "assistant": "Assistant", "notice": "Note", "error": "Problem"}


class MessageWidget(QFrame):
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
            badge = QLabel()
            badge.setPixmap(self.style().standardIcon(icon).pixmap(size, size))
            head.addWidget(badge)
        title = QLabel(ROLE_TITLES.get(item.role, item.role))
        font = title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 0.9)
        title.setFont(font)
        head.addWidget(title)
        head.addStretch(1)
        layout.addLayout(head)
        self.view = MarkdownView()
        self.view.setAccessibleName(f"{ROLE_TITLES.get(item.role, item.role)} message")
        layout.addWidget(self.view)
        if item.role == "user":
            self.setAutoFillBackground(True)
            self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.refresh()

    def refresh(self) -> None:
        if self.item.role == "assistant":
            self.view.set_markdown(self.item.text)
        else:
            self.view.set_plain(self.item.text)  # what the person typed, and our own notices, verbatim
