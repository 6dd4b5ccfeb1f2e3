"""One answer reads as one: a single "Assistant" header however many model turns
(tool-call rounds) it took, live and when the chat is reopened."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from cks_desktop.agent import events as ev
from cks_desktop.agent.transcript import SavedMessage
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.tools.types import Outcome, ToolResult
from cks_desktop.ui.chat.chat_view import ChatView
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import ChatModel, MessageItem
from cks_desktop.ui.chat.presenter import ChatPresenter


def _round(presenter: ChatPresenter, turn: int, text: str, call: str) -> None:
    presenter.handle(ev.TurnStarted(turn))
    presenter.handle(ev.TextDelta(text))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text(text), ToolCallPart(call, "add_object", {"name": call})])))
    presenter.handle(ev.ToolCallStarted(call, "add_object", "Add object", {"name": call}, "builtin"))
    presenter.handle(ev.ToolCallFinished(call, ToolResult(call, '{"ok": true}', Outcome.OK), 3.0))


def _headers(view: ChatView) -> list[MessageWidget]:
    widgets = [w for w in view.findChildren(MessageWidget) if w.item.role == "assistant"]
    return [w for w in widgets if w.header is not None and not w.header.isHidden()]


def test_a_three_round_answer_has_one_header_and_the_next_answer_its_own(qtbot: QtBot) -> None:
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    presenter = ChatPresenter(model)
    presenter.add_user("Add Alice and Bob")
    _round(presenter, 1, "Adding Alice.", "c1")
    _round(presenter, 2, "Now Bob.", "c2")
    presenter.handle(ev.TurnStarted(3))
    presenter.handle(ev.TextDelta("Both added."))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text("Both added.")])))
    presenter.handle(ev.Finished("stop", 3))
    answers = [i for i in model.items if isinstance(i, MessageItem) and i.role == "assistant"]
    assert [a.continues for a in answers] == [False, True, True]
    assert len(_headers(view)) == 1
    presenter.add_user("And Carol?")
    presenter.handle(ev.TurnStarted(1))
    presenter.handle(ev.TextDelta("Done."))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text("Done.")])))
    presenter.handle(ev.Finished("stop", 1))
    assert len(_headers(view)) == 2  # a new answer, a new header


def test_a_reopened_chat_shows_one_header_per_answer(qtbot: QtBot) -> None:
    model = ChatModel()
    view = ChatView(model)
    qtbot.addWidget(view)
    presenter = ChatPresenter(model)
    presenter.load([
        SavedMessage(1, Message.user("Add Alice"), "t", turn=1),
        SavedMessage(2, Message("assistant", [Text("Adding."), ToolCallPart("c1", "add_object", {"name": "A"})]), "t",
                     turn=1),
        SavedMessage(3, Message("tool", [ToolResultPart("c1", "add_object", '{"id": "o1"}')]), "t", turn=1),
        SavedMessage(4, Message("assistant", [Text("Added Alice.")]), "t", turn=1),
        SavedMessage(5, Message.user("Thanks"), "t", turn=2),
        SavedMessage(6, Message("assistant", [Text("You're welcome.")]), "t", turn=2),
    ])
    answers = [i for i in model.items if isinstance(i, MessageItem) and i.role == "assistant"]
    assert [a.continues for a in answers] == [False, True, False]
    assert len(_headers(view)) == 2
