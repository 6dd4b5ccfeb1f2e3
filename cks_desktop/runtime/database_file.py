"""The database file itself, the way out of a damaged one: check, back up, list backups, restore,
export what can still be read. The use case both front ends call: the CLI's ``storage check|
backup|backups|restore|export`` and the window's start-up dialog (``app.py``), so a refusal and a
result are the same sentence in both. Every failure is a ``StoreError`` sentence (``graph/``
words it: a file in use, a full disk, no sound backup); nothing is half written.

The mechanics live in ``graph/``: ``integrity.py`` (quick or full check, missing tables),
``backup.py`` (a consistent copy through SQLite's backup API; restore keeps the current file in
``damaged/``), ``salvage.py`` (one JSON file per session that can be read, from a store a damaged
file opened read-only). All of this blocks: the window calls it on a worker thread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.graph.errors import StoreError
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.graph.backup import Backup, Restored
    from cks_desktop.graph.salvage import Salvage
    from cks_desktop.graph.store import GraphStore

__all__ = ["Checked", "DatabaseFile", "Salvaged"]


@dataclass(frozen=True)
class Checked:
    """What an integrity check found: ``problem`` None when the file is sound."""

    path: Path
    full: bool
    problem: str | None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def sentence(self) -> str:
        from cks_desktop.graph.errors import damaged_sentence

        if self.problem:
            return damaged_sentence(self.path, self.problem)
        return f"The database {self.path} passed its {'full ' if self.full else ''}integrity check."

    def to_json(self) -> dict[str, object]:
        return {"database": str(self.path), "ok": self.ok, "problem": self.problem,
                "check": "integrity_check" if self.full else "quick_check"}


@dataclass(frozen=True)
class Salvaged:
    """An export of what could be read: the folder, the files written and the sessions that failed."""

    folder: Path
    result: "Salvage"

    def sentence(self) -> str:
        failed = f" {counted(len(self.result.failed), 'session')} could not be read." if self.result.failed else ""
        return f"Exported {counted(len(self.result.written), 'session')} to {self.folder}.{failed}"


class DatabaseFile:
    """One SQLite database file (a team's PostgreSQL is backed up by its server: docs/team.md)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def check(self, *, full: bool = False) -> Checked:
        """``quick_check`` (``full``: ``integrity_check``, every index entry) plus the tables the
        schema must have, on a read-only connection. ``StoreError`` when there is no file yet or it
        cannot be opened."""
        from cks_desktop.graph.integrity import missing_parts, quick_check
        from cks_desktop.graph.sqlite_util import database_error

        if not self.path.is_file():
            raise StoreError(f"There is no database at {self.path} yet.")
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                verdict = quick_check(conn, None, full=full)
                problem = verdict.problem if not verdict.ok else ", ".join(f"missing {m}" for m in missing_parts(conn))
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise database_error(exc, self.path) from None
        return Checked(self.path, full, problem or None)

    def backup(self) -> "Backup":
        """A backup now (the newest ``backup.KEEP`` are kept)."""
        from cks_desktop.graph import backup

        return backup.make_backup(self.path)

    def backups(self) -> "list[Backup]":
        from cks_desktop.graph import backup

        return backup.list_backups(self.path)

    def backup_folder(self) -> Path:
        from cks_desktop.graph import backup

        return backup.backup_dir(self.path)

    @staticmethod
    def kept() -> int:
        from cks_desktop.graph import backup

        return backup.KEEP

    def restore(self, chosen: Path | None = None) -> "Restored":
        """Put ``chosen`` (default: the newest sound backup) in place; the current file is kept in
        ``damaged/``. Refused while another process has the file open."""
        from cks_desktop.graph import backup

        return backup.restore(self.path, chosen)

    @staticmethod
    def restored_sentence(done: "Restored") -> str:
        kept = f"; the previous file is kept as {done.kept_as}" if done.kept_as else ""
        return f"Restored the backup of {done.backup.made_at.isoformat(timespec='seconds')}{kept}."

    def salvage(self, store: "GraphStore", folder: Path | None = None) -> Salvaged:
        """Every session ``store`` can still read, one JSON file each, into ``folder`` (default: a
        new ``salvage-<UTC time>`` folder beside the database)."""
        from cks_desktop.graph.salvage import export_readable

        target = folder if folder is not None else \
            self.path.parent / f"salvage-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
        return Salvaged(target, export_readable(store, target))
