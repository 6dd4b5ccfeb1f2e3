"""A server failure with no known cause keeps one line in the status, and the whole traceback
(frames and all) reaches the log and the terminal (at a first start every server
failed with an ImportError shown as one line, its frames logged only at DEBUG, i.e. nowhere).

The trigger is real: a raw JSON-RPC stdio server (a real subprocess) that answers ``initialize``
with a protocol version the SDK does not support, which the SDK reports as a bare RuntimeError.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from cks_desktop.mcp.connection import Status
from tests.mcp.test_stdio_servers import make_manager

ODD_SERVER = r'''
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "1999-01-01", "capabilities": {},
                  "serverInfo": {"name": "odd", "version": "0"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()
'''


@pytest.mark.asyncio
async def test_an_unexplained_start_failure_logs_its_full_traceback(settings, registry, tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    script = tmp_path / "odd_server.py"
    script.write_text(ODD_SERVER)
    settings.mcp_servers["odd"] = {"command": sys.executable, "args": [str(script)], "protocol": "legacy"}
    manager = make_manager(settings, registry, tmp_path, restart_delays=())
    caplog.set_level(logging.WARNING)
    try:
        await manager.start_all()
        conn = manager.connections["odd"]
        assert await conn.wait_for(Status.FAILED, timeout=30) is Status.FAILED
    finally:
        await manager.aclose()
    assert "\n" not in conn.reason and "the full traceback is in the app's log" in conn.reason
    records = [r for r in caplog.records if r.name == "cks_desktop.mcp.connection" and r.exc_info]
    assert records and records[0].levelno >= logging.WARNING
    text = logging.Formatter().format(records[0])
    assert "Traceback (most recent call last)" in text and 'File "' in text  # the frames, not only the last line
