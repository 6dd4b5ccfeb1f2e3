"""A read-only Markdown view for untrusted text (DESIGN.md "Rendering untrusted text").

- Markdown with HTML disabled: ``<img>``, ``<a>``, ``<script>`` typed by a model
  or a tool show as literal text.
- No resources are ever loaded: ``loadResource`` returns nothing, and Markdown
  images are replaced by a text link ("[image: alt]") the person may click.
- Links open in the browser only on click, and only http(s)/mailto links.
- The view sizes itself to its content, so a chat is one scrolling column.
- Huge texts (more than ``DISPLAY_MAX`` characters or ``DISPLAY_MAX_LINES`` lines)
  show only their beginning, as plain text, so laying them out never freezes the window.
- The look (``style_document``): inline code on the alternate surface in the code font,
  indented code blocks on the code background, tables with hairline borders, padding and a
  shaded header row — all as formats of the parsed document, in theme colours (re-applied by
  ``restyle`` after a theme switch). Fenced code blocks are not here: the message cuts them
  out (``segments.py``) and shows each as a ``code_block.CodeBlock`` with Copy.
- An answer's checked citations (``set_markdown(text, citations)``) are links ``[n]`` that
  emit ``citationActivated`` with the passage's span; unsupported ones are marked in the danger
  colour and open nothing (``citation_marks.py``).
"""

from __future__ import annotations

import math
import secrets
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import (QBrush, QColor, QDesktopServices, QFont, QPalette, QResizeEvent, QTextCharFormat,
                           QTextCursor, QTextDocument, QTextDocumentFragment, QTextFormat, QTextFrameFormat,
                           QTextTable, QWheelEvent)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.chat import citation_marks
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.agent.citations import AnswerCitations

MARKDOWN_FEATURES = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                     | QTextDocument.MarkdownFeature.MarkdownNoHTML)
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


# Qt lays text out on the event loop: 20,000 characters of Markdown take ~0.2 s (a table
# more), a 100,000-character line over a second. Longer texts (a runaway 5 MB answer)
# show their first 20,000 characters as plain text, with a note; ``source_text`` keeps all.
# The number of lines counts as much as the characters (each paragraph is laid out on its own).
DISPLAY_MAX = 20_000
DISPLAY_MAX_LINES = 500


def is_huge(text: str) -> bool:
    return len(text) > DISPLAY_MAX or text.count("\n", 0, DISPLAY_MAX + 1) > DISPLAY_MAX_LINES


def shown_part(text: str) -> str:
    if not is_huge(text):
        return text
    head = "\n".join(text[:DISPLAY_MAX].split("\n")[:DISPLAY_MAX_LINES])
    return (head + f"\n\n[… this text is {len(text):,} characters long; only its beginning "
            f"({len(head):,} characters) is shown, without formatting]")


def set_safe_markdown(document: QTextDocument, text: str) -> None:
    """Fill ``document`` from Markdown with raw HTML off and images turned into links.

    The Markdown is parsed into a detached document first: one that is laid out
    (shown) would try to load each image as soon as it appears — Qt decodes
    ``data:`` images itself — before the images could be replaced.
    """
    scratch = QTextDocument()
    scratch.setMarkdown(text, MARKDOWN_FEATURES)
    _replace_images(scratch)
    document.clear()
    QTextCursor(document).insertFragment(QTextDocumentFragment(scratch))


def _is_mono(fmt: QTextCharFormat) -> bool:
    return fmt.fontFixedPitch() or "monospace" in (fmt.fontFamilies() or [])


def style_document(document: QTextDocument) -> None:
    """Give a parsed Markdown document the chat's look (see the module docstring)."""
    code_font = theme.code_font()
    families = [*code_font.families(), "monospace"]
    inline_bg = QBrush(theme.color("surface_alt"))
    block_bg = QBrush(theme.color("code_background"))
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        spans: list[tuple[int, int]] = []
        plain_text = False
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid():
                if _is_mono(fragment.charFormat()):
                    spans.append((fragment.position(), fragment.length()))
                elif fragment.text().strip():
                    plain_text = True
            it += 1
        if spans:
            code = QTextCharFormat()
            code.setFontFamilies(families)
            code.setFontPointSize(code_font.pointSizeF())
            if plain_text or block.textList() is not None or block.blockFormat().hasProperty(
                    QTextFormat.Property.BlockQuoteLevel):
                code.setBackground(inline_bg)  # `code` inside a sentence
            for position, length in spans:
                cursor.setPosition(position)
                cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
                cursor.mergeCharFormat(code)
            if not plain_text and block.textList() is None:  # a line of an indented code block
                fmt = block.blockFormat()
                fmt.setBackground(block_bg)
                fmt.setLeftMargin(0)
                cursor.setPosition(block.position())
                cursor.setBlockFormat(fmt)
        block = block.next()
    _style_tables(document)


def _style_tables(document: QTextDocument) -> None:
    border = QBrush(theme.color("border_strong"))
    header_bg = QBrush(theme.color("surface_alt"))
    for frame in document.rootFrame().childFrames():
        if not isinstance(frame, QTextTable):
            continue
        fmt = frame.format().toTableFormat()
        fmt.setBorder(1)
        fmt.setBorderBrush(border)
        fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
        fmt.setBorderCollapse(True)
        fmt.setCellSpacing(0)
        fmt.setCellPadding(6)
        fmt.setTopMargin(4)
        fmt.setBottomMargin(4)
        frame.setFormat(fmt)
        for column in range(frame.columns()):
            cell = frame.cellAt(0, column)
            cell_format = cell.format().toTableCellFormat()
            cell_format.setBackground(header_bg)
            cell_format.setFontWeight(QFont.Weight.DemiBold)
            cell.setFormat(cell_format)


def _replace_images(document: QTextDocument) -> None:
    found: list[tuple[int, int, str, str]] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid() and fragment.charFormat().isImageFormat():
                fmt = fragment.charFormat().toImageFormat()
                alt = fmt.stringProperty(QTextFormat.Property.ImageAltText) or "image"
                found.append((fragment.position(), fragment.length(), fmt.name(), alt))
            it += 1
        block = block.next()
    if not found:
        return
    cursor = QTextCursor(document)
    for position, length, url, alt in reversed(found):
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(url)
        link.setFontUnderline(True)
        link.setToolTip(plain_tooltip(url))
        cursor.insertText(f"[image: {alt}]", link)


class MarkdownView(QTextBrowser):
    """Shows one message; grows to its content height instead of scrolling."""

    linkActivated = Signal(QUrl)
    citationActivated = Signal(object)  # the checked citation's source (document id, start, end)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        # Transparent through the palette: a per-widget style sheet costs ~1 ms per message.
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, QColor(0, 0, 0, 0))
        self.setPalette(palette)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(2)
        self.document().setIndentWidth(20)  # list levels (Qt's 40 px leaves a gap in a narrow chat)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.anchorClicked.connect(self._open)
        self.highlighted.connect(self._hover)
        self._text = ""
        self._markdown = True
        self._citations: "AnswerCitations | None" = None
        self.marks: list[citation_marks.Shown] = []  # the citation marks shown, in order
        self._token = secrets.token_hex(8)  # in the address of the links this view made itself

    # -- content ---------------------------------------------------------------
    def set_markdown(self, text: str, citations: "AnswerCitations | None" = None) -> None:
        if self._markdown and text == self._text and citations == self._citations:
            return
        self._text, self._markdown, self._citations = text, True, citations
        self._render()

    def _render(self) -> None:
        self.marks = []
        if not self._markdown:
            self.setPlainText(shown_part(self._text))
        elif is_huge(self._text):
            self.setPlainText(shown_part(self._text))
        elif self._citations is not None:
            source, self.marks = citation_marks.marked_source(self._text, self._citations)
            set_safe_markdown(self.document(), source)
            style_document(self.document())
            citation_marks.apply_marks(self.document(), self.marks, self._token)
        else:
            set_safe_markdown(self.document(), self._text)
            style_document(self.document())
        self._fit()

    def restyle(self) -> None:
        """Re-render with the current theme's colours (they are baked into the formats)."""
        self._render()

    def set_plain(self, text: str) -> None:
        if not self._markdown and text == self._text:
            return
        self._text, self._markdown, self._citations = text, False, None
        self.setPlainText(shown_part(text))
        self._fit()

    def source_text(self) -> str:
        return self._text

    def loadResource(self, type: int, name: QUrl | str) -> object:  # noqa: A002,N802 (Qt's signature)
        return None  # never fetch anything: no remote images, no local files either

    # -- links ---------------------------------------------------------------------
    def open_mark(self, index: int) -> bool:
        """Open citation mark ``index`` (a click on it does this); False for an unsupported one."""
        one = self.marks[index] if 0 <= index < len(self.marks) else None
        if one is None or one.cited is None or one.cited.source is None:
            return False
        self.citationActivated.emit(one.cited.source)
        return True

    def _hover(self, url: QUrl) -> None:
        """A link's address as the tool tip; a citation's own tip (its document and quote) instead of its address."""
        if url.scheme() == citation_marks.SCHEME:
            self.setToolTip("")  # the mark's format carries its tip (citation_marks.source_tip)
        else:
            self.setToolTip(plain_tooltip(url.toString()))

    def _open(self, url: QUrl) -> None:
        if url.scheme() == citation_marks.SCHEME:  # only the links this view made: the token says so
            token, _, index = url.path().partition(":")
            if token == self._token and index.isdigit():
                self.open_mark(int(index))
            return
        if url.scheme().lower() in SAFE_SCHEMES:
            self.linkActivated.emit(url)
            QDesktopServices.openUrl(url)

    # -- sizing ------------------------------------------------------------------
    def _fit(self) -> None:
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(max(height, 1))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(super().sizeHint().width(), self.height())

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        event.ignore()  # never scrolls itself: let the chat's scroll area have it
