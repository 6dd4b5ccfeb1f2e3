"""More of the window: MCP tools, the iteration cap, no provider, Revert, quitting, layout, long chats."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp.server.mcpserver import MCPServer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.agent.events import CallState
from cks_desktop.agent.transcript import CallRecord
from cks_desktop.ui.chat.model import MessageItem, RowState

from tests.fakes.providers import make_fake
from tests.fakes.script import Turn, call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_window import _send, _texts

HOSTILE = 'Page: <img src="http://evil.example/p.png"> <a href="http://evil.example/x">x</a>'


def notes_server() -> MCPServer:
    server = MCPServer("notes")

    @server.tool()
    async def fetch_page(url: str) -> str:
        """Fetch a web page (a fake: returns a hostile snippet)."""
        return HOSTILE

    return server


@pytest.mark.asyncio
async def test_mcp_tool_asks_with_its_server_name_and_shows_its_status(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("mcp__notes__fetch_page", {"url": "http://example.org"}), text_turn("Fetched."))
    async with open_window(home, fake=anthropic_fake, mcp_servers={"notes": {"command": "unused",
                                                                          "protocol": "legacy"}},
                           mcp_targets={"notes": notes_server()}) as window:
        # A command-started server's tools need code.execute, which chats grant only when the person
        # turns it on: here for this server, as its editor's "Grant … in every chat" does.
        from cks_desktop.tools.scopes import server_identity
        settings = window.services.settings
        settings.set_server_grant("notes", ["code.execute"], server_identity(settings.mcp_servers["notes"]))
        await wait(window.services.mcp_start)
        await window.start_background()
        light = window.status.lights["notes"]
        assert light.status == "ready" and "ready" in light.toolTip()
        window.sidebar.create_session()
        opened = signal_future(window.approvalDialogOpened)
        task = _send(window, qtbot, "Fetch it")
        (dialog,) = await wait(opened)
        assert dialog.windowTitle() == "Allow notes · fetch_page?"  # MCP tools default to `always`
        assert "MCP server “notes”" in dialog.source_label.text()
        qtbot.mouseClick(dialog.allow_run_button, Qt.MouseButton.LeftButton)
        await wait(task)
        (row,) = window.chat_panel.view.rows()
        assert row.name_label.text() == "notes · fetch_page" and row.item.state is RowState.DONE
        assert not row.revert_button.isVisibleTo(row)  # only built-in graph writes can be reverted
        row.set_expanded(True)
        assert HOSTILE in row.result_block.view.toPlainText()  # literal text, never HTML
        opened_settings = signal_future(window.settingsDialogOpened)
        qtbot.mouseClick(light, Qt.MouseButton.LeftButton)  # a click opens that server in the settings
        (settings,) = await wait(opened_settings)
        assert settings.mcp_page.current() == "notes" and settings.stack.currentWidget() is settings.mcp_page
        settings.reject()


@pytest.mark.asyncio
async def test_iteration_cap_offers_continue(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("graph_summary", {}), text_turn("Carrying on: done."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.services.settings.max_iterations = 1
        window.sidebar.create_session()
        await wait(_send(window, qtbot, "Summarize"))
        panel = window.chat_panel
        assert panel.limit_banner.isVisibleTo(panel)
        assert "iteration limit" in _texts(window, "notice")[-1]
        qtbot.mouseClick(panel.continue_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert _texts(window, "user")[-1] == "Continue." and not panel.limit_banner.isVisibleTo(panel)
        assert _texts(window, "assistant")[-1] == "Carrying on: done."


@pytest.mark.asyncio
async def test_without_a_provider_the_chat_explains_the_choices(qtbot, home) -> None:
    with make_fake("ollama") as ollama:
        async with open_window(home) as window:
            panel = window.chat_panel
            assert panel.setup_notice.isVisibleTo(panel) and "Anthropic" in panel.setup_notice.text()
            window.services.settings.provider("ollama")["base_url"] = ollama.base_url
            await window._probe_ollama()  # a local Ollama answering at its address is offered
            assert "is running at" in panel.setup_notice.text()
            window.sidebar.create_session()
            await wait(_send(window, qtbot, "Hello?"))
            assert "No model provider is set up yet" in _texts(window, "error")[-1]
            opened = signal_future(window.settingsDialogOpened)
            panel.setup_notice.linkActivated.emit("settings:providers")
            (dialog,) = await wait(opened)
            assert dialog.objectName() == "settingsDialog" and dialog.stack.currentWidget() is dialog.providers_page
            dialog.reject()
            panel.setup_notice.linkActivated.emit("use-ollama")
            assert window.services.providers.name == "ollama" and not panel.setup_notice.isVisibleTo(panel)
            assert window.status.provider_button.text().startswith("Ollama")


@pytest.mark.asyncio
async def test_revert_undoes_a_tool_change_and_is_remembered(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("add_object", {"type": "City", "name": "Paris"}), text_turn("Added Paris."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        await wait(_send(window, qtbot, "Add Paris"))
        window.chat_panel.view.flush()  # row repaints are coalesced; apply them now
        (row,) = window.chat_panel.view.rows()
        assert "Paris" in window.graph_view.object_names() and row.revert_button.isVisibleTo(row)
        mentioned: list[list[str]] = []
        window.chat_panel.objectsMentioned.connect(mentioned.append)
        qtbot.mouseClick(row.toggle_button, Qt.MouseButton.LeftButton)  # a row click shows its objects
        paris = window.services.store.resolve(window.current_session, "Paris")
        assert mentioned == [[paris.id]] and row.is_expanded()
        window.graph_view.askAbout.emit(f"“Paris” ({paris.id})")  # "Ask about this" in the graph
        assert paris.id in window.chat_panel.composer.input.toPlainText()
        window.chat_panel.composer.input.clear()
        qtbot.mouseClick(row.revert_button, Qt.MouseButton.LeftButton)
        await wait(asyncio.gather(*window.tasks.pending))
        window.chat_panel.view.flush()
        assert row.state_label.text() == "reverted" and not row.revert_button.isVisibleTo(row)
        assert "Paris" not in window.graph_view.object_names()
    async with open_window(home, fake=anthropic_fake) as window:
        (row,) = window.chat_panel.view.rows()
        assert row.item.reverted and row.state_label.text() == "reverted"


@pytest.mark.asyncio
async def test_quitting_while_a_chat_runs_asks_first(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(Turn(text=["Working…"], stall_after_text=True))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        task = _send(window, qtbot, "Long job")
        quit_future = signal_future(window.quitRequested)
        for answer in ("confirmCancelButton", "confirmAcceptButton"):
            window.close()
            await asyncio.sleep(0)
            box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
            assert "still answering" in box.text()
            qtbot.mouseClick(box.findChild(type(box.defaultButton()), answer), Qt.MouseButton.LeftButton)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if answer == "confirmCancelButton":
                assert not quit_future.done() and not task.done()
        await wait(quit_future)
        await window.shutdown()  # what amain does next: the running turn is stopped cleanly
        assert task.cancelled()


@pytest.mark.asyncio
async def test_layout_and_last_session_are_remembered(qtbot, home) -> None:
    async with open_window(home) as window:
        window.sidebar.create_session()
        second = window.sidebar.create_session()
        window.chat_dock.toggleViewAction().trigger()  # close the chat dock from the View menu
        assert not window.chat_dock.isVisible()
    async with open_window(home) as window:
        assert window.current_session == second
        assert not window.chat_dock.isVisible()
        window.chat_dock.toggleViewAction().trigger()  # and bring it back
        assert window.chat_dock.isVisible()


@pytest.mark.slow  # a wall-clock budget: bench/chat_render.py measures it beside its floor
@pytest.mark.asyncio
async def test_a_thousand_message_chat_opens_in_under_a_second(qtbot, home) -> None:
    async with open_window(home) as window:
        store, transcripts = window.services.store, window.services.transcripts
        session = store.create_session("Long chat")
        for i in range(250):
            call = ToolCallPart(f"c{i}", "add_object", {"type": "Item", "name": f"Item {i}"})
            transcripts.append(session.id, [
                Message.user(f"Please add **item {i}**"),
                Message("assistant", [Text(f"Adding item {i}."), call]),
                Message("tool", [ToolResultPart(f"c{i}", "add_object", f'{{"id": "o{i}"}}')]),
                Message("assistant", [Text(f"Item {i} is in the graph, see [here](https://example.org/{i}).")]),
            ], calls=[CallRecord(f"c{i}", "add_object", "Add object", "builtin", CallState.DONE, 3.0, f"ch{i}")])
        window.sessions.refresh()
        started = time.perf_counter()
        window.open_session(session.id)
        QApplication.processEvents()  # a sync point outside any coroutine step: the first paint
        elapsed = time.perf_counter() - started
        assert elapsed < 1.0, f"opening 1,000 messages took {elapsed:.2f} s"
        items = window.chat_panel.model.items
        assert sum(isinstance(i, MessageItem) for i in items) == 750 and len(window.chat_panel.view.rows()) > 0
