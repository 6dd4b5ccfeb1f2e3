"""An answer's checked citations, shown where they stand in its Markdown.

The core checked each citation of the answer against the passages its turn retrieved
(``agent/citations.py``). Here a checked one becomes ``[n]``, a link that opens the document viewer
at its exact span (its tool tip names the document, page and quote); an unsupported one becomes the
plain text ``[n: not in the passages]`` in the danger colour, its number struck through, as the Ask
window marks it (``ui/ask_view.py``), and is never a link or a source.

How, with HTML off: before the Markdown is parsed, each marker is replaced by a private-use
sentinel holding its index, followed by its label with the brackets escaped (so no marker can turn
into a Markdown link); after parsing, each sentinel is found in the document, removed, and the label
after it given its format. Sentinel characters the model itself wrote are dropped first, so no text
can pose as a mark. A link's address holds a token of its view, so a Markdown link the model wrote
(``[x](cite:…)``) opens nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRegularExpression
from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

from cks_desktop.agent.citations import AnswerCitations, Cited
from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip

OPEN, CLOSE = "\ue000", "\ue001"
UNSUPPORTED_WORDS = "not in the passages"
_NBSP = "\u00a0"  # a mark never breaks across lines
SCHEME = "cite"
_SENTINEL = QRegularExpression(f"{OPEN}(\\d+){CLOSE}")


@dataclass(frozen=True)
class Shown:
    """One mark as shown: its number, its label's text and its verdict (None: not checked)."""

    n: int
    cited: Cited | None

    @property
    def linked(self) -> bool:
        return self.cited is not None and self.cited.checked

    @property
    def label(self) -> str:
        if self.linked or self.cited is None:
            return f"[{self.n}]"
        return f"[{self.n}:{_NBSP}{UNSUPPORTED_WORDS.replace(' ', _NBSP)}]"


def marked_source(text: str, verdict: AnswerCitations) -> tuple[str, list[Shown]]:
    """``text`` with each citation marker replaced by sentinels and labels, and the marks in order."""
    text = text.replace(OPEN, "").replace(CLOSE, "")
    out: list[str] = []
    shown: list[Shown] = []
    at = 0
    spans: dict[tuple[int, int], list[Shown]] = {}
    for mark in verdict.marks(text):
        spans.setdefault((mark.start, mark.end), []).append(Shown(mark.n, mark.cited))
    for (start, end), marks in spans.items():
        out.append(text[at:start])
        for one in marks:
            out.append(f"{OPEN}{len(shown)}{CLOSE}{_escaped(one.label)}")
            shown.append(one)
        at = end
    out.append(text[at:])
    return "".join(out), shown


def apply_marks(document: QTextDocument, shown: list[Shown], token: str) -> None:
    """Find each sentinel in the parsed ``document``, remove it and format the label after it."""
    cursor = QTextCursor(document)
    while True:
        cursor = document.find(_SENTINEL, cursor)
        if cursor.isNull():
            return
        index = int(cursor.selectedText()[1:-1])
        cursor.removeSelectedText()
        if not 0 <= index < len(shown):
            continue
        one = shown[index]
        start = cursor.position()
        label = one.label
        probe = QTextCursor(document)
        probe.setPosition(start)
        probe.setPosition(min(start + len(label), document.characterCount() - 1), QTextCursor.MoveMode.KeepAnchor)
        # in a code span the escapes stay as written: the label is longer by its backslashes
        length = len(label) if probe.selectedText() == label else len(_escaped(label))
        _format(cursor, start, length, one, index, token)


def _escaped(label: str) -> str:
    return label.replace("[", "\\[").replace("]", "\\]")


def _format(cursor: QTextCursor, start: int, length: int, one: Shown, index: int, token: str) -> None:
    fmt = QTextCharFormat()
    cited = one.cited
    if cited is None:
        return
    if cited.source is not None:
        fmt.setAnchor(True)
        fmt.setAnchorHref(f"{SCHEME}:{token}:{index}")
        fmt.setForeground(theme.color("link"))
        fmt.setFontUnderline(True)
        fmt.setToolTip(plain_tooltip(source_tip(cited)))
    else:
        fmt.setForeground(theme.color("danger"))
        fmt.setToolTip(plain_tooltip(f"Not supported: {cited.why}" + (f" — “{cited.quote}”" if cited.quote else "")))
    cursor.setPosition(start)
    cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
    cursor.mergeCharFormat(fmt)
    if cited.source is None:  # the number struck through, as the Ask window strikes it
        digits = len(str(one.n))
        strike = QTextCharFormat()
        strike.setFontStrikeOut(True)
        cursor.setPosition(start + 1)
        cursor.setPosition(start + 1 + digits, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(strike)
    cursor.setPosition(start + length)


def source_tip(cited: Cited) -> str:
    """What a checked citation's tool tip says: where its words are, and that a click opens them."""
    s = cited.source
    if s is None:
        return ""
    page = f", page {s.page}" if s.page is not None else ""
    quote = f" — “{s.quote}”" if s.quote else ""
    return f"{s.document}{page}{quote}\nClick to open the document at the passage."
