"""npm's ``mcp-remote`` (the stdio bridge Claude Desktop users put in front of URL servers) against
``mcp serve --http``: with the Share page's line it reaches the server with the token; without a
token it gets our one-sentence refusal instead of an OAuth discovery that ends in "Connection closed".

Needs npm's ``mcp-remote`` installed outside the repo: ``CKS_MCP_REMOTE=/path/to/node_modules/.bin/mcp-remote``
(``npm install --prefix /tmp/x mcp-remote``); runs with the slow suite (``CKS_SLOW=1 -m slow``)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from cks_desktop.serve.snippets import url_snippet
from tests.mcp.serve_helpers import make_home, serve_http

pytestmark = pytest.mark.slow

BRIDGE = os.environ.get("CKS_MCP_REMOTE", "")

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def bridge(args: list[str], env: dict[str, str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """Run the bridge as Claude Desktop would (its stdin is the host): initialize, wait for the answer,
    then tools/list, as a host does."""
    proc = subprocess.Popen([BRIDGE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PATH": os.environ["PATH"], "HOME": str(tmp), **env})
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    watchdog = threading.Timer(60, proc.kill)  # a bridge that never answers nor exits fails, not hangs
    watchdog.start()
    out: list[str] = []

    def send(*messages: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()

    def answer(request_id: int) -> bool:
        assert proc.stdout is not None
        for line in proc.stdout:  # until the answer (or the bridge gives up and closes stdout)
            out.append(line)
            if f'"id":{request_id}' in line.replace(" ", ""):
                return True
        return False

    try:
        send(INIT)
        if answer(1):
            send({"jsonrpc": "2.0", "method": "notifications/initialized"}, LIST)
            answer(2)
    except BrokenPipeError:
        pass  # the bridge exited: what it said is on stderr
    proc.terminate()
    watchdog.cancel()
    err = proc.stderr.read()
    proc.wait(30)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            stream.close()
        except BrokenPipeError:
            pass
    return subprocess.CompletedProcess(args, proc.returncode, "".join(out), err)


@pytest.mark.timeout(180)
def test_mcp_remote_reaches_mcp_serve_http_with_the_share_pages_line(tmp_path: Path) -> None:
    if not BRIDGE or not Path(BRIDGE).exists():
        pytest.skip("set CKS_MCP_REMOTE to npm's mcp-remote (npm install --prefix /tmp/x mcp-remote)")
    home, _ = make_home(tmp_path, "Shared", shared=(0,))
    with serve_http(home) as srv:
        assert srv.token
        entry = url_snippet("claude_desktop", srv.url, srv.token)["mcpServers"]["cks-desktop"]
        assert entry["command"] == "npx" and entry["args"][:2] == ["-y", "mcp-remote"]
        done = bridge(entry["args"][2:], entry.get("env", {}), tmp_path)
        assert '"add_object"' in done.stdout, (done.stdout[-2000:], done.stderr[-3000:])

        # No token: the bridge is told what to do (our sentence names --header), not sent to register.
        done = bridge([srv.url], {}, tmp_path / "no-token")
        assert '"add_object"' not in done.stdout
        assert "Dynamic Client Registration" not in done.stderr, done.stderr[-3000:]
        assert "--header" in done.stderr, done.stderr[-3000:]
