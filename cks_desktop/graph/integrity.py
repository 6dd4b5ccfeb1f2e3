"""Is the database file sound? Checks the store runs at open and after an I/O error.

Why: SQLite happily reads and writes a file whose b-trees are damaged (random
bytes in the middle of it): reads return partial answers and writes spread the
damage. So the store asks SQLite before it trusts a file:

- ``quick_check`` runs ``PRAGMA quick_check`` (the b-tree structure, without
  the cross-check of every index entry that ``integrity_check`` adds) under a
  time budget enforced by a progress handler: on a 100k-object database
  (114 MB) it takes about 0.15–0.2 s warm; on a file too big for the budget the
  check stops and says so (``Verdict.finished`` is False) rather than hold up
  the start-up — the GUI finishes the check on a worker before its daily
  backup.
- ``fts_check`` runs FTS5's own ``'integrity-check'`` on the full-text index: its pages
  are blobs in an ordinary table (``objects_fts_data``), so garbage in them passes
  ``quick_check`` and even ``integrity_check``, while searches return wrong rows and
  writes merge the garbage on. Same budget and verdicts as ``quick_check``. The index
  is derived from ``objects``, so the store answers a failed check by rebuilding it
  from there (``fts_rebuild``) rather than turning read-only; only if that fails (an
  index FTS5 cannot even open cannot be dropped) or the rebuilt index still fails the
  check is the file treated as damaged, the usual way.
- ``missing_parts`` compares the tables, indexes and triggers in the file with
  what this version's migrations create (built once in memory): a file with a
  table dropped is as unusable as one with a broken page, and the person gets
  the same way out instead of "no such table" from the first query.
- ``is_corruption`` tells which SQLite errors mean "the file is damaged".
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cks_desktop.graph.sqlite_util import search_text

log = logging.getLogger(__name__)

OPEN_CHECK_BUDGET = 0.75  # seconds: quick_check of ~400 MB warm; beyond, the check stops unfinished
MAX_PROBLEMS = 5  # how many problems quick_check reports (the first one is named to people)

_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
_SQLITE_INTERRUPT = 9
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_READONLY = 8


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: ``ok`` with ``finished``; otherwise ``problem`` says what is wrong."""

    ok: bool
    finished: bool = True
    problem: str = ""


def is_corruption(exc: BaseException) -> bool:
    """SQLITE_CORRUPT / SQLITE_NOTADB (by code, or by message for errors built by hand)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def quick_check(conn: sqlite3.Connection, budget: float | None = OPEN_CHECK_BUDGET, *,
                full: bool = False) -> Verdict:
    """``PRAGMA quick_check`` (``integrity_check`` with ``full``), stopped after ``budget``
    seconds (None: no limit). Never raises for a damaged file: that is the verdict."""
    pragma = "integrity_check" if full else "quick_check"
    deadline = None if budget is None else time.monotonic() + budget
    if deadline is not None:
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
    try:
        rows = conn.execute(f"PRAGMA {pragma}({MAX_PROBLEMS})").fetchall()
    except sqlite3.Error as exc:
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == _SQLITE_INTERRUPT or "interrupt" in str(exc).lower():
            return Verdict(ok=True, finished=False)
        if is_corruption(exc):
            return Verdict(ok=False, problem=str(exc))
        raise
    finally:
        if deadline is not None:
            conn.set_progress_handler(None, 0)
    found = [str(r[0]) for r in rows]
    if found == ["ok"]:
        return Verdict(ok=True)
    return Verdict(ok=False, problem=found[0] if found else "the check returned nothing")


FTS_TABLES = ("objects_fts",)  # fts_rebuild knows how to fill each


def fts_check(conn: sqlite3.Connection, budget: float | None = OPEN_CHECK_BUDGET) -> Verdict:
    """FTS5's ``'integrity-check'`` of every full-text index, stopped after ``budget`` seconds.
    The problem names the index. Never raises for a damaged or unreadable index: that is the
    verdict. The check is an ``INSERT`` and needs the write lock: while another program writes
    (or on a read-only connection) it is skipped, unfinished, so opening never waits on it. It
    runs in a transaction that is always rolled back: FTS5 may note what it checked, and
    opening a database must leave its file as it was."""
    deadline = None if budget is None else time.monotonic() + budget
    if deadline is not None:
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
    waits = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        for table in FTS_TABLES:
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                code = getattr(exc, "sqlite_errorcode", None)
                if isinstance(code, int) and code & 0xFF == _SQLITE_INTERRUPT or "interrupt" in str(exc).lower():
                    return Verdict(ok=True, finished=False)
                if isinstance(code, int) and code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY):
                    return Verdict(ok=True, finished=False)  # another writer holds the file: not checked now
                # corrupt pages, and an index FTS5 cannot even open ("invalid fts5 file format")
                return Verdict(ok=False, problem=f"the full-text index {table}: {exc}")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(waits)}")
        if deadline is not None:
            conn.set_progress_handler(None, 0)
    return Verdict(ok=True)


def fts_rebuild(conn: sqlite3.Connection) -> None:
    """Rebuild the full-text index from ``objects`` (the truth; the index's own content copy
    may be what is damaged): the table is dropped, made again from its own definition and
    filled the way the writer fills it, in one transaction. What the objects say is found
    again, nothing else changes. An index FTS5 cannot even open cannot be dropped: raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        (ddl,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'objects_fts'").fetchone()
        conn.execute("DROP TABLE objects_fts")
        conn.execute(ddl)
        rows = conn.execute("SELECT n, name, properties FROM objects")
        while batch := rows.fetchmany(2000):
            conn.executemany("INSERT INTO objects_fts (rowid, name, body) VALUES (?, ?, ?)",
                             [(n, name, search_text(_properties(props))) for n, name, props in batch])
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _properties(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def check_full_text(path: Path, budget: float | None) -> tuple[str | None, bool]:
    """FTS5's own check of the full-text index (``quick_check`` cannot see inside its pages);
    a damaged index is rebuilt from its content and checked again. (damage or None, finished).
    The check runs on a connection of its own, closed at once: the store's connection runs
    ``PRAGMA optimize`` when it closes, and would otherwise write statistics for the index's
    tables after every open, so that opening alone changed the file."""
    side = sqlite3.connect(str(path), isolation_level=None)
    try:
        return _check_full_text(side, path, budget)
    finally:
        side.close()


def _check_full_text(conn: sqlite3.Connection, path: Path, budget: float | None) -> tuple[str | None, bool]:
    verdict = fts_check(conn, budget)
    if verdict.ok:
        return None, verdict.finished
    log.warning("The full-text index of %s is damaged (%s); rebuilding it.", path, verdict.problem)
    try:
        fts_rebuild(conn)
    except sqlite3.Error as exc:
        log.warning("Rebuilding the full-text index of %s failed: %s", path, exc)
        return f"{verdict.problem} (rebuilding it failed)", True
    again = fts_check(conn, None)
    if not again.ok:
        return f"{again.problem} (still, after rebuilding it)", True
    log.warning("The full-text index of %s was rebuilt from the objects.", path)
    return None, True


@functools.lru_cache(maxsize=1)
def _expected_parts(version: int) -> frozenset[tuple[str, str]]:
    """(type, name) of every table, index and trigger the migrations create, from a
    database built in memory (cached per schema version)."""
    from cks_desktop.graph.schema import migrate

    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn, ":memory:")
        return frozenset(conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') "
            "AND name NOT LIKE 'sqlite_%'").fetchall())
    finally:
        conn.close()


def missing_parts(conn: sqlite3.Connection) -> list[str]:
    """Parts of the schema this version expects that the file lacks ("table sessions"),
    when the file claims this version's schema; [] otherwise."""
    from cks_desktop.graph.schema import schema_version

    version = schema_version()
    if conn.execute("PRAGMA user_version").fetchone()[0] != version:
        return []
    present = set(conn.execute("SELECT type, name FROM sqlite_master").fetchall())
    missing = sorted(_expected_parts(version) - present, key=lambda part: (part[0] != "table", part))
    return [f"{kind} {name}" for kind, name in missing]  # tables first: they name the damage best
