"""Every MCP feature of a reference server, in one real window: the reference server
``@modelcontextprotocol/server-everything`` (from npm, a real node subprocess) configured in a real
``MainWindow``, the chat's model a fake Anthropic server speaking the real wire protocol.

1. its prompts are slash commands (``/everything:completable-prompt``), with the argument form and
   the server's completions;
2. its resources attach from the picker (search, a template argument) and go out with the message;
3. its sampling request opens the sampling dialog; Run uses the chat's model, Send returns the answer;
4. its elicitation request opens the form built from its schema; Submit reaches the server;
5. its progress shows on the tool row (text and bar) and its log messages in the server's log view.

Set ``CKS_EVERYTHING_SHOTS`` to a folder to save a PNG of each state there (``widget.grab()``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from tests.fakes.script import call_turn, text_turn
from tests.mcp.conftest import wait_until
from tests.mcp.everything_server import everything_entry
from tests.ui.conftest import no_login_shell, open_window
from tests.ui.helpers import wait

TOOL = "mcp__everything__{}"


def _shot(widget: QWidget, name: str) -> None:
    folder = os.environ.get("CKS_EVERYTHING_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(folder) / f"everything-{name}.png"))


def _dialog(window: Any, kind: type) -> Any:
    return next((d for d in window.findChildren(kind) if d.isVisible()), None)


def _row(window: Any, tool: str) -> Any:
    view = window.chat_panel.view
    view.flush()
    return next((r for r in view.rows() if r.item.name.endswith(tool)), None)


def _send(window: Any, text: str) -> asyncio.Task:
    composer = window.chat_panel.composer
    composer.input.setPlainText(text)
    QTest.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    task = window.chat_panel.controller.task
    assert task is not None
    return task


def _last_user_text(fake: Any) -> str:
    message = fake.generation_requests[-1].body["messages"][-1]
    content = message["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_server_everything_in_the_window(qtbot, home, anthropic_fake) -> None:
    from cks_desktop.mcp.connection import Status
    from cks_desktop.tools.scopes import server_identity
    from cks_desktop.ui.chat.model import RowState
    from cks_desktop.ui.mcp_host.elicitation_dialog import ElicitationDialog
    from cks_desktop.ui.mcp_host.sampling_dialog import SamplingReplyDialog, SamplingRequestDialog
    from cks_desktop.ui.settings.dialog import SettingsDialog

    entry = {"command": shutil.which("node") or "node", "args": [str(everything_entry()), "stdio"],
             "approval": "auto", "logLevel": "debug"}
    async with open_window(home, fake=anthropic_fake, mcp_servers={"everything": entry}) as window:
        services = window.services
        settings = services.settings
        # A command-started server's tools need code.execute, granted per server as its editor does.
        settings.set_server_grant("everything", ["code.execute"], server_identity(settings.mcp_servers["everything"]))
        services.start_mcp(host=window._mcp_host(), login_path=no_login_shell)
        await window.start_background()  # the same manager: the composer's and rows' MCP parts wired
        await wait(services.mcp_start, 90)
        conn = services.mcp.connections["everything"]
        assert conn.status is Status.READY, conn.reason
        assert await conn.features.wait_listed(30)
        window.sidebar.create_session()
        composer = window.chat_panel.composer
        features = window.mcp_composer

        # -- 1. prompts as slash commands, the argument form, completions ---------------------------
        composer.input.setFocus()
        QTest.keyClicks(composer.input, "/")
        offered = [features.model.index(i).data() for i in range(features.model.rowCount())]
        assert {"/everything:args-prompt", "/everything:completable-prompt"} <= set(offered), offered
        assert features.completer.popup().isVisible()
        _shot(window, "1-slash-commands")
        _shot(features.completer.popup(), "1-slash-popup")  # a popup window of its own
        QTest.keyClicks(composer.input, "everything:comp")
        assert features.completer.completionCount() == 1
        assert features.completer.currentCompletion() == "/everything:completable-prompt"
        QTest.keyClick(composer.input, Qt.Key.Key_Return)  # picks the command: its form opens
        form = features.form
        assert form is not None and form.isVisible()
        assert list(form.fields) == ["department", "name"]
        form.fields["department"].setText("Eng")
        await wait(form.fields["department"].ask_now())
        assert form.fields["department"].suggestions.stringList() == ["Engineering"]
        form.fields["department"].setText("Engineering")
        form.fields["name"].setText("A")
        await wait(form.fields["name"].ask_now())  # the department goes along as context
        assert form.fields["name"].suggestions.stringList() == ["Alice"]
        form.fields["name"].setText("Alice")
        _shot(form, "1-prompt-form")
        assert await wait(form.insert()) == "Please promote Alice to the head of the Engineering team."
        assert composer.input.toPlainText() == "Please promote Alice to the head of the Engineering team."

        # -- 2. a resource from the picker: search and a template argument; it goes out with the message
        picker = features.open_picker()
        assert picker.server_box.currentData() == "everything"
        picker.search.setText("dynamic/text")
        assert picker.items.count() == 1 and "(template)" in picker.items.item(0).text()
        fields = picker.fields()
        assert list(fields) == ["resourceId"]
        fields["resourceId"].setText("2")
        await wait(fields["resourceId"].ask_now())
        assert fields["resourceId"].suggestions.stringList() == ["2"]
        _shot(picker, "2-resource-picker")
        outcome = await wait(picker.attach())
        assert outcome is not None and outcome.uri == "demo://resource/dynamic/text/2"
        assert [o.uri for o in features.bar.items] == ["demo://resource/dynamic/text/2"]
        _shot(window, "2-attached")
        anthropic_fake.queue(text_turn("Noted."))
        await wait(_send(window, "Read this"), 60)
        sent = _last_user_text(anthropic_fake)
        assert sent.startswith("Read this") and "Resource 2: This is a plaintext resource" in sent
        assert "[Attached resource demo://resource/dynamic/text/2 from MCP server 'everything'" in sent

        # -- 3. sampling: the dialog, Run with the chat's model, Send; the answer reaches the server --
        anthropic_fake.queue(call_turn(TOOL.format("trigger-sampling-request"), {"prompt": "Write a haiku",
                                                                                "maxTokens": 40}),
                             text_turn("Tests pass at dawn"),
                             text_turn("The server got its haiku."))
        task = _send(window, "Ask the server to sample")
        await wait_until(lambda: _dialog(window, SamplingRequestDialog) is not None, 60, "the sampling dialog")
        asking = _dialog(window, SamplingRequestDialog)
        assert "everything" in asking.windowTitle() and asking.max_tokens.value() == 40
        assert any("Write a haiku" in box.toPlainText() for box in asking.turn_boxes)
        _shot(asking, "3-sampling-request")
        qtbot.mouseClick(asking.run_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: _dialog(window, SamplingReplyDialog) is not None, 60, "the sampling answer")
        showing = _dialog(window, SamplingReplyDialog)
        assert "Tests pass at dawn" in showing.answer_box.toPlainText()
        _shot(showing, "3-sampling-answer")
        qtbot.mouseClick(showing.send_button, Qt.MouseButton.LeftButton)
        await wait(task, 60)
        row = _row(window, "trigger-sampling-request")
        assert row is not None and row.item.state is RowState.DONE, row.item.result
        assert "LLM sampling result" in row.item.result and "Tests pass at dawn" in row.item.result
        sampled = anthropic_fake.generation_requests[-2].body  # the sampling request, with the server's text
        assert "Write a haiku" in str(sampled["messages"])

        # -- 4. elicitation: the form built from the schema; filled and submitted, it reaches the server
        anthropic_fake.queue(call_turn(TOOL.format("trigger-elicitation-request"), {}),
                             text_turn("Thanks for the details."))
        task = _send(window, "Ask me for my details")
        await wait_until(lambda: _dialog(window, ElicitationDialog) is not None, 60, "the elicitation form")
        dialog = _dialog(window, ElicitationDialog)
        kinds = {e.field.name: e.field.kind for e in dialog.editors}
        assert kinds["check"] == "boolean" and kinds["integer"] == "integer"
        assert kinds["untitledSingleSelectEnum"] == "enum" and kinds["untitledMultipleSelectEnum"] == "multi"
        widgets = {e.field.name: e.widget for e in dialog.editors}
        assert widgets["firstLine"].text() == "It was a dark and stormy night."  # defaults filled in
        qtbot.mouseClick(dialog.submit_button, Qt.MouseButton.LeftButton)  # name is required: not sent
        assert dialog.isVisible()
        name_error = next(e.error for e in dialog.editors if e.field.name == "name")
        assert name_error.isVisibleTo(dialog) and name_error.text()
        widgets["name"].setText("Ada Lovelace")
        assert not name_error.isVisibleTo(dialog)  # a filled-in field no longer says it is missing
        widgets["check"].setChecked(True)
        widgets["email"].setText("ada@example.org")
        widgets["integer"].setText("7")
        _shot(dialog, "4-elicitation-form")
        qtbot.mouseClick(dialog.submit_button, Qt.MouseButton.LeftButton)
        await wait(task, 60)
        row = _row(window, "trigger-elicitation-request")
        assert row is not None and "User provided the requested information" in row.item.result, row.item.result
        assert "Ada Lovelace" in row.item.result and "ada@example.org" in row.item.result

        # -- 5. progress on the row, log messages in the server's log view ---------------------------
        anthropic_fake.queue(call_turn(TOOL.format("trigger-long-running-operation"), {"duration": 4, "steps": 4}),
                             text_turn("Finished the long job."))
        task = _send(window, "Run the long job")

        def progressed() -> bool:
            row = _row(window, "trigger-long-running-operation")
            return row is not None and row.progress_bar.isVisibleTo(row) and row.progress_bar.value() > 0

        await wait_until(progressed, 60, "progress on the tool row")
        row = _row(window, "trigger-long-running-operation")
        assert row.progress_label.isVisibleTo(row) and "%" in row.progress_label.full_text()
        assert row.progress_bar.maximum() == 1000
        _shot(window, "5-progress")
        await wait(task, 60)
        row = _row(window, "trigger-long-running-operation")  # (flushed: the view applies changes in batches)
        assert row.item.state is RowState.DONE and "Long running operation completed" in row.item.result
        assert not row.progress_bar.isVisibleTo(row)  # gone once the call finished

        window.open_settings("mcp", "everything")
        settings_dialog = window.findChild(SettingsDialog)
        page = settings_dialog.mcp_page
        assert page.current() == "everything"
        anthropic_fake.queue(call_turn(TOOL.format("toggle-simulated-logging"), {}), text_turn("Logging is on."))
        await wait(_send(window, "Turn on the server's logging"), 60)
        # It sends one message at once (a random level; the level set is debug, so every one passes),
        # and the open log view follows the server's log.
        await wait_until(lambda: "-level message" in page.stderr_view.toPlainText()
                         or "level-message" in page.stderr_view.toPlainText(), 30, "a log message in the log view")
        line = next(x for x in page.stderr_view.toPlainText().splitlines() if "level" in x and "message" in x)
        assert line.startswith("[") and "]" in line  # shown with its level
        _shot(settings_dialog, "5-log-view")
        settings_dialog.reject()


@pytest.mark.asyncio
async def test_the_open_log_view_follows_the_shown_servers_log(qtbot, home) -> None:
    """Without npm: the settings page's log view shows lines as they reach the server's log (the
    real ``ServerLog`` the connection writes stderr and log messages into), only the shown server's."""
    from cks_desktop.ui.settings.dialog import SettingsDialog

    servers = {"alpha": {"command": "unused-a", "enabled": False}, "beta": {"command": "unused-b", "enabled": False}}
    async with open_window(home, mcp_servers=servers, mcp_targets={}) as window:
        await window.start_background()
        manager = window.services.mcp
        window.open_settings("mcp", "alpha")
        dialog = window.findChild(SettingsDialog)
        page = dialog.mcp_page
        assert page.current() == "alpha"
        manager.server_log("alpha").append(["[warning] alpha: disk almost full"])
        await wait_until(lambda: "[warning] alpha: disk almost full" in page.stderr_view.toPlainText(), 10,
                         "the new line in the open log view")
        page.select("beta")
        assert "alpha" not in page.stderr_view.toPlainText()
        manager.server_log("alpha").append(["[error] alpha: gone"])  # not the shown server: not shown
        manager.server_log("beta").append(["[info] beta: hello"])
        await wait_until(lambda: "[info] beta: hello" in page.stderr_view.toPlainText(), 10, "beta's line")
        assert "alpha" not in page.stderr_view.toPlainText()
        dialog.reject()
