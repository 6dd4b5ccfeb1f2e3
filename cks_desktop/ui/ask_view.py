"""Ask mode: a question answered from the session's documents, with checked, numbered citations.

Typing ``/ask QUESTION`` in the chat input (or *Ask the documents…* in the Chat menu) opens this
non-modal window. Its *Main themes* button shows the main themes of the whole graph in the same view,
with citations that open the same way (``ui/themes_view.py``). The answer is written by the chat's model from the retrieved passages
(``runtime/answer.py``) on the event loop's tasks, never blocking it. Every citation was checked in the
core before it reaches here: a checked one is a link ``[n]`` in the answer and a row under *Sources*;
clicking either opens the document viewer at its exact span, highlighted. A citation that failed its
check is marked ``[n: unsupported]`` in the answer and listed under *Not supported*, in the danger
colour, never as a source and never a link.

All text here is untrusted (the model's answer, document names, quotes): the answer is escaped
before it is put into the view's markup, and every other string is shown as plain text.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QUrl, Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLineEdit, QListWidget, QListWidgetItem, QProgressBar, QPushButton,
                               QTextBrowser, QVBoxLayout, QWidget)

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.themes_view import EMPTY_GRAPH, NO_PROVIDER, ThemesDoor, numbered, themes_html, where

if TYPE_CHECKING:
    from cks_desktop.runtime.answer import Answer, Citation
    from cks_desktop.runtime.themes import Themes

ASK_PREFIX = "/ask"
Ask = Callable[[str], Awaitable["Answer"]]
Spawn = Callable[[Coroutine[Any, Any, Any]], Any]
ROLE_N = Qt.ItemDataRole.UserRole + 1
MAX_FIELD_CHARS = 1_000_000  # far over what the ask refuses, so a too-long question is refused whole
_MARK = re.compile(r"\[(\d+)(: unsupported)?\]")
SOURCES_HINT = "Sources — click one to open the document at the passage"
UNSUPPORTED_ANSWER = "Not supported — the model cited what its passages do not say"
UNSUPPORTED_THEMES = "Not supported — themes naming no community they were given, so shown with no source"


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
    themesShown = Signal()
    themesFinished = Signal()  # a themes run ended: shown, refused, cancelled or failed
    themesQuestionOpened = Signal(object)  # the "go on?" box, once it is open
    citationOpened = Signal(str, int, int)  # document id, start, end

    def __init__(self, ask: Ask, open_citation: Callable[[Any], None], spawn: Spawn,
                 parent: QWidget | None = None, themes: ThemesDoor | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("askWindow")
        self.setWindowTitle("Ask the documents")
        self._ask, self._open, self._spawn, self._themes = ask, open_citation, spawn, themes
        self.answer: "Answer | None" = None
        self.themes: "Themes | None" = None
        self._cited: list[tuple[int, Any]] = []  # (number shown, citation) of what the view shows
        self._themes_task: Any = None  # the running themes task, while its model calls run (Stop cancels it)
        self.question = QLineEdit()
        self.question.setObjectName("askQuestion")
        self.question.setMaxLength(MAX_FIELD_CHARS)  # Qt's default, 32,767, would cut a pasted text unseen
        self.question.setPlaceholderText("Ask the session's documents a question")
        self.question.setAccessibleName("Question")
        self.ask_button = QPushButton("Ask")
        self.ask_button.setObjectName("askButton")
        theme.bind_icon(self.ask_button, "magnifying-glass")
        self.themes_button = QPushButton("Main themes")
        self.themes_button.setObjectName("themesButton")
        self.themes_button.setToolTip("The main themes of the whole graph, each citing its passages "
                                      "(says first how many model calls it takes)")
        theme.bind_icon(self.themes_button, "lightbulb")
        self.themes_button.setVisible(themes is not None)
        self.status = plain_label("", name="askStatus", wrap=True)
        self.progress = QProgressBar()
        self.progress.setObjectName("askProgress")
        self.progress.setAccessibleName("Model calls made")
        self.progress.setTextVisible(False)  # the count is in the status line, legible on any fill
        self.progress.hide()
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
        row.addWidget(self.themes_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(self.view, 3)
        self.sources_label = plain_label(SOURCES_HINT, wrap=True)
        layout.addWidget(self.sources_label)
        layout.addWidget(self.sources, 1)
        self.unsupported_label = plain_label(UNSUPPORTED_ANSWER, wrap=True)
        theme.set_role(self.unsupported_label, "hint", "danger")
        layout.addWidget(self.unsupported_label)
        layout.addWidget(self.unsupported, 1)
        self.ask_button.clicked.connect(self.submit)
        self.themes_button.clicked.connect(self._themes_clicked)
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
        self._set_busy(True)
        self.status.setText("Finding the passages and asking the model…")
        return self._spawn(self._run(question))

    def _set_busy(self, busy: bool) -> None:
        """One question at a time: an answer and a themes run share the view."""
        self.ask_button.setEnabled(not busy)
        self.themes_button.setEnabled(not busy)

    async def _run(self, question: str) -> None:
        from cks_desktop.llm.provider import ProviderError
        from cks_desktop.runtime.ask import AskUseCase

        try:
            answer = await self._ask(question)
        except (AskUseCase.Error, ProviderError, ValueError) as exc:
            self.status.setText(exc.message if isinstance(exc, ProviderError) else str(exc))
            return
        finally:
            self._set_busy(False)
        self.show_answer(answer)

    def show_answer(self, answer: "Answer") -> None:
        self.answer, self.themes = answer, None
        self.view.setHtml(answer_html(answer.text))
        self._fill_sources([(c.n, c) for c in answer.citations])
        self._fill_unsupported(UNSUPPORTED_ANSWER, [f"[{u.n}]{f' “{u.quote}”' if u.quote else ''}: "
                                                    f"{u.to_json()['reason']}" for u in answer.unsupported])
        checked = len(answer.citations)
        self.status.setText("" if not answer.answered or checked else "The answer cites no passage.")
        self._show_lists()
        self.answered.emit()

    def clear(self) -> None:
        """Show nothing (another session is open: what is shown belongs to the last one); not
        while a question or a themes run is under way (its answer follows)."""
        if not self.ask_button.isEnabled():
            return
        self.answer = self.themes = None
        self.view.clear()
        self._fill_sources([])
        self._fill_unsupported(UNSUPPORTED_ANSWER, [])
        self.status.setText("")
        self._show_lists()

    # -- the main themes ---------------------------------------------------------
    def find_themes(self) -> Any:
        """Count the model calls, ask to go on, find the main themes; the spawned task (None when
        the window has no themes door or is busy)."""
        if self._themes is None or not self.themes_button.isEnabled() or self._themes_task is not None:
            return None
        self._set_busy(True)
        self.status.setText("Counting the graph's communities…")
        return self._spawn(self._run_themes(self._themes))

    def _themes_clicked(self) -> None:
        if self._themes_task is not None:
            self.stop_themes()
        else:
            self.find_themes()

    def stop_themes(self) -> bool:
        """Stop a running themes run (its button reads Stop meanwhile); what was summarised stays."""
        task, self._themes_task = self._themes_task, None
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def _show_stop(self, running: bool) -> None:
        """While the model calls run, the Main themes button is their Stop."""
        self.themes_button.setText("Stop" if running else "Main themes")
        self.themes_button.setToolTip("Stop finding the themes; the summaries written so far are kept" if running
                                      else "The main themes of the whole graph, each citing its passages "
                                           "(says first how many model calls it takes)")
        theme.bind_icon(self.themes_button, "stop" if running else "lightbulb")
        self.themes_button.setEnabled(running)

    async def _run_themes(self, door: ThemesDoor) -> None:
        from cks_desktop.llm.provider import ProviderError
        from cks_desktop.runtime.themes import ThemesError

        try:
            found = await self._themes_steps(door)
        except ThemesError as exc:
            self.status.setText(str(exc))
        except ProviderError as exc:
            self.status.setText(f"{exc.message} The summaries written so far are kept.")
        except (ValueError, OSError) as exc:
            self.status.setText(f"The themes could not be found: {exc}")
        except asyncio.CancelledError:
            self.status.setText("Stopped; the summaries written so far are kept.")
            raise
        else:
            if found is not None:
                self.show_themes(found)
        finally:
            self._themes_task = None
            self._show_stop(False)
            self.progress.hide()
            self._set_busy(False)
            self.themesFinished.emit()

    async def _themes_steps(self, door: ThemesDoor) -> "Themes | None":
        """Estimate, refuse in one sentence or ask, then run with the calls counted; None: not run."""
        from cks_desktop.ui.dialogs import confirm

        session = door.session()
        estimate = await door.estimate(session)
        if not estimate.communities:
            self.status.setText(EMPTY_GRAPH)
            return None
        if not door.configured():
            self.status.setText(NO_PROVIDER)
            return None
        self.status.setText(estimate.sentence())
        go = await confirm(self, "Main themes", "Find the main themes of this graph?", accept_text="Find the themes",
                           informative=f"{estimate.sentence()} Each call goes to the chat's model.",
                           on_open=self.themesQuestionOpened.emit)
        if not go:
            self.status.setText("")
            return None
        self._calls_done(0, estimate.calls)
        self.progress.show()
        self._themes_task = asyncio.current_task()
        self._show_stop(True)
        return await door.run(session, estimate, self._calls_done)

    def _calls_done(self, made: int, stated: int) -> None:
        self.status.setText(f"Finding the main themes: {made:,} of {counted(stated, 'model call')} made…")
        self.progress.setRange(0, max(stated, 1))
        self.progress.setValue(made)

    def show_themes(self, found: "Themes") -> None:
        """Each theme with its summary and its numbered citations; unsupported themes apart."""
        self.answer, self.themes = None, found
        sources = numbered(found)
        self.view.setHtml(themes_html(found, sources))
        self._fill_sources(list(enumerate(sources, 1)))
        self._fill_unsupported(UNSUPPORTED_THEMES, [f"{t['title']}: {t['summary']}" for t in found.unsupported])
        self.status.setText("")
        self._show_lists()
        self.themesShown.emit()

    # -- the lists -----------------------------------------------------------------
    def _fill_sources(self, cited: list[tuple[int, Any]]) -> None:
        self._cited = cited
        self.sources.clear()
        for i, (n, c) in enumerate(cited):
            quote = f" — “{c.quote}”" if c.quote else ""
            item = QListWidgetItem(f"[{n}] {where(c)}{quote}")
            item.setData(ROLE_N, i)
            item.setToolTip("Open the document at this passage")
            self.sources.addItem(item)

    def _fill_unsupported(self, hint: str, rows: list[str]) -> None:
        self.unsupported_label.setText(hint)
        self.unsupported.clear()
        for text in rows:
            item = QListWidgetItem(text)
            item.setForeground(theme.color("danger"))
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.unsupported.addItem(item)

    def _markup(self) -> str | None:
        if self.answer is not None:
            return answer_html(self.answer.text)
        if self.themes is not None:
            return themes_html(self.themes, [c for _n, c in self._cited])
        return None

    def changeEvent(self, event: QEvent) -> None:
        """A theme switch: the view's markup is made again in the new scheme's colours."""
        super().changeEvent(event)
        markup = self._markup() if event.type() == QEvent.Type.PaletteChange else None
        if markup is not None:
            self.view.setHtml(markup)
            for i in range(self.unsupported.count()):
                self.unsupported.item(i).setForeground(theme.color("danger"))

    def sources_items(self) -> list[QListWidgetItem]:
        return [self.sources.item(i) for i in range(self.sources.count())]

    def _show_lists(self) -> None:
        has_sources = bool(self._cited)
        has_bad = self.unsupported.count() > 0
        self.sources_label.setVisible(has_sources)
        self.sources.setVisible(has_sources)
        self.unsupported_label.setVisible(has_bad)
        self.unsupported.setVisible(has_bad)

    def open_citation(self, index: int) -> None:
        """Open citation ``index`` (of the checked ones shown: an answer's or the themes') in the viewer."""
        if not 0 <= index < len(self._cited):
            return
        c = self._cited[index][1]
        self._open(c)
        self.citationOpened.emit(c.document_id, c.start, c.end)

    def _link(self, url: QUrl) -> None:
        if url.scheme() != "cite":
            return
        n = int(url.path()) if url.path().isdigit() else -1
        index = next((i for i, (shown, _c) in enumerate(self._cited) if shown == n), -1)
        self.open_citation(index)

    def _row(self, item: QListWidgetItem) -> None:
        self.open_citation(int(item.data(ROLE_N)))
