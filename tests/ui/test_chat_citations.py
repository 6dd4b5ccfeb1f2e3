"""A chat answer's citations of the passages its turn retrieved, in the real window.

The real window on a real data folder; the model is a fake on the real OpenAI wire that calls
``retrieve_passages`` and answers only from the passages the tool result carries, citing one by
its number with its exact words, plus a passage it was never given and a misquote
(``tests/fakes/chat_reader.py``). A click on the checked ``[n]`` opens the document viewer at the
quote's exact span; the unsupported ones read "[n: not in the passages]" in the danger colour and
are no links; a reopened window shows the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QTextCursor

from cks_desktop.agent.citations import AnswerCitations, Cited
from cks_desktop.retrieval.citations import Citation
from cks_desktop.ui import theme
from cks_desktop.ui.chat.markdown_view import MarkdownView
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.provenance.viewer import DocumentViewer
from tests.fakes.chat_reader import ChatReader
from tests.fakes.providers import make_fake
from tests.retrieval.conftest import DISTRACTORS, add_text
from tests.retrieval.test_doors import REPORT
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_chat_features import _widget
from tests.ui.test_window import _send

QUESTION = "Who designed the iron bridge at Kellby?"
QUOTE = "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby"


def _answer(window) -> MessageItem:  # type: ignore[no-untyped-def]
    return [i for i in window.chat_panel.model.items if isinstance(i, MessageItem) and i.role == "assistant"][-1]


def _label_at(view: MarkdownView, label: str, nth: int = 0) -> QTextCursor:
    """A cursor inside the ``nth`` occurrence of ``label`` in the view's text."""
    at = -1
    for _ in range(nth + 1):
        at = view.toPlainText().index(label, at + 1)
    cursor = QTextCursor(view.document())
    cursor.setPosition(at + 1)
    return cursor


@pytest.mark.asyncio
async def test_a_checked_citation_opens_the_passage_and_an_unsupported_one_is_marked(qtbot, home: Path) -> None:
    with make_fake("openai") as fake:
        fake.side_turn = ChatReader("mixed")
        async with open_window(home, fake=fake, provider="openai") as window:
            window.sidebar.create_session()
            sid = window.current_session
            add_text(window.services.store, sid, "report.txt", REPORT)
            for i, text in enumerate(DISTRACTORS):
                add_text(window.services.store, sid, f"other{i}.txt", text)
            await wait(_send(window, qtbot, QUESTION), timeout=60)
            item = _answer(window)
            assert item.citations is not None and len(item.citations.sources) == 1
            view = _widget(window.chat_panel, item).view
            shown = view.toPlainText()
            assert f"{QUOTE} [1]." in shown  # the checked citation, its quote under the link's tool tip
            assert "painted red [99: not in the passages]" in shown
            assert shown.count("[1: not in the passages]") == 1  # the misquote of passage 1
            assert '"painted red"' not in shown and "\ue000" not in shown
            # The unsupported marks: danger colour, number struck through, no link.
            bad = _label_at(view, "[99: not in the passages]").charFormat()
            assert bad.foreground().color() == theme.color("danger") and not bad.isAnchor()
            cursor = _label_at(view, "[99: not in the passages]")
            cursor.setPosition(cursor.position() + 1)
            assert cursor.charFormat().fontStrikeOut()
            # A real click on the checked [1] opens the viewer at the quote's exact span.
            link = _label_at(view, "[1].")
            assert link.charFormat().isAnchor() and "Ada Lovelace" in link.charFormat().toolTip()
            rect = view.cursorRect(link)
            opened = signal_future(view.citationActivated)
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.x() + 1, rect.center().y()))
            (source,) = await wait(opened)
            viewer = window.findChild(DocumentViewer, "documentViewer")
            assert viewer is not None
            if viewer.passage != (source.start, source.end):
                await wait(signal_future(viewer.opened))
            assert viewer.passage == (source.start, source.end) and viewer.isVisible()
            assert viewer.text.toPlainText()[source.start:source.end] == QUOTE
            # A click on an unsupported mark opens nothing.
            assert not any(view.open_mark(i) for i, m in enumerate(view.marks) if not m.linked)
    # After a restart the transcript's verdict shows the same marks.
    async with open_window(home) as window:
        window.open_session(sid)
        item = _answer(window)
        assert item.citations is not None
        view = _widget(window.chat_panel, item).view
        assert f"{QUOTE} [1]." in view.toPlainText() and "[99: not in the passages]" in view.toPlainText()
        assert _label_at(view, "[1].").charFormat().isAnchor()


def test_a_link_the_model_wrote_to_a_citation_address_opens_nothing(qtbot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    fired: list[object] = []
    view.citationActivated.connect(fired.append)
    source = Citation(1, "d.txt", "D", None, 0, 5, None)
    view.set_markdown("Alpha [1]. See [this](cite:guess:0).", AnswerCitations((Cited(1, None, source),), 1))
    made = _label_at(view, "[1]").charFormat().anchorHref()
    assert made.startswith("cite:") and made != "cite:guess:0"
    view.anchorClicked.emit(QUrl("cite:guess:0"))  # the model's own link: no token of this view
    assert fired == []
    view.anchorClicked.emit(QUrl(made))
    assert fired == [source]
