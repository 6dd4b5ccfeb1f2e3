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
        assert page.service.shared() == [sid]
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
                # the earlier connection stays listed until idle (HTTP sessions have no close hook)
                assert page.clients.topLevelItemCount() == 2
                assert all(int(page.clients.topLevelItem(i).text(2)) >= 1 for i in range(2))
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
        assert page.service.approval() == "host"

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
