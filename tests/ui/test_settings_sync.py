"""The window and a terminal share settings.json.

A real ``python -m cks_desktop mcp add`` runs while the window is open: the
window notices the file changed (the save was an atomic rename), its MCP list
shows the new server, and its own next save keeps it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop.ui.settings.dialog import SettingsDialog

from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait

ENV = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}


async def terminal_add(home: Path, name: str) -> None:
    proc = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "add", name,
                         "--disabled", "--", "python", "server.py"],
        capture_output=True, text=True, timeout=60, env=ENV)
    assert proc.returncode == 0, proc.stderr


def list_names(page) -> list[str]:
    return [page.list.topLevelItem(i).text(0) for i in range(page.list.topLevelItemCount())]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_terminal_add_shows_in_the_window_and_survives_its_saves(qtbot, home: Path) -> None:
    async with open_window(home) as window:
        settings = window.services.settings
        settings.mcp_servers["from-window"] = {"command": "run-it", "enabled": False}
        window.save_layout()  # the window has saved before, as on any later run
        window.open_settings("mcp")
        page = window.findChild(SettingsDialog).mcp_page
        assert list_names(page) == ["from-window"]

        noticed = signal_future(window.settingsReloaded, lambda keys: "mcpServers" in keys)
        await terminal_add(home, "from-terminal")
        await wait(noticed)
        assert list_names(page) == ["from-window", "from-terminal"]
        assert "from-terminal" in settings.mcp_servers

        # The window saves something of its own (the layout, a chat setting): the terminal's server stays.
        window.chat_panel.composer.input.set_enter_sends(False)
        settings.data["ui"]["enter_sends"] = False
        window.save_layout()
        data = json.loads(settings.path.read_text())
        assert set(data["mcpServers"]) == {"from-window", "from-terminal"}
        assert data["ui"]["enter_sends"] is False and data["ui"]["geometry"]

        # Even when the window saves before it noticed (a stale view), the save merges.
        await terminal_add(home, "second-terminal")
        window.save_layout()
        assert set(json.loads(settings.path.read_text())["mcpServers"]) == {
            "from-window", "from-terminal", "second-terminal"}
        assert "second-terminal" in settings.mcp_servers
        assert "second-terminal" in list_names(page)  # what the save merged in is shown too

        # Every save is an atomic rename (a new inode): the watch keeps working after several of them.
        noticed = signal_future(window.settingsReloaded, lambda keys: "mcpServers" in keys)
        await terminal_add(home, "third-terminal")
        await wait(noticed)
        assert list_names(page)[-1] == "third-terminal"
