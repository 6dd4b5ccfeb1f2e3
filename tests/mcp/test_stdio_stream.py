"""Our stdio transport (cks_desktop/mcp/stdio_stream.py) against real subprocesses: a big message
in linear time through the app's whole connection, lines the SDK's reader could not survive
(not UTF-8, far too long) handed on as parse errors, and the server's process group ended on close."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.shared.message import SessionMessage

from cks_desktop.mcp import resources as R
from cks_desktop.mcp.stdio_stream import LineSplitter, LineTooLong, stdio_streams
from tests.mcp.test_resources_prompts import library, ready

BIG_MB = 40  # the SDK's reader needs ~12 s for this (quadratic); 100 MB: bench/mcp_big_message.py


def script(tmp_path: Path, body: str) -> StdioServerParameters:
    path = tmp_path / "raw_server.py"
    path.write_text(textwrap.dedent(body))
    return StdioServerParameters(command=sys.executable, args=[str(path)])


def test_the_splitter_finds_lines_across_chunks_and_drops_an_endless_one() -> None:
    s = LineSplitter(max_line=10)
    assert s.feed(b"ab") == [] and s.feed(b"c\nde\n\nf") == [b"abc", b"de", b""]
    (too_long,) = s.feed(b"0123456789012")
    assert isinstance(too_long, LineTooLong) and "longer than" in str(too_long)
    assert s.feed(b"345") == []  # still the same endless line: said once
    assert s.feed(b"xx\nok\n") == [b"ok"]  # the rest of it is dropped, the next line comes through


@pytest.mark.asyncio
async def test_a_big_resource_reads_in_linear_time_through_the_connection(tmp_path) -> None:
    conn = await ready(library(tmp_path, LIB_BIG_MB=str(BIG_MB)))
    try:
        started = time.monotonic()
        outcome = await R.read_resource(conn, "big://text")
        elapsed = time.monotonic() - started
        (item,) = outcome.contents
        assert item.size > (BIG_MB - 1) * 1_000_000 and item.truncated
        assert elapsed < 8, f"{BIG_MB} MB took {elapsed:.1f} s"  # ~0.5 s here; the SDK's reader ~12 s
        assert conn.ready and (await conn.call_tool("subscribed", {})).content is not None  # still talking
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_bad_lines_are_parse_errors_and_the_stream_goes_on(tmp_path) -> None:
    params = script(tmp_path, r'''
        import sys
        out = sys.stdout.buffer
        out.write(b"\xff\xfe not utf-8\n")
        out.write(b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}}\n')
        out.write(b"x" * 5000 + b"\n")
        out.write(b"this is not json\n")
        out.write(b'{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n')
        out.flush()
    ''')
    got: list[object] = []
    with open(os.devnull, "w") as devnull:
        async with stdio_streams(params, errlog=devnull, max_line=1000) as (read, _write):
            with anyio.fail_after(15):
                async for item in read:
                    got.append(item)
    assert isinstance(got[0], ValueError) and "not valid utf-8" in str(got[0])
    assert isinstance(got[1], SessionMessage) and got[1].message.method == "notifications/message"
    assert isinstance(got[2], LineTooLong)
    assert isinstance(got[3], ValueError) and not isinstance(got[3], LineTooLong)
    assert isinstance(got[4], SessionMessage) and got[4].message.method == "notifications/tools/list_changed"
    assert len(got) == 5


@pytest.mark.asyncio
async def test_closing_ends_a_server_that_ignores_its_stdin_and_its_children(tmp_path) -> None:
    pids = tmp_path / "pids"
    params = script(tmp_path, f'''
        import os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the last step, SIGKILL to the group, ends it
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        sys.stdout.write('{{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}\\n')
        sys.stdout.flush()
        while True:
            time.sleep(1)
    ''')
    with open(os.devnull, "w") as devnull:
        started = time.monotonic()
        async with stdio_streams(params, errlog=devnull) as (read, _write):
            with anyio.fail_after(15):
                assert isinstance(await read.receive(), SessionMessage)
        assert time.monotonic() - started < 15
    server, child = (int(p) for p in pids.read_text().split())
    for pid in (server, child):
        with anyio.fail_after(5):
            while _alive(pid):
                await anyio.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of an exited parent counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1].split()[0] != "Z"
    except OSError:
        return True


