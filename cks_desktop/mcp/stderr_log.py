"""A per-server log: everything a server writes to stderr, plus our own notes about it.

Why a pipe and a thread. ``stdio_client`` needs a real file for the child's
stderr (STACK.md pitfall 8). Handing it a plain log file would let a server
that floods stderr fill the disk, and nobody could rotate the file under it.
So the child writes into a pipe; a small daemon thread reads it and writes
lines into a rotating file (``<name>.log``, ``.log.1``, ``.log.2``; about 1 MB
each), keeping only the last 200 lines in memory for the GUI. Reading in a
thread keeps the loop free and works on every platform (Windows pipes do not
work with the selector loop). Lines are cut at 4,000 characters so one endless
line cannot grow memory either.

Listeners (the GUI's log view) are called on the event loop, once per chunk
read, never from the thread.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from cks_desktop.callbacks import Callbacks

TAIL_LINES = 200
MAX_LINE = 4_000
MAX_BYTES = 1_000_000
BACKUPS = 2
_SAFE = re.compile(r"[^A-Za-z0-9._-]")

Listener = Callable[[], None]


def log_file_name(server: str) -> str:
    """A file name for a server's log; distinct names stay distinct after sanitizing."""
    safe = _SAFE.sub("_", server) or "server"
    if safe != server:
        safe += "-" + hashlib.sha256(server.encode()).hexdigest()[:6]
    return f"{safe}.log"


class ServerLog:
    def __init__(self, path: Path, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS,
                 tail_lines: int = TAIL_LINES, secrets: Callable[[], list[str]] | None = None) -> None:
        self.path = path
        # The secret values this app knows (its keychain's): a server that prints its own token
        # must not put it in our log file or the settings page's tail.
        self._secrets = secrets or (lambda: [])
        self.max_bytes = max_bytes
        self.backups = backups
        self._tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self._lock = threading.Lock()
        self._listeners: Callbacks[[]] = Callbacks("MCP server log")
        self.lines_written = 0

    # -- writing -----------------------------------------------------------
    def _rotate(self) -> None:
        for i in range(self.backups, 0, -1):
            src = self.path if i == 1 else self.path.with_name(f"{self.path.name}.{i - 1}")
            if src.exists():
                os.replace(src, self.path.with_name(f"{self.path.name}.{i}"))
        # The current file always exists, so the log view and a reader never find it missing
        # between a rotation and the server's next line.
        self.path.touch()

    def write_lines(self, lines: list[str]) -> None:
        """Append lines (thread-safe). A failing disk loses log lines, never the server.

        The file is opened per batch (one chunk of a flood is one batch), so a
        log never holds a file open and needs no closing.
        """
        if not lines:
            return
        cut = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + " […]" for line in lines]
        secrets = [v for v in self._secrets() if len(v) >= 4]
        if secrets:
            cut = [_redact(line, secrets) for line in cut]
        with self._lock:
            self._tail.extend(cut)
            self.lines_written += len(cut)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8", errors="replace") as fh:
                    fh.write("\n".join(cut) + "\n")
                    size = fh.tell()
                if size >= self.max_bytes:
                    self._rotate()
            except OSError:
                pass

    def append(self, lines: list[str]) -> None:
        """Write lines from the event loop's thread and tell the listeners at once."""
        self.write_lines(lines)
        self._notify()

    def note(self, text: str) -> None:
        """One line of our own (start, exit, garbage on stdout), marked so it stands out."""
        self.append([f"[cks-desktop {time.strftime('%H:%M:%S')}] {text}"])

    # -- reading -----------------------------------------------------------
    def tail(self, n: int = TAIL_LINES) -> list[str]:
        with self._lock:
            lines = list(self._tail)
        return lines[-n:] if n < len(lines) else lines

    def server_tail(self, n: int = 5) -> list[str]:
        """The last lines the server itself wrote (our notes left out): for failure reasons."""
        return [line for line in self.tail() if not line.startswith("[cks-desktop ")][-n:]

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def _notify(self) -> None:
        self._listeners.emit()

    # -- the child's stderr ---------------------------------------------------
    def open_pipe(self) -> "StderrPipe":
        return StderrPipe(self)


def _redact(line: str, secrets: list[str]) -> str:
    for value in secrets:
        if value in line:
            line = line.replace(value, "[redacted]")
    return line


class StderrPipe:
    """One child's stderr: the write end for the child, a thread draining the read end."""

    def __init__(self, log: ServerLog) -> None:
        self.log = log
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8")
        self._read_fd = read_fd
        self._done = threading.Event()
        self._loop = asyncio.get_running_loop()
        self._done_async = asyncio.Event()
        self._thread = threading.Thread(target=self._drain, name=f"mcp-stderr-{log.path.stem}", daemon=True)
        self._thread.start()

    def close_writer(self) -> None:
        """Drop our copy of the write end (after the spawn): EOF then means the child is gone."""
        if not self.writer.closed:
            self.writer.close()

    async def drained(self, timeout: float) -> bool:
        """Wait (bounded) until the child's stderr reached EOF and every line is logged, and the
        listeners have been told of them: the loop runs the reader's wake-ups before its "done"."""
        try:
            await asyncio.wait_for(self._done_async.wait(), timeout)
        except TimeoutError:
            return self._done.is_set()
        return True

    def _wake(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self.log._notify)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            pass

    def _drain(self) -> None:
        pending = b""
        try:
            while True:
                try:
                    chunk = os.read(self._read_fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                if len(pending) > MAX_LINE * 4:  # an endless line: cut it
                    lines.append(pending)
                    pending = b""
                self.log.write_lines([ln.decode("utf-8", "replace").rstrip("\r") for ln in lines])
                self._wake()
            if pending:
                self.log.write_lines([pending.decode("utf-8", "replace").rstrip("\r")])
                self._wake()
        finally:
            try:
                os.close(self._read_fd)
            except OSError:
                pass
            self._done.set()
            try:
                self._loop.call_soon_threadsafe(self._done_async.set)
            except RuntimeError:
                pass
