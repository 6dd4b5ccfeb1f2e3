"""the composer's context meter and the summary row.

A real window on a real data folder; the real Anthropic adapter talks to the fake server
(``tests/fakes``) configured with a small ``context_window`` setting, so the loop's
``ContextUsage`` numbers are the real estimate of the real request. Waits are on the turn's
task, never fixed sleeps.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt

from cks_desktop.agent.context import SUMMARY_INSTRUCTION, summary_message
from cks_desktop.agent.events import ContextUsage, Notice
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.messages import Message
from cks_desktop.plural import counted
from cks_desktop.ui.chat.context_meter import ContextMeter, usage_text
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.chat.summary_notice import split_summary

from tests.fakes.providers import provider_for
from tests.fakes.script import Turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import wait
from tests.ui.test_window import _send

WINDOW = 200_000  # tokens: the setting in the provider's options (the numbers must come from it)


def _factory(fake: Any, window: int = WINDOW) -> Any:
    def factory(_name: str, _settings: Any, _secrets: Any) -> Any:
        return provider_for(fake, options={"context_window": window})
    return factory


def _meter(window: Any) -> ContextMeter:
    return window.chat_panel.composer.context_meter


@pytest.mark.asyncio
async def test_the_meter_updates_after_a_turn_and_its_tooltip_names_the_numbers(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("First answer."), text_turn("Second answer."))
    async with open_window(home, fake=anthropic_fake, factory=_factory(anthropic_fake)) as window:
        window.sidebar.create_session()
        meter = _meter(window)
        assert not meter.isVisibleTo(window), "nothing measured yet: no guess"
        await wait(_send(window, qtbot, "Hello"))
        usage = window.chat_panel.controller.presenter.context_usage
        assert usage is not None and usage.window == WINDOW and 0 < usage.tokens <= usage.budget < WINDOW
        assert meter.isVisibleTo(window) and meter.usage == usage
        assert meter.text() == f"{round(usage.tokens / usage.budget * 100)}%"
        tip = meter.toolTip()
        for number in (usage.tokens, usage.budget, usage.window):
            assert f"{number:,}" in tip
        assert "Nothing was shortened" in tip and not meter.warning
        first = usage.tokens
        await wait(_send(window, qtbot, "And a longer second question " + "about the graph " * 40))
        usage = window.chat_panel.controller.presenter.context_usage
        assert usage.tokens > first and meter.usage == usage and f"{usage.tokens:,}" in meter.toolTip()


def test_the_tooltip_says_what_was_shortened_and_the_tone_warns_when_nearly_full(qtbot) -> None:
    meter = ContextMeter()
    qtbot.addWidget(meter)
    meter.show_usage(ContextUsage(tokens=900, window=1_200, budget=1_000, stubbed=3, cut=1, summarised=40, dropped=2))
    assert meter.warning and meter.text() == "90%"
    tip = meter.toolTip()
    assert "3 old tool results sent as a short stub" in tip and "1 part cut" in tip
    assert "40 earlier messages summarised" in tip and "2 earlier messages left out" in tip
    assert "<b>" not in usage_text(ContextUsage(tokens=1, window=2, budget=1))
    meter.show_usage(ContextUsage(tokens=500, window=1_200, budget=1_000))
    assert not meter.warning and meter.text() == "50%"
    meter.show_usage(None)
    assert meter.isHidden() and meter.toolTip() == ""


@pytest.mark.asyncio
async def test_switching_sessions_shows_only_that_session_s_numbers(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(text_turn("A's answer."), text_turn("B's answer."))
    async with open_window(home, fake=anthropic_fake, factory=_factory(anthropic_fake)) as window:
        panel = window.chat_panel
        window.sidebar.create_session()
        a = panel.controller.session_id
        await wait(_send(window, qtbot, "A question of session A " * 30))
        a_usage = panel.controller.presenter.context_usage
        assert _meter(window).usage == a_usage
        window.sidebar.create_session()
        b = panel.controller.session_id
        assert b != a and _meter(window).usage is None and not _meter(window).isVisibleTo(window)
        await wait(_send(window, qtbot, "B?"))
        b_usage = panel.controller.presenter.context_usage
        assert b_usage != a_usage and _meter(window).usage == b_usage
        window.sidebar.select(a)
        assert panel.controller.session_id == a and _meter(window).usage == a_usage
        assert f"{a_usage.tokens:,}" in _meter(window).toolTip()
        window.sidebar.select(b)
        assert _meter(window).usage == b_usage


def _summary_widget(panel: Any) -> MessageWidget:
    panel.view.flush()
    item = next(i for i in panel.model.items if isinstance(i, MessageItem) and i.summary)
    widget = panel.view.widget_for(panel.model.index_of(item))
    assert isinstance(widget, MessageWidget)
    return widget


def test_split_summary_reads_the_loop_s_head() -> None:
    text = summary_message("They talked about <b>Marie</b> and *Pierre*.", 1_234).text
    assert split_summary(text) == ("Earlier messages were summarised — 1,234 messages",
                                   "They talked about <b>Marie</b> and *Pierre*.")
    assert split_summary(summary_message("x", 1).text)[0].endswith("— 1 message")


@pytest.mark.asyncio
async def test_a_saved_summary_row_is_collapsed_and_expands_as_plain_text(qtbot, home, anthropic_fake) -> None:
    body = "The person asked about <img src=x> **Marie Curie**; I added her."
    async with open_window(home, fake=anthropic_fake, factory=_factory(anthropic_fake)) as window:
        window.sidebar.create_session()
        sid = window.chat_panel.controller.session_id
        transcript = TranscriptStore.for_store(window.services.store)
        transcript.append(sid, [Message.user("Who is Marie Curie?")])
        transcript.append(sid, [summary_message(body, 12)], notice=Notice.SUMMARY)
    async with open_window(home, fake=anthropic_fake, factory=_factory(anthropic_fake)) as window:
        window.sidebar.select(sid)
        panel = window.chat_panel
        widget = _summary_widget(panel)
        fold = widget.summary_fold
        assert fold is not None and fold.head_label.text() == "Earlier messages were summarised — 12 messages"
        assert fold.toggle.isVisibleTo(widget) and fold.toggle.text() == "Show summary"
        assert not widget.view.isVisibleTo(widget), "collapsed: the summary is not shown"
        assert not widget.regenerate_button.isVisibleTo(widget), "a summary is no answer to regenerate"
        qtbot.mouseClick(fold.toggle, Qt.MouseButton.LeftButton)
        assert widget.view.isVisibleTo(widget) and fold.toggle.text() == "Hide summary"
        assert widget.view.toPlainText() == body  # literally: no Markdown, no HTML
        qtbot.mouseClick(fold.toggle, Qt.MouseButton.LeftButton)
        assert not widget.view.isVisibleTo(widget)


def _summary_side(request_body: Any) -> Turn | None:
    """The fake model's answer to the app's summary request (no tools, the instruction last)."""
    if request_body and not request_body.get("tools") and SUMMARY_INSTRUCTION in json.dumps(request_body):
        return text_turn("The person said hello; I answered at length.")
    return None


@pytest.mark.asyncio
async def test_a_summary_made_during_a_turn_shows_collapsed_and_the_meter_says_so(qtbot, home, anthropic_fake) -> None:
    """A 12k window: the tools and one long exchange fill it, so the second message makes the
    loop summarise the first exchange; the live row is collapsed and the meter names it."""
    anthropic_fake.context_window = 12_000
    anthropic_fake.side_turn = _summary_side
    anthropic_fake.queue(text_turn("A long answer. " * 1_200), text_turn("Second answer."))
    async with open_window(home, fake=anthropic_fake, factory=_factory(anthropic_fake, 12_000)) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        await wait(_send(window, qtbot, "Hello"))
        await wait(_send(window, qtbot, "And now?"))
        assert anthropic_fake.problems == []
        usage = panel.controller.presenter.context_usage
        assert usage is not None and usage.summarised >= 2 and usage.tokens <= usage.budget
        assert f"{counted(usage.summarised, 'earlier message')} summarised" in _meter(window).toolTip()
        widget = _summary_widget(panel)
        assert widget.summary_fold is not None and not widget.view.isVisibleTo(widget)
        assert widget.summary_fold.head_label.text().startswith("Earlier messages were summarised — ")
        qtbot.mouseClick(widget.summary_fold.toggle, Qt.MouseButton.LeftButton)
        assert widget.view.toPlainText() == "The person said hello; I answered at length."
        texts = [i.text for i in panel.model.items if isinstance(i, MessageItem) and not i.summary]
        assert texts[-1] == "Second answer." and "Hello" in texts  # the chat keeps everything
