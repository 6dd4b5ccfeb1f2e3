"""`mcp serve --http` against two independent clients from npm: the official conformance suite's
server scenarios that apply to an application, and the MCP Inspector's CLI mode.

Slow (Node 22 starts per scenario), so only with ``CKS_SLOW=1 ... -m slow``. Node 22 and the two
packages are looked for under ``$CKS_NODE22_PREFIX`` (default /tmp/node22), installed there with
``npm install --prefix $CKS_NODE22_PREFIX node@22 @modelcontextprotocol/conformance
@modelcontextprotocol/inspector``; the test skips, saying so, when they are not there.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.mcp.serve_helpers import graph_of, make_home, serve_http

pytestmark = pytest.mark.slow

PREFIX = Path(os.environ.get("CKS_NODE22_PREFIX", "/tmp/node22"))
NODE_BIN = PREFIX / "node_modules" / "node" / "bin"
# The server scenarios whose checks are generic; the others call the suite's own fixture tools,
# prompts and resources (test_simple_text, test://static-text, …), which an application does not have.
APPLICABLE = ("server-initialize", "ping", "logging-set-level", "tools-list", "tools-call-error",
              "server-sse-multiple-streams", "resources-list", "prompts-list", "dns-rebinding-protection")


def _npx(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    if not (NODE_BIN / "node").exists() or not (PREFIX / "node_modules" / ".bin" / "conformance").exists():
        pytest.skip(f"Node 22 and the MCP npm packages are not installed under {PREFIX} (see the module docstring)")
    env = {**os.environ, "PATH": f"{NODE_BIN}:{os.environ.get('PATH', '')}"}
    return subprocess.run(["npx", *argv], cwd=PREFIX, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_conformance_server_scenario(tmp_path, scenario):
    home, _ = make_home(tmp_path, "Conformance", shared=(0,))
    with serve_http(home, "--no-auth") as srv:
        r = _npx("conformance", "server", "--url", srv.url, "--scenario", scenario, "-o", str(tmp_path / "out"))
    assert "0 failed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


def test_inspector_cli_lists_calls_and_is_refused_without_the_token(tmp_path):
    """The Inspector's CLI (2.x) has no option for a header, so it meets the token only as a refusal;
    the listing and the call go to a `--no-auth` loopback server."""
    home, (sid,) = make_home(tmp_path, "Inspected", shared=(0,))
    with serve_http(home, "--no-auth") as srv:
        base = ["mcp-inspector-cli", "--cli", srv.url, "--transport", "http"]
        tools = json.loads(_npx(*base, "--method", "tools/list").stdout)
        assert {"list_shared_sessions", "add_object"} <= {t["name"] for t in tools["tools"]}
        r = _npx(*base, "--method", "tools/call", "--tool-name", "add_object", "--tool-arg", "type=Person",
                 "--tool-arg", "name=Grace")
        assert json.loads(r.stdout)["structuredContent"]["status"] == "created", r.stdout + r.stderr
        listed = json.loads(_npx(*base, "--method", "resources/list").stdout)
        assert any(x["uri"].endswith(f"{sid}/graph.json") for x in listed["resources"])
    with serve_http(home) as srv:
        refused = _npx("mcp-inspector-cli", "--cli", srv.url, "--transport", "http", "--method", "tools/list")
        assert refused.returncode != 0 and "needs a bearer token" in refused.stdout + refused.stderr
    assert ("Person", "Grace") in graph_of(home, sid)[0]
