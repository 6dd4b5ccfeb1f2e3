"""The Share page lists the hosts connected to `mcp serve` processes on the same data folder
(an MCP host such as Claude Desktop starts its own `mcp serve` over stdio, not the window's
server): a real `mcp serve` subprocess driven by the official MCP SDK client, and the window."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation

from cks_desktop.serve.clients import ClientRecord
from cks_desktop.serve.presence import Presence, others
from cks_desktop.ui.settings.dialog import SettingsDialog
from tests.mcp.conftest import wait_until
from tests.ui.conftest import open_window
from tests.ui.helpers import wait

MAIN = Path(__file__).resolve().parents[2]


def _texts(page: Any) -> list[str]:
    tree = page.clients
    return [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]


@pytest.mark.slow
@pytest.mark.asyncio
async def test_a_host_of_mcp_serve_is_listed_while_connected_and_gone_after(qtbot: Any, home: Path,
                                                                           tmp_path: Path) -> None:
    async with open_window(home) as window:
        sid = window.sidebar.create_session()
        window.open_settings("share")
        page = window.findChild(SettingsDialog).share_page
        assert _texts(page) == ["Not serving, and no mcp serve is running"]
        connected, release = threading.Event(), threading.Event()

        def host() -> None:  # the host's own loop, in a worker thread, as a separate app would be
            async def run() -> None:
                params = StdioServerParameters(
                    command=sys.executable, cwd=str(MAIN), env={**os.environ, "PYTHONPATH": str(MAIN)},
                    args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve", "--session", sid])
                with open(tmp_path / "serve.err", "w") as errlog:
                    async with Client(stdio_client(params, errlog=errlog), mode="legacy",
                                      client_info=Implementation(name="Claude Desktop", version="9.1")) as client:
                        await client.list_tools()
                        connected.set()
                        await asyncio.to_thread(release.wait, 60)

            with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
                runner.run(run())

        worker = asyncio.ensure_future(asyncio.to_thread(host))
        try:
            await wait(asyncio.to_thread(connected.wait, 60), 70)
            page.refresh_clients()
            assert [t for t in _texts(page) if t.startswith("Claude Desktop 9.1 · via mcp serve (process ")]
        finally:
            release.set()
            await wait(worker, 60)
        await wait_until(lambda: (page.refresh_clients(), not any("Claude" in t for t in _texts(page)))[1], 20,
                         "the host gone from the list once its mcp serve stopped")


def test_files_of_dead_or_foreign_processes_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "serving"
    live = Presence(folder, pid=os.getppid())  # a process that is alive (the test's parent)
    live.publish([ClientRecord("stdio", "Host <b>", "1", "2025-06-18", "stdio", 1.0, 2.0, 3)])
    Presence(folder, pid=2 ** 22 + 12345).publish([ClientRecord("stdio", "Ghost", "", "", "stdio", 1.0, 1.0)])
    (folder / "77.json").write_text("{not json")  # damaged (pid 77 is not ours either way)
    (folder / "notes.json").write_text("[]")
    rows = others(folder)
    assert [(r.name, r.requests, r.process) for r in rows] == [("Host <b>", 3, f"mcp serve (process {os.getppid()})")]
    assert not (folder / f"{2 ** 22 + 12345}.json").exists()  # a dead process's file is removed
    live.clear()
    assert others(folder) == []
