"""MCP faults with real server subprocesses, through the manager and the registry as
the app runs them, each under the event-loop lag probe: a missing command, a server
that exits at start, crashes mid-call, hangs, floods stderr, writes garbage to
stdout, returns 10 MB, lists an invalid schema, changes its tool list in the middle
of a chat, or never answers ``initialize``. (Quitting with a server that ignores SIGTERM is in
``test_faults_app.py``, through the window.) Each ends in a
clear sentence (a status reason or an error result), and no process outlives the
manager."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.mcp.connection import Status
from cks_desktop.mcp.manager import McpManager
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult
from tests.agent.helpers import turn_options
from tests.fakes.script import call_turn, text_turn
from tests.fakes.scripted import ScriptedProvider
from tests.reliability.lag import LagProbe

HERE = Path(__file__).parent
ROGUE = HERE / "servers" / "rogue_server.py"
TOY = HERE.parent / "mcp" / "servers" / "toy_server.py"


async def no_login_shell() -> str | None:
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Rig:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.settings = Settings.load(tmp / "settings.json")
        self.registry = ToolRegistry(None)  # type: ignore[arg-type]  # MCP tools never touch the store
        self.run = Run("s", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
        self.manager: McpManager | None = None

    def add(self, name: str, script: Path | None, **env: str) -> None:
        entry: dict[str, Any] = {"command": sys.executable, "args": [str(script)] if script else [],
                                 "env": env, "approval": "auto"}
        self.settings.mcp_servers[name] = entry

    def start_manager(self, **kw: Any) -> McpManager:
        kw.setdefault("startup_timeout", 60.0)
        self.manager = McpManager(self.settings, None, self.registry, self.tmp / "logs", login_path=no_login_shell,
                                  restart_delays=(0.05, 0.05, 0.05), **kw)
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
    assert text.strip() and "Traceback" not in text, text


@pytest.mark.asyncio
async def test_command_not_found_and_exit_at_start(rig: Rig) -> None:
    rig.settings.mcp_servers["missing"] = {"command": "cks-no-such-program-xyz", "args": []}
    rig.settings.mcp_servers["dies"] = {"command": sys.executable, "args": ["-c", (
        "import sys; print('loading config', file=sys.stderr); "
        "print('fatal: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(3)")]}
    manager = rig.start_manager()
    async with LagProbe("starting broken servers"):
        await manager.start_all()
    missing, dies = manager.connections["missing"], manager.connections["dies"]
    assert missing.status is Status.FAILED and "cks-no-such-program-xyz" in missing.reason
    assert "PATH" in missing.reason or "not found" in missing.reason.lower()
    assert dies.status is Status.FAILED and "GITHUB_TOKEN is not set" in dies.reason
    sentence(missing.reason)
    sentence(dies.reason)


@pytest.mark.asyncio
async def test_crash_hang_garbage_and_bad_schema_on_one_server(rig: Rig) -> None:
    markers = rig.tmp / "markers"
    markers.mkdir()
    rig.add("toy", TOY, TOY_MARKER_DIR=str(markers), TOY_GARBAGE_AT_START="1", TOY_BAD_SCHEMA="1")
    rig.settings.mcp_servers["toy"]["timeout"] = 1.0
    manager = rig.start_manager()
    async with LagProbe("start with garbage on stdout and a bad schema"):
        await manager.start_all()
    conn = manager.connections["toy"]
    assert conn.status is Status.READY, conn.reason
    assert rig.registry.get("mcp:toy:bad_schema") is None  # left out, with the reason in the log
    assert any("bad_schema" in line for line in manager.stderr_tail("toy"))
    async with LagProbe("a hanging call"):
        res = await rig.call("mcp:toy:hang")
    assert res.is_error and "1 s" in res.content
    sentence(res.content)
    assert (await rig.call("mcp:toy:echo", text="still here")).content == "still here"
    async with LagProbe("a crash mid-call"):
        res = await rig.call("mcp:toy:crash")
    assert res.is_error
    sentence(res.content)


@pytest.mark.asyncio
async def test_big_result_and_a_50_mb_stderr_flood(rig: Rig) -> None:
    rig.add("rogue", ROGUE)
    manager = rig.start_manager()
    await manager.start_all()
    assert manager.connections["rogue"].status is Status.READY, manager.connections["rogue"].reason
    async with LagProbe("a 10 MB result"):
        res = await rig.call("mcp:rogue:big", mb=10)
    assert not res.is_error and len(res.content) < 200_000 and "truncated" in res.content
    async with LagProbe("50 MB of stderr"):
        res = await rig.call("mcp:rogue:flood", mb=50)
        assert res.content == "flooded"
        for _ in range(1500):  # until the log has taken all of it (bounded: 30 s)
            if manager.stderr_tail("rogue", 1) == ["flood done"]:
                break
            await asyncio.sleep(0.02)
    assert manager.stderr_tail("rogue", 1) == ["flood done"]
    assert len(manager.stderr_tail("rogue")) == 200
    logs = list((rig.tmp / "logs").glob("rogue.log*"))
    assert sum(p.stat().st_size for p in logs) < 3_500_000


@pytest.mark.asyncio
async def test_tool_list_changes_mid_chat(rig: Rig, tmp_path: Path) -> None:
    from cks_desktop.graph.store import GraphStore

    rig.add("rogue", ROGUE)
    with GraphStore.open(tmp_path / "cks.sqlite3") as store:
        rig.registry = ToolRegistry(store)
        manager = rig.start_manager()
        await manager.start_all()
        session = store.create_session("chat").id
        provider = ScriptedProvider([call_turn("mcp__rogue__shrink", {}), call_turn("mcp__rogue__echo", {"text": "x"}),
                                     text_turn("The tool is gone.")])
        async with LagProbe("tool list changing mid-chat"):
            messages = await ai_chat(session, [], "Go", ChatDeps(provider, rig.registry, store),
                                     turn_options(system_prompt="t"), approver=StaticApprover(Decision.ALLOW))
        results = [p for m in messages for p in m.tool_results]
        assert results[0].content == "shrunk"
        # Gone since: refused by our registry (refresh done) or by the server (refresh in flight);
        # either way the model reads an error and the chat goes on.
        assert results[1].is_error and "Unknown tool" in results[1].content, results[1].content
        assert messages[-1].text == "The tool is gone."
        for _ in range(250):
            if rig.registry.get("mcp:rogue:echo") is None:
                break
            await asyncio.sleep(0.02)
        assert rig.registry.get("mcp:rogue:echo") is None
        provider = ScriptedProvider([text_turn("ok")])
        await ai_chat(session, messages, "Again", ChatDeps(provider, rig.registry, store),
                      turn_options(system_prompt="t"), approver=StaticApprover(Decision.ALLOW))
        assert "mcp__rogue__echo" not in {t.name for t in provider.requests[0].tools}


@pytest.mark.asyncio
async def test_never_answers_initialize(rig: Rig) -> None:
    pid_file = rig.tmp / "deaf.pid"
    rig.add("deaf", ROGUE, ROGUE_NO_INIT="1", ROGUE_PID_FILE=str(pid_file))
    manager = rig.start_manager(startup_timeout=2.0)
    async with LagProbe("a server that never answers initialize"):
        await manager.start_all()
    conn = manager.connections["deaf"]
    assert conn.status is Status.FAILED and conn.reason
    sentence(conn.reason)
    pid = int(pid_file.read_text())
    async with LagProbe("closing"):
        await asyncio.wait_for(manager.aclose(), 15)
    assert not pid_alive(pid), "the deaf server outlived the manager"
