"""The MCP client's UI gaps: the editor's server-request keys, the chat's "Sign in" notice,
and a tool result's resource_link opened or attached with a click.

Real parts: the real editor and settings file on a real data directory.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.settings.mcp_form import ServerForm
from cks_desktop.ui.tasks import TaskTracker


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def test_editor_edits_log_level_sampling_and_roots_and_keeps_other_keys(qtbot, services, tmp_path) -> None:
    folder = tmp_path / "extra"
    folder.mkdir()
    services.settings.mcp_servers["toy"] = {"command": "run-it", "logLevel": "debug", "sampling": "allow",
                                            "roots": ["/data/one"], "futureKey": 7}
    editor = McpServerEditor(services, TaskTracker(),
                             ServerForm.from_entry("toy", services.settings.mcp_servers["toy"]))
    qtbot.addWidget(editor)
    editor.show()
    assert editor.option_fields["logLevel"].currentData() == "debug" and editor.option_fields["sampling"].currentData() == "allow"
    assert editor.roots() == ["/data/one"]
    editor.option_fields["logLevel"].setCurrentIndex(editor.option_fields["logLevel"].findData("warning"))
    editor.option_fields["sampling"].setCurrentIndex(editor.option_fields["sampling"].findData("off"))
    editor.add_root(str(folder))
    editor.add_root(str(folder))  # the same folder twice is listed once
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["toy"]
    assert (entry["logLevel"], entry["sampling"], entry["roots"]) == ("warning", "off", ["/data/one", str(folder)])
    assert entry["futureKey"] == 7


def test_editor_defaults_write_no_keys_and_the_add_folder_dialog_is_not_modal_exec(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    assert (editor.option_fields["logLevel"].currentData(), editor.option_fields["sampling"].currentData(), editor.roots()) == \
        ("info", "ask", [])
    assert [editor.option_fields["logLevel"].itemData(i) for i in range(editor.option_fields["logLevel"].count())] == \
        ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    editor.name_edit.setText("plain")
    editor.command_edit.setText("run-it")
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    entry = json.loads(services.settings.path.read_text())["mcpServers"]["plain"]
    assert not {"logLevel", "sampling", "roots"} & set(entry)


def test_add_folder_opens_a_window_modal_chooser(qtbot, services) -> None:
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    editor.pick_root()  # open(), never exec(): this returns at once
    chooser = editor.root_dialog
    assert chooser.isVisible()
    chooser.fileSelected.emit("/tmp/picked")
    chooser.reject()
    assert editor.roots() == ["/tmp/picked"]


# -- (2) the chat's "Sign in to <server>" on a call that needs it, with Cancel ------------------------------
def _row_for(view, call_id: str):
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    return next(r for r in view.findChildren(ToolCallRow) if r.item.call_id == call_id)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_call_that_needs_sign_in_shows_a_sign_in_button_with_cancel(qtbot, memory_keyring, tmp_path) -> None:
    from cks_desktop.agent import events as ev
    from cks_desktop.mcp.connection import Status
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import Outcome, ToolResult
    from cks_desktop.ui.chat.chat_view import ChatView
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.presenter import ChatPresenter
    from cks_desktop.ui.chat.resource_picker import AttachmentBar
    from cks_desktop.ui.chat.tool_actions import install_chat_actions
    from tests.mcp.conftest import wait_until
    from tests.mcp.test_oauth import Browser, make_manager, oauth_server
    from tests.ui.helpers import wait

    async with oauth_server(tmp_path) as url:
        settings = Settings.load(tmp_path / "config" / "settings.json")
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        settings.save()
        manager = make_manager(settings, ToolRegistry(None), tmp_path)  # type: ignore[arg-type]
        try:
            await manager.start_all()
            conn = manager.connections["remote"]
            assert conn.status is Status.NEEDS_AUTH, conn.reason
            out = await conn.call_tool("echo", {"text": "x"})  # the real refusal, with its structured mark
            model = ChatModel()
            view = ChatView(model)
            qtbot.addWidget(view)
            view.show()
            actions = install_chat_actions(view, manager, AttachmentBar(), view)
            presenter = ChatPresenter(model, lambda name, source: False)
            presenter.handle(ev.ToolCallStarted("c1", "mcp:remote:echo", "remote · echo", {"text": "x"},
                                                "mcp:remote"))
            presenter.handle(ev.ToolCallFinished("c1", ToolResult("c1", out.content, Outcome.ERROR,
                                                                  structured=out.structured), 3))
            await wait_until(lambda: _row_for(view, "c1").action_strip is not None, what="the row's sign-in strip")
            row = _row_for(view, "c1")
            strip = row.action_strip
            assert strip.sign_in_button.text() == "Sign in to remote" and strip.sign_in_button.isVisibleTo(row)
            assert not strip.cancel_button.isVisibleTo(row)

            # Nobody completes the browser step: Cancel ends the wait in one sentence.
            visits: list[str] = []
            actions.open_url = visits.append
            strip.sign_in_button.click()
            await wait_until(lambda: bool(visits), 15, "the browser step")
            assert strip.cancel_button.isVisibleTo(row) and not strip.sign_in_button.isEnabled()
            assert "browser" in strip.note.text()
            strip.cancel_button.click()
            await wait(asyncio.gather(*actions.tasks))
            assert strip.sign_in_button.isEnabled() and not strip.cancel_button.isVisibleTo(row)
            assert conn.status is not Status.READY and strip.note.text()

            # A browser that approves: the server becomes ready, the strip says so.
            actions.open_url = Browser()
            strip.sign_in_button.click()
            await wait(asyncio.gather(*actions.tasks))
            assert manager.connections["remote"].status is Status.READY
            assert strip.note.text() == "Signed in to remote. Ask again to use its tools."
        finally:
            await manager.aclose()


@pytest.mark.asyncio
async def test_a_reloaded_chat_offers_sign_in_on_the_row_that_needed_it(qtbot, memory_keyring, tmp_path) -> None:
    """The transcript keeps which server a call needed a sign-in to: a chat reopened from the
    session's file shows the row's "Sign in to <server>" as the live chat did."""
    from cks_desktop.agent.chat_inputs import ChatDeps
    from cks_desktop.agent.loop import ai_chat
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.mcp.connection import Status
    from cks_desktop.settings import Settings
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import Policy, Scope, ToolOutput, ToolSpec
    from cks_desktop.ui.chat.chat_view import ChatView
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.presenter import ChatPresenter
    from tests.agent.helpers import turn_options
    from tests.fakes.script import call_turn, text_turn
    from tests.fakes.scripted import ScriptedProvider
    from tests.mcp.conftest import wait_until
    from tests.mcp.test_oauth import make_manager, oauth_server

    async with oauth_server(tmp_path) as url:
        settings = Settings.load(tmp_path / "config" / "settings.json")
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        settings.save()
        manager = make_manager(settings, ToolRegistry(None), tmp_path)  # type: ignore[arg-type]
        store = GraphStore.open(tmp_path / "graph.sqlite3")
        try:
            await manager.start_all()
            conn = manager.connections["remote"]
            assert conn.status is Status.NEEDS_AUTH, conn.reason

            async def echo(args: dict, ctx: object) -> ToolOutput:  # the server's tool, as the manager wraps it
                return await conn.call_tool("echo", args)

            registry = ToolRegistry(store)
            registry.register(ToolSpec(name="remote_echo", description="Echo on remote.",
                                       input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
                                       scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO,
                                       llm_exposed=True, handler=echo, source="mcp:remote"))
            session = store.create_session("Chat")
            transcript = TranscriptStore.for_store(store)
            provider = ScriptedProvider([call_turn("remote_echo", {"text": "x"}), text_turn("Please sign in.")])
            await asyncio.wait_for(ai_chat(session.id, [], "echo x", ChatDeps(provider, registry, store, transcript),
                                           turn_options(), approver=StaticApprover(Decision.ALLOW)), 30)
            saved = transcript.history(session.id)
            (record,) = [c for s in saved for c in s.calls]
            assert record.sign_in == "remote"

            # reopened: a fresh model and view load the saved chat
            model = ChatModel()
            view = ChatView(model)
            qtbot.addWidget(view)
            view.show()
            ChatPresenter(model, lambda name, source: False).load(transcript.history(session.id))
            await wait_until(lambda: any(getattr(r, "action_strip", None) is not None
                                         for r in view.findChildren(_row_type())), what="the reloaded sign-in strip")
            row = _row_for(view, record.call_id)
            assert row.action_strip.sign_in_button.text() == "Sign in to remote"
            assert row.action_strip.sign_in_button.isVisibleTo(row)
        finally:
            store.close()
            await manager.aclose()


def _row_type():
    from cks_desktop.ui.chat.tool_row import ToolCallRow

    return ToolCallRow


# -- (3) a resource_link in a result: Open (plain text in a dialog) or Attach -------------------------------
@pytest.mark.asyncio
async def test_a_resource_link_in_a_result_opens_as_text_or_attaches(qtbot, tmp_path) -> None:
    import sys

    from cks_desktop.agent import events as ev
    from cks_desktop.mcp.manager import McpManager
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import Outcome, ToolResult
    from cks_desktop.ui.chat.chat_view import ChatView
    from cks_desktop.ui.chat.model import ChatModel
    from cks_desktop.ui.chat.presenter import ChatPresenter
    from cks_desktop.ui.chat.resource_picker import AttachmentBar
    from cks_desktop.ui.chat.tool_actions import ResourceTextDialog, install_chat_actions
    from tests.mcp.conftest import SERVERS, wait_until
    from tests.ui.helpers import wait

    settings = Settings.load(tmp_path / "config" / "settings.json")
    settings.mcp_servers["lib"] = {"command": sys.executable, "args": [str(SERVERS / "library_server.py")],
                                   "protocol": "legacy", "approval": "auto"}
    settings.save()
    manager = McpManager(settings, SecretStore(secure=False), ToolRegistry(None), tmp_path / "logs")  # type: ignore[arg-type]
    try:
        await manager.start_all()
        conn = manager.connections["lib"]
        out = await conn.call_tool("link", {})  # the real result: a resource_link block
        assert "[resource link: note-1 — note://1" in out.content
        model = ChatModel()
        view = ChatView(model)
        qtbot.addWidget(view)
        view.show()
        bar = AttachmentBar()
        actions = install_chat_actions(view, manager, bar, view)
        presenter = ChatPresenter(model, lambda name, source: False)
        presenter.handle(ev.ToolCallStarted("c1", "mcp:lib:link", "lib · link", {}, "mcp:lib"))
        # The same server's hostile resource, named in a (made-up) second link line of the result.
        content = out.content + "\n[resource link: hostile — html://hostile, text/html]"
        presenter.handle(ev.ToolCallFinished("c1", ToolResult("c1", content, Outcome.OK), 3))
        await wait_until(lambda: _row_for(view, "c1").action_strip is not None, what="the row's link strip")
        strip = _row_for(view, "c1").action_strip
        assert set(strip.link_buttons) == {("open", "note://1"), ("attach", "note://1"),
                                           ("open", "html://hostile"), ("attach", "html://hostile")}

        strip.link_buttons[("open", "note://1")].click()
        await wait(asyncio.gather(*actions.tasks))
        dialog = actions.dialog
        assert isinstance(dialog, ResourceTextDialog) and dialog.isVisible()  # open(), never exec()
        assert dialog.text.toPlainText() == "Body of note 1."
        dialog.close()

        strip.link_buttons[("open", "html://hostile")].click()
        await wait(asyncio.gather(*actions.tasks))
        shown = actions.dialog.text.toPlainText()
        assert shown.startswith('<img src="http://evil.invalid/x.png"><b>bold</b>')  # shown as text, never rendered
        actions.dialog.close()

        strip.link_buttons[("attach", "note://1")].click()
        await wait(asyncio.gather(*actions.tasks))
        assert [(o.server, o.uri) for o in bar.items] == [("lib", "note://1")]
        assert strip.note.text().startswith("Attached to your next message")

        await manager.stop("lib")  # a stopped server: one sentence on the row, nothing attached
        strip.link_buttons[("attach", "note://1")].click()
        await wait(asyncio.gather(*actions.tasks))
        assert strip.note.text() == "The MCP server 'lib' is not running; start it to read this resource."
        assert len(bar.items) == 1
    finally:
        await manager.aclose()


def test_links_are_read_only_from_a_finished_mcp_call() -> None:
    from cks_desktop.ui.chat.model import RowState, ToolItem
    from cks_desktop.ui.chat.tool_actions import Link, resource_links

    text = "[resource link: a — note://1, text/plain]\n[resource link: a — note://1, text/plain]\n[resource link: b — x://2]"
    item = ToolItem("c", "mcp:s:t", "s · t", "mcp:s", {}, state=RowState.DONE, result=text)
    assert resource_links(item) == [Link("a", "note://1"), Link("b", "x://2")]
    assert resource_links(ToolItem("c", "look", "look", "builtin", {}, state=RowState.DONE, result=text)) == []
    assert resource_links(ToolItem("c", "mcp:s:t", "s · t", "mcp:s", {}, state=RowState.RUNNING, result=text)) == []
