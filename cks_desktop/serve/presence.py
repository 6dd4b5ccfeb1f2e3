"""The clients of ``mcp serve`` processes, for the window's Share page.

``mcp serve`` is usually a process of its own (an MCP host such as Claude Desktop starts it
over stdio), so the window cannot ask its ``ClientTracker``. Each serving process writes what
its tracker records (``ClientRecord.to_json``: name, version, protocol, transport, requests,
first and last seen; no session ids or tokens) to ``<data folder>/serving/<pid>.json``, and
removes the file when it stops. The window reads the files of processes still alive; a file
left by a process that died (killed, crashed) is skipped and removed.

Writes are atomic (a temporary file, then rename) and at most one per ``EVERY`` seconds
unless a client came or went, so a busy host costs little. Reading a file that is not ours,
damaged, or huge is skipped: it is data from another process, never trusted.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cks_desktop.serve.clients import ClientRecord

EVERY = 1.0
MAX_BYTES = 1_000_000  # a presence file is a few hundred bytes per client
SUFFIX = ".json"


class Presence:
    """This process's file: ``publish`` what its tracker records, ``clear`` at exit."""

    def __init__(self, folder: Path, pid: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.pid = os.getpid() if pid is None else pid
        self.path = folder / f"{self.pid}{SUFFIX}"
        self._clock = clock
        self._last = -EVERY
        self._keys: frozenset[str] = frozenset()

    def publish(self, records: list[ClientRecord]) -> None:
        keys = frozenset(r.key for r in records)
        now = self._clock()
        if keys == self._keys and now - self._last < EVERY:
            return
        self._keys, self._last = keys, now
        body = json.dumps({"pid": self.pid, "clients": [r.to_json() for r in records]})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temp = self.path.with_suffix(".tmp")
            temp.write_text(body, encoding="utf-8")
            os.replace(temp, self.path)
        except OSError:
            pass  # a full disk or a read-only folder costs the Share page a row, never a request

    def clear(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # it exists, under another user
    except (OSError, OverflowError, ValueError):
        return False
    return True


def others(folder: Path, own_pid: int | None = None) -> list[ClientRecord]:
    """The clients of every other live serving process, oldest first."""
    own = os.getpid() if own_pid is None else own_pid
    out: list[ClientRecord] = []
    try:
        files = sorted(folder.glob(f"*{SUFFIX}"))
    except OSError:
        return out
    for path in files:
        if not path.stem.isdigit() or int(path.stem) == own:
            continue
        pid = int(path.stem)
        if not _alive(pid):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
            continue
        out += _read(path, pid)
    return sorted(out, key=lambda r: r.first_seen)


def _read(path: Path, pid: int) -> list[ClientRecord]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = data.get("clients") if isinstance(data, dict) else None
    records: list[ClientRecord] = []
    for index, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, dict):
            continue
        try:
            records.append(ClientRecord(
                key=f"{pid}/{index}", name=str(row.get("name", ""))[:200], version=str(row.get("version", ""))[:100],
                protocol=str(row.get("protocol", ""))[:40], transport=str(row.get("transport", ""))[:10],
                first_seen=float(row.get("first_seen", 0.0)), last_seen=float(row.get("last_seen", 0.0)),
                requests=int(row.get("requests", 0)), process=f"mcp serve (process {pid})"))
        except (TypeError, ValueError):
            continue
    return records
