"""Is this failure a full disk? One answer and one sentence for every module.

A full disk reaches the app in several disguises: ``OSError`` with ``ENOSPC``
(or ``EDQUOT``, a quota that is used up), SQLite's ``SQLITE_FULL``, and — the
misleading one — SQLite's ``SQLITE_IOERR_*`` family, because when the
shared-memory or WAL file cannot grow SQLite only knows that a write failed.
So besides the error itself we look at the free space of the file system that
holds the file: an I/O error on a file system with (almost) no free space is a
full disk, and the person is told so instead of "disk error".

Qt-free and dependency-free, so settings, the store, the CLI and the GUI can
all use it::

    from cks_desktop.diskfull import is_disk_full, disk_full_sentence
    except OSError as exc:
        if is_disk_full(exc, path):
            raise SomeError(disk_full_sentence(path)) from None
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

# Below this much free space a failed write is taken to be the full disk's fault: SQLite
# needs at least a page (4 KiB) plus the shared-memory file's 32 KiB to make progress.
LOW_SPACE_BYTES = 256 * 1024

_FULL_ERRNOS = frozenset(e for e in (getattr(errno, "ENOSPC", None), getattr(errno, "EDQUOT", None)) if e)
_SQLITE_FULL = 13
_SQLITE_IOERR = 10


def sqlite_primary_code(exc: BaseException) -> int | None:
    """SQLite's primary result code (``SQLITE_IOERR`` for ``SQLITE_IOERR_SHMSIZE``), if any."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Free bytes available to this user on the file system holding ``path`` (or its
    nearest existing parent); None when that cannot be asked."""
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        st = os.statvfs(probe)
    except (OSError, AttributeError):  # AttributeError: no statvfs (Windows)
        try:
            import shutil

            return shutil.disk_usage(probe).free
        except OSError:
            return None
    return st.f_bavail * st.f_frsize


def low_on_space(path: str | os.PathLike[str]) -> bool:
    free = free_bytes(path)
    return free is not None and free < LOW_SPACE_BYTES


def is_disk_full(exc: BaseException, path: str | os.PathLike[str] | None = None) -> bool:
    """True if ``exc`` means "no space left" — directly (ENOSPC, EDQUOT, SQLITE_FULL, or
    SQLite's "database or disk is full"), or as an I/O error on a file system that
    ``path`` shows to be (almost) out of space."""
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
        return True
    code = sqlite_primary_code(exc)
    if code == _SQLITE_FULL or (isinstance(exc, sqlite3.Error) and "disk is full" in str(exc).lower()):
        return True
    io_error = code == _SQLITE_IOERR or (isinstance(exc, OSError) and exc.errno == errno.EIO)
    return bool(io_error and path is not None and low_on_space(path))


def disk_full_sentence(path: str | os.PathLike[str], what: str = "") -> str:
    """One sentence: the disk is full, which file could not be written, what to do.
    ``what`` names the file for people ("the database /x/cks.sqlite3"); default: the path."""
    thing = what or str(path)
    return f"The disk is full: {thing} cannot be written; free some space on that disk and try again."
