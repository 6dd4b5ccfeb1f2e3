"""`cks-desktop sessions watch --json`, a real subprocess, seeing writes of other real processes:
another CLI (`tools call`, `sessions create`) and `mcp serve` driven by the official MCP SDK client.

Lines are read on a thread into a queue; every wait is bounded, no sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

MAIN = Path(__file__).resolve().parents[2]
WAIT_S = 20.0  # generous: includes other subprocesses' start-up on a loaded machine


def cks(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=120)


class Watch:
    """A running `sessions watch` and the lines it printed."""

    def __init__(self, home: Path, *args: str, read: bool = True) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(home),
                                      "sessions", "watch", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader: threading.Thread | None = None
        if read:
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def next_json(self, timeout: float = WAIT_S) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"sessions watch printed nothing within {timeout} s") from None
        return json.loads(line)

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=WAIT_S)
        if self._reader is not None:
            self._reader.join(timeout=WAIT_S)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        """Kill it if still running, then close its pipes (after the reader saw the end)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT_S)
        if self._reader is not None:
            self._reader.join(timeout=WAIT_S)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def session_id(home: Path) -> str:
    proc = cks(home, "sessions", "create", "Watched", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["id"]


@pytest.fixture
def watch(home: Path, session_id: str) -> Iterator[Watch]:
    w = Watch(home, "--json")
    try:
        ready = w.next_json()
        assert ready["event"] == "ready" and ready["session_id"] is None
        yield w
    finally:
        w.kill()


@pytest.mark.asyncio
async def test_watch_prints_writes_of_the_cli_and_of_mcp_serve(home: Path, session_id: str,
                                                               watch: Watch, tmp_path: Path) -> None:
    call = await asyncio.to_thread(cks, home, "tools", "call", "add_object", "--session", session_id,
                                   "--args", json.dumps({"type": "Person", "name": "Ada"}))
    assert call.returncode == 0, call.stderr
    change = await asyncio.to_thread(watch.next_json)
    assert change["event"] == "change" and change["session_id"] == session_id
    assert change["external"] is True and change["origin"] and change["change_id"].startswith("c_")
    assert [(o["type"], o["name"]) for o in change["objects"]["added"]] == [("Person", "Ada")]
    assert change["relations"] == {"added": [], "updated": [], "removed": []}

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                                         "--session", session_id],
                                   cwd=str(MAIN), env={**os.environ, "PYTHONPATH": str(MAIN)})
    with open(tmp_path / "serve.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            r = await client.call_tool("evolve_knowledge", {"operations": [
                {"op": "add_object", "type": "Machine", "name": "Analytical Engine", "label": "$ae"},
                {"op": "add_relation", "source": "Ada", "target": "$ae", "type": "programmed"}]})
            assert not r.is_error, r.content
            served = await asyncio.to_thread(watch.next_json)
    assert served["event"] == "change" and served["session_id"] == session_id
    assert [o["name"] for o in served["objects"]["added"]] == ["Analytical Engine"]
    [rel] = served["relations"]["added"]
    assert rel["type"] == "programmed" and rel["target_id"] == served["objects"]["added"][0]["id"]

    created = await asyncio.to_thread(cks, home, "sessions", "create", "From the terminal")
    assert created.returncode == 0, created.stderr
    session = await asyncio.to_thread(watch.next_json)
    assert session == {"event": "session", "kind": "created", "session_id": created.stdout.strip(),
                       "title": "From the terminal", "external": True}

    code, err = watch.interrupt()
    assert (code, err) == (0, "")


def test_watch_of_one_session_filters_and_ends_when_it_is_deleted(home: Path, session_id: str) -> None:
    other = cks(home, "sessions", "create", "Other").stdout.strip()
    w = Watch(home, session_id, "--json")
    try:
        assert w.next_json() == {"event": "ready", "database": str(home / "cks.sqlite3"), "session_id": session_id}
        assert cks(home, "tools", "call", "add_object", "--session", other,
                   "--args", '{"type": "T", "name": "elsewhere"}').returncode == 0
        assert cks(home, "sessions", "rename", session_id, "Watched, renamed").returncode == 0
        renamed = w.next_json()  # the other session's change was not printed
        assert renamed["kind"] == "renamed" and renamed["title"] == "Watched, renamed"
        assert cks(home, "sessions", "delete", session_id).returncode == 0
        assert w.next_json()["kind"] == "deleted"
        assert w.proc.wait(timeout=WAIT_S) == 0
        assert w.proc.stderr is not None and w.proc.stderr.read() == ""
    finally:
        w.kill()


def test_watch_ends_quietly_when_its_reader_goes_away(home: Path, session_id: str) -> None:
    w = Watch(home, "--json", read=False)
    try:
        assert w.proc.stdout is not None
        assert json.loads(w.proc.stdout.readline())["event"] == "ready"
        w.proc.stdout.close()  # the reader is gone while nothing is printed
        _, err = w.proc.communicate(timeout=WAIT_S)
        assert w.proc.returncode == 0 and err == ""
    finally:
        w.kill()


def test_watch_of_an_unknown_session_is_one_line(home: Path, session_id: str) -> None:
    proc = cks(home, "sessions", "watch", "s_nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "s_nope" in proc.stderr


def test_readable_lines(home: Path, session_id: str) -> None:
    w = Watch(home)
    try:
        assert w.proc.stderr is not None
        assert "Watching" in w.proc.stderr.readline()  # the feed runs once this is printed
        assert cks(home, "tools", "call", "add_object", "--session", session_id,
                   "--args", '{"type": "Person", "name": "Grace"}').returncode == 0
        line = w.lines.get(timeout=WAIT_S)
        assert f"in {session_id} by " in line and "added 1 object (Person 'Grace')" in line
        code, _ = w.interrupt()
        assert code == 0
    finally:
        w.kill()
