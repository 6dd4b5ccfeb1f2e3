"""An inter-process exclusive lock on a small lock file (stdlib only).

Why a separate lock file and not the settings file itself: the settings file is
replaced by an atomic rename on every save, so a lock on it would be a lock on
an inode nobody else opens after the rename. The lock file beside it is never
renamed or deleted (deleting it would let two processes lock two different
files), so every writer locks the same inode.

POSIX uses ``fcntl.flock`` (per open file description: two ``open()`` calls in
one process exclude each other too, so threads are covered); Windows uses
``msvcrt.locking`` on the first byte. Waiting is bounded: a process that holds
the lock for longer than ``timeout`` (a hung editor, a stopped process) makes
the caller fail with one sentence instead of hanging forever.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DEFAULT_TIMEOUT = 10.0
_FIRST_POLL = 0.005
_MAX_POLL = 0.1


class LockTimeout(OSError):
    """The lock stayed taken for longer than the caller was willing to wait."""


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def file_lock(path: Path, timeout: float = DEFAULT_TIMEOUT, *, what: str = "the file") -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` block.

    Raises ``LockTimeout`` (a sentence naming ``what`` and the lock file) when
    the lock is not free within ``timeout`` seconds, and ``OSError`` when the
    lock file cannot be created at all.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        poll = _FIRST_POLL
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockTimeout(f"Another program has kept {what} locked for more than {timeout:g} seconds "
                                  f"(lock file {path}); nothing was changed, try again.")
            time.sleep(poll)  # a lock is held for milliseconds; back off to spare the CPU
            poll = min(poll * 2, _MAX_POLL)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
