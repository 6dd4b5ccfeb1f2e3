"""The main themes in the real window: ``/themes`` in the chat input (or Main themes in the Ask window,
or the Chat menu) says how many model calls it takes and asks first; then the real themes use case
runs through the real OpenAI wire (a fake server whose model summarises only what it is sent), and
each theme shows its summary and numbered citations that open the document viewer at the passage."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl, Qt
from PySide6.QtWidgets import QMessageBox, QPushButton

from cks_desktop.ui.ask_view import AskWindow
from cks_desktop.ui.provenance.viewer import DocumentViewer
from cks_desktop.ui.themes_view import EMPTY_GRAPH, NO_PROVIDER
from tests.fakes.providers import make_fake
from tests.fakes.summariser import Summariser
from tests.retrieval.test_themes import _world
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait


def _themes_session(window) -> str:  # type: ignore[no-untyped-def]
    sid = _world(window.services.store)
    window.sidebar.select(sid)
    assert window.current_session == sid
    return sid


def _button(box: QMessageBox, name: str) -> QPushButton:
    button = box.findChild(QPushButton, name)
    assert button is not None
    return button


@pytest.mark.asyncio
async def test_themes_typed_in_the_chat_ask_first_then_cite_passages_that_open(qtbot, home: Path) -> None:
    model = Summariser()
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            _themes_session(window)
            composer = window.chat_panel.composer
            composer.input.setPlainText("/themes")
            composer.submit()
            ask = window.findChild(AskWindow, "askWindow")
            assert ask is not None and ask.isVisible() and composer.input.toPlainText() == ""
            [box] = await wait(signal_future(ask.themesQuestionOpened))
            assert box.objectName() == "confirmDialog" and box.text() == "Find the main themes of this graph?"
            assert "3 model calls (2 to summarise, 1 to combine)" in box.informativeText()
            assert box.defaultButton().objectName() == "confirmCancelButton"  # Enter and Esc do nothing
            assert not fake.generation_requests and not ask.themes_button.isEnabled()
            shown = signal_future(ask.themesShown)
            qtbot.mouseClick(_button(box, "confirmAcceptButton"), Qt.MouseButton.LeftButton)
            await wait(shown, timeout=60)
            assert len(fake.generation_requests) == 3 and model.combines == 1
            assert ask.themes is not None and len(ask.themes.themes) == 2 and ask.progress.isHidden()
            assert ask.progress.value() == ask.progress.maximum() == 3  # every stated call counted
            assert ask.themes_button.isEnabled() and ask.ask_button.isEnabled() and ask.unsupported.isHidden()
            text = ask.view.toPlainText()
            assert "2 main themes of 2 communities (3 model calls made)." in text
            assert "1. Theme: " in text and "2. Theme: " in text and "Aurora" in text and "Ilse Berg" in text
            cited = [c for t in ask.themes.themes for c in t.citations]
            assert ask.sources.count() == len(cited) == 4 and ask.sources.item(0).text().startswith("[1] ")
            for n in range(1, 5):
                assert f'href="cite:{n}"' in ask.view.toHtml()

            # a click on a theme's [n] opens the viewer at that passage
            c = next(c for c in cited if c.quote == "The choir sang the Winter Cantata each year.")
            n = next(i for i in range(4) if c.quote in ask.sources.item(i).text()) + 1
            opened = signal_future(ask.citationOpened)
            ask.view.anchorClicked.emit(QUrl(f"cite:{n}"))
            assert (await wait(opened)) == (c.document_id, c.start, c.end)
            viewer = window.findChild(DocumentViewer, "documentViewer")
            assert viewer is not None
            await wait(signal_future(viewer.opened))
            assert viewer.passage == (c.start, c.end) and viewer.isVisible()
            assert viewer.text.toPlainText()[c.start:c.end] == c.quote

            # a second run asks only to combine: the summaries are kept
            task = ask.find_themes()
            [box] = await wait(signal_future(ask.themesQuestionOpened))
            assert "1 model call (0 to summarise, 1 to combine)" in box.informativeText()
            qtbot.mouseClick(_button(box, "confirmAcceptButton"), Qt.MouseButton.LeftButton)
            await wait(task)
            assert len(fake.generation_requests) == 4 and len(model.summaries) == 2

            window.sidebar.create_session()  # another session: the last one's themes are not shown over it
            assert ask.themes is None and not ask.view.toPlainText() and ask.sources.isHidden()


@pytest.mark.asyncio
async def test_esc_asks_nothing_and_an_empty_graph_is_one_sentence(qtbot, home: Path) -> None:
    with make_fake("openai") as fake:
        fake.side_turn = Summariser()
        async with open_window(home, fake=fake, provider="openai") as window:
            _themes_session(window)
            chat_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Chat")
            assert window.themes_action in chat_menu.actions()
            window.themes_action.trigger()  # Chat → Main themes of the graph…
            ask = window.findChild(AskWindow, "askWindow")
            assert ask is not None and ask.isVisible()
            asked, finished = signal_future(ask.themesQuestionOpened), signal_future(ask.themesFinished)
            [box] = await wait(asked)
            qtbot.keyClick(box, Qt.Key.Key_Escape)
            await wait(finished)
            assert not fake.generation_requests and ask.themes is None and ask.status.text() == ""
            assert ask.themes_button.isEnabled() and ask.progress.isHidden()

            window.sidebar.create_session()  # nothing extracted yet
            await wait(ask.find_themes())
            assert ask.status.text() == EMPTY_GRAPH and not fake.generation_requests


@pytest.mark.asyncio
async def test_no_provider_is_one_sentence_before_anything_is_asked(qtbot, home: Path) -> None:
    async with open_window(home) as window:
        _themes_session(window)
        assert not window.services.providers.configured
        ask = window.ask_window()
        ask.show()
        assert ask.themes_button.isVisible()
        await wait(ask.find_themes())
        assert ask.status.text() == NO_PROVIDER and ask.themes_button.isEnabled()


class _StallingCombine(Summariser):
    """Summarises as its parent, but the combining answer never finishes: the run waits on it."""

    def __call__(self, body):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        turn = super().__call__(body)
        return replace(turn, stall_after_text=True) if turn is not None and self.combines else turn


@pytest.mark.asyncio
async def test_stop_ends_a_run_and_keeps_the_summaries_written(qtbot, home: Path) -> None:
    model = _StallingCombine()
    with make_fake("openai") as fake:
        fake.side_turn = model
        async with open_window(home, fake=fake, provider="openai") as window:
            sid = _themes_session(window)
            ask = window.ask_window()
            ask.show()
            summarised = signal_future(ask.progress.valueChanged, lambda v: v == 2)
            task = ask.find_themes()
            [box] = await wait(signal_future(ask.themesQuestionOpened))
            qtbot.mouseClick(_button(box, "confirmAcceptButton"), Qt.MouseButton.LeftButton)
            await wait(summarised, timeout=60)
            await wait(_combining(model), timeout=30)  # the combining call is under way, its answer never ends
            assert ask.themes_button.text() == "Stop" and ask.themes_button.isEnabled()
            assert ask.status.text() == "Finding the main themes: 2 of 3 model calls made…"
            assert not ask.ask_button.isEnabled()
            finished = signal_future(ask.themesFinished)
            qtbot.mouseClick(ask.themes_button, Qt.MouseButton.LeftButton)
            await wait(finished)
            assert task.cancelled() and ask.themes is None
            assert ask.status.text() == "Stopped; the summaries written so far are kept."
            assert ask.themes_button.text() == "Main themes" and ask.ask_button.isEnabled() and ask.progress.isHidden()
            again = await window.services.cases.themes.estimate(sid)
            assert (again.summary_calls, again.reduce_calls) == (0, 1)  # the next run asks only to combine


async def _combining(model: Summariser) -> None:
    """Until the combining request has reached the model (bounded by the caller's wait)."""
    import asyncio

    while not model.combines:
        await asyncio.sleep(0.01)
