"""Settings → Share with other apps, on the real window: start from the page, connect with the
official SDK's streamable HTTP client using the URL and token the page shows, share and unshare
from the checkboxes, a host's write shows in the open graph, the snippets copy the right JSON,
Stop (and the window's shutdown) closes the port."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from cks_desktop.graph.events import GraphChanged
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.settings.share_page import SharePage

from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait


def port_open(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex((parts.hostname, parts.port)) == 0


def item_for(page: SharePage, session_id: str) -> Any:
    for row in range(page.sessions.count()):
        item = page.sessions.item(row)
        if item.data(Qt.ItemDataRole.UserRole) == session_id:
            return item
    raise AssertionError(f"no row for {session_id}")


async def shared_titles(url: str, token: str) -> list[str]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", client_info=None) as c:
            r = await c.call_tool("list_shared_sessions", {})
            assert not r.is_error, r.content[0].text
            return [s["title"] for s in r.structured_content["sessions"]]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_share_page_serves_the_window_and_stops(qtbot: Any, home: Path) -> None:
    async with open_window(home) as window:
        sid = window.sidebar.create_session()
        other = window.services.store.create_session("Private notes").id
        window.open_session(sid)
        view = window.graph_view
        await wait(view.sync.opened.wait())
        window.open_settings("share")
        dialog = window.findChild(SettingsDialog)
        page = dialog.share_page
        assert dialog.stack.currentWidget().widget() is page
        assert page.snippet("vscode", "url") == "Start the server to get the URL form."

        # share one session from its checkbox, start from the switch
        item_for(page, sid).setCheckState(Qt.CheckState.Checked)
        assert page.sharing.shared_ids() == [sid]
        started = signal_future(page.serverChanged)
        qtbot.mouseClick(page.switch, Qt.MouseButton.LeftButton)
        (ok,) = await wait(started)
        assert ok and page.switch.text() == "Stop", page.error.text()
        url = page.url.text()
        assert url.startswith("http://127.0.0.1:") and port_open(url)

        # the token: hidden, Show, Copy
        token = page.token.text()
        assert token and page.token.echoMode() == page.token.EchoMode.Password
        qtbot.mouseClick(page.show_token, Qt.MouseButton.LeftButton)
        assert page.token.echoMode() == page.token.EchoMode.Normal
        qtbot.mouseClick(page.copy_token, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == token
        qtbot.mouseClick(page.copy_url, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text() == url

        title = window.services.store.get_session(sid).title
        assert await shared_titles(url, token) == [title]

        # a host's write shows in the open window's graph; the client is listed
        arrived = signal_future(window.store_bridge.arrived,
                                lambda e: isinstance(e, GraphChanged) and e.session_id == sid)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy", client_info=None) as c:
                tools = {t.name for t in (await c.list_tools()).tools}
                assert {"add_object", "list_shared_sessions"} <= tools
                r = await c.call_tool("add_object", {"type": "Person", "name": "Ada Lovelace"})
                assert not r.is_error, r.content[0].text
                page.refresh_clients()
                # the earlier connection left the list when its session ended (its DELETE)
                assert page.clients.topLevelItemCount() == 1
                assert int(page.clients.topLevelItem(0).text(2)) >= 1
        await wait(arrived)
        assert "Ada Lovelace" in view.model.names

        # share the other, then unshare the first: the host sees it at its next call
        item_for(page, other).setCheckState(Qt.CheckState.Checked)
        item_for(page, sid).setCheckState(Qt.CheckState.Unchecked)
        assert await shared_titles(url, token) == ["Private notes"]
        assert dialog.applied_changes[-2:] == ["shared “Private notes”", f"unshared “{title}”"]

        # snippets: each host and form copies the JSON the service builds
        snippets = page.service.snippets()
        for index in range(page.host.count()):
            page.host.setCurrentIndex(index)
            host = page.host.currentData()
            for tab, form in enumerate(("stdio", "url")):
                page.forms.setCurrentIndex(tab)
                qtbot.mouseClick(page.copy_snippet, Qt.MouseButton.LeftButton)
                assert json.loads(QGuiApplication.clipboard().text()) == snippets[host][form]
        page.host.setCurrentIndex(page.host.findData("vscode"))
        page.forms.setCurrentIndex(1)
        qtbot.mouseClick(page.copy_snippet, Qt.MouseButton.LeftButton)
        entry = json.loads(QGuiApplication.clipboard().text())["servers"]["cks-desktop"]
        assert entry == {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}

        # the approval choice is the setting
        qtbot.mouseClick(page.approve_app, Qt.MouseButton.LeftButton)
        assert window.services.settings.data["mcp_serve"]["approval"] == "app"
        qtbot.mouseClick(page.approve_host, Qt.MouseButton.LeftButton)
        assert page.sharing.approval() == "host"

        # Stop closes the port
        stopped = signal_future(page.serverChanged)
        qtbot.mouseClick(page.switch, Qt.MouseButton.LeftButton)
        (ok,) = await wait(stopped)
        assert not ok and not port_open(url) and page.switch.text() == "Start"

        # the window's shutdown stops a running server too
        started = signal_future(page.serverChanged)
        qtbot.mouseClick(page.switch, Qt.MouseButton.LeftButton)
        await wait(started)
        url = page.url.text()
        assert port_open(url)
    assert not port_open(url)


async def _call(url: str, token: str, name: str, arguments: dict[str, Any]) -> Any:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", client_info=None) as c:
            return await c.call_tool(name, arguments)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_this_app_asks_too_opens_the_windows_approval_dialog(qtbot: Any, home: Path) -> None:
    """"This app asks too": a host's removal through the window's server opens the window's own
    approval dialog (the real dialog, the real service); Deny reaches the host as a tool error and
    changes nothing, Allow as a success."""
    import asyncio

    async with open_window(home) as window:
        store = window.services.store
        sid = store.create_session("Shared").id
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": n} for n in ("Ada", "Bob")], "test")
        service = window.share_service
        window.services.cases.sharing.share(sid)
        window.services.cases.sharing.set_approval("app")
        url = await service.start(port=0)
        token = service.token or ""

        opened = signal_future(window.approvalDialogOpened)
        call = asyncio.ensure_future(_call(url, token, "remove_object", {"ref": "Ada"}))
        (dialog,) = await wait(opened)
        assert dialog.objectName() == "approvalDialog" and '"ref": "Ada"' in dialog.arguments_view.toPlainText()
        assert not call.done()  # the host waits for the person
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
        result = await wait(call)
        assert result.is_error and "declined" in result.content[0].text.lower(), result.content[0].text
        assert sorted(o.name for o in store.all_objects(sid)) == ["Ada", "Bob"]

        await service.stop()  # a refusal holds for the server's run (a `once` tool); a new start asks anew
        url = await service.start(port=0)
        token = service.token or ""  # the tests' keychain is not secure: a token per start
        opened = signal_future(window.approvalDialogOpened)
        call = asyncio.ensure_future(_call(url, token, "remove_object", {"ref": "Bob"}))
        (dialog,) = await wait(opened)
        qtbot.mouseClick(dialog.allow_button, Qt.MouseButton.LeftButton)
        result = await wait(call)
        assert not result.is_error, result.content[0].text
        assert sorted(o.name for o in store.all_objects(sid)) == ["Ada"]

        # "the host asks" (the default): no dialog, the call runs
        window.services.cases.sharing.set_approval("host")
        result = await wait(_call(url, token, "remove_object", {"ref": "Ada"}))
        assert not result.is_error and store.all_objects(sid) == []


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # resources/subscribe (2025 era)
async def test_done_means_two_hosts_at_once_and_the_window_see_each_others_writes(
        qtbot: Any, home: Path, tmp_path: Path) -> None:
    """Two hosts at once: Claude Desktop's stdio form (`mcp serve`, another process) and a
    URL host (the window's own server) on the same shared session at once; an object either adds
    reaches the other's subscribed resource as resources/updated and shows live in the open window."""
    from tests.mcp.serve_helpers import stdio, wait_for
    from tests.mcp.test_serve_live import Inbox

    async with open_window(home) as window:
        sid = window.sidebar.create_session()
        window.open_session(sid)
        view = window.graph_view
        await wait(view.sync.opened.wait())
        service = window.share_service
        window.services.cases.sharing.share(sid)  # settings.json: the stdio server started next reads it
        url = await service.start(port=0)
        token = service.token or ""
        graph = f"cks://sessions/{sid}/graph.json"
        desktop_inbox, vscode_inbox = Inbox(), Inbox()
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http, \
                stdio(home, tmp_path / "stdio.err", mode="legacy", message_handler=desktop_inbox) as desktop, \
                Client(streamable_http_client(url, http_client=http), mode="legacy",
                       message_handler=vscode_inbox) as vscode:
            await desktop.subscribe_resource(graph)
            await vscode.subscribe_resource(graph)

            # Claude Desktop (stdio, another process) adds: the URL host is told, the window shows it
            r = await desktop.call_tool("add_object", {"type": "Person", "name": "Ada Lovelace"})
            assert not r.is_error, r.content[0].text
            await wait_for(lambda: graph in vscode_inbox.updated, 20, "the URL host's resources/updated")
            await wait_for(lambda: "Ada Lovelace" in view.model.names, 20, "the window's graph to show Ada")
            text = (await vscode.read_resource(graph)).contents[0].text
            assert "Ada Lovelace" in text

            # the URL host adds: the stdio host is told (through the change feed), the window shows it
            r = await vscode.call_tool("add_object", {"type": "Person", "name": "Grace Hopper"})
            assert not r.is_error, r.content[0].text
            await wait_for(lambda: graph in desktop_inbox.updated, 20, "the stdio host's resources/updated")
            await wait_for(lambda: "Grace Hopper" in view.model.names, 20, "the window's graph to show Grace")
            text = (await desktop.read_resource(graph)).contents[0].text
            assert "Ada Lovelace" in text and "Grace Hopper" in text
            # the window's own server's host, then Claude Desktop's, through its own `mcp serve` process
            assert [(c.transport, bool(c.process)) for c in service.clients()] == [("http", False), ("stdio", True)]
        assert sorted(o.name for o in window.services.store.all_objects(sid)) == ["Ada Lovelace", "Grace Hopper"]


@pytest.mark.asyncio
async def test_sharing_when_the_settings_cannot_be_saved_is_one_sentence_and_the_box_stays_clear(
        qtbot: Any, home: Path) -> None:
    async with open_window(home) as window:
        sid = window.services.store.create_session("Alpha").id
        window.open_settings("share")
        page = window.findChild(SettingsDialog).share_page
        page.refresh_sessions()
        window.services.settings.lock_path.mkdir()  # the settings file's lock cannot be taken
        item_for(page, sid).setCheckState(Qt.CheckState.Checked)
        assert page.error.isVisible() and "could not be saved" in page.error.text()
        assert "\n" not in page.error.text()
        assert item_for(page, sid).checkState() == Qt.CheckState.Unchecked and page.sharing.shared_ids() == []
