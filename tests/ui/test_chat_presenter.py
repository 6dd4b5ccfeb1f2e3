"""The chat presenter turns agent events and saved transcripts into items (no widgets)."""

from __future__ import annotations

from cks_desktop.agent import events as ev
from cks_desktop.agent.events import CallState
from cks_desktop.agent.transcript import CallRecord, SavedMessage
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.tools.types import Outcome, ToolResult
from cks_desktop.ui.chat.model import ChatModel, MessageItem, RowState, ToolItem
from cks_desktop.ui.chat.presenter import ChatPresenter


class Recorder:
    def __init__(self) -> None:
        self.log: list[tuple[str, int]] = []

    def items_reset(self) -> None:
        self.log.append(("reset", -1))

    def item_inserted(self, index: int) -> None:
        self.log.append(("inserted", index))

    def item_changed(self, index: int) -> None:
        self.log.append(("changed", index))


def make() -> tuple[ChatModel, ChatPresenter, Recorder]:
    model = ChatModel()
    recorder = Recorder()
    model.subscribe(recorder)
    return model, ChatPresenter(model, lambda name, source: source == "builtin" and name == "add_object"), recorder


def result(call_id: str, content: str = '{"ok": true}', *, error: bool = False, denied: bool = False,
           change_id: str | None = None) -> ToolResult:
    outcome = Outcome.DENIED if denied else Outcome.ERROR if error else Outcome.OK
    return ToolResult(call_id, content, outcome, change_id=change_id)


def test_streamed_text_then_a_tool_call_that_runs() -> None:
    model, presenter, recorder = make()
    presenter.add_user("Add Alice")
    for event in [ev.TurnStarted(1), ev.TextDelta("Adding "), ev.TextDelta("Alice."),
                  ev.AssistantMessage(Message("assistant", [Text("Adding Alice."),
                                                            ToolCallPart("c1", "add_object", {"name": "Alice"})])),
                  ev.ToolCallStarted("c1", "add_object", "Add object", {"name": "Alice"}, "builtin")]:
        presenter.handle(event)
    assert [type(i).__name__ for i in model.items] == ["MessageItem", "MessageItem", "ToolItem"]
    assistant = model.items[1]
    assert isinstance(assistant, MessageItem) and assistant.text == "Adding Alice." and not assistant.streaming
    row = model.tool("c1")
    assert row is not None and row.state is RowState.RUNNING and row.revertable
    presenter.handle(ev.ToolCallFinished("c1", result("c1", change_id="ch1"), 12.5))
    assert row.state is RowState.DONE and row.duration_ms == 12.5 and row.change_id == "ch1" and row.can_revert
    presenter.handle(ev.TurnStarted(2))
    presenter.handle(ev.TextDelta("Done."))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text("Done.")])))
    presenter.handle(ev.Finished("stop", 2))
    assert isinstance(model.items[-1], MessageItem) and model.items[-1].text == "Done."
    assert ("changed", 1) in recorder.log and ("inserted", 3) in recorder.log


def test_approval_states_and_denial() -> None:
    model, presenter, _ = make()
    presenter.handle(ev.ToolCallStarted("c1", "mcp:files:write", "files · write", {"p": 1}, "mcp:files"))
    presenter.handle(ev.ApprovalRequested("c1", "why"))
    row = model.tool("c1")
    assert row is not None and row.state is RowState.PENDING_APPROVAL and not row.revertable
    presenter.handle(ev.ApprovalResolved("c1", "deny"))
    assert row.state is RowState.DENIED
    presenter.handle(ev.ToolCallFinished("c1", result("c1", "declined", error=True, denied=True), 3))
    assert row.state is RowState.DENIED and row.result == "declined"


def test_stop_leaves_nothing_running() -> None:
    model, presenter, _ = make()
    presenter.handle(ev.ToolCallStarted("c1", "add_object", "Add object", {}, "builtin"))
    presenter.handle(ev.ApprovalRequested("c1"))
    presenter.cancelled()
    row = model.tool("c1")
    assert row is not None and row.state is RowState.CANCELLED


def test_errors_and_the_iteration_limit() -> None:
    model, presenter, _ = make()
    presenter.handle(ev.ErrorEvent("The Anthropic API key was rejected (401).", "auth"))
    presenter.handle(ev.IterationLimit(8, "Reached the iteration limit (8 model turns)."))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text("Reached the iteration limit (8 model turns).")]),
                                         notice=ev.Notice.ITERATION_LIMIT))
    presenter.handle(ev.Finished("limit"))
    assert [(i.role, i.text[:14]) for i in model.items if isinstance(i, MessageItem)] == [
        ("error", "The Anthropic "), ("notice", "Reached the it")]
    assert presenter.limit_reached
    presenter.add_user("Continue.")
    assert not presenter.limit_reached


def test_repeated_failure_is_shown_once() -> None:
    model, presenter, _ = make()
    text = "Stopped: the call to X failed 3 times in a row."
    presenter.handle(ev.ErrorEvent(text, "repeated_failure"))
    presenter.handle(ev.AssistantMessage(Message("assistant", [Text(text)]), notice=ev.Notice.REPEATED_FAILURE))
    assert [i.text for i in model.items] == [text]


def test_load_restores_rows_exactly() -> None:
    model, presenter, recorder = make()
    history = [
        SavedMessage(1, Message.user("Add Alice and Bob"), "t"),
        SavedMessage(2, Message("assistant", [Text("Sure."), ToolCallPart("c1", "add_object", {"name": "Alice"}),
                                              ToolCallPart("c2", "mcp:x:y", {"q": "<img src=x>"})]), "t",
                     calls=[CallRecord("c1", "add_object", "Add object", "builtin", CallState.DONE, 4.0, "ch1", True),
                            CallRecord("c2", "mcp:x:y", "x · y", "mcp:x", CallState.ERROR, 9.0)]),
        SavedMessage(3, Message("tool", [ToolResultPart("c1", "add_object", '{"id": "o1"}'),
                                         ToolResultPart("c2", "mcp:x:y", "boom", True)]), "t"),
        SavedMessage(4, Message("assistant", [Text("Reached the iteration limit (8 model turns).")]), "t",
                     notice=ev.Notice.ITERATION_LIMIT),
    ]
    presenter.load(history)
    assert recorder.log == [("reset", -1)]
    kinds = [(type(i).__name__, getattr(i, "role", getattr(i, "call_id", ""))) for i in model.items]
    assert kinds == [("MessageItem", "user"), ("MessageItem", "assistant"), ("ToolItem", "c1"),
                     ("ToolItem", "c2"), ("MessageItem", "notice")]
    alice = model.tool("c1")
    assert isinstance(alice, ToolItem)
    assert (alice.state, alice.duration_ms, alice.change_id, alice.reverted, alice.result) == (
        RowState.DONE, 4.0, "ch1", True, '{"id": "o1"}')
    assert not alice.can_revert  # already reverted
    failed = model.tool("c2")
    assert failed is not None and failed.state is RowState.ERROR and failed.display_name == "x · y"
    assert presenter.limit_reached
