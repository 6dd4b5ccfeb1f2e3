"""Hostile MCP servers (real subprocesses) must never break the chat or hang a call.

Two are used: ``hostile_server.py`` (the official SDK) lists two tools whose shortened
wire names collide; ``raw_server.py`` speaks raw JSON-RPC for what the SDK refuses to
send (a tool whose input schema is not an object, a result nested 250 deep, garbage on
stdout, progress without end). Every test bounds how long the failure may take.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.mcp.connection import PROGRESS_CEILING_FACTOR, Status
from cks_desktop.mcp.convert import MAX_DESCRIPTION
from cks_desktop.mcp.manager import McpManager
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult
from cks_desktop.tools.wire_names import WireNames, to_wire
from tests.agent.helpers import turn_options
from tests.fakes.providers import PROVIDER_NAMES, fake_provider
from tests.fakes.script import call_turn, text_turn
from tests.reliability.servers.hostile_server import SERVER_NAME, TWIN_A, TWIN_B

HERE = Path(__file__).parent
HOSTILE = HERE / "servers" / "hostile_server.py"
RAW = HERE / "servers" / "raw_server.py"
ROGUE = HERE / "servers" / "rogue_server.py"


async def no_login_shell() -> str | None:
    return None


class Rig:
    def __init__(self, tmp: Path, registry: ToolRegistry | None = None) -> None:
        self.tmp = tmp
        self.settings = Settings.load(tmp / "settings.json")
        self.registry = registry or ToolRegistry(None)  # type: ignore[arg-type]  # MCP tools never touch the store
        self.run = Run("s", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
        self.manager: McpManager | None = None

    def add(self, name: str, script: Path, timeout: float | None = None, **env: str) -> None:
        entry: dict[str, Any] = {"command": sys.executable, "args": [str(script)], "env": env,
                                 "approval": "auto", "protocol": "legacy"}
        if timeout is not None:
            entry["timeout"] = timeout
        self.settings.mcp_servers[name] = entry

    async def start(self, **kw: Any) -> McpManager:
        self.manager = McpManager(self.settings, None, self.registry, self.tmp / "logs", login_path=no_login_shell,
                                  restart_delays=(), **kw)
        await self.manager.start_all()
        return self.manager

    async def call(self, tool: str, **args: Any) -> ToolResult:
        return await self.registry.invoke(ToolCall("c", tool, args), self.run)


@pytest_asyncio.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    r = Rig(tmp_path)
    try:
        yield r
    finally:
        if r.manager is not None:
            await r.manager.aclose()


def sentence(text: str) -> None:
    assert text.strip() and "Traceback" not in text and "validation error" not in text, text


# -- item 5: colliding wire names ---------------------------------------------------------
def test_the_twins_really_collide() -> None:
    a, b = f"mcp:{SERVER_NAME}:{TWIN_A}", f"mcp:{SERVER_NAME}:{TWIN_B}"
    assert to_wire(a) == to_wire(b)
    table = WireNames([a, b])  # never raises: the second one is left out of the table
    assert table.wire(a) == to_wire(a) and table.wire(b) is None
    assert table.internal(to_wire(a)) == a


@pytest.mark.asyncio
@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_colliding_wire_names_leave_the_chat_working(provider_name: str, tmp_path: Path,
                                                           asyncgen_hooks: None) -> None:
    from cks_desktop.graph.store import GraphStore

    wire = to_wire(f"mcp:{SERVER_NAME}:{TWIN_A}")
    with GraphStore.open(tmp_path / "cks.sqlite3") as store:
        rig = Rig(tmp_path, ToolRegistry(store))
        rig.add(SERVER_NAME, HOSTILE)
        try:
            manager = await rig.start()
            conn = manager.connections[SERVER_NAME]
            assert conn.status is Status.READY, conn.reason
            # the first twin keeps the name; the second is left out, and the status says why
            assert rig.registry.get(f"mcp:{SERVER_NAME}:{TWIN_A}") is not None
            assert rig.registry.get(f"mcp:{SERVER_NAME}:{TWIN_B}") is None
            assert [s.name for s in conn.skipped] == [TWIN_B]
            assert TWIN_B in conn.reason and "left out" in conn.reason
            sentence(conn.reason)
            row = next(r for r in manager.statuses() if r.name == SERVER_NAME)
            assert TWIN_B in row.reason and row.tools == 2  # a twin and echo
            session = store.create_session("chat").id
            async with fake_provider(provider_name, call_turn(wire, {}), call_turn("mcp__evil__echo", {"text": "hi"}),
                                     text_turn("Both worked.")) as (fake, provider):
                messages = await asyncio.wait_for(ai_chat(
                    session, [], "Go", ChatDeps(provider, rig.registry, store), turn_options(system_prompt="t"),
                    approver=StaticApprover(Decision.ALLOW)), 30)
                first = json.dumps(fake.generation_requests[0].body)
            assert first.count(wire) == 1  # offered once, not twice
            results = [p for m in messages for p in m.tool_results]
            assert [r.content for r in results] == [f"called {TWIN_A}", "hi"]
            assert messages[-1].text == "Both worked."
        finally:
            if rig.manager is not None:
                await rig.manager.aclose()


def test_a_listing_cannot_take_a_wire_name_another_source_holds() -> None:
    from cks_desktop.mcp.config import parse_server
    from cks_desktop.mcp.convert import build_specs
    import mcp_types as types

    config = parse_server(SERVER_NAME, {"command": "unused"})
    theirs = f"mcp:{SERVER_NAME}:{TWIN_A}"  # as if another source had registered it first
    tools = [types.Tool(name=TWIN_B, input_schema={"type": "object"}),
             types.Tool(name="echo", input_schema={"type": "object"})]
    specs, skipped = build_specs(config, tools, lambda name: None,  # type: ignore[arg-type,return-value]
                                 taken={to_wire(theirs): theirs})
    assert [s.name for s in specs] == [f"mcp:{SERVER_NAME}:echo"]
    assert [s.name for s in skipped] == [TWIN_B] and theirs in skipped[0].reason


# -- item 12: timeouts ------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_garbage_only_server_fails_fast_quoting_the_first_line(rig: Rig) -> None:
    rig.add("noise", RAW, timeout=30, RAW_GARBAGE_ONLY="1")
    started = time.monotonic()
    manager = await rig.start()
    took = time.monotonic() - started
    conn = manager.connections["noise"]
    assert conn.status is Status.FAILED
    assert "Usage: raw-tool" in conn.reason and "not JSON-RPC" in conn.reason, conn.reason
    sentence(conn.reason)
    assert took < 10, f"took {took:.1f} s for a 30 s timeout"


@pytest.mark.asyncio
async def test_garbage_flood_fails_at_once(rig: Rig) -> None:
    rig.add("flood", RAW, timeout=30, RAW_GARBAGE_FLOOD="1")
    started = time.monotonic()
    manager = await rig.start()
    took = time.monotonic() - started
    conn = manager.connections["flood"]
    assert conn.status is Status.FAILED and "tick 1: still not JSON" in conn.reason, conn.reason
    sentence(conn.reason)
    assert took < 8, f"took {took:.1f} s"


@pytest.mark.slow
@pytest.mark.asyncio
async def test_startup_uses_the_servers_timeout(rig: Rig) -> None:
    rig.add("deaf", ROGUE, timeout=5, ROGUE_NO_INIT="1")
    started = time.monotonic()
    manager = await rig.start()  # the app-wide start-up ceiling stays at its default (60 s)
    took = time.monotonic() - started
    conn = manager.connections["deaf"]
    assert conn.status is Status.FAILED and "5 s" in conn.reason, conn.reason
    assert took < 10, f"took {took:.1f} s for a 5 s timeout"


@pytest.mark.asyncio
async def test_progress_without_end_hits_the_ceiling(rig: Rig) -> None:
    timeout = 0.3
    rig.add("raw", RAW, timeout=timeout, RAW_OMIT="stringly,novel")
    await rig.start()
    started = time.monotonic()
    res = await rig.call("mcp:raw:drip")
    took = time.monotonic() - started
    ceiling = timeout * PROGRESS_CEILING_FACTOR
    assert res.is_error and "progress" in res.content, res.content
    sentence(res.content)
    assert ceiling - 0.1 <= took < 2 * ceiling, f"took {took:.1f} s; ceiling {ceiling:g} s"
    assert (await rig.call("mcp:raw:echo", text="alive")).content == "alive"


@pytest.mark.asyncio
async def test_deeply_nested_result_fails_fast(rig: Rig) -> None:
    rig.add("raw", RAW, timeout=20, RAW_OMIT="stringly,novel")
    await rig.start()
    started = time.monotonic()
    res = await rig.call("mcp:raw:deep")
    took = time.monotonic() - started
    assert res.is_error and "nested too deeply" in res.content, res.content
    sentence(res.content)
    assert took < 5, f"took {took:.1f} s for a 20 s timeout"
    assert (await rig.call("mcp:raw:echo", text="alive")).content == "alive"


# -- item 13: what one tool listing may do -----------------------------------------------------
@pytest.mark.asyncio
async def test_non_object_schema_is_left_out_and_the_rest_kept(rig: Rig) -> None:
    rig.add("raw", RAW, timeout=20)
    manager = await rig.start()
    conn = manager.connections["raw"]
    assert conn.status is Status.READY, conn.reason
    assert rig.registry.get("mcp:raw:stringly") is None
    skipped = {s.name: s.reason for s in conn.skipped}
    assert "stringly" in skipped and "object" in skipped["stringly"], skipped
    sentence(skipped["stringly"])
    assert "stringly" in conn.reason
    assert (await rig.call("mcp:raw:echo", text="kept")).content == "kept"
    # the 5 MB description is capped, and the status says so
    novel = rig.registry.get("mcp:raw:novel")
    assert novel is not None and len(novel.description) <= MAX_DESCRIPTION + 200
    assert "novel" in conn.reason and "shortened" in conn.reason, conn.reason


@pytest.mark.asyncio
async def test_structured_content_is_capped_like_text(rig: Rig) -> None:
    rig.add("raw", RAW, timeout=20, RAW_OMIT="stringly,novel")
    await rig.start()
    res = await rig.call("mcp:raw:bigstruct", mb=5)
    assert not res.is_error, res.content
    assert len(res.content) < 200_000 and "truncated" in res.content
    assert len(json.dumps(res.to_json())) < 400_000


def test_the_cli_lists_the_left_out_tool_and_caps_what_it_prints(tmp_path: Path) -> None:
    """``mcp tools`` names the unusable tool instead of failing; ``mcp call --json`` prints no 5 MB."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"mcpServers": {"raw": {
        "command": sys.executable, "args": [str(RAW)], "protocol": "legacy", "approval": "auto"}}}))
    env = {k: v for k, v in os.environ.items() if k not in ("CKS_DESKTOP_TEST_KEYRING", "SHELL")}
    env["PYTHONPATH"] = str(root)

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", *argv],
                              capture_output=True, text=True, env=env, cwd=root, timeout=120)

    p = cli("tools", "raw", "--json")
    assert p.returncode == 0, p.stderr
    listing = json.loads(p.stdout)
    assert "echo" in {t["name"] for t in listing["tools"]}
    assert [s["name"] for s in listing["skipped"]] == ["stringly"]
    novel = next(t for t in listing["tools"] if t["name"] == "novel")
    assert len(novel["description"]) <= MAX_DESCRIPTION + 200
    p = cli("call", "raw", "bigstruct", "--args", '{"mb": 5}', "--json")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout) < 400_000 and json.loads(p.stdout)["structured"] is None
