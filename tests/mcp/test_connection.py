"""The connection and the manager against in-process SDK servers (no subprocess)."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import MCPServer

from cks_desktop.mcp.config import parse_server
from cks_desktop.mcp.connection import McpConnection, Status
from cks_desktop.mcp.manager import McpManager
from cks_desktop.mcp.stderr_log import ServerLog
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, Policy, Scope, ToolCall
from tests.mcp.conftest import wait_until
from tests.mcp.servers.toy_server import build

PROTOCOLS = ["legacy", "auto"]


def connect(tmp_path, registry, *, protocol="legacy", secrets=None, server=None, **entry):
    raw = {"command": "unused", "protocol": protocol, "approval": "auto", **entry}
    config = parse_server("toy", raw)
    return McpConnection(config, log=ServerLog(tmp_path / "toy.log"), registry=registry, secrets=secrets,
                         target=server if server is not None else build(page_size=4))


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_results_become_tool_results(protocol, tmp_path, registry, run):
    conn = connect(tmp_path, registry, protocol=protocol)
    assert await conn.start(), conn.reason

    async def call(name, args=None):
        return await registry.invoke(ToolCall("c", f"mcp:toy:{name}", args or {}), run)

    r = await call("add", {"a": 1, "b": 2})
    assert (r.content, r.structured, r.is_error) == ("3", {"result": 3}, False)
    r = await call("mixed")
    assert r.content.splitlines() == [
        "here you go",
        # not a PNG at all, whatever its mimeType says: refused in one sentence
        "[image refused: This is not a PNG, JPEG, GIF or WebP image (it says image/png); the chat takes only "
        "those.]",
        "[resource: file:///notes.txt, text/plain]",
        "resource body",
        "[resource link: report — https://example.invalid/report.pdf, application/pdf]",
        "the full report",
    ]
    r = await call("fail")
    assert (r.content, r.is_error) == ("it went wrong", True)
    r = await call("rpc_error")
    assert r.is_error and "the server broke on purpose" in r.content and "-32603" in r.content
    # arguments are validated against the server's schema before anything is sent
    r = await call("add", {"a": "one"})
    assert r.is_error and "Invalid arguments" in r.content
    # MCP tools are not pinned: a session_id argument is the remote server's business
    r = await call("session_echo", {"session_id": "someone-else"})
    assert r.content == "someone-else"
    await conn.stop()
    assert conn.status is Status.STOPPED


@pytest.mark.asyncio
async def test_specs_follow_the_config(tmp_path, registry):
    conn = connect(tmp_path, registry, server=build(bad_schema=True), approval="once",
                   scopes=["net.fetch", "fs.read"], toolPolicies={"echo": "auto"},
                   enabledTools=["echo", "add", "bad_schema"])
    assert await conn.start()
    specs = {s.name: s for s in registry.specs()}
    assert set(specs) == {"mcp:toy:echo", "mcp:toy:add"}  # only enabled tools; the broken one left out
    assert specs["mcp:toy:echo"].default_policy is Policy.AUTO
    assert specs["mcp:toy:add"].default_policy is Policy.ONCE
    assert specs["mcp:toy:add"].scopes == frozenset({Scope.NET_FETCH, Scope.FS_READ})
    assert specs["mcp:toy:echo"].annotations == {"server": "toy", "tool": "echo", "readOnlyHint": True,
                                                 "destructiveHint": False}
    assert specs["mcp:toy:echo"].display_name == "toy · Echo"
    assert [(s.name, "invalid" in s.reason) for s in conn.skipped] == [("bad_schema", True)]
    assert any("tool 'bad_schema' left out" in line for line in conn.stderr_tail())
    await conn.stop()
    assert registry.specs() == []


@pytest.mark.asyncio
async def test_default_policy_is_always_and_asks(tmp_path, registry):
    config = parse_server("toy", {"command": "unused", "protocol": "legacy"})
    assert config.approval is Policy.ALWAYS and config.scopes == frozenset({Scope.CODE_EXECUTE})
    conn = McpConnection(config, log=ServerLog(tmp_path / "toy.log"), registry=registry, target=build())
    assert await conn.start()
    approver = StaticApprover(Decision.DENY)
    run = Run("s", Caller.MODEL, approver=approver)
    r = await registry.invoke(ToolCall("c", "mcp:toy:add", {"a": 1, "b": 2}), run)  # no annotations
    assert r.is_error and "declined" in r.content
    assert approver.requests[0].reason.startswith("Tools of MCP servers run code outside this app")
    # echo says it is read-only: with no approval set by the person, it asks once per chat
    assert registry.get("mcp:toy:echo").default_policy is Policy.ONCE
    await conn.stop()


@pytest.mark.asyncio
async def test_list_changed_refreshes_the_registry(tmp_path, registry, run):
    conn = connect(tmp_path, registry)
    assert await conn.start()
    r = await registry.invoke(ToolCall("c", "mcp:toy:grow", {"name": "newcomer"}), run)
    assert r.content == "grown"
    await wait_until(lambda: registry.get("mcp:toy:newcomer") is not None, what="the new tool")
    await conn.stop()


@pytest.mark.asyncio
async def test_calls_on_a_stopped_server_are_error_results(tmp_path, registry):
    conn = connect(tmp_path, registry)
    out = await conn.call_tool("echo", {"text": "x"})
    assert out.is_error and out.content == "The MCP server 'toy' is not running (stopped)."


@pytest.mark.asyncio
async def test_missing_secret_fails_with_a_sentence(tmp_path, registry, secret_store):
    config = parse_server("toy", {"command": "npx", "env": {"TOKEN": "keychain:mcp/toy/env/TOKEN"}})
    conn = McpConnection(config, log=ServerLog(tmp_path / "toy.log"), registry=registry, secrets=secret_store)
    assert not await conn.start()
    assert conn.status is Status.FAILED
    assert conn.reason == ("The secret environment value TOKEN of MCP server 'toy' is not in the keychain; "
                           "enter it again in the server's settings.")


@pytest.mark.asyncio
async def test_status_events_and_double_stop(tmp_path, registry):
    server = MCPServer("plain")

    @server.tool()
    async def ping() -> str:
        return "pong"

    conn = connect(tmp_path, registry, server=server)
    seen: list[Status] = []
    conn.subscribe(lambda e: seen.append(e.status))
    assert await conn.start()
    assert await conn.wait_for(Status.READY, timeout=1) is Status.READY
    await conn.stop()
    await conn.stop()  # twice is fine
    assert seen == [Status.STARTING, Status.READY, Status.STOPPED]


@pytest.mark.asyncio
async def test_manager_starts_concurrently_probes_reloads_and_closes(tmp_path, settings, registry):
    for name in ("a", "b", "c"):
        settings.mcp_servers[name] = {"command": "unused", "protocol": "legacy"}
    settings.mcp_servers["off"] = {"command": "unused", "enabled": False}
    settings.mcp_servers["broken"] = {"args": ["no command"]}
    targets = {name: build() for name in ("a", "b", "c", "off")}
    manager = McpManager(settings, None, registry, tmp_path / "logs", targets=targets)
    events = []
    manager.subscribe(events.append)
    await manager.start_all()
    states = {s.name: s for s in manager.statuses()}
    assert {n: s.status for n, s in states.items()} == {
        "a": Status.READY, "b": Status.READY, "c": Status.READY, "off": Status.STOPPED, "broken": Status.FAILED}
    assert states["broken"].reason == "Server 'broken' needs a \"command\" (a program to run) or a \"url\"."
    assert states["a"].tools == 14 and not states["off"].enabled
    assert {s.source for s in registry.specs()} == {"mcp:a", "mcp:b", "mcp:c"}

    probe = await manager.probe("off")  # a probe works on a disabled server and registers nothing
    assert probe.ok and len(probe.tools) == 14 and probe.server_name == "toy"
    assert "mcp:off" not in {s.source for s in registry.specs()}

    settings.mcp_servers["b"]["enabled"] = False
    settings.mcp_servers["c"]["approval"] = "auto"
    del settings.mcp_servers["a"]
    await manager.reload()
    assert {s.source for s in registry.specs()} == {"mcp:c"}
    assert registry.get("mcp:c:echo").default_policy is Policy.AUTO
    assert manager.connections["b"].status is Status.STOPPED

    await manager.aclose()
    assert registry.specs() == []
    assert all(c.status is Status.STOPPED for c in manager.connections.values())
