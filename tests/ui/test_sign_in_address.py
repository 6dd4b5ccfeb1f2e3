"""An OAuth sign-in on a machine without a browser: Settings → MCP servers shows the address to
copy the moment the sign-in starts (never "starting…" until it times out). A real OAuth-protected
server with its own authorization server (tests/mcp/servers/oauth_server.py); the person who
copies the address is the tests' tiny browser, following it."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtGui import QGuiApplication

from cks_desktop.mcp.connection import Status
from tests.mcp.conftest import wait_until
from tests.mcp.test_oauth import Browser, oauth_server
from tests.ui.conftest import open_window
from tests.ui.helpers import wait


@pytest.mark.slow
@pytest.mark.asyncio
async def test_without_a_browser_the_address_shows_at_once_and_signing_in_with_it_works(
        qtbot, home, tmp_path, memory_keyring) -> None:
    from cks_desktop.ui.settings.dialog import SettingsDialog

    async with oauth_server(tmp_path) as url:
        async with open_window(home, mcp_servers={"remote": {"url": url}}, mcp_targets={}) as window:
            await window.start_background()
            manager = window.services.mcp
            await wait_until(lambda: manager.connections["remote"].status is Status.NEEDS_AUTH, 20, "needs sign-in")
            window.open_settings("mcp", "remote")
            page = window.findChild(SettingsDialog).mcp_page
            tried: list[str] = []
            page.sign_in_address.browser = lambda address: tried.append(address) is not None  # no browser here
            assert not page.sign_in_address.isVisibleTo(page)
            signing = asyncio.ensure_future(page.sign_in("remote"))
            box = page.sign_in_address
            await wait_until(lambda: box.isVisibleTo(page), 10, "the sign-in address")
            address = box.address.text()
            assert tried == [address] and "code_challenge_method=S256" in address
            assert "no browser could be opened" in box.note.text() and box.address.isReadOnly()
            box.copy_button.click()
            assert QGuiApplication.clipboard().text() == address
            person = Browser()
            person(QGuiApplication.clipboard().text())  # opened on another device, approved there
            await wait(signing, 30)
            assert manager.connections["remote"].status is Status.READY, manager.connections["remote"].reason
            assert not box.isVisibleTo(page) and not box.address.text()
            window.findChild(SettingsDialog).reject()
