"""Real subprocess servers (tests/mcp/servers/toy_server.py) through the manager and the registry."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cks_desktop.mcp.connection import McpConnection, Status, StatusEvent
from cks_desktop.mcp.manager import McpManager
from cks_desktop.mcp.stderr_log import ServerLog
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import ToolCall
from tests.mcp.conftest import no_login_shell, pid_alive, toy_entry, wait_until


def make_manager(settings, registry, tmp_path: Path, **kw) -> McpManager:
    kw.setdefault("restart_delays", (0.05, 0.05, 0.05))
    kw.setdefault("startup_timeout", 30.0)
    return McpManager(settings, None, registry, tmp_path / "logs", login_path=no_login_shell, **kw)


def tool_names(registry: ToolRegistry, server: str = "toy") -> set[str]:
    return {s.name.rsplit(":", 1)[-1] for s in registry.specs() if s.source == f"mcp:{server}"}


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_start_list_call_list_changed_and_quit(protocol, settings, registry, run, markers, tmp_path):
    settings.mcp_servers["toy"] = {**toy_entry(markers, TOY_EXTRA_TOOLS="4", TOY_PAGE_SIZE="3"),
                                   "protocol": protocol}
    manager = make_manager(settings, registry, tmp_path)
    events: list[StatusEvent] = []
    manager.subscribe(events.append)
    await manager.start_all()
    conn = manager.connections["toy"]
    assert conn.status is Status.READY, conn.reason
    assert conn.protocol_version == ("2025-11-25" if protocol == "legacy" else "2026-07-28")
    assert [e.status for e in events] == [Status.STARTING, Status.READY]
    # 14 tools + 4 numbered ones, listed 3 per page: every page was followed
    assert len(tool_names(registry)) == 18
    spec = registry.get("mcp:toy:echo")
    assert spec is not None and spec.pin_session is False and spec.source == "mcp:toy"
    assert spec.title == "Echo" and spec.annotations["readOnlyHint"] is True

    result = await registry.invoke(ToolCall("c1", "mcp__toy__echo", {"text": "hi"}), run)
    assert (result.content, result.is_error) == ("hi", False)

    result = await registry.invoke(ToolCall("c2", "mcp:toy:grow", {"name": "fresh"}), run)
    assert result.content == "grown"
    await wait_until(lambda: "fresh" in tool_names(registry), what="the refreshed tool list")

    result = await registry.invoke(ToolCall("c3", "mcp:toy:garbage", {}), run)
    assert result.content == "after garbage" and not result.is_error
    await wait_until(lambda: conn.garbage_lines == 1, what="the garbage report")
    assert any("not JSON-RPC" in line and "this is not json-rpc" in line for line in manager.stderr_tail("toy"))
    # the connection survived the garbage
    result = await registry.invoke(ToolCall("c4", "mcp:toy:echo", {"text": "still here"}), run)
    assert result.content == "still here"

    pid = int((markers / "pid").read_text())
    assert pid_alive(pid)
    await manager.aclose()
    assert conn.status is Status.STOPPED
    assert tool_names(registry) == set()
    assert not pid_alive(pid)


@pytest.mark.asyncio
async def test_crash_mid_call_restarts_with_backoff_at_most_three_times(settings, registry, run, markers, tmp_path):
    flag = markers / "broken"
    settings.mcp_servers["toy"] = toy_entry(markers, TOY_EXIT_IF_EXISTS=str(flag))
    manager = make_manager(settings, registry, tmp_path)
    events: list[StatusEvent] = []
    manager.subscribe(events.append)
    await manager.start_all()
    conn = manager.connections["toy"]
    first_pid = int((markers / "pid").read_text())

    # 1. a crash mid-call: that call is an error result, the server is restarted
    result = await registry.invoke(ToolCall("c1", "mcp:toy:crash", {}), run)
    assert result.is_error
    assert "stopped during the call" in result.content
    assert "about to crash on purpose" in result.content
    await wait_until(lambda: [e.status for e in events].count(Status.READY) == 2, timeout=30, what="the restart")
    assert [e.status for e in events] == [Status.STARTING, Status.READY, Status.FAILED, Status.RESTARTING,
                                          Status.STARTING, Status.READY]
    assert events[2].crashed and "stopped unexpectedly" in events[2].reason
    second_pid = int((markers / "pid").read_text())
    assert second_pid != first_pid and not pid_alive(first_pid)
    result = await registry.invoke(ToolCall("c2", "mcp:toy:echo", {"text": "back"}), run)
    assert result.content == "back"

    # 2. it crashes again and now cannot start: two more attempts (three in a row), then it gives up
    flag.write_text("from now on the server cannot start")
    result = await registry.invoke(ToolCall("c3", "mcp:toy:crash", {}), run)
    assert result.is_error
    await wait_until(lambda: "restarted 3 times" in conn.reason, timeout=30, what="the manager to give up")
    assert [e.status for e in events].count(Status.RESTARTING) == 3
    assert conn.status is Status.FAILED and "missing API key TOY_KEY" in conn.reason
    assert tool_names(registry) == set()
    assert not pid_alive(second_pid)

    # 3. a restart by hand tries again at once
    assert not await manager.restart("toy")
    assert "exited while starting" in conn.reason
    await manager.aclose()


@pytest.mark.asyncio
async def test_timeout_progress_and_cancellation(settings, registry, run, markers, tmp_path):
    settings.mcp_servers["toy"] = {**toy_entry(markers), "timeout": 0.6}
    manager = make_manager(settings, registry, tmp_path)
    await manager.start_all()

    # a hang: the call becomes an error result after the timeout, and the server is told to stop
    result = await registry.invoke(ToolCall("c1", "mcp:toy:wait_for_cancel", {"tag": "timed"}), run)
    assert result.is_error and "did not answer within 0.6 s" in result.content
    await wait_until(lambda: (markers / "timed.cancelled").exists(), what="the server to see the cancellation")

    # progress notifications start the clock again: 1.2 s of work with a report every 0.2 s
    result = await registry.invoke(ToolCall("c2", "mcp:toy:slow", {"seconds": 1.2, "steps": 6}), run)
    assert (result.content, result.is_error) == ("done", False)

    # Stop: cancelling the calling task cancels the call and sends notifications/cancelled
    task = asyncio.create_task(registry.invoke(ToolCall("c3", "mcp:toy:wait_for_cancel", {"tag": "stop"}), run))
    await wait_until(lambda: (markers / "stop.started").exists(), what="the call to start")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: (markers / "stop.cancelled").exists(), what="notifications/cancelled")

    # the session is still usable afterwards
    result = await registry.invoke(ToolCall("c4", "mcp:toy:echo", {"text": "ok"}), run)
    assert result.content == "ok"
    await manager.aclose()


@pytest.mark.asyncio
async def test_stderr_flood_and_garbage_at_start(settings, registry, run, markers, tmp_path):
    settings.mcp_servers["toy"] = toy_entry(markers, TOY_STDERR_FLOOD="50", TOY_GARBAGE_AT_START="1")
    manager = make_manager(settings, registry, tmp_path)
    await manager.start_all()
    conn = manager.connections["toy"]
    assert conn.status is Status.READY
    # garbage before the handshake (an npm banner on stdout) is reported, not fatal
    await wait_until(lambda: conn.garbage_lines == 2, what="both garbage lines")
    assert any("npm WARN something noisy" in line for line in conn.stderr_tail())
    result = await registry.invoke(ToolCall("c0", "mcp:toy:add", {"a": 2, "b": 40}), run)
    assert (result.content, result.structured) == ("42", {"result": 42})
    # a flood of stderr: rotated on disk, bounded in memory
    result = await registry.invoke(ToolCall("c1", "mcp:toy:flood", {"lines": 40000}), run)
    assert result.content == "flooded"
    await wait_until(lambda: any("flood line 39999" in ln for ln in conn.stderr_tail(1)), timeout=20,
                     what="the flood to be logged")
    tail = manager.stderr_tail("toy")
    assert len(tail) == 200
    log_path = manager.log_path("toy")
    files = sorted(p.name for p in log_path.parent.iterdir())
    assert files == ["toy.log", "toy.log.1", "toy.log.2"]
    assert sum(p.stat().st_size for p in log_path.parent.iterdir()) < 3_200_000
    await manager.aclose()


@pytest.mark.asyncio
async def test_exit_at_start_shows_the_last_stderr_lines(settings, registry, markers, tmp_path):
    settings.mcp_servers["toy"] = toy_entry(markers, TOY_EXIT_AT_START="3")
    manager = make_manager(settings, registry, tmp_path)
    await manager.start_all()
    conn = manager.connections["toy"]
    assert conn.status is Status.FAILED
    assert "exited while starting" in conn.reason
    assert "toy: fatal: missing API key TOY_KEY" in conn.reason
    assert tool_names(registry) == set()
    await asyncio.sleep(0)  # no automatic restart for a server that never came up
    assert conn.status is Status.FAILED
    await manager.aclose()


@pytest.mark.asyncio
async def test_missing_command_names_it_and_the_path(settings, registry, tmp_path):
    settings.mcp_servers["ghost"] = {"command": "cks-no-such-program-xyz", "args": []}
    manager = make_manager(settings, registry, tmp_path)
    await manager.start_all()
    conn = manager.connections["ghost"]
    assert conn.status is Status.FAILED
    assert "'cks-no-such-program-xyz' was not found on the PATH searched" in conn.reason
    assert "/usr/bin" in conn.reason
    await manager.aclose()


@pytest.mark.asyncio
async def test_startup_timeout(settings, registry, markers, tmp_path):
    settings.mcp_servers["toy"] = toy_entry(markers, TOY_HANG_AT_START="1")
    manager = make_manager(settings, registry, tmp_path, startup_timeout=1.0)
    await manager.start_all()
    conn = manager.connections["toy"]
    assert conn.status is Status.FAILED
    assert "did not finish starting within 1 s" in conn.reason

    # Stop while it is still starting: the start ends at once, as "stopped"
    conn = McpConnection(conn.config, log=ServerLog(tmp_path / "second.log"), registry=registry,
                         login_path=no_login_shell, startup_timeout=30.0)
    starting = asyncio.create_task(conn.start())
    await wait_until(lambda: any("starting: " in line for line in conn.stderr_tail()), what="the spawn")
    await conn.stop()
    assert await starting is False
    assert conn.status is Status.STOPPED
    await manager.aclose()


@pytest.mark.asyncio
async def test_a_tool_that_runs_only_as_a_task_is_not_offered_and_the_status_says_why(settings, registry,
                                                                                       markers, tmp_path):
    # Tool.execution (task support) is a field of the 2025-11-25 protocol; the SDK drops it on 2026-07-28.
    settings.mcp_servers["toy"] = {**toy_entry(markers, TOY_TASK_TOOLS="1"), "protocol": "legacy"}
    manager = make_manager(settings, registry, tmp_path)
    await manager.start_all()
    conn = manager.connections["toy"]
    try:
        assert conn.status is Status.READY, conn.reason
        names = tool_names(registry)
        assert "batch_job" not in names  # a plain call would only fail ("requires task augmentation")
        assert {"maybe_task", "echo"} <= names  # optional task support: a plain call works
        assert "'batch_job'" in conn.reason and "only as a task" in conn.reason, conn.reason
        assert conn.reason.count(".") <= 3 and "\n" not in conn.reason
    finally:
        await manager.aclose()
