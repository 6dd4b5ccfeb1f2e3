"""Wake a waiting thread when files in one folder are written (Linux inotify, stdlib ctypes only).

The SQLite change feed polls ``data_version``; a commit by another process writes the database's
``-wal`` (or the database file itself), so waking the poll on that write brings the event in a few
milliseconds instead of up to one poll interval later. The poll stays as the fallback: where
inotify is missing (macOS, Windows, a container without it, the watch limit reached)
``watch_files`` returns None and nothing changes. The watcher thread blocks in ``select`` on the
inotify descriptor and a pipe that stops it, so it costs no CPU while nothing is written.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import select
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)

_IN_MODIFY = 0x00000002
_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_MASK = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)


class FileWatch:
    """A running watch; ``close`` stops its thread and frees the descriptor."""

    def __init__(self, fd: int, names: frozenset[str], on_write: Callable[[], None]) -> None:
        self._fd = fd
        self._names = names
        self._on_write = on_write
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="cks-file-watch", daemon=True)
        self._thread.start()

    def close(self) -> None:
        if self._stop_w < 0:
            return
        os.write(self._stop_w, b"x")
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        for fd in (self._stop_w, self._stop_r, self._fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stop_w = -1

    def _run(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd, self._stop_r], [], [])
            except OSError:
                return
            if self._stop_r in ready:
                return
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                continue
            except OSError:
                return
            if self._matches(data):
                try:
                    self._on_write()
                except Exception:  # the watcher must outlive a failing listener
                    log.exception("a file-watch listener failed")

    def _matches(self, data: bytes) -> bool:
        offset = 0
        while offset + _HEADER.size <= len(data):
            _wd, _mask, _cookie, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size: offset + _HEADER.size + length]
            offset += _HEADER.size + length
            if raw.split(b"\0", 1)[0].decode("utf-8", "replace") in self._names:
                return True
        return False


def watch_files(folder: Path, names: Iterable[str], on_write: Callable[[], None]) -> FileWatch | None:
    """Call ``on_write`` (on the watcher's thread) whenever one of ``names`` in ``folder`` is written
    or created; None where inotify cannot be used (then the caller just polls)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        wd = libc.inotify_add_watch(fd, os.fsencode(str(folder)), _MASK)
        if wd < 0:
            os.close(fd)
            return None
    except (OSError, AttributeError):
        return None
    return FileWatch(fd, frozenset(names), on_write)
