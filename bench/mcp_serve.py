"""Benchmark: tools/call through ``cks-desktop mcp serve`` vs a bare SDK server with the same tool.

Both servers are real subprocesses on the same database; the tool is ``get_object`` (an
object with its relations). Ours goes through everything a host's call does: the session
scope, the registry (lookup, JSON-Schema validation, pinning, the approval check), the
output schema's structured result and a log message; over HTTP also the bearer token and
the Host/Origin checks. The bare one is ``MCPServer`` with one function (bench/mcp_serve_bare.py).
Calls alternate one by one after a warm-up, so load drift hits both alike.

    python bench/mcp_serve.py                 # 300 calls per server and transport
    python bench/mcp_serve.py --calls 100

Target: our median at most 1.2× the bare server's, on each transport. Over HTTP the servers'
own CPU time per call is printed too (Linux: the sum of their threads' ``/proc/<pid>/task/*/schedstat``
run time over the timed calls), the steadier number on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from cks_desktop.graph.store import GraphStore  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}


def _home() -> tuple[Path, str]:
    home = Path(tempfile.mkdtemp(prefix="cks-bench-serve-"))
    store = GraphStore.open(home / "cks.sqlite3")
    s = store.create_session("bench")
    ops: list[dict[str, Any]] = [{"op": "add_object", "type": "Person", "name": "Ada", "label": "$ada"}]
    for i in range(20):
        ops.append({"op": "add_object", "type": "Machine", "name": f"M{i}", "label": f"$m{i}"})
        ops.append({"op": "add_relation", "source": "$ada", "target": f"$m{i}", "type": "built"})
    store.apply(s.id, ops, "bench")
    store.close()
    return home, s.id


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.asynccontextmanager
async def _ours_http(home: Path, sid: str) -> AsyncIterator[tuple[str, dict[str, str], subprocess.Popen[str]]]:
    proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                             "--session", sid, "--http", "127.0.0.1:0"], cwd=ROOT, env=ENV, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = token = None
    assert proc.stderr is not None
    while url is None:
        line = await asyncio.to_thread(proc.stderr.readline)
        if not line:
            raise SystemExit("mcp serve --http did not start")
        if m := re.search(r"\): (\S+)$", line.strip()):
            token = m.group(1)
        if m := re.search(r" at (http://\S+/mcp)", line):
            url = m.group(1)
    try:
        yield url, {"Authorization": f"Bearer {token}"}, proc
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def _bare_http(home: Path, sid: str) -> AsyncIterator[tuple[str, dict[str, str], subprocess.Popen[str]]]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "mcp_serve_bare.py"), str(home / "cks.sqlite3"),
                             sid, "--http", str(port)], cwd=ROOT, env=ENV, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the bare server did not start") from None
            await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp", {}, proc
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def _client_http(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
            yield c


@contextlib.asynccontextmanager
async def _client_stdio(cmd: list[str], err: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(ROOT), env=ENV)
    async with Client(stdio_client(params, errlog=err), mode="legacy") as c:
        yield c


def _cpu_ns(pid: int) -> int | None:
    """CPU time (ns) all threads of ``pid`` have run so far, or None where /proc does not say."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


async def _race(ours: Client, bare: Client, calls: int,
                pids: dict[str, int] | None = None) -> tuple[list[float], list[float], dict[str, float]]:
    """Alternate the calls; the wall times of each side, and (with ``pids``) each server's CPU ms per call."""
    times: dict[str, list[float]] = {"ours": [], "bare": []}
    start: dict[str, int | None] = {}
    for i in range(calls + 20):
        if i == 20 and pids:
            start = {name: _cpu_ns(pid) for name, pid in pids.items()}
        for name, c in (("ours", ours), ("bare", bare)) if i % 2 else (("bare", bare), ("ours", ours)):
            t = time.perf_counter()
            r = await c.call_tool("get_object", {"ref": "Ada"})
            dt = (time.perf_counter() - t) * 1000
            if r.is_error:
                raise SystemExit(f"{name}: {r.content[0].text}")
            if i >= 20:
                times[name].append(dt)
    cpu: dict[str, float] = {}
    for name, pid in (pids or {}).items():
        before, after = start.get(name), _cpu_ns(pid)
        if before is not None and after is not None:
            cpu[name] = (after - before) / 1e6 / calls
    return times["ours"], times["bare"], cpu


def _row(label: str, values: list[float]) -> str:
    values = sorted(values)
    return f"| {label} | {statistics.median(values):.2f} | {values[int(len(values) * 0.95) - 1]:.2f} |"


async def main(calls: int) -> int:
    home, sid = _home()
    rows, ratios = [], {}
    with open(os.devnull, "w") as err:
        ours_cmd = [sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve", "--session", sid]
        bare_cmd = [sys.executable, str(ROOT / "bench" / "mcp_serve_bare.py"), str(home / "cks.sqlite3"), sid]
        async with _client_stdio(ours_cmd, err) as ours, _client_stdio(bare_cmd, err) as bare:
            o, b, _ = await _race(ours, bare, calls)
        rows += [_row("stdio, mcp serve", o), _row("stdio, bare SDK server", b)]
        ratios["stdio"] = statistics.median(o) / statistics.median(b)
    async with _ours_http(home, sid) as (ou, oh, op), _bare_http(home, sid) as (bu, bh, bp):
        async with _client_http(ou, oh) as ours, _client_http(bu, bh) as bare:
            o, b, cpu = await _race(ours, bare, calls, {"ours": op.pid, "bare": bp.pid})
    rows += [_row("HTTP, mcp serve (token)", o), _row("HTTP, bare SDK server", b)]
    ratios["http"] = statistics.median(o) / statistics.median(b)
    if len(cpu) == 2:
        print(f"HTTP server CPU per call: mcp serve {cpu['ours']:.3f} ms, bare {cpu['bare']:.3f} ms, "
              f"ratio (server CPU) {cpu['ours'] / cpu['bare']:.3f}×")
    print(f"{calls} sequential tools/call get_object each, alternating; Python {sys.version.split()[0]}")
    print("| path | median ms | p95 ms |\n|---|---|---|")
    print("\n".join(rows))
    print(" ".join(f"ratio {k} (median) {v:.3f}×;" for k, v in ratios.items()), "target ≤ 1.2×")
    return 0 if all(v <= 1.2 for v in ratios.values()) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    sys.exit(asyncio.run(main(parser.parse_args().calls)))
