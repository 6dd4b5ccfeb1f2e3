"""The headless rules through the real CLI (``python -m cks_desktop mcp call``, a subprocess), and the
reference server ``@modelcontextprotocol/server-everything`` from npm through the manager."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.mcp.connection import Status
from cks_desktop.mcp.host import ElicitationAnswer, SamplingAnswer, SamplingReply
from cks_desktop.mcp.manager import McpManager
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from tests.mcp.conftest import SERVERS, no_login_shell
from tests.mcp.everything_server import everything_entry as _everything
from tests.mcp.test_client_callbacks import RecordingHost

MAIN = Path(__file__).resolve().parents[2]
SERVER = SERVERS / "callbacks_server.py"


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(MAIN)}
    env.pop("SHELL", None)
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", *argv],
                          capture_output=True, text=True, env=env, cwd=MAIN, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    p = cli(h, "add", "cb", "--protocol", "legacy", "--env", f"CB_MARKER_DIR={tmp_path}", "--",
            sys.executable, str(SERVER))
    assert p.returncode == 0, p.stderr
    return h


@pytest.mark.slow
def test_mcp_call_accepts_defaults_only_with_yes(home):
    p = cli(home, "call", "cb", "ask", "--yes")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"action": "accept", "content": {"name": "Ada", "count": 3}}
    assert "accepted with its defaults (--yes)" in p.stderr

    p = cli(home, "call", "cb", "ask")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["action"] == "decline"
    assert "run with --yes" in p.stderr

    schema = json.dumps({"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]})
    p = cli(home, "call", "cb", "ask", "--yes", "--args", json.dumps({"schema": schema}))
    assert json.loads(p.stdout)["action"] == "decline" and "has no default" in p.stderr


def test_mcp_call_denies_sampling_and_never_hangs(home):
    p = cli(home, "call", "cb", "sample", "--yes")
    assert p.returncode == 1  # the tool failed: the server got the refusal
    assert "sampling is denied in a headless run" in p.stderr
    assert len([line for line in p.stderr.splitlines() if "Traceback" in line]) == 0


# -- the reference server from npm ---------------------------------------------------------
async def _everything_manager(settings, registry, tmp_path: Path, host: Any, **extra: Any) -> McpManager:
    node = shutil.which("node")
    settings.mcp_servers["everything"] = {"command": node, "args": [str(_everything()), "stdio"],
                                          "approval": "auto", **extra}
    manager = McpManager(settings, None, registry, tmp_path / "logs", login_path=no_login_shell,
                         startup_timeout=60.0, host=host)
    await manager.start_all()
    conn = manager.connections["everything"]
    assert conn.status is Status.READY, conn.reason
    return manager


async def _call(registry, tool: str, args: dict[str, Any], run: Run | None = None):
    run = run or Run("s1", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    return await registry.invoke(ToolCall("e1", f"mcp:everything:{tool}", args), run)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_server_everything_elicitation_sampling_progress_logging(settings, registry, tmp_path):
    host = RecordingHost(ElicitationAnswer("decline"),
                         SamplingAnswer(SamplingReply("fake-model", "a haiku about tests")))
    manager = await _everything_manager(settings, registry, tmp_path, host, logLevel="debug")
    try:
        names = {s.name.rsplit(":", 1)[-1] for s in registry.specs() if s.source == "mcp:everything"}
        # it registers these only for a client that declared the capabilities
        assert {"trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"} <= names

        result = await _call(registry, "trigger-elicitation-request", {})
        assert not result.is_error, result.content
        (asked,) = host.elicited
        kinds = {f.name: f.kind for f in asked.form.fields}
        assert kinds["check"] == "boolean" and kinds["integer"] == "integer"
        assert kinds["untitledSingleSelectEnum"] == "enum" and kinds["untitledMultipleSelectEnum"] == "multi"
        assert "decline" in result.content.lower()

        result = await _call(registry, "trigger-sampling-request", {"prompt": "Write a haiku", "maxTokens": 30})
        assert not result.is_error and "a haiku about tests" in result.content
        assert host.sampled[0].system_prompt and host.sampled[0].max_tokens == 30

        seen: list[tuple[Any, ...]] = []
        run = Run("s1", Caller.MODEL, approver=StaticApprover(Decision.ALLOW),
                  on_progress=lambda *report: seen.append(report))
        result = await _call(registry, "trigger-long-running-operation", {"duration": 1, "steps": 3}, run)
        assert not result.is_error, result.content
        assert seen and seen[-1][2] == 3 and seen[-1][1] == 3

        instructions = manager.instructions().get("everything", "")
        assert instructions  # its handshake carries instructions, kept for the prompt and its settings
    finally:
        await manager.aclose()
