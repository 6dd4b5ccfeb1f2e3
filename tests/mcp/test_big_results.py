"""A 50 MB tool result from a real stdio server is read, parsed and capped without stalling the loop.

A heartbeat task on the event loop records the longest gap between its ticks while the
call runs; the GUI shares this loop, so a gap is a frozen window.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from cks_desktop.mcp.manager import McpManager
from cks_desktop.tools.types import ToolCall
from tests.mcp.conftest import SERVERS, no_login_shell

BUDGET = 0.5  # s: the target is 250 ms (bench/mcp_big_result.py measures it); on the loop it was 1.2-1.8 s,
# so twice the target still tells the two apart on a loaded machine


class Heartbeat:
    """Ticks every 5 ms on the loop; ``longest`` is the worst gap seen."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> "Heartbeat":
        self._task = asyncio.get_running_loop().create_task(self._beat())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


@pytest.mark.slow  # a wall-clock stall: in the full suite's big process the structured case reached 631 ms once
@pytest.mark.asyncio
@pytest.mark.parametrize("tool", ["big_text", "big_structured", "big_typed"])
async def test_a_50_mb_result_is_capped_off_the_loop(tool, settings, registry, run, tmp_path: Path):
    settings.mcp_servers["big"] = {"command": sys.executable, "args": [str(SERVERS / "big_result_server.py")],
                                   "approval": "auto", "timeout": 120}
    manager = McpManager(settings, None, registry, tmp_path / "logs", login_path=no_login_shell,
                         startup_timeout=30.0)
    await manager.start_all()
    try:
        with Heartbeat() as beat:
            result = await registry.invoke(ToolCall("c1", f"mcp:big:{tool}", {}), run)
        assert not result.is_error, result.content
        assert len(result.content) < 200_000  # capped for the model
        assert result.structured is None
        assert "truncated" in result.content or "…" in result.content
        print(f"{tool}: longest stall {beat.longest * 1000:.0f} ms")
        assert beat.longest < BUDGET, f"the event loop stalled {beat.longest:.3f} s"
    finally:
        await manager.aclose()


@pytest.mark.parametrize("doc", ['{}', '[]', ' [ 1 , [ ] , { } ] ', '"s"', '12', 'null',
                                 '{"a": [1, 2.5, -3e2, true, false, null, "x\\u00e9\\n"], "b": {"c": {}}, "a2": "d"}'])
def test_the_piecewise_parser_reads_what_json_loads_reads(doc: str) -> None:
    import json

    from cks_desktop.mcp.json_pieces import loads

    assert loads(doc) == json.loads(doc)


@pytest.mark.parametrize("doc", ['{', '[1,]', '{"a" 1}', '{"a":1,}', '[1] x', '', '{1: 2}', '[1 2]'])
def test_the_piecewise_parser_refuses_what_json_loads_refuses(doc: str) -> None:
    from cks_desktop.mcp.json_pieces import loads

    with pytest.raises(ValueError):
        loads(doc)
    with pytest.raises(RecursionError):
        loads("[" * 1000 + "]" * 1000)
