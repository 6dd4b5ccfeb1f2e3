"""Ask mode in the real window: ``/ask`` in the chat input answers from the session's documents through
the real OpenAI wire (a fake server whose model answers only from the passages it is sent); clicking a
citation opens the document viewer at the quote's exact span, highlighted; an unsupported citation is
marked and is no source."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QLabel

from cks_desktop.ui.ask_view import AskWindow
from cks_desktop.ui.chat.message_widget import ASK_MARK
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.provenance.viewer import DocumentViewer
from tests.fakes.ask_reader import AskReader
from tests.fakes.providers import make_fake
from tests.retrieval.conftest import DISTRACTORS, add_text
from tests.retrieval.test_doors import REPORT
from tests.ui.conftest import open_window
from tests.ui.test_chat_features import _widget
from tests.ui.helpers import signal_future, wait


def _documents(window) -> str:  # type: ignore[no-untyped-def]
    window.sidebar.create_session()
    sid = window.current_session
    add_text(window.services.store, sid, "report.txt", REPORT)
    for i, t in enumerate(DISTRACTORS):
        add_text(window.services.store, sid, f"other{i}.txt", t)
    return sid


async def _ask(window, question: str) -> AskWindow:  # type: ignore[no-untyped-def]
    composer = window.chat_panel.composer
    composer.input.setPlainText(f"/ask {question}")
    ask = None
    composer.submit()
    ask = window.findChild(AskWindow, "askWindow")
    assert ask is not None and ask.isVisible() and composer.input.toPlainText() == ""
    await wait(signal_future(ask.answered), timeout=60)
    return ask


@pytest.mark.asyncio
async def test_a_citation_click_opens_the_viewer_at_the_quote(qtbot, home: Path) -> None:
    model = AskReader("good")
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            _documents(window)
            ask = await _ask(window, "Who designed the iron bridge at Kellby?")
            assert model.calls == 1 and ask.answer is not None
            [c] = ask.answer.citations
            assert "Ada Lovelace" in (c.quote or "") and ask.unsupported.isHidden()
            assert f'href="cite:{c.n}"' in ask.view.toHtml() and ask.sources.count() == 1
            opened = signal_future(ask.citationOpened)
            ask.view.anchorClicked.emit(QUrl(f"cite:{c.n}"))  # what a click on the [n] link sends
            await wait(opened)
            viewer = window.findChild(DocumentViewer, "documentViewer")
            assert viewer is not None
            await wait(signal_future(viewer.opened))
            assert viewer.passage == (c.start, c.end) and viewer.isVisible()
            assert viewer.text.toPlainText()[c.start:c.end] == c.quote
            assert viewer.text.extraSelections()  # the span is marked


@pytest.mark.asyncio
async def test_an_unsupported_citation_is_marked_and_no_source(qtbot, home: Path) -> None:
    with make_fake("openai") as fake:
        fake.side_turn = AskReader("mixed")
        async with open_window(home, fake=fake, provider="openai") as window:
            _documents(window)
            ask = await _ask(window, "Who designed the iron bridge at Kellby?")
            assert ask.answer is not None and [u.n for u in ask.answer.unsupported] == [99]
            assert not ask.unsupported.isHidden() and ask.unsupported.count() == 1
            assert "no passage with this number" in ask.unsupported.item(0).text()
            assert ask.sources.count() == 1 and "cite:99" not in ask.view.toHtml()
            assert "not supported" in ask.view.toPlainText()
            ask.view.anchorClicked.emit(QUrl("cite:99"))  # even a forged link opens nothing
            assert window.findChild(DocumentViewer, "documentViewer") is None
            # a question far too long: one sentence in the window, the question kept, no model asked
            before = len(fake.generation_requests)
            ask.question.setText("why " * 25_000)
            await wait(ask.submit())
            assert ask.status.text() == "The question is 99,999 characters long; ask in at most 4,000 characters."
            assert len(ask.question.text()) == 100_000 and ask.ask_button.isEnabled()
            assert len(fake.generation_requests) == before


def _ask_items(window) -> list[MessageItem]:  # type: ignore[no-untyped-def]
    return [i for i in window.chat_panel.model.items if isinstance(i, MessageItem) and i.from_ask]


@pytest.mark.asyncio
async def test_an_answer_is_kept_in_the_chat_marked_as_from_ask_after_a_restart(qtbot, home: Path) -> None:
    with make_fake("openai") as fake:
        fake.side_turn = AskReader("mixed")
        async with open_window(home, fake=fake, provider="openai") as window:
            sid = _documents(window)
            kept = signal_future(window.askKept)
            ask = await _ask(window, "Who designed the iron bridge at Kellby?")
            assert (await wait(kept)) == (sid,)
            assert ask.answer is not None
            [c], [u] = ask.answer.citations, ask.answer.unsupported
            prompt, answer = _ask_items(window)
            assert (prompt.role, prompt.text) == ("user", "/ask Who designed the iron bridge at Kellby?")
            assert answer.role == "assistant" and answer.text.startswith(ask.answer.text.strip())
            assert f"- [{c.n}] {c.document} (" in answer.text and f"“{c.quote}”" in answer.text
            assert "**Not supported**" in answer.text and f"- [{u.n}]" in answer.text
            assert not prompt.last_prompt and not answer.last_answer  # not the chat's: no Edit, no Regenerate
            header = _widget(window.chat_panel, answer).findChild(QLabel, "chatAskMark")
            assert header is not None and header.text() == ASK_MARK
            shown = [(i.role, i.text) for i in _ask_items(window)]
        async with open_window(home, fake=fake, provider="openai") as window:  # the app started again
            window.sidebar.select(sid)
            assert [(i.role, i.text) for i in _ask_items(window)] == shown


@pytest.mark.asyncio
async def test_an_answer_given_while_the_chat_answers_is_kept_after_that_turn(qtbot, home: Path) -> None:
    from tests.fakes.script import Turn
    from tests.ui.helpers import model_future
    from tests.ui.test_window import _send

    with make_fake("openai") as fake:
        fake.side_turn = AskReader("good")  # answers the Ask window's requests; the chat's come from the queue
        fake.queue(Turn(text=["Let me think"], stall_after_text=True))
        async with open_window(home, fake=fake, provider="openai") as window:
            sid = _documents(window)
            panel = window.chat_panel
            turn = _send(window, qtbot, "hello")
            await wait(model_future(panel.model, lambda m: any(
                isinstance(i, MessageItem) and "Let me think" in i.text for i in m.items)))
            kept = signal_future(window.askKept)
            answered = signal_future(window.ask_window().answered)
            window.ask_documents("Who designed the iron bridge at Kellby?")
            await wait(answered, timeout=60)
            assert panel.controller is not None and panel.controller.running and not kept.done()
            panel.stop()
            await wait(kept)
            assert turn.done()
            rows = window.services.cases.chat.transcripts.history(sid)
            assert [(r.message.role, r.turn) for r in rows if r.message.role != "tool"] == [
                ("user", 1), ("assistant", 1), ("user", 2), ("assistant", 2)]
            assert rows[-2].message.text == "/ask Who designed the iron bridge at Kellby?"
            assert [i.text for i in _ask_items(window)][0] == rows[-2].message.text  # the chat shows it at once
