"""Benchmark: one big ``resources/read`` answer over stdio, the SDK's stdio transport vs ours
(a script, not a test).

The server is tests/mcp/servers/library_server.py (the official SDK's low-level server) with
``LIB_BIG_MB=N``: ``big://text`` is N MB of text, one JSON-RPC line of about N MB on stdout.
The same ``mcp.Client`` reads it over ``mcp.client.stdio.stdio_client`` (the SDK's reader keeps
the unfinished line in a ``str`` and re-splits it for every chunk: quadratic) and over
``cks_desktop.mcp.stdio_stream.stdio_streams`` (a ``bytearray`` searched once: linear), then
through the app's whole connection (``McpConnection`` + ``resources.read_resource``, which cuts
the text to its bound). Sizes run smallest first; the SDK side is skipped past ``--sdk-max``
MB once it takes longer than ``--sdk-limit`` seconds (it grows with the square of the size).

    python bench/mcp_big_message.py                  # 1, 10, 50, 100 MB
    python bench/mcp_big_message.py --sizes 100 --sdk-limit 600
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from cks_desktop.mcp import resources as R  # noqa: E402
from cks_desktop.mcp.config import parse_server  # noqa: E402
from cks_desktop.mcp.connection import McpConnection  # noqa: E402
from cks_desktop.mcp.stderr_log import ServerLog  # noqa: E402
from cks_desktop.mcp.stdio_stream import stdio_streams  # noqa: E402

LIBRARY = ROOT / "tests" / "mcp" / "servers" / "library_server.py"


def params(mb: int) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(LIBRARY)],
                                 env={"LIB_BIG_MB": str(mb), "PYTHONPATH": str(ROOT)})


async def raw_read(transport: Any) -> tuple[float, int]:
    async with Client(transport, mode="legacy") as client:
        started = time.perf_counter()
        result = await client.read_resource("big://text")
        elapsed = time.perf_counter() - started
    return elapsed, len(getattr(result.contents[0], "text", "") or "")


async def app_read(mb: int, folder: Path) -> tuple[float, int]:
    entry = {"command": sys.executable, "args": [str(LIBRARY)], "protocol": "legacy",
             "env": {"LIB_BIG_MB": str(mb), "PYTHONPATH": str(ROOT)}}
    conn = McpConnection(parse_server("lib", entry), log=ServerLog(folder / "lib.log"))
    assert await conn.start(), conn.reason
    try:
        started = time.perf_counter()
        outcome = await R.read_resource(conn, "big://text")
        elapsed = time.perf_counter() - started
        return elapsed, outcome.contents[0].size
    finally:
        await conn.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50, 100], help="MB per message")
    parser.add_argument("--sdk-limit", type=float, default=120.0,
                        help="skip the SDK's transport at bigger sizes once one read took longer (s)")
    args = parser.parse_args()
    rows: list[tuple[int, str, str, str]] = []
    sdk_slow = False
    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as devnull:
        for mb in args.sizes:
            ours, n = await raw_read(stdio_streams(params(mb), errlog=devnull))
            if sdk_slow:
                sdk_text = "skipped"
            else:
                sdk, m = await raw_read(stdio_client(params(mb), errlog=devnull))
                assert m == n, (m, n)
                sdk_text = f"{sdk:8.2f}"
                sdk_slow = sdk > args.sdk_limit
            app, size = await app_read(mb, Path(tmp))
            assert size == n, (size, n)
            rows.append((mb, sdk_text, f"{ours:8.2f}", f"{app:8.2f}"))
            print(f"{mb} MB done", file=sys.stderr)
    print(f"{'message':>8} | {'SDK stdio_client (s)':>20} | {'our stdio_streams (s)':>21} | {'app connection (s)':>18}")
    print(f"{'-' * 8}-|-{'-' * 20}-|-{'-' * 21}-|-{'-' * 18}")
    for mb, sdk_text, ours_text, app_text in rows:
        print(f"{str(mb) + ' MB':>8} | {sdk_text:>20} | {ours_text:>21} | {app_text:>18}")


if __name__ == "__main__":
    asyncio.run(main())
