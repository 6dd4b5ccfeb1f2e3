"""Ask mode: a question answered from the session's documents, with checked, numbered citations.

Typing ``/ask QUESTION`` in the chat input (or *Ask the documents…* in the Session menu) opens this
non-modal window. The answer is written by the chat's model from the retrieved passages
(``runtime/answer.py``) on the event loop's tasks, never blocking it. Every citation was checked in the
core before it reaches here: a checked one is a link ``[n]`` in the answer and a row under *Sources*;
clicking either opens the document viewer at its exact span, highlighted. A citation that failed its
check is marked ``[n: unsupported]`` in the answer and listed under *Not supported*, in the danger
colour, never as a source and never a link.

All text here is untrusted (the model's answer, document names, quotes): the answer is escaped
before it is put into the view's markup, and every other string is shown as plain text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QUrl, Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QTextBrowser,
                               QVBoxLayout, QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label

if TYPE_CHECKING:
    from cks_desktop.runtime.answer import Answer, Citation

ASK_PREFIX = "/ask"
Ask = Callable[[str], Awaitable["Answer"]]
Spawn = Callable[[Coroutine[Any, Any, Any]], Any]
ROLE_N = Qt.ItemDataRole.UserRole + 1
MAX_FIELD_CHARS = 1_000_000  # far over what the ask refuses, so a too-long question is refused whole
_MARK = re.compile(r"\[(\d+)(: unsupported)?\]")


def ask_question(text: str) -> str | None:
    """The question of a ``/ask QUESTION`` message, or None when the message is not one."""
    head, _, rest = text.strip().partition(" ")
    return rest.strip() if head == ASK_PREFIX and rest.strip() else None


def answer_html(text: str) -> str:
    """The answer as escaped markup: checked ``[n]`` markers as links, unsupported ones in danger colour."""
    danger = theme.hex_color("danger")
    out: list[str] = []
    at = 0
    for m in _MARK.finditer(text):
        out.append(html.escape(text[at:m.start()]).replace("\n", "<br>"))
        n = m.group(1)
        if m.group(2):
            out.append(f'<span style="color:{danger}"><s>[{n}]</s> not supported</span>')
        else:
            out.append(f'<a href="cite:{n}">[{n}]</a>')
        at = m.end()
    out.append(html.escape(text[at:]).replace("\n", "<br>"))
    return "".join(out)


class AskWindow(QWidget):
    """The question field, the answer with its citations, the sources and what is not supported."""

    answered = Signal()
    citationOpened = Signal(str, int, int)  # document id, start, end

    def __init__(self, ask: Ask, open_citation: Callable[["Citation"], None], spawn: Spawn,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("askWindow")
        self.setWindowTitle("Ask the documents")
        self._ask, self._open, self._spawn = ask, open_citation, spawn
        self.answer: "Answer | None" = None
        self.question = QLineEdit()
        self.question.setObjectName("askQuestion")
        self.question.setMaxLength(MAX_FIELD_CHARS)  # Qt's default, 32,767, would cut a pasted text unseen
        self.question.setPlaceholderText("Ask the session's documents a question")
        self.question.setAccessibleName("Question")
        self.ask_button = QPushButton("Ask")
        self.ask_button.setObjectName("askButton")
        theme.bind_icon(self.ask_button, "magnifying-glass")
        self.status = plain_label("", name="askStatus", wrap=True)
        self.view = QTextBrowser()
        self.view.setObjectName("askAnswer")
        self.view.setAccessibleName("Answer")
        self.view.setOpenLinks(False)
        self.view.anchorClicked.connect(self._link)
        self.sources = QListWidget()
        self.sources.setObjectName("askSources")
        self.sources.setAccessibleName("Sources")
        self.sources.itemActivated.connect(self._row)
        self.sources.itemClicked.connect(self._row)
        self.unsupported = QListWidget()
        for lst in (self.sources, self.unsupported):  # a long quote wraps instead of scrolling sideways
            lst.setWordWrap(True)
            lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.unsupported.setObjectName("askUnsupported")
        self.unsupported.setAccessibleName("Citations not supported by the passages")
        row = QHBoxLayout()
        row.addWidget(self.question, 1)
        row.addWidget(self.ask_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.view, 3)
        self.sources_label = plain_label("Sources — click one to open the document at the passage")
        layout.addWidget(self.sources_label)
        layout.addWidget(self.sources, 1)
        self.unsupported_label = plain_label("Not supported — the model cited what its passages do not say")
        theme.set_role(self.unsupported_label, "hint", "danger")
        layout.addWidget(self.unsupported_label)
        layout.addWidget(self.unsupported, 1)
        self.ask_button.clicked.connect(self.submit)
        self.question.returnPressed.connect(self.submit)
        self._show_lists()
        self.resize(720, 560)

    def ask(self, question: str) -> None:
        """Show the window with ``question`` and answer it."""
        self.question.setText(question)
        self.show()
        self.raise_()
        self.submit()

    def submit(self) -> Any:
        """Answer the question in the field; the spawned task (None when there is nothing to ask)."""
        question = self.question.text().strip()
        if not question or not self.ask_button.isEnabled():
            return None
        self.ask_button.setEnabled(False)
        self.status.setText("Finding the passages and asking the model…")
        return self._spawn(self._run(question))

    async def _run(self, question: str) -> None:
        from cks_desktop.llm.provider import ProviderError
        from cks_desktop.runtime.ask import AskUseCase

        try:
            answer = await self._ask(question)
        except (AskUseCase.Error, ProviderError, ValueError) as exc:
            self.status.setText(exc.message if isinstance(exc, ProviderError) else str(exc))
            return
        finally:
            self.ask_button.setEnabled(True)
        self.show_answer(answer)

    def show_answer(self, answer: "Answer") -> None:
        self.answer = answer
        self.view.setHtml(answer_html(answer.text))
        self.sources.clear()
        for c in answer.citations:
            where = f"page {c.page}, " if c.page is not None else ""
            quote = f" — “{c.quote}”" if c.quote else ""
            item = QListWidgetItem(f"[{c.n}] {c.document} ({where}characters {c.start:,}–{c.end:,}){quote}")
            item.setData(ROLE_N, len(self.sources_items()))
            item.setToolTip("Open the document at this passage")
            self.sources.addItem(item)
        self.unsupported.clear()
        for u in answer.unsupported:
            quote = f" “{u.quote}”" if u.quote else ""
            item = QListWidgetItem(f"[{u.n}]{quote}: {u.to_json()['reason']}")
            item.setForeground(theme.color("danger"))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.unsupported.addItem(item)
        checked = len(answer.citations)
        self.status.setText("" if not answer.answered or checked else "The answer cites no passage.")
        self._show_lists()
        self.answered.emit()

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch: the answer's markup is made again in the new scheme's colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.answer is not None:
            self.view.setHtml(answer_html(self.answer.text))
            for i in range(self.unsupported.count()):
                self.unsupported.item(i).setForeground(theme.color("danger"))

    def sources_items(self) -> list[QListWidgetItem]:
        return [self.sources.item(i) for i in range(self.sources.count())]

    def _show_lists(self) -> None:
        has_sources = bool(self.answer and self.answer.citations)
        has_bad = bool(self.answer and self.answer.unsupported)
        self.sources_label.setVisible(has_sources)
        self.sources.setVisible(has_sources)
        self.unsupported_label.setVisible(has_bad)
        self.unsupported.setVisible(has_bad)

    def open_citation(self, index: int) -> None:
        """Open citation ``index`` (of the checked ones) in the document viewer."""
        if self.answer is None or not 0 <= index < len(self.answer.citations):
            return
        c = self.answer.citations[index]
        self._open(c)
        self.citationOpened.emit(c.document_id, c.start, c.end)

    def _link(self, url: QUrl) -> None:
        if url.scheme() != "cite" or self.answer is None:
            return
        n = int(url.path()) if url.path().isdigit() else -1
        index = next((i for i, c in enumerate(self.answer.citations) if c.n == n), -1)
        self.open_citation(index)

    def _row(self, item: QListWidgetItem) -> None:
        self.open_citation(int(item.data(ROLE_N)))
