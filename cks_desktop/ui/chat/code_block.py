"""Code in the chat: a fenced block of an answer, or a tool call's arguments and result.

``CodeText`` is a read-only ``QPlainTextEdit`` (it lays out lazily, so a 5 MB result opens at
once) that is as tall as its content up to ``max_height`` and scrolls beyond. Its height is
measured block by block and stops as soon as the cap is reached, so sizing a huge text costs
no more than sizing a screenful. Highlighting goes through ``highlight.fill`` (Pygments tokens
inserted as text with char formats — never HTML). Lines longer than ``LINE_CHUNK`` are shown
broken (Qt lays a line out as a whole: a 200 kB line took seconds); ``text()`` and Copy keep
the original.

``CodeBlock`` is the card around it: the language as a caption, a Copy button that copies
exactly the code (or ``copy_text`` when the shown text is a rendering of it, such as pretty
JSON of a compact result), and the text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QResizeEvent, QTextCharFormat, QWheelEvent
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QVBoxLayout,
                               QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.chat import highlight
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

LINE_CHUNK = 2000
CODE_MAX_HEIGHT = 560  # a fenced block in an answer; longer code scrolls inside
LANGUAGE_NAMES = {"py": "python", "js": "javascript", "ts": "typescript", "sh": "bash", "yml": "yaml"}


def displayable(text: str) -> str:
    """``text`` with every line longer than ``LINE_CHUNK`` cut into pieces of that length."""
    lines = text.split("\n")
    if all(len(line) <= LINE_CHUNK for line in lines):
        return text
    out: list[str] = []
    for line in lines:
        if len(line) <= LINE_CHUNK:
            out.append(line)
        else:
            out.extend(line[i:i + LINE_CHUNK] for i in range(0, len(line), LINE_CHUNK))
    return "\n".join(out)


class CodeText(QPlainTextEdit):
    """Read-only, selectable monospace text sized to its content (up to ``max_height``)."""

    def __init__(self, max_height: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.max_height = max_height
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabChangesFocus(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFont(theme.code_font())
        self.document().setDocumentMargin(8)
        self._text = ""
        self._language = ""
        self._width_fitted = -1

    def set_code(self, text: str, language: str = "") -> None:
        if text == self._text and language == self._language and self.document().characterCount() > 1:
            return
        self._text, self._language = text, language
        self._render()

    def restyle(self) -> None:
        """Re-apply the colours after a theme switch (they are baked into the char formats)."""
        self.setFont(theme.code_font())
        self._render()

    def _render(self) -> None:
        shown = displayable(self._text)
        if shown is self._text or shown == self._text:
            highlight.fill(self.document(), self._text, self._language, QTextCharFormat())
        else:
            self.setPlainText(shown)  # broken lines: not lexed (the pieces would not be code any more)
        self._width_fitted = -1
        self._fit()

    def text(self) -> str:
        return self._text

    def language(self) -> str:
        return self._language

    # -- sizing --------------------------------------------------------------------
    def content_height(self) -> int:
        """Pixels the text needs, measured until ``max_height`` is reached."""
        layout = self.document().documentLayout()
        margin = self.document().documentMargin()
        height = 2 * margin
        block = self.document().begin()
        while block.isValid() and height < self.max_height:
            height += layout.blockBoundingRect(block).height()
            block = block.next()
        return int(height) + 2 * self.frameWidth() + 2

    def _fit(self) -> None:
        height = max(self.fontMetrics().lineSpacing() + 18, min(self.max_height, self.content_height()))
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded if height >= self.max_height
                                        else Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.height())

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        if self.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
            event.ignore()  # nothing to scroll here: the chat scrolls
        else:
            super().wheelEvent(event)


class CodeBlock(QFrame):
    """A caption (the language, or "Arguments"/"Result"), Copy, and the code."""

    copied = Signal(str)

    def __init__(self, text: str = "", language: str = "", *, caption: str = "", max_height: int = CODE_MAX_HEIGHT,
                 object_name: str = "", copy_what: str = "code", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatCodeBlock")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 1, 1, 1)
        layout.setSpacing(0)
        head = QWidget()
        head.setObjectName("chatCodeHeader")
        row = QHBoxLayout(head)
        row.setContentsMargins(10, 2, 4, 2)
        row.setSpacing(4)
        self.caption = plain_label(caption or LANGUAGE_NAMES.get(language, language) or "text",
                                   name="chatCodeLanguage")
        row.addWidget(self.caption)
        row.addStretch(1)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName(f"{object_name}Copy" if object_name else "codeCopyButton")
        self.copy_button.setProperty("cksRole", "flat")
        self.copy_button.setAutoDefault(False)
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.setToolTip(plain_tooltip(f"Copy the {copy_what} to the clipboard"))
        theme.bind_icon(self.copy_button, "copy", "normal")
        self.copy_button.clicked.connect(self.copy)
        row.addWidget(self.copy_button)
        layout.addWidget(head)
        self.view = CodeText(max_height)
        if object_name:
            self.view.setObjectName(object_name)
        self.view.setAccessibleName(caption or f"{language or 'code'} block")
        layout.addWidget(self.view)
        self.copy_text: str | None = None  # what Copy copies when it is not the shown text
        if text or language:
            self.set_code(text, language)

    def set_code(self, text: str, language: str = "", *, copy_text: str | None = None) -> None:
        self.copy_text = copy_text
        self.view.set_code(text, language)

    def restyle(self) -> None:
        self.view.restyle()

    def code(self) -> str:
        return self.view.text()

    def copy(self) -> None:
        text = self.copy_text if self.copy_text is not None else self.view.text()
        QGuiApplication.clipboard().setText(text)  # the original, without display breaks
        self.copied.emit(text)
