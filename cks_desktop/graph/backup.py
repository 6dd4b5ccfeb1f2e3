"""Automatic backups of the database, and restoring one.

Why and how:
- A backup is made with SQLite's online backup API (``sqlite3.Connection.backup``)
  from a connection of its own, so it is a consistent snapshot even while the
  app writes (WAL readers do not block writers), and it never copies a torn file.
- A damaged database is never backed up: the source is checked first (the
  full ``quick_check``, no time budget — this runs on a worker), otherwise a
  broken file would rotate the last good backup away. The copy is checked too
  before it replaces anything.
- Backups live beside the database in ``backups/`` as
  ``cks-<UTC time>.sqlite3`` (rollback-journal mode: one self-contained file);
  ``KEEP`` (2) are kept, the oldest deleted after a new one is complete.
- ``backup_due`` says whether the newest backup is older than ``MAX_AGE``
  (a day): the GUI calls ``make_backup`` on a worker once the window is up, so
  at most one backup a day and never on the event loop.
- ``restore`` never deletes the current file: it (with its ``-wal``/``-shm``)
  is moved to ``damaged/`` first, then a checked copy of the backup is moved
  into place atomically. It refuses while another program has the database open.

Failures are ``BackupError`` with one sentence (a full disk says "the disk is full").
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from cks_desktop.diskfull import disk_full_sentence, is_disk_full
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.integrity import is_corruption, quick_check

KEEP = 2
MAX_AGE = timedelta(days=1)
_PREFIX = "cks-"
_SUFFIX = ".sqlite3"
_STAMP = "%Y%m%dT%H%M%S%fZ"


class BackupError(StoreError):
    """A backup or restore did not happen; the message says why in one sentence."""


class DamagedSource(BackupError):
    """The database failed its check, so no backup was made; ``problem`` is what was found."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


@dataclass(frozen=True)
class Backup:
    path: Path
    made_at: datetime  # UTC

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "made_at": self.made_at.isoformat(timespec="seconds"),
                "bytes": self.path.stat().st_size if self.path.exists() else 0}


@dataclass(frozen=True)
class Restored:
    backup: Backup
    kept_as: Path | None  # where the replaced file went (None: there was none)


def backup_dir(db_path: Path) -> Path:
    return Path(db_path).parent / "backups"


def damaged_dir(db_path: Path) -> Path:
    return Path(db_path).parent / "damaged"


def list_backups(db_path: Path) -> list[Backup]:
    """Complete backups, newest first (partial files of an interrupted backup are ignored)."""
    found: list[Backup] = []
    folder = backup_dir(db_path)
    if not folder.is_dir():
        return found
    for item in folder.iterdir():
        name = item.name
        if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
            continue
        try:
            made = datetime.strptime(name[len(_PREFIX):-len(_SUFFIX)], _STAMP).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        found.append(Backup(item, made))
    return sorted(found, key=lambda b: b.made_at, reverse=True)


def backup_due(db_path: Path, now: datetime | None = None, max_age: timedelta = MAX_AGE) -> bool:
    """True if the database exists and its newest backup is missing or older than ``max_age``."""
    if not Path(db_path).is_file():
        return False
    backups = list_backups(db_path)
    now = now or datetime.now(timezone.utc)
    return not backups or now - backups[0].made_at >= max_age


def make_backup(db_path: Path, keep: int = KEEP, busy_timeout: float = 10.0) -> Backup:
    """Copy the database into ``backups/`` (checked, atomic), then keep the newest ``keep``.
    Blocking: run it on a worker thread."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise BackupError(f"There is no database at {db_path} to back up.")
    folder = backup_dir(db_path)
    made = datetime.now(timezone.utc)
    final = folder / f"{_PREFIX}{made.strftime(_STAMP)}{_SUFFIX}"
    partial = final.with_name(final.name + ".partial")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        src = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=busy_timeout)
        try:
            verdict = quick_check(src, None)
            if not verdict.ok:
                raise DamagedSource(f"The database {db_path} is damaged ({verdict.problem}), so it was not backed "
                                    "up and the existing backups were kept.", verdict.problem)
            _copy(src, partial)
        finally:
            src.close()
        _fsync(partial)
        os.replace(partial, final)
        _fsync_dir(folder)
    except BaseException as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise _backup_error(exc, db_path, final, "Backing up") from None
        raise
    for old in list_backups(db_path)[max(keep, 1):]:
        old.path.unlink(missing_ok=True)
    return Backup(final, made)


def restore(db_path: Path, backup: Path | None = None) -> Restored:
    """Put a backup (default: the newest one that passes its check) in place of the database.
    The current file is moved to ``damaged/``, never deleted."""
    db_path = Path(db_path)
    chosen = _choose(db_path, backup)
    _refuse_if_in_use(db_path)
    stamp = datetime.now(timezone.utc).strftime(_STAMP)
    incoming = db_path.with_name(db_path.name + ".restoring")
    try:
        src = sqlite3.connect(f"file:{chosen.path}?mode=ro", uri=True)
        try:
            _copy(src, incoming)
        finally:
            src.close()
        _fsync(incoming)
        kept_as = None
        if db_path.exists():
            aside = damaged_dir(db_path)
            aside.mkdir(parents=True, exist_ok=True)
            kept_as = aside / f"{db_path.stem}-{stamp}{db_path.suffix}"
            for tail in ("", "-wal", "-shm", "-journal"):
                part = db_path.with_name(db_path.name + tail)
                if part.exists():
                    os.replace(part, kept_as.with_name(kept_as.name + tail))
        os.replace(incoming, db_path)
        _fsync_dir(db_path.parent)
    except (sqlite3.Error, OSError) as exc:
        incoming.unlink(missing_ok=True)
        raise _backup_error(exc, db_path, db_path, "Restoring") from None
    return Restored(chosen, kept_as)


def _choose(db_path: Path, backup: Path | None) -> Backup:
    candidates = ([Backup(Path(backup), datetime.fromtimestamp(Path(backup).stat().st_mtime, timezone.utc))]
                  if backup is not None and Path(backup).is_file() else list_backups(db_path))
    if backup is not None and not candidates:
        raise BackupError(f"There is no backup file {backup}.")
    if not candidates:
        raise BackupError(f"There is no backup of {db_path} yet (they are kept in {backup_dir(db_path)}).")
    problems: list[str] = []
    for candidate in candidates:
        try:
            conn = sqlite3.connect(f"file:{candidate.path}?mode=ro", uri=True)
            try:
                verdict = quick_check(conn, None)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            problems.append(f"{candidate.path.name}: {exc}")
            continue
        if verdict.ok:
            return candidate
        problems.append(f"{candidate.path.name}: {verdict.problem}")
    raise BackupError("No backup passes its integrity check (" + "; ".join(problems) + "), so nothing was restored.")


def _refuse_if_in_use(db_path: Path) -> None:
    """An exclusive lock fails while any other connection has the file open (WAL
    connections keep a shared lock): replacing the file under it would lose its writes."""
    if not db_path.exists():
        return
    try:
        conn = sqlite3.connect(str(db_path), timeout=0, isolation_level=None)
    except sqlite3.Error:
        return
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        if not is_corruption(exc) and ("locked" in str(exc).lower() or "busy" in str(exc).lower()):
            raise BackupError(f"The database {db_path} is in use by another program (CKS Desktop "
                              "still open?); close it and restore again.") from None
    finally:
        conn.close()


def _copy(src: sqlite3.Connection, target: Path) -> None:
    target.unlink(missing_ok=True)
    dest = sqlite3.connect(str(target), isolation_level=None)
    try:
        src.backup(dest)
        dest.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        verdict = quick_check(dest, None)
        if not verdict.ok:
            raise sqlite3.DatabaseError(f"the copy failed its check: {verdict.problem}")
    finally:
        dest.close()


def _backup_error(exc: BaseException, db_path: Path, target: Path, doing: str) -> BackupError:
    if is_disk_full(exc, target):
        return BackupError(disk_full_sentence(target.parent, f"the backup in {target.parent}")
                           if doing == "Backing up" else disk_full_sentence(target, f"the database {target}"))
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return BackupError(f"{doing} the database {db_path} failed: {detail}.")


def _fsync(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
