"""Real `cks-desktop mcp serve` subprocesses for the server's tests: a data folder with sessions,
the HTTP server started on a free port (its URL and token read from its stderr), SDK clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from cks_desktop.graph.store import GraphStore

MAIN = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("CKS_DESKTOP_TEST_KEYRING", "SHELL", "CKS_DESKTOP_HOME")}
    out["PYTHONPATH"] = str(MAIN)
    out.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")  # never a real keychain
    return out


def cli(home: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *argv], cwd=MAIN,
                          env=env(), capture_output=True, text=True, timeout=timeout)


def make_home(tmp_path: Path, *titles: str, shared: tuple[int, ...] = (), approval: str | None = None,
              extra: dict[str, Any] | None = None) -> tuple[Path, list[str]]:
    """A data folder with one session per title (each with one Person 'Seed <i>'); ``shared``: indexes."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    store = GraphStore.open(home / "cks.sqlite3")
    ids = []
    for i, title in enumerate(titles):
        s = store.create_session(title)
        store.apply(s.id, [{"op": "add_object", "type": "Person", "name": f"Seed {i}"}], "test")
        ids.append(s.id)
    store.close()
    settings: dict[str, Any] = {"mcp_serve": {"shared_sessions": [ids[i] for i in shared]}}
    if approval:
        settings["mcp_serve"]["approval"] = approval
    settings.update(extra or {})
    (home / "settings.json").write_text(json.dumps(settings))
    return home, ids


def graph_of(home: Path, session_id: str) -> tuple[list[tuple[str, str]], int]:
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        return (sorted((o.type, o.name) for o in store.all_objects(session_id)),
                len(store.all_relations(session_id)))
    finally:
        store.close()


@dataclass
class HttpServe:
    proc: subprocess.Popen[str]
    url: str
    token: str | None
    stderr: list[str]

    def headers(self, token: str | None = "") -> dict[str, str]:
        value = self.token if token == "" else token
        return {"Authorization": f"Bearer {value}"} if value else {}

    @contextlib.asynccontextmanager
    async def client(self, mode: str = "auto", token: str | None = "", **kwargs: Any) -> AsyncIterator[Client]:
        async with httpx2.AsyncClient(headers=self.headers(token), timeout=30) as http:
            async with Client(streamable_http_client(self.url, http_client=http), mode=mode, **kwargs) as c:
                yield c


@contextlib.contextmanager
def serve_http(home: Path, *extra: str, bind: str = "127.0.0.1:0") -> Iterator[HttpServe]:
    """`mcp serve --http 127.0.0.1:0`; waits (bounded) for the "serving … at URL" line on stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                             "--http", bind, *extra], cwd=MAIN, env=env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    url = token = None
    deadline = time.monotonic() + START_TIMEOUT
    try:
        assert proc.stderr is not None
        while url is None:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError(f"mcp serve did not start: {''.join(lines)}{proc.stderr.read() if proc.poll() is not None else ''}")
            line = proc.stderr.readline()
            lines.append(line)
            if m := re.search(r"bearer token \(shown once[^)]*\): (\S+)", line):
                token = m.group(1)
            if m := re.search(r" at (http://\S+/mcp)", line):
                url = m.group(1)
        yield HttpServe(proc, url, token, lines)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()


def stdio_params(home: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve", *extra],
                                 cwd=str(MAIN), env=env())


@contextlib.asynccontextmanager
async def stdio(home: Path, errlog: Path, *extra: str, mode: str = "auto", **kwargs: Any) -> AsyncIterator[Client]:
    with open(errlog, "w") as err:
        async with Client(stdio_client(stdio_params(home, *extra), errlog=err), mode=mode, **kwargs) as c:
            yield c


async def wait_for(predicate: Any, timeout: float = 10.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
