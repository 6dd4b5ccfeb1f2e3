"""Shared helpers for the MCP tests: the toy server's config, settings, a registry, waits."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller

SERVERS = Path(__file__).parent / "servers"
TOY = SERVERS / "toy_server.py"


def toy_entry(marker_dir: Path, **env: str) -> dict[str, Any]:
    """A settings entry that runs the toy server as a real subprocess."""
    return {"command": sys.executable, "args": [str(TOY)],
            "env": {"TOY_MARKER_DIR": str(marker_dir), **env}, "approval": "auto"}


async def no_login_shell() -> str | None:
    """Tests never ask a login shell for its PATH (slow, and not what they test)."""
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
    """Poll a cheap predicate with a bounded deadline (for effects in another process)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "config" / "settings.json")


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(None)  # type: ignore[arg-type]  # MCP tools never touch the store


@pytest.fixture
def run() -> Run:
    return Run("session-1", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    d = tmp_path / "markers"
    d.mkdir()
    return d
