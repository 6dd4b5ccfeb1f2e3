"""Benchmark of an MCP tool call through our stack versus a bare SDK session (a script, not a test).

Two copies of the same stdio server (tests/mcp/servers/toy_server.py) run side by
side; the same tool (``echo``) is called sequentially:

- bare SDK: ``mcp.Client`` over ``stdio_client``, ``call_tool`` and nothing else;
- registry: ``ToolRegistry.invoke`` on ``mcp:toy:echo``: lookup, JSON-Schema
  validation of the arguments, the approval check (policy ``auto``), our
  connection's resetting deadline and progress hook, the result conversion and
  the result cap — everything a model's call goes through.

Calls alternate one by one (so drift in machine load hits both sides alike)
after a warm-up. Target: the registry's median at most 1.15× the bare
median. Wall-clock time on a shared machine mostly measures the scheduler, so
the CPU time of this (client) process per call is printed too: the servers run
in their own processes, so that is the client side alone, ours versus the SDK's.

    python bench/mcp_call.py                      # 500 calls each, protocol auto
    python bench/mcp_call.py --calls 200 --protocol legacy

Runs on plain asyncio; qasync adds the same per-callback cost to both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from cks_desktop.mcp.config import parse_server  # noqa: E402
from cks_desktop.mcp.connection import McpConnection  # noqa: E402
from cks_desktop.mcp.stderr_log import ServerLog  # noqa: E402
from cks_desktop.tools.approval import Decision, StaticApprover  # noqa: E402
from cks_desktop.tools.context import Run  # noqa: E402
from cks_desktop.tools.registry import ToolRegistry  # noqa: E402
from cks_desktop.tools.types import Caller, ToolCall  # noqa: E402

TOY = ROOT / "tests" / "mcp" / "servers" / "toy_server.py"
WARMUP = 50
TARGET = 1.15


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def timed(fn: Callable[[], Awaitable[Any]], n: int, out: list[float], cpu: list[float]) -> None:
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)


async def main(calls: int, protocol: str) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    entry = {"command": sys.executable, "args": [str(TOY)], "env": {"TOY_MARKER_DIR": str(tmp)},
             "approval": "auto", "protocol": protocol}
    registry = ToolRegistry(None)  # type: ignore[arg-type]
    conn = McpConnection(parse_server("toy", entry), log=ServerLog(tmp / "toy.log"), registry=registry,
                         login_path=_no_login_path)
    run = Run("bench", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    params = StdioServerParameters(command=sys.executable, args=[str(TOY)], env={"TOY_MARKER_DIR": str(tmp / "b")})
    (tmp / "b").mkdir()
    args = {"text": "hello"}
    with open(tmp / "bare.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=protocol, cache=None) as bare:
            if not await conn.start():
                print(f"our connection failed: {conn.reason}", file=sys.stderr)
                return 1

            async def via_registry() -> None:
                result = await registry.invoke(ToolCall("b", "mcp:toy:echo", args), run)
                assert not result.is_error, result.content

            async def via_sdk() -> None:
                result = await bare.call_tool("echo", args)
                assert not result.is_error

            warm: list[float] = []
            await timed(via_sdk, WARMUP, warm, [])
            await timed(via_registry, WARMUP, warm, [])
            ours: list[float] = []
            sdk: list[float] = []
            ours_cpu: list[float] = []
            sdk_cpu: list[float] = []
            gc.disable()
            try:
                for _ in range(calls):
                    await timed(via_sdk, 1, sdk, sdk_cpu)
                    await timed(via_registry, 1, ours, ours_cpu)
            finally:
                gc.enable()
            await conn.stop()
            version = bare.protocol_version
    rows = [("bare SDK session", sdk, sdk_cpu), ("registry + our connection", ours, ours_cpu)]
    print(f"{calls} sequential calls of echo, stdio, protocol {version}, Python {sys.version.split()[0]}")
    print(f"{'path':<28}{'median ms':>11}{'p95 ms':>9}{'mean ms':>9}{'CPU median ms':>15}")
    for label, values, cpu in rows:
        print(f"{label:<28}{statistics.median(values):>11.3f}{pct(values, 0.95):>9.3f}"
              f"{statistics.fmean(values):>9.3f}{statistics.median(cpu):>15.3f}")
    ratio = statistics.median(ours) / statistics.median(sdk)
    ratio95 = pct(ours, 0.95) / pct(sdk, 0.95)
    ratio_cpu = statistics.median(ours_cpu) / statistics.median(sdk_cpu)
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"ratio (median) {ratio:.3f}×, ratio (p95) {ratio95:.3f}×, ratio (client CPU) {ratio_cpu:.3f}× — "
          f"{verdict} the {TARGET}× target")
    return 0


async def _no_login_path() -> str | None:
    return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--protocol", choices=("auto", "legacy"), default="auto")
    ns = parser.parse_args()
    sys.exit(asyncio.run(main(ns.calls, ns.protocol)))
