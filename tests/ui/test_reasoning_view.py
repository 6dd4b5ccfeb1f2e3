"""the model's thinking shown collapsed above the answer.

A real window on a real data folder; the real Anthropic adapter talks to the fake server, the
session's thinking switch is on (set the way the session settings panel sets it), and the fake
streams a signed thinking block before the answer. The answer card shows "Thought for …"
collapsed above the text, the text never contains the thinking, the toggle shows it as plain
text, and a reopened chat shows it again from the transcript. Waits are on the turn's task.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from cks_desktop.agent import events as ev
from cks_desktop.agent.session_settings import SessionSettingsStore
from cks_desktop.llm.messages import Message, Reasoning, Text
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import ChatModel, MessageItem
from cks_desktop.ui.chat.presenter import ChatPresenter
from cks_desktop.agent.reasoning import headline
from cks_desktop.ui.chat.reasoning_view import ReasoningView

from tests.fakes.script import Turn
from tests.ui.conftest import open_window
from tests.ui.helpers import wait
from tests.ui.test_window import _send

THOUGHT = "The person wants <b>Marie</b>; *check* the graph first."


def _answer_widget(panel: Any) -> MessageWidget:
    panel.view.flush()
    item = next(i for i in reversed(panel.model.items) if isinstance(i, MessageItem) and i.role == "assistant")
    widget = panel.view.widget_for(panel.model.index_of(item))
    assert isinstance(widget, MessageWidget)
    return widget


def test_headline_words() -> None:
    assert headline(None, True) == "Thinking…"
    assert headline(12.4, False) == "Thought for 12 s"
    assert headline(0.3, False) == "Thought for less than a second"
    assert headline(None, False) == "Thoughts"


def test_the_view_is_collapsed_and_expands_as_plain_text(qtbot) -> None:
    view = ReasoningView()
    qtbot.addWidget(view)
    view.show()
    view.set_state(THOUGHT, 12.2, False)
    assert view.toggle.text() == "Thought for 12 s" and not view.text.isVisible()
    qtbot.mouseClick(view.toggle, Qt.MouseButton.LeftButton)
    assert view.expanded and view.text.isVisible()
    assert view.text.textFormat() == Qt.TextFormat.PlainText and view.text.text() == THOUGHT
    qtbot.mouseClick(view.toggle, Qt.MouseButton.LeftButton)
    assert not view.text.isVisible()


def test_presenter_streams_thinking_apart_from_the_text() -> None:
    model = ChatModel()
    presenter = ChatPresenter(model)
    presenter.add_user("hi")
    presenter.handle(ev.TurnStarted(1))
    presenter.handle(ev.ReasoningDelta("Let me "))
    item = model.items[-1]
    assert isinstance(item, MessageItem) and item.thinking and item.reasoning == "Let me " and item.text == ""
    presenter.handle(ev.ReasoningDelta("think."))
    presenter.handle(ev.TextDelta("Answer."))
    assert not item.thinking and item.reasoning_seconds is not None and item.text == "Answer."
    message = Message("assistant", [Reasoning("Let me think.", "sig", origin="anthropic", seconds=3.0),
                                    Text("Answer.")])
    presenter.handle(ev.AssistantMessage(message))
    presenter.handle(ev.Finished("stop", 1))
    assert (item.text, item.reasoning, item.reasoning_seconds) == ("Answer.", "Let me think.", 3.0)


@pytest.mark.asyncio
async def test_the_answer_shows_thought_for_collapsed_and_again_after_reopening(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(thinking=[THOUGHT[:20], THOUGHT[20:]], text=["Marie Curie ", "is in the graph."]))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        sid = panel.controller.session_id
        services = window.services
        SessionSettingsStore(services.store, services.settings).set(sid, instructions="", reasoning=True)
        await wait(_send(window, qtbot, "Who is Marie?"))
        assert anthropic_fake.generation_requests[-1].body["thinking"]["type"] == "enabled"
        widget = _answer_widget(panel)
        view = widget.reasoning_view
        assert view is not None and view.isVisibleTo(widget)
        assert view.headline.startswith("Thought for") and not view.expanded
        assert not view.text.isVisibleTo(widget), "collapsed: the thinking is not shown"
        assert widget.item.text == "Marie Curie is in the graph." and "Marie</b>" not in widget.view.toPlainText()
        qtbot.mouseClick(view.toggle, Qt.MouseButton.LeftButton)
        assert view.text.isVisibleTo(widget) and view.text.text() == THOUGHT
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.select(sid)
        widget = _answer_widget(window.chat_panel)
        view = widget.reasoning_view
        assert view is not None and view.isVisibleTo(widget) and view.headline.startswith("Thought for")
        assert not view.expanded and view.thought == THOUGHT


def test_an_answer_without_thinking_shows_no_block(qtbot) -> None:
    widget = MessageWidget(MessageItem("assistant", "Plain answer."))
    qtbot.addWidget(widget)
    widget.show()
    assert widget.reasoning_view is not None and not widget.reasoning_view.isVisibleTo(widget)


@pytest.mark.asyncio
async def test_the_session_settings_panel_sets_the_switch_and_budget(qtbot, home) -> None:
    from cks_desktop.settings import Settings
    from cks_desktop.ui.chat.session_settings_dialog import SessionSettingsDialog

    async with open_window(home) as window:
        window.sidebar.create_session()
        services = window.services
        sid = window.chat_panel.controller.session_id
        dialog = SessionSettingsDialog(services.store, services.settings, sid, window)
        qtbot.addWidget(dialog)
        assert dialog.reasoning.currentData() is None and dialog.reasoning.currentText() == "As in Settings (off)"
        dialog.reasoning.setCurrentIndex(dialog.reasoning.findData(True))
        dialog.reasoning_budget.setText("lots")
        assert not dialog.save() and "whole number" in dialog.error_label.text()
        assert SessionSettingsStore(services.store, services.settings).get(sid).reasoning is None  # nothing written
        dialog.reasoning_budget.setText("5000")
        assert dialog.save()
        reread = Settings.load(services.settings.path)  # saved in the settings file
        kept = SessionSettingsStore(services.store, reread).get(sid)
        assert (kept.reasoning, kept.reasoning_budget) == (True, 5000)
        again = SessionSettingsDialog(services.store, services.settings, sid, window)
        qtbot.addWidget(again)
        assert again.reasoning.currentData() is True and again.reasoning_budget.text() == "5000"


def test_settings_chat_and_agent_sets_the_thinking_default(qtbot, tmp_path) -> None:
    from cks_desktop.agent.session_settings import default_reasoning
    from cks_desktop.settings import Settings
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.ui.settings.agent_page import AgentPage

    settings = Settings.load(tmp_path / "settings.json")
    page = AgentPage(settings, build_registry(None))
    qtbot.addWidget(page)
    assert not page.reasoning.isChecked() and page.reasoning_budget.text() == ""
    page.reasoning.setChecked(True)
    page.reasoning_budget.setText("0")
    assert any("thinking budget" in problem for problem in page.errors())
    page.reasoning_budget.setText("6000")
    assert page.errors() == []
    page.save(settings)
    assert default_reasoning(settings) == (True, 6000)
    page.reasoning.setChecked(False)
    page.reasoning_budget.setText("")
    page.save(settings)
    assert "reasoning" not in settings.data["agent"]  # the built-in default is stored as no choice
