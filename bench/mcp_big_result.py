"""Benchmark: a 50 MB tool result from a real stdio server, and what it costs the event loop
(a script, not a test).

The server is tests/mcp/servers/big_result_server.py: ``big_text`` answers with 50 MB of text,
``big_structured`` with 50 MB of structured content (100,000 small records), ``big_typed`` the
same under an output schema. Each is called through the app's whole path (``McpManager``, the
connection, the registry's cap) while a heartbeat task on the loop records its longest gap
(the budget is 250 ms). Prints one row per tool: the call's wall time, the longest stall and
the size of what the model is given.

    python bench/mcp_big_result.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cks_desktop.mcp.manager import McpManager  # noqa: E402
from cks_desktop.settings import Settings  # noqa: E402
from cks_desktop.tools.approval import Decision, StaticApprover  # noqa: E402
from cks_desktop.tools.context import Run  # noqa: E402
from cks_desktop.tools.registry import ToolRegistry  # noqa: E402
from cks_desktop.tools.types import Caller, ToolCall  # noqa: E402

SERVER = ROOT / "tests" / "mcp" / "servers" / "big_result_server.py"
TOOLS = ("big_text", "big_structured", "big_typed")


async def no_login_shell() -> str | None:
    return None


async def main(runs: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="cks-bench-big-result-"))
    settings = Settings.load(home / "settings.json")
    settings.mcp_servers["big"] = {"command": sys.executable, "args": [str(SERVER)], "approval": "auto",
                                   "timeout": 300}
    registry = ToolRegistry(None)  # type: ignore[arg-type]  # MCP tools never touch the store
    manager = McpManager(settings, None, registry, home / "logs", login_path=no_login_shell, startup_timeout=60.0)
    await manager.start_all()
    run = Run("bench", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    loop = asyncio.get_running_loop()
    print("| tool | run | call (s) | longest loop stall (ms) | text for the model (chars) | error |")
    print("|---|---|---|---|---|---|")
    try:
        for tool in TOOLS:
            for i in range(runs):
                longest = 0.0

                async def beat() -> None:
                    nonlocal longest
                    last = loop.time()
                    while True:
                        await asyncio.sleep(0.005)
                        now = loop.time()
                        longest = max(longest, now - last)
                        last = now

                task = loop.create_task(beat())
                began = time.perf_counter()
                result = await registry.invoke(ToolCall(f"c{i}", f"mcp:big:{tool}", {}), run)
                took = time.perf_counter() - began
                await asyncio.sleep(0.02)
                task.cancel()
                print(f"| {tool} | {i + 1} | {took:.2f} | {longest * 1000:.0f} | {len(result.content):,} | "
                      f"{'yes' if result.is_error else 'no'} |")
    finally:
        await manager.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    asyncio.run(main(parser.parse_args().runs))
