"""The approval dialog and the GUI approver's queue."""

from __future__ import annotations

import asyncio

import pytest
import shiboken6
from PySide6.QtCore import Qt

from cks_desktop.tools.approval import Decision
from cks_desktop.tools.types import Scope
from cks_desktop.ui.approval.approver import GuiApprover
from cks_desktop.ui.approval.dialog import ApprovalDialog, dialog_presenter
from cks_desktop.ui.dialogs import run_dialog

from tests.ui.helpers import approval_request, tool_spec, wait


def test_dialog_shows_everything_about_the_call(qtbot) -> None:
    long_text = "x" * 5000 + " END"
    spec = tool_spec("mcp:files:write_file", source="mcp:files", title="Write file",
                     scopes=frozenset({Scope.FS_READ, Scope.CODE_EXECUTE}))
    request = approval_request({"path": "/tmp/a.txt", "content": long_text}, spec=spec,
                               preview="adds 2 objects, 1 relation")
    dialog = ApprovalDialog(request, session_title="Research")
    qtbot.addWidget(dialog)
    assert dialog.objectName() == "approvalDialog"
    assert "files · Write file" in dialog.windowTitle()
    assert "files" in dialog.source_label.text() and "write_file" in dialog.source_label.text()
    assert "code.execute" in dialog.scopes_label.text() and "fs.read" in dialog.scopes_label.text()
    assert "policy: always" in dialog.reason_label.text()
    assert dialog.preview_label is not None and "adds 2 objects" in dialog.preview_label.text()
    shown = dialog.arguments_view.toPlainText()
    assert long_text in shown and '"path": "/tmp/a.txt"' in shown
    assert dialog.arguments_view.isReadOnly()
    assert dialog.arguments_view.font().fixedPitch() or dialog.arguments_view.font().styleHint() != 0


@pytest.mark.asyncio
@pytest.mark.parametrize("action, expected", [
    ("allow", Decision.ALLOW), ("allow_run", Decision.ALLOW_FOR_RUN), ("deny", Decision.DENY),
    ("escape", Decision.DENY), ("close", Decision.DENY),
])
async def test_dialog_answers(qtbot, action: str, expected: Decision) -> None:
    dialog = ApprovalDialog(approval_request())
    qtbot.addWidget(dialog)
    result = asyncio.ensure_future(run_dialog(dialog))
    await asyncio.sleep(0)
    assert dialog.isVisible()
    assert dialog.focusWidget() is dialog.deny_button  # Deny has the initial focus
    if action == "allow":
        qtbot.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
    elif action == "allow_run":
        qtbot.mouseClick(dialog.allow_run_button, Qt.MouseButton.LeftButton)
    elif action == "deny":
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    elif action == "escape":
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    else:
        dialog.close()
    await wait(result)
    assert dialog.decision is expected
    assert not dialog.isVisible()


@pytest.mark.asyncio
async def test_enter_on_the_dialog_denies(qtbot) -> None:
    dialog = ApprovalDialog(approval_request())
    qtbot.addWidget(dialog)
    result = asyncio.ensure_future(run_dialog(dialog))
    await asyncio.sleep(0)
    qtbot.keyClick(dialog.deny_button, Qt.Key.Key_Return)
    await wait(result)
    assert dialog.decision is Decision.DENY


class _Script:
    """A ``present`` coroutine the test answers by hand, recording what was shown."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, asyncio.Future[Decision]]] = []
        self.changed = asyncio.Event()

    async def present(self, request) -> Decision:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self.shown.append((request.call.id, future))
        self.changed.set()
        return await future

    async def next_shown(self, count: int) -> None:
        while len(self.shown) < count:
            self.changed.clear()
            await wait(self.changed.wait())


@pytest.mark.asyncio
async def test_requests_are_shown_one_at_a_time_in_order() -> None:
    script = _Script()
    approver = GuiApprover(script.present)
    first = asyncio.ensure_future(approver.request_approval(approval_request(call_id="a")))
    second = asyncio.ensure_future(approver.request_approval(approval_request(call_id="b")))
    await script.next_shown(1)
    await asyncio.sleep(0)
    assert [c for c, _ in script.shown] == ["a"]  # b waits its turn
    script.shown[0][1].set_result(Decision.ALLOW)
    assert await wait(first) is Decision.ALLOW
    await script.next_shown(2)
    script.shown[1][1].set_result(Decision.DENY)
    assert await wait(second) is Decision.DENY


@pytest.mark.asyncio
async def test_cancelling_a_caller_withdraws_its_request() -> None:
    script = _Script()
    approver = GuiApprover(script.present)
    first = asyncio.ensure_future(approver.request_approval(approval_request(call_id="a")))
    queued = asyncio.ensure_future(approver.request_approval(approval_request(call_id="b")))
    await script.next_shown(1)
    queued.cancel()  # Stop in the chat that asked second
    with pytest.raises(asyncio.CancelledError):
        await queued
    first.cancel()  # Stop in the chat whose dialog is open
    with pytest.raises(asyncio.CancelledError):
        await first
    assert script.shown[0][1].cancelled()  # the open dialog was closed
    assert not approver.busy


@pytest.mark.asyncio
async def test_deny_all_answers_open_and_queued_requests() -> None:
    script = _Script()
    approver = GuiApprover(script.present)
    tasks = [asyncio.ensure_future(approver.request_approval(approval_request(call_id=c))) for c in "abc"]
    await script.next_shown(1)
    approver.deny_all()
    results = await wait(asyncio.gather(*tasks))
    assert results == [Decision.DENY] * 3
    assert len(script.shown) == 1  # the queued ones never showed a dialog
    later = asyncio.ensure_future(approver.request_approval(approval_request(call_id="d")))
    await script.next_shown(2)  # a request after deny_all is asked normally
    script.shown[1][1].set_result(Decision.ALLOW)
    assert await wait(later) is Decision.ALLOW


@pytest.mark.asyncio
async def test_gui_presenter_opens_a_real_dialog_and_esc_denies(qtbot) -> None:
    opened: asyncio.Future[ApprovalDialog] = asyncio.get_running_loop().create_future()
    present = dialog_presenter(lambda: None, lambda sid: f"session {sid}", on_open=opened.set_result)
    approver = GuiApprover(present)
    answer = asyncio.ensure_future(approver.request_approval(approval_request()))
    dialog = await wait(opened)
    assert dialog.isVisible() and dialog.objectName() == "approvalDialog"
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert await wait(answer) is Decision.DENY


@pytest.mark.asyncio
async def test_stop_closes_the_open_dialog(qtbot) -> None:
    opened: asyncio.Future[ApprovalDialog] = asyncio.get_running_loop().create_future()
    approver = GuiApprover(dialog_presenter(lambda: None, on_open=opened.set_result))
    answer = asyncio.ensure_future(approver.request_approval(approval_request()))
    dialog = await wait(opened)
    answer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answer
    assert not shiboken6.isValid(dialog) or not dialog.isVisible()


def test_the_buttons_say_how_far_an_answer_reaches(qtbot) -> None:
    """A `once` answer covers the rest of the reply, so its buttons say so and offer nothing more;
    an `always` answer covers this call, and only "for this reply" reaches further."""
    from dataclasses import replace

    from cks_desktop.tools.types import Policy

    always = ApprovalDialog(approval_request())
    once = ApprovalDialog(replace(approval_request(), policy=Policy.ONCE))
    for dialog in (always, once):
        qtbot.addWidget(dialog)
    texts = [b.text().replace("&", "") for b in (always.allow_button, always.allow_run_button, always.deny_button)]
    assert texts == ["Allow this call", "Allow this tool for this reply", "Deny this call"]
    assert once.allow_button.text().replace("&", "") == "Allow for the rest of this reply"
    assert once.deny_button.text().replace("&", "") == "Deny for the rest of this reply"
    assert once.allow_run_button.isHidden() and "until this reply ends" in once.deny_button.toolTip()
    assert once.deny_button.isDefault() and always.deny_button.isDefault()  # the safe choice is the default
