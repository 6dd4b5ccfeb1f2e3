"""The elicitation and sampling dialogs, and the window's host that queues them (pytest-qt)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QListWidget

from cks_desktop.mcp.elicit_form import parse_form
from cks_desktop.mcp.host import (
    ElicitationRequest,
    SampleTurn,
    SamplingAnswer,
    SamplingReply,
    SamplingRequest,
)
from cks_desktop.ui.mcp_host.elicitation_dialog import ElicitationDialog, error_label
from cks_desktop.ui.mcp_host.host import GuiMcpHost
from cks_desktop.ui.mcp_host.sampling_dialog import SamplingReplyDialog, SamplingRequestDialog

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 1, "maximum": 120, "default": 30},
        "ratio": {"type": "number"},
        "agree": {"type": "boolean", "default": False},
        "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
                  "default": "g"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "age"],
}


def form_request(schema: dict[str, Any] = SCHEMA) -> ElicitationRequest:
    return ElicitationRequest("weather", "Which city\u202e should I use?", "form", parse_form(schema))


def field(dialog: ElicitationDialog, name: str) -> Any:
    return next(e.widget for e in dialog.editors if e.field.name == name)


def test_the_form_is_built_from_the_schema_with_defaults(qtbot):
    dialog = ElicitationDialog(form_request())
    qtbot.addWidget(dialog)
    assert "weather" in dialog.windowTitle()
    texts = " ".join(w.text() for w in dialog.findChildren(QLabel))
    assert "weather" in texts and "\\u202e" in texts  # the server is named; its hidden characters show
    assert isinstance(field(dialog, "name"), QLineEdit) and isinstance(field(dialog, "agree"), QCheckBox)
    assert isinstance(field(dialog, "color"), QComboBox) and field(dialog, "color").currentData() == "g"
    assert isinstance(field(dialog, "tags"), QListWidget) and field(dialog, "tags").count() == 3
    assert field(dialog, "age").text() == "30"


@pytest.mark.asyncio
async def test_submit_validates_then_accepts(qtbot):
    from cks_desktop.ui.dialogs import run_dialog

    dialog = ElicitationDialog(form_request())
    qtbot.addWidget(dialog)
    done = asyncio.ensure_future(run_dialog(dialog))
    await asyncio.sleep(0)
    field(dialog, "name").setText("A")
    field(dialog, "email").setText("not-an-email")
    field(dialog, "age").setText("500")
    qtbot.mouseClick(dialog.submit_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()  # wrong values keep the dialog open, each said under its field
    assert "at least 2 characters" in error_label(dialog, "name").text()
    assert "email address" in error_label(dialog, "email").text()
    assert "at most 120" in error_label(dialog, "age").text()
    field(dialog, "name").setText("Ada")
    field(dialog, "email").setText("ada@example.com")
    field(dialog, "age").setText("36")
    tags = field(dialog, "tags")
    tags.item(0).setCheckState(Qt.CheckState.Checked)
    qtbot.mouseClick(dialog.submit_button, Qt.MouseButton.LeftButton)
    await asyncio.wait_for(done, 5)
    answer = dialog.answer()
    assert answer.action == "accept"
    assert answer.content == {"name": "Ada", "email": "ada@example.com", "age": 36, "agree": False, "color": "g",
                              "tags": ["a"]}


@pytest.mark.asyncio
@pytest.mark.parametrize("how, action", [("decline", "decline"), ("cancel", "cancel"), ("escape", "cancel")])
async def test_decline_cancel_and_escape(qtbot, how, action):
    from cks_desktop.ui.dialogs import run_dialog

    dialog = ElicitationDialog(form_request())
    qtbot.addWidget(dialog)
    done = asyncio.ensure_future(run_dialog(dialog))
    await asyncio.sleep(0)
    if how == "decline":
        qtbot.mouseClick(dialog.decline_button, Qt.MouseButton.LeftButton)
    elif how == "cancel":
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    await asyncio.wait_for(done, 5)
    assert dialog.answer().action == action and dialog.answer().content is None


@pytest.mark.asyncio
async def test_url_mode_opens_the_browser_only_after_the_person_agrees(qtbot, monkeypatch):
    from cks_desktop.ui.dialogs import run_dialog

    opened: list[str] = []

    monkeypatch.setattr(ElicitationDialog, "browser", staticmethod(lambda url: opened.append(url.toString())))
    request = ElicitationRequest("bank", "Connect your account.", "url", url="https://example.com/connect")
    dialog = ElicitationDialog(request)
    qtbot.addWidget(dialog)
    done = asyncio.ensure_future(run_dialog(dialog))
    await asyncio.sleep(0)
    assert "https://example.com/connect" in dialog.findChild(QLabel, "elicitationUrl").text()
    assert opened == []  # shown, not opened
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    await asyncio.wait_for(done, 5)
    assert opened == ["https://example.com/connect"] and dialog.answer().action == "accept"

    declined = ElicitationDialog(request)
    qtbot.addWidget(declined)
    done = asyncio.ensure_future(run_dialog(declined))
    await asyncio.sleep(0)
    qtbot.mouseClick(declined.decline_button, Qt.MouseButton.LeftButton)
    await asyncio.wait_for(done, 5)
    assert opened == ["https://example.com/connect"] and declined.answer().action == "decline"


def sampling_request(**kw: Any) -> SamplingRequest:
    return SamplingRequest("writer", (SampleTurn("user", "Write a haiku"), SampleTurn("assistant", "[tool use]", False)),
                           system_prompt="You are terse.", max_tokens=64, model_preferences="models like claude",
                           tools=("lookup",), **kw)


def test_the_sampling_dialog_shows_the_request_and_deny_has_the_focus(qtbot):
    dialog = SamplingRequestDialog(sampling_request())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.focusWidget() is dialog.deny_button
    assert dialog.system_box.toPlainText() == "You are terse." and not dialog.system_box.isReadOnly()
    assert dialog.turn_boxes[0].toPlainText() == "Write a haiku"
    assert dialog.turn_boxes[1].isReadOnly()  # a tool use is shown, not edited
    assert dialog.max_tokens.value() == 64
    shown = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "writer" in shown and "models like claude" in shown and "lookup" in shown


@pytest.mark.asyncio
async def test_the_host_runs_the_edited_request_and_shows_the_answer_before_sending(qtbot):
    ran: list[SamplingRequest] = []
    opened: list[Any] = []

    async def sampler(request: SamplingRequest) -> SamplingAnswer:
        ran.append(request)
        return SamplingAnswer(SamplingReply("model-x", "five seven five"))

    host = GuiMcpHost(lambda: None, sampler, on_open=opened.append)
    task = asyncio.ensure_future(host.sample(sampling_request()))
    await wait_for(lambda: len(opened) == 1)
    asking = opened[0]
    assert isinstance(asking, SamplingRequestDialog)
    asking.turn_boxes[0].setPlainText("Write a limerick")
    asking.max_tokens.setValue(20)
    qtbot.mouseClick(asking.run_button, Qt.MouseButton.LeftButton)
    await wait_for(lambda: len(opened) == 2)
    showing = opened[1]
    assert isinstance(showing, SamplingReplyDialog) and "five seven five" in showing.answer_box.toPlainText()
    assert ran[0].turns[0].text == "Write a limerick" and ran[0].max_tokens == 20
    qtbot.mouseClick(showing.send_button, Qt.MouseButton.LeftButton)
    answer = await asyncio.wait_for(task, 5)
    assert answer.reply is not None and answer.reply.text == "five seven five"


@pytest.mark.asyncio
@pytest.mark.parametrize("stage", ["request", "answer"])
async def test_deny_at_either_stage_sends_nothing(qtbot, stage):
    opened: list[Any] = []

    async def sampler(request: SamplingRequest) -> SamplingAnswer:
        return SamplingAnswer(SamplingReply("model-x", "text"))

    host = GuiMcpHost(lambda: None, sampler, on_open=opened.append)
    task = asyncio.ensure_future(host.sample(sampling_request()))
    await wait_for(lambda: len(opened) == 1)
    if stage == "request":
        qtbot.keyClick(opened[0], Qt.Key.Key_Escape)  # Esc is Deny
    else:
        qtbot.mouseClick(opened[0].run_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: len(opened) == 2)
        qtbot.mouseClick(opened[1].discard_button, Qt.MouseButton.LeftButton)
    answer = await asyncio.wait_for(task, 5)
    assert answer.reply is None and ("declined" in answer.refusal or "not to send" in answer.refusal)


@pytest.mark.asyncio
async def test_requests_wait_their_turn(qtbot):
    opened: list[Any] = []
    host = GuiMcpHost(lambda: None, None, on_open=opened.append)
    first = asyncio.ensure_future(host.elicit(form_request()))
    second = asyncio.ensure_future(host.elicit(form_request()))
    await wait_for(lambda: len(opened) == 1)
    await asyncio.sleep(0.05)
    assert len(opened) == 1  # one dialog at a time
    qtbot.mouseClick(opened[0].decline_button, Qt.MouseButton.LeftButton)
    await wait_for(lambda: len(opened) == 2)
    qtbot.mouseClick(opened[1].cancel_button, Qt.MouseButton.LeftButton)
    assert (await first).action == "decline" and (await second).action == "cancel"


async def wait_for(predicate, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


def test_the_tool_row_shows_progress_while_running(qtbot):
    from cks_desktop.ui.chat.model import RowState, ToolItem
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    item = ToolItem(call_id="c1", name="mcp:everything:slow", display_name="everything · slow",
                    source="mcp:everything", arguments={}, state=RowState.RUNNING)
    row = ToolCallRow(item)
    qtbot.addWidget(row)
    row.show()
    assert row.progress_bar.isHidden()  # no report yet
    item.progress = (2.0, 4.0, "copying files")
    row.refresh()
    assert not row.progress_bar.isHidden() and row.progress_bar.value() == 500
    assert "copying files" in row.progress_label.full_text() and "50%" in row.progress_label.full_text()
    item.progress = (3.0, None, "")
    row.refresh()
    assert row.progress_bar.maximum() == 0  # total unknown: a busy bar
    item.state = RowState.DONE
    row.refresh()
    assert row.progress_bar.isHidden()  # the bar goes with the run


def _open_elicitations(window: Any) -> list[ElicitationDialog]:
    import shiboken6

    return [d for d in window.findChildren(ElicitationDialog) if shiboken6.isValid(d) and d.isVisible()]


@pytest.mark.asyncio
async def test_approvals_and_server_questions_share_one_queue_in_the_window(qtbot, tmp_path):
    """The real window: an approval and an MCP server's elicitation never stack. Whichever asked
    first shows; the other waits its turn and shows when the first is answered."""
    from cks_desktop.tools.approval import Decision
    from cks_desktop.ui.approval.dialog import ApprovalDialog

    from tests.ui.conftest import open_window
    from tests.ui.helpers import approval_request, signal_future, wait

    home = tmp_path / "home"
    home.mkdir()
    async with open_window(home) as window:
        host = window._mcp_host()  # what the window hands the MCP manager
        # an approval first: the server's question waits behind it
        opened = signal_future(window.approvalDialogOpened)
        approval = asyncio.ensure_future(window.approver.request_approval(approval_request(call_id="a")))
        (dialog,) = await wait(opened)
        question = asyncio.ensure_future(host.elicit(form_request()))
        for _ in range(20):  # give the queued request every chance to (wrongly) open its dialog
            await asyncio.sleep(0.01)
        assert not _open_elicitations(window) and not question.done()
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
        assert await wait(approval) is Decision.DENY
        await wait_for(lambda: len(_open_elicitations(window)) == 1)

        # the question is on screen: a new approval waits behind it
        approvals: list[ApprovalDialog] = []
        window.approvalDialogOpened.connect(approvals.append)
        second = asyncio.ensure_future(window.approver.request_approval(approval_request(call_id="b")))
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert approvals == [] and not second.done()
        (shown,) = _open_elicitations(window)
        qtbot.mouseClick(shown.decline_button, Qt.MouseButton.LeftButton)
        assert (await wait(question)).action == "decline"
        await wait_for(lambda: len(approvals) == 1)
        qtbot.mouseClick(approvals[0].allow_button, Qt.MouseButton.LeftButton)
        assert await wait(second) is Decision.ALLOW
