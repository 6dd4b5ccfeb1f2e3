"""One streamable-HTTP server on 127.0.0.1 (the toy server under uvicorn, as a subprocess)."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from cks_desktop.mcp.config import protect_values
from cks_desktop.mcp.connection import Status
from cks_desktop.mcp.manager import McpManager
from cks_desktop.tools.types import ToolCall
from tests.mcp.conftest import TOY, wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_for_port(port: int, proc: asyncio.subprocess.Process, timeout: float = 30.0) -> None:
    """Poll the socket until the server accepts connections (bounded; fails fast if it died)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if proc.returncode is not None:
            raise AssertionError(f"the HTTP server exited with {proc.returncode}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if loop.time() > deadline:
                raise AssertionError("the HTTP server did not start listening") from None
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return


@pytest.mark.asyncio
async def test_streamable_http_server(settings, registry, run, secret_store, tmp_path):
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(TOY), env={"TOY_HTTP_PORT": str(port), "TOY_MARKER_DIR": str(tmp_path),
                                       "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        await wait_for_port(port, proc)
        headers, moved = protect_values({"Authorization": "Bearer s3cret", "X-Trace": "plain"},
                                        server="web", section="headers", secrets=secret_store)
        assert moved == ["Authorization"] and headers["Authorization"] == "keychain:mcp/web/headers/Authorization"
        for grown, (protocol, version) in enumerate((("auto", "2026-07-28"), ("legacy", "2025-11-25"))):
            settings.mcp_servers["web"] = {"url": f"http://127.0.0.1:{port}/mcp", "headers": headers,
                                           "approval": "auto", "protocol": protocol}
            manager = McpManager(settings, secret_store, registry, tmp_path / "logs")
            await manager.start_all()
            conn = manager.connections["web"]
            assert conn.status is Status.READY, conn.reason
            assert conn.protocol_version == version
            # one server process for both rounds: the first round's grown tool is still there
            assert len([s for s in registry.specs() if s.source == "mcp:web"]) == 14 + grown
            r = await registry.invoke(ToolCall("c1", "mcp:web:echo", {"text": "over http"}), run)
            assert (r.content, r.is_error) == ("over http", False)
            r = await registry.invoke(ToolCall("c2", "mcp:web:whoami", {}), run)
            assert r.content == "Bearer s3cret"  # the secret header reached the server
            r = await registry.invoke(ToolCall("c3", "mcp:web:slow", {"seconds": 0.2, "steps": 2}), run)
            assert r.content == "done"
            r = await registry.invoke(ToolCall("c4", "mcp:web:grow", {"name": f"new_{protocol}"}), run)
            await wait_until(lambda: registry.get(f"mcp:web:new_{protocol}") is not None,  # noqa: B023
                             what="the list change over HTTP")
            await manager.aclose()
            assert conn.status is Status.STOPPED

        # nothing listening: a clear failure, not a hang
        proc.terminate()
        await proc.wait()
        manager = McpManager(settings, secret_store, registry, tmp_path / "logs", startup_timeout=10)
        await manager.start_all()
        assert conn.status is Status.STOPPED
        failed = manager.connections["web"]
        assert failed.status is Status.FAILED
        assert f"127.0.0.1:{port}" in failed.reason
        await manager.aclose()
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
