"""App-level faults: quitting while a turn runs (with an MCP server that ignores
SIGTERM), a second instance on the same data folder, and a database that is full
or read-only in the middle of a write. The window stays responsive (lag probe),
writes fail whole and say why, and nothing is corrupted."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from tests.agent.helpers import turn_options
from tests.fakes.script import Turn, call_turn, text_turn
from tests.fakes.scripted import ScriptedProvider
from tests.reliability.lag import LagProbe
from tests.reliability.world import World, build_world, check_store, dump

ROOT = Path(__file__).resolve().parents[2]
ROGUE = Path(__file__).parent / "servers" / "rogue_server.py"


async def no_login_shell() -> str | None:
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.asyncio
async def test_quit_during_a_running_turn_with_a_server_that_ignores_sigterm(tmp_path: Path) -> None:
    from cks_desktop.mcp.connection import Status
    from cks_desktop.paths import resolve
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.runtime import AppServices

    home = tmp_path / "home"
    home.mkdir()
    provider = ScriptedProvider([Turn(text=["Partial ", "answer"], stall_after_text=True)])
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                provider_factory=lambda *_: provider)
    services.settings.default_provider = "anthropic"
    pid_file = tmp_path / "stubborn.pid"
    services.settings.mcp_servers["stubborn"] = {"command": sys.executable, "args": [str(ROGUE)],
                                                 "env": {"ROGUE_IGNORE_TERM": "1", "ROGUE_PID_FILE": str(pid_file)}}
    manager = services.start_mcp(login_path=no_login_shell, startup_timeout=60)
    window = MainWindow(services)
    window.show()
    try:
        await asyncio.wait_for(services.mcp_start, 60)  # type: ignore[arg-type]
        assert manager.connections["stubborn"].status is Status.READY, manager.connections["stubborn"].reason
        session_id = window.current_session
        task = window.controller_for(session_id).send("Tell me something long.")
        assert task is not None
        await asyncio.wait_for(provider.stalled.wait(), 20)
        assert window.running_chats()
        async with LagProbe("quit during a running turn"):
            await asyncio.wait_for(window.shutdown(), 20)
        assert task.done()
    finally:
        window.deleteLater()
    assert not pid_alive(int(pid_file.read_text())), "the MCP server outlived the app"
    with GraphStore.open(home / "cks.sqlite3") as store:
        messages = TranscriptStore.for_store(store).load(session_id)
        check_store(store)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].text == "Partial answer"  # what streamed before quitting is kept


def test_a_second_instance_shares_the_data_folder_safely(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with GraphStore.open(home / "cks.sqlite3") as store:
        session_id = store.create_session("shared").id
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = {tag: subprocess.Popen([sys.executable, "-m", "tests.reliability.share_child", str(home), session_id,
                                    tag, "10"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True) for tag in ("a", "b", "c")}
    outcomes: dict[str, list[list[str]]] = {}
    for tag, proc in procs.items():
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        outcomes[tag] = [line.split(" ", 3) for line in out.splitlines()]
    with GraphStore.open(home / "cks.sqlite3") as store:
        check_store(store)
        names = {o.name for o in store.all_objects(session_id)}
        changes = store.list_changes(session_id, limit=1000)
    committed = 0
    for tag, lines in outcomes.items():
        assert len(lines) == 10
        for line in lines:
            status, r, size = line[0], int(line[1]), int(line[2])
            present = {f"{tag}-{r}-{i}" for i in range(size)} & names
            if status == "ok":
                committed += 1
                assert len(present) == size, f"{tag} round {r} was reported written but is not whole"
            else:
                assert not present, f"{tag} round {r} failed but left {len(present)} objects"
                assert "locked" in line[3] and "try again" in line[3], line[3]
    assert committed == len(changes) and committed >= 20
    final = Settings.load(home / "settings.json")
    # Saves merge under the settings lock: no instance's last write is lost.
    assert final.problem is None and final.data["instances"] == {"a": 9, "b": 9, "c": 9}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = build_world(tmp_path / "full.sqlite3")
    try:
        yield w
    finally:
        w.store.close()


def limit_database(w: World, *, full: bool = False, read_only: bool = False) -> None:
    with w.store.connection_lock() as conn:
        if full:  # SQLite's own "database or disk is full" (SQLITE_FULL), as on a full disk
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
            conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        conn.execute(f"PRAGMA query_only = {1 if read_only else 0}")


BIG = {"operations": [{"op": "add_object", "type": "Note", "name": f"n{i}", "properties": {"text": "x" * 200}}
                      for i in range(5000)]}


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", ["disk full", "read-only"])
async def test_a_write_to_a_full_or_read_only_database_fails_cleanly(world: World, fault: str) -> None:
    registry = build_registry(world.store)
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    before = dump(world.store)
    limit_database(world, full=fault == "disk full", read_only=fault == "read-only")
    async with LagProbe(fault):
        big = await registry.invoke(ToolCall("a", "evolve_knowledge", BIG), run)
    assert dump(world.store) == before
    # On a full disk a small write may still fit in free space of existing pages; read-only refuses it.
    small = await registry.invoke(ToolCall("b", "add_object", {"type": "T", "name": "x"}), run)
    for res in (big, small) if fault == "read-only" else (big,):
        assert res.is_error, res.content[:200]
        assert ("full" in res.content) if fault == "disk full" else ("writing" in res.content), res.content
        assert "Traceback" not in res.content and "\n" not in res.content.strip()
    if small.is_error:
        assert dump(world.store) == before
    limit_database(world)
    with world.store.connection_lock() as conn:
        conn.execute("PRAGMA max_page_count = 1073741823")
    check_store(world.store)
    assert not (await registry.invoke(ToolCall("c", "add_object", {"type": "T", "name": "y"}), run)).is_error


@pytest.mark.asyncio
async def test_a_chat_on_a_full_disk_says_so_once_and_keeps_going(world: World) -> None:
    registry = build_registry(world.store)
    transcript = TranscriptStore.for_store(world.store)
    session = world.store.create_session("chat").id
    limit_database(world, full=True)
    provider = ScriptedProvider([call_turn("add_object", {"type": "T", "name": "x" * 400}),
                                 text_turn("y" * 20_000)])
    seen: list[Any] = []
    async with LagProbe("chat on a full disk"):
        await ai_chat(session, [], "z" * 20_000, ChatDeps(provider, registry, world.store, transcript),
                      turn_options(system_prompt="t"), approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
    errors = [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert len(errors) == 1 and "could not be saved" in errors[0].message and "full" in errors[0].message
    assert isinstance(seen[-1], ev.Finished)
    limit_database(world)
    with world.store.connection_lock() as conn:
        conn.execute("PRAGMA max_page_count = 1073741823")
    check_store(world.store)
    messages = transcript.load(session)
    for i, m in enumerate(messages):  # whatever was saved is whole and answerable
        if m.role == "assistant" and m.tool_calls:
            assert {c.id for c in m.tool_calls} <= {p.call_id for p in messages[i + 1].tool_results}
    json.dumps([m.to_json() for m in messages])


@pytest.mark.asyncio
async def test_a_5_mb_answer_streams_into_the_window_without_freezing(tmp_path: Path) -> None:
    from cks_desktop.paths import resolve
    from cks_desktop.secrets import SecretStore
    from cks_desktop.ui.main_window import MainWindow
    from cks_desktop.runtime import AppServices

    home = tmp_path / "home"
    home.mkdir()
    chunks = ["word " * 2000 + "\n\n"] * 500  # 5 MB in 500 deltas
    provider = ScriptedProvider([Turn(text=chunks)])
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                provider_factory=lambda *_: provider)
    services.settings.default_provider = "anthropic"
    window = MainWindow(services)
    window.show()
    try:
        controller = window.controller_for(window.current_session)
        async with LagProbe("a 5 MB answer in the chat"):
            task = controller.send("Write a lot.")
            assert task is not None
            await asyncio.wait_for(task, 60)
    finally:
        await window.shutdown()
        window.deleteLater()
