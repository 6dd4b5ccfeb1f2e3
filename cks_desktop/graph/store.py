"""The SQLite knowledge-graph store: the one door to the database.

One file, WAL, foreign keys on, FTS5 over names and property text,
``PRAGMA user_version`` migrations (``graph/schema.py``). Every mutation goes
through ``apply``: validate the whole batch first (``graph/batch.py``), then
write it in one transaction (``graph/writer.py``), record a ``Change`` with its
inverse ops, commit, and only then emit events.

Operations (plain dicts, the same shape ``evolve_knowledge`` accepts):
  {"op": "add_object", "type": str, "name": str, "properties"?: dict, "label"?: "$x",
   "on_conflict"?: "error"|"reuse"|"update", "id"?: str}          # "id" only for internal/revert use
  {"op": "update_object", "ref": str, "name"?: str, "type"?: str,
   "set_properties"?: dict, "remove_properties"?: [str]}
  {"op": "remove_object", "ref": str}                                # removes its relations too
  {"op": "add_relation", "source": str, "target": str, "type": str, "properties"?: dict,
   "label"?: "$r", "id"?: str}
  {"op": "update_relation", "relation_id": str, "source"?: str, "target"?: str, "type"?: str,
   "properties"?: dict}                                              # internal (merge, revert)
  {"op": "remove_relation", "relation_id": str}
  {"op": "define_type", "kind": "object"|"relation", "name": str, "description"?: str,
   "properties_schema"?: dict|None}
  {"op": "add_evidence", "object": ref|"$x"  XOR  "relation": relation_id|"$r",
   "document_id"?: str|None, "chunk_index"?: int|None, "start"?: int|None, "end"?: int|None,
   "page"?: int|None, "quote": str, "alignment"?: "exact"|"fuzzy"|"unaligned"|"none",
   "review"?: "auto"|"accepted"|"edited"|"pending", "origin"?: "extraction"|"person"|"chat"|"import",
   "id"?: str}                                                       # a source of a fact (graph/evidence.py)
  {"op": "remove_evidence", "evidence_id": str}
  {"op": "set_evidence_review", "evidence_id": str, "review": "auto"|"accepted"|"edited"|"pending"}
                                    # a person's check of a source; inverse: the old state
Removing an object or relation removes its evidence (the inverse restores it); the same
source twice on one target is a no-op (``outcome: reused``).
Internal extras (imports and reverts): ``{"op": "move_evidence", "evidence_id", "object"|"relation"}``
(merges), ``created_at``/``change_id`` on ``add_evidence``, ``created_at``/``updated_at`` on add
ops, ``updated_at`` on ``update_object``, ``set_properties``/
``remove_properties`` on ``update_relation``, and
``{"op": "undefine_type", "kind", "name"}``.
A ``ref`` is an object id, an exact name (case-insensitive; ambiguous → error
listing candidates), or a ``$label`` defined by an earlier op of the same batch.

Threads: the connection is opened with ``check_same_thread=False`` and every
call holds one re-entrant lock, so a worker thread (``asyncio.to_thread``) may
use the store too. Events are emitted after the lock is released, on the
thread that made the change.

A batch with no net effect (empty, or only ``on_conflict: reuse``) records no
change: ``ApplyResult.change`` is None.

Other modules keep their own tables in this file: they append a step to
``graph.schema.MIGRATIONS`` and use ``connection_lock()`` (reads) and
``transaction()`` (writes) on the store's one connection. Writes to the graph
tables themselves must go through ``apply`` (it maintains the full-text index
and the change log).
"""

from __future__ import annotations

import gc
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from cks_desktop.graph import history, queries, rows
from cks_desktop.graph.batch import Planner
from cks_desktop.diskfull import disk_full_sentence, is_disk_full, sqlite_primary_code
from cks_desktop.graph.edit_base import built_upon_sentence, check_bases, later_changes, object_version
from cks_desktop.graph.errors import (DamagedDatabase, DatabaseError, NotFound, StoreError, ValidationFailed,
                                      damaged_sentence)
from cks_desktop.graph.integrity import (
    OPEN_CHECK_BUDGET,
    check_full_text,
    is_corruption,
    missing_parts,
    quick_check,
)
from cks_desktop.graph.events import EventHub, GraphChanged, Listener, SessionEvent, StoreEvent
from cks_desktop.graph.feed import ChangeFeed, OwnWrites
from cks_desktop.graph.model import Change, Object, Relation, Session, TypeDef
from cks_desktop.graph.overlay import Overlay
from cks_desktop.graph.plan import COUNT_KEYS
from cks_desktop.graph.schema import _refuse_newer, migrate, schema_version
from cks_desktop.graph.sqlite_util import database_error, now_iso
from cks_desktop.graph.writer import summarize, write_plan
from cks_desktop.ids import new_id

if TYPE_CHECKING:
    from cks_desktop.graph.formats.common import CarriedDocuments

log = logging.getLogger(__name__)

_SQLITE_IOERR = 10
_SQLITE_READONLY = 8

DEFAULT_BUSY_TIMEOUT = 3.0  # seconds: long enough for another process's write, short enough for a person


@dataclass
class ApplyResult:
    """What ``apply`` returns. ``change`` is None for a dry run or an empty batch."""

    change: Change | None
    created: dict[str, str] = field(default_factory=dict)  # label -> id (objects and relations with a label)
    summary: str = "no changes"  # "adds 2 objects, 1 relation; changes 1 property"
    counts: dict[str, int] = field(default_factory=dict)  # objects_added, objects_updated, ...
    ops: list[dict[str, Any]] = field(default_factory=list)  # the resolved ops (also for dry runs)


class GraphStore:
    # The driver's own errors, passed up as they are (``connection_lock`` turns them into
    # one sentence); anything else failing mid-write becomes "nothing was written".
    # ``graph/pg/store.py`` (the PostgreSQL backend) sets psycopg's.
    DRIVER_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error,)
    backend = "sqlite"  # "postgresql" for graph/pg/store.py

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._events = EventHub()
        self._own = OwnWrites()  # our writes, noted before commit, so the feed skips them
        self._feed: ChangeFeed | None = None
        self._closed = False
        self._damage: str | None = None  # what quick_check (or an error) found broken
        self._read_only_reason: str | None = None  # why writes are refused (damage, full disk)
        self.integrity_checked = False  # the open-time check finished within its budget

    @property
    def damage(self) -> str | None:
        """What is broken in the file (quick_check's first finding, missing tables), or None."""
        return self._damage

    @property
    def read_only_reason(self) -> str | None:
        """The one sentence every write gets while the file is damaged or the disk full; None
        when writable."""
        return self._read_only_reason

    def _check_writable(self) -> None:
        if self._damage is not None:
            raise DamagedDatabase(self.path, self._damage)
        if self._read_only_reason is not None:
            raise DatabaseError(self._read_only_reason)

    def _failure(self, exc: sqlite3.Error) -> DatabaseError:
        """The error a SQLite failure becomes; a corruption or I/O error first checks the
        file, and a damaged file turns read-only from then on."""
        if self._damage is None:
            if is_corruption(exc):
                self._mark_damaged(str(exc))
            elif sqlite_primary_code(exc) == _SQLITE_IOERR and not is_disk_full(exc, self.path):
                try:
                    verdict = quick_check(self._conn, OPEN_CHECK_BUDGET)
                except sqlite3.Error:
                    verdict = None
                if verdict is not None and not verdict.ok:
                    self._mark_damaged(verdict.problem)
        if self._damage is not None:
            return DamagedDatabase(self.path, self._damage)
        if self._read_only_reason is not None and sqlite_primary_code(exc) == _SQLITE_READONLY:
            return DatabaseError(self._read_only_reason)
        return database_error(exc, self.path)

    def mark_damaged(self, problem: str) -> None:
        """Turn the store read-only because a check (e.g. the backup's) found ``problem``."""
        with self._lock:
            if self._damage is None:
                self._mark_damaged(problem)

    def _mark_damaged(self, problem: str) -> None:
        self._damage = problem
        self._read_only_reason = damaged_sentence(self.path, problem)
        log.info("%s", self._read_only_reason)
        try:
            self._conn.execute("PRAGMA query_only = ON")
        except sqlite3.Error:
            pass

    # -- lifecycle --------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, *,
             check_budget: float | None = OPEN_CHECK_BUDGET) -> "GraphStore":
        """Open (creating if needed), check and migrate.

        DatabaseError: locked / not a database / too new / unwritable. A file that opens
        but is damaged (failed ``quick_check``, tables missing) or sits on a full disk is
        NOT refused: it opens read-only (``read_only_reason`` says why, ``damage`` what is
        broken), so what can be read can still be read and exported, and every write is
        refused with one sentence that offers the way out (see ``graph/integrity.py``).
        """
        path = Path(path)
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path, busy_timeout, exclusive=False)
            return cls._prepare(conn, path, check_budget, full_disk=False)
        except DatabaseError:
            if conn is not None:
                conn.close()
            raise
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()
            if is_disk_full(exc, path) and path.is_file():
                store = cls._open_on_full_disk(path, busy_timeout, check_budget)
                if store is not None:
                    return store
            raise database_error(exc, path) from None

    @classmethod
    def _open_on_full_disk(cls, path: Path, busy_timeout: float,
                           check_budget: float | None) -> "GraphStore | None":
        """Reading needs no new disk space except SQLite's shared-memory WAL index;
        in EXCLUSIVE locking mode SQLite keeps that index in memory, so a full disk
        can still be read (other processes wait until this one closes)."""
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path, busy_timeout, exclusive=True)
            return cls._prepare(conn, path, check_budget, full_disk=True)
        except (sqlite3.Error, OSError, DatabaseError):
            if conn is not None:
                conn.close()
            return None

    @classmethod
    def _prepare(cls, conn: sqlite3.Connection, path: Path, check_budget: float | None,
                 full_disk: bool) -> "GraphStore":
        conn.execute("PRAGMA schema_version").fetchone()  # the first read: "not a database" raises here
        _refuse_newer(conn.execute("PRAGMA user_version").fetchone()[0], schema_version(), path)  # also read-only
        verdict = quick_check(conn, check_budget)
        damage = None if verdict.ok else verdict.problem
        if damage is None and not full_disk:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError("attempt to write a readonly database")
            conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: a crash loses at most the last commit
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -32000")  # 32 MB
        if damage is None and not full_disk:
            migrate(conn, path)
        if damage is None:
            missing = missing_parts(conn)
            if missing:
                damage = "missing " + ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        finished = verdict.finished
        if damage is None and not full_disk:
            damage, fts_finished = check_full_text(path, check_budget)
            finished = finished and fts_finished
        reason = None
        if damage is not None:
            reason = damaged_sentence(path, damage)
            log.info("%s", reason)
        elif full_disk:
            reason = disk_full_sentence(path, f"the database {path}")
        if reason is not None:
            conn.execute("PRAGMA query_only = ON")  # SQLite itself refuses writes from any module
        store = cls(conn, path)
        store._damage, store._read_only_reason, store.integrity_checked = damage, reason, finished
        return store

    def close(self) -> None:
        self.stop_feed()  # first, outside the lock: a feed listener may be waiting for it
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.execute("PRAGMA optimize")
            except sqlite3.Error:
                pass
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every committed change; returns an unsubscribe callable.

        Without a running feed (``start_feed``) these are this store's own writes; with
        one, also those of other processes (``external=True``, on the feed's thread)."""
        return self._events.subscribe(listener)

    # -- the change feed (graph/feed.py) ----------------------------------------------------

    @property
    def feed(self) -> ChangeFeed | None:
        """The running change feed, or None."""
        return self._feed

    def start_feed(self, interval: float | None = None) -> ChangeFeed:
        """Also emit the commits of OTHER processes to this file, as the same events.

        For long-lived callers (the window, ``sessions watch``, ``mcp serve``); short
        commands don't need it. Takes the baseline before returning (a few ms), then
        polls on a worker thread; ``close`` stops it. Idempotent. DatabaseError when
        the file cannot be read by a second connection (e.g. opened exclusively on a
        full disk).
        """
        from cks_desktop.graph.sqlite_feed import DEFAULT_INTERVAL_S, SqliteChangeFeed

        with self._lock:
            if self._closed:
                raise DatabaseError(f"The database {self.path} is closed.")
            if self._feed is not None:
                return self._feed
            feed = SqliteChangeFeed(self.path, self._own, self._events.emit,
                                    DEFAULT_INTERVAL_S if interval is None else interval)
            try:
                feed.start()
            except sqlite3.Error as exc:
                raise database_error(exc, self.path) from None
            self._feed = feed
            return feed

    def stop_feed(self) -> None:
        """Stop the change feed (waits for its worker); nothing when none runs."""
        with self._lock:
            feed, self._feed = self._feed, None
        if feed is not None:
            feed.stop()

    def note_own_documents(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Call inside a transaction that adds or removes documents, before it commits: the
        running feed then skips this write (the documents store notifies its own listeners)."""
        from cks_desktop.graph.sqlite_feed import SqliteChangeFeed, document_signatures

        if self._own.active and isinstance(self._feed, SqliteChangeFeed):  # the feed that follows documents
            self._own.note_documents(session_id, document_signatures(conn, session_id).get(session_id, ""))

    # -- connection access for other modules (e.g. the agent's transcript) ------------------

    @contextmanager
    def connection_lock(self) -> Iterator[sqlite3.Connection]:
        """The store's connection, under its lock, for reads. SQLite errors become DatabaseError."""
        with self._lock:
            if self._closed:
                raise DatabaseError(f"The database {self.path} is closed.")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._failure(exc) from None
            except UnicodeEncodeError:  # a lone surrogate in a name or query cannot be sent to SQLite
                raise StoreError("The request contains text that is not valid Unicode (a lone surrogate).") from None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT under the lock; ROLLBACK on any exception (re-raised;
        SQLite errors become DatabaseError)."""
        with self.connection_lock() as conn:
            self._check_writable()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _emit(self, event: StoreEvent) -> None:
        self._events.emit(event)

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, title: str) -> Session:
        title = _title(title)
        session = Session(id=new_id("s_"), title=title, created_at=now_iso())
        with self.transaction() as conn:
            conn.execute("INSERT INTO sessions (id, title, created_at, instructions) VALUES (?, ?, ?, ?)",
                         (session.id, session.title, session.created_at, session.instructions))
            self._own.note_session(session.id, session)
        self._emit(SessionEvent("created", session))
        return session

    def get_session(self, session_id: str) -> Session:
        with self.connection_lock() as conn:
            return self._session(conn, session_id)

    @staticmethod
    def _session(conn: sqlite3.Connection, session_id: str) -> Session:
        row = conn.execute(f"SELECT {rows.SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise NotFound(f"No session {session_id!r}.")
        return rows.session(row)

    def list_sessions(self) -> list[Session]:
        """Newest first."""
        with self.connection_lock() as conn:
            return [rows.session(r) for r in conn.execute(
                f"SELECT {rows.SESSION_COLS} FROM sessions ORDER BY created_at DESC, id DESC")]

    def rename_session(self, session_id: str, title: str) -> Session:
        title = _title(title)
        with self.transaction() as conn:
            self._session(conn, session_id)
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
            session = self._session(conn, session_id)
            self._own.note_session(session_id, session)
        self._emit(SessionEvent("renamed", session))
        return session

    def set_session_instructions(self, session_id: str, instructions: str) -> Session:
        if not isinstance(instructions, str):
            raise StoreError("Instructions must be text.")
        with self.transaction() as conn:
            self._session(conn, session_id)
            conn.execute("UPDATE sessions SET instructions = ? WHERE id = ?", (instructions, session_id))
            session = self._session(conn, session_id)
            self._own.note_session(session_id, session)
        self._emit(SessionEvent("updated", session))
        return session

    def delete_session(self, session_id: str) -> None:
        """Remove the session and everything in it (tables of other modules cascade)."""
        with self.transaction() as conn:
            session = self._session(conn, session_id)
            conn.execute("DELETE FROM objects_fts WHERE rowid IN (SELECT n FROM objects WHERE session_id = ?)",
                         (session_id,))
            conn.execute("DELETE FROM change_objects WHERE change_id IN "
                         "(SELECT id FROM changes WHERE session_id = ?)", (session_id,))
            for table in ("relations", "objects", "type_defs", "changes"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._own.note_session(session_id, None)
        self._emit(SessionEvent("deleted", session))

    # -- reads ------------------------------------------------------------------------------

    @contextmanager
    def _reading(self, session_id: str) -> Iterator[sqlite3.Connection]:
        with self.connection_lock() as conn:
            self._session(conn, session_id)
            yield conn

    def resolve(self, session_id: str, ref: str) -> Object:
        with self._reading(session_id) as conn:
            return queries.resolve(conn, session_id, ref)

    def get_object(self, session_id: str, object_id: str) -> Object:
        with self._reading(session_id) as conn:
            return queries.get_object(conn, session_id, object_id)

    def relations_of(self, session_id: str, object_id: str) -> tuple[list[Relation], list[Relation]]:
        """(incoming, outgoing)"""
        with self._reading(session_id) as conn:
            return queries.relations_of(conn, session_id, object_id)

    def get_relation(self, session_id: str, relation_id: str) -> Relation:
        with self._reading(session_id) as conn:
            return queries.get_relation(conn, session_id, relation_id)

    def list_objects(self, session_id: str, type: str | None = None, limit: int = 50,
                     cursor: str | None = None) -> tuple[list[Object], str | None]:
        """A page in id (creation) order, and the cursor of the next page (None at the end)."""
        with self._reading(session_id) as conn:
            return queries.list_objects(conn, session_id, type, limit, cursor)

    def all_objects(self, session_id: str) -> list[Object]:
        with self._reading(session_id) as conn:
            return [rows.obj(r) for r in conn.execute(
                f"SELECT {rows.OBJECT_COLS} FROM objects WHERE session_id = ? ORDER BY id", (session_id,))]

    def all_relations(self, session_id: str) -> list[Relation]:
        with self._reading(session_id) as conn:
            return [rows.relation(r) for r in conn.execute(
                f"SELECT {rows.RELATION_COLS} FROM relations WHERE session_id = ? ORDER BY id", (session_id,))]

    def object_heads(self, session_id: str) -> list[tuple[str, str, str]]:
        """``(id, type, name)`` of every object, id order: all a picture of the graph needs.

        Skips parsing properties and building ``Object``s, which is most of the cost of
        ``all_objects`` (the graph view opens 20k objects with this in a few tens of ms).
        """
        with self._reading(session_id) as conn:
            return conn.execute("SELECT id, type, name FROM objects WHERE session_id = ? ORDER BY id",
                                (session_id,)).fetchall()

    def relation_heads(self, session_id: str) -> list[tuple[str, str, str, str]]:
        """``(id, type, source_id, target_id)`` of every relation, id order (see ``object_heads``)."""
        with self._reading(session_id) as conn:
            return conn.execute("SELECT id, type, source_id, target_id FROM relations WHERE session_id = ? "
                                "ORDER BY id", (session_id,)).fetchall()

    def search_objects(self, session_id: str, query: str, type: str | None = None,
                       limit: int = 20) -> list[tuple[Object, float]]:
        """Ranked full-text matches over names and property values (lower score = better; the
        score is computed from this session's rows only, see ``graph/ranking.py``)."""
        with self._reading(session_id) as conn:
            return queries.search_objects(conn, session_id, query, type, limit)

    def list_relations(self, session_id: str, ref: str | None = None, type: str | None = None,
                       direction: str = "both", limit: int = 50,
                       cursor: str | None = None) -> tuple[list[Relation], str | None]:
        with self._reading(session_id) as conn:
            object_id = queries.resolve(conn, session_id, ref).id if ref else None
            return queries.list_relations(conn, session_id, object_id, type, direction, limit, cursor)

    def neighbors(self, session_id: str, ref: str, depth: int = 1,
                  limit: int = 200) -> tuple[list[Object], list[Relation]]:
        """The object itself first, then up to ``limit`` objects within ``depth`` hops (any
        direction), with the relations among them."""
        with self._reading(session_id) as conn:
            start = queries.resolve(conn, session_id, ref)
            return queries.neighbors(conn, session_id, start, depth, limit)

    def find_path(self, session_id: str, source: str, target: str,
                  max_depth: int = 6) -> tuple[list[Object], list[Relation]] | None:
        """Objects from source to target and the relations between them (either direction)."""
        with self._reading(session_id) as conn:
            a = queries.resolve(conn, session_id, source)
            b = queries.resolve(conn, session_id, target)
            return queries.find_path(conn, session_id, a, b, max_depth)

    def type_stats(self, session_id: str) -> dict[str, Any]:
        """{"object_types": [{name, count, description, properties_schema}], "relation_types": [...]}"""
        with self._reading(session_id) as conn:
            return queries.type_stats(conn, session_id)

    def type_defs(self, session_id: str) -> list[TypeDef]:
        with self._reading(session_id) as conn:
            return [rows.type_def(r) for r in conn.execute(
                f"SELECT {rows.TYPE_COLS} FROM type_defs WHERE session_id = ? ORDER BY kind, name", (session_id,))]

    def counts(self, session_id: str) -> dict[str, int]:
        with self._reading(session_id) as conn:
            return queries.counts(conn, session_id)

    def list_changes(self, session_id: str, limit: int = 20, with_ops: bool = True) -> list[Change]:
        """Newest first. ``with_ops=False`` skips loading (possibly large) op lists."""
        limit = queries.check_limit(limit)
        with self._reading(session_id) as conn:
            if not with_ops:  # the op columns are not even read (an import's are tens of MB)
                return [history.change_head(r) for r in conn.execute(
                    f"SELECT {history.HEAD_COLS} FROM changes WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                    (session_id, limit))]
            return [rows.change(r) for r in conn.execute(
                f"SELECT {rows.CHANGE_COLS} FROM changes WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                (session_id, limit))]

    def get_change(self, session_id: str, change_id: str) -> Change:
        with self._reading(session_id) as conn:
            return self._change(conn, session_id, change_id)

    @staticmethod
    def _change(conn: sqlite3.Connection, session_id: str, change_id: str) -> Change:
        row = conn.execute(f"SELECT {rows.CHANGE_COLS} FROM changes WHERE session_id = ? AND id = ?",
                           (session_id, change_id)).fetchone()
        if row is None:
            raise NotFound(f"No change {change_id!r} in this session.")
        return rows.change(row)

    def changes_touching(self, session_id: str, object_id: str, limit: int = 50) -> list[Change]:
        """Changes that added, changed or removed the object or one of its relations; newest first.

        Heads only (id, time, origin, summary, reverts; ``ops`` empty): the inspector runs this on
        every click, under the lock, and parsing a 100k-object import's ops took half a second.
        ``get_change`` reads one change whole. The ``change_objects`` index finds the rows.
        """
        limit = queries.check_limit(limit)
        with self._reading(session_id) as conn:
            return [history.change_head(r) for r in conn.execute(
                f"SELECT {rows.qualified(history.HEAD_COLS, 'c')} FROM change_objects co "
                "JOIN changes c ON c.id = co.change_id "
                "WHERE c.session_id = ? AND co.object_id = ? ORDER BY co.change_id DESC LIMIT ?",
                (session_id, object_id, limit))]

    def compact_history(self, session_id: str, keep_days: int | None = None,
                        keep_last: int | None = None) -> "history.CompactResult":
        """Drop the session's oldest changes (older than ``keep_days`` days, or all but the
        ``keep_last`` newest). They can no longer be reverted; the graph itself is unchanged."""
        with self.transaction() as conn:
            self._session(conn, session_id)
            return history.compact(conn, session_id, keep_days, keep_last)

    def history_compaction_preview(self, session_id: str, keep_days: int | None = None,
                                   keep_last: int | None = None) -> tuple[int, int]:
        """``(changes that would be dropped, changes kept)``, to ask before ``compact_history``."""
        with self._reading(session_id) as conn:
            return history.plan_compaction(conn, session_id, keep_days, keep_last)

    # -- writes -----------------------------------------------------------------------------

    def apply(self, session_id: str, ops: list[dict[str, Any]], origin: str,
              dry_run: bool = False) -> ApplyResult:
        """Validate every op, then write them all in one transaction (or nothing).

        ValidationFailed(errors=[{index, message}]) lists every failing op.
        """
        return self._apply(session_id, ops, origin, dry_run)

    def _apply(self, session_id: str, ops: list[dict[str, Any]], origin: str, dry_run: bool,
               reverts: str | None = None) -> ApplyResult:
        if not isinstance(ops, list):
            raise ValidationFailed([{"index": 0, "message": "operations must be a list"}])
        if not isinstance(origin, str) or not origin:
            raise StoreError("A change needs an origin (who made it).")
        # A big batch allocates hundreds of thousands of short-lived objects and no
        # reference cycles; pausing the cyclic GC meanwhile saves ~15% of its CPU time
        # (measured), and refcounting frees everything as usual.
        pause_gc = len(ops) >= 1000 and gc.isenabled()
        if pause_gc:
            gc.disable()
        try:
            return self._apply_locked(session_id, ops, origin, dry_run, reverts)
        finally:
            if pause_gc:
                gc.enable()

    def _apply_locked(self, session_id: str, ops: list[dict[str, Any]], origin: str, dry_run: bool,
                      reverts: str | None) -> ApplyResult:
        event: GraphChanged | None = None
        with self.connection_lock() as conn:
            self._session(conn, session_id)
            if not ops:
                return ApplyResult(None, {}, "no changes", dict.fromkeys(COUNT_KEYS, 0), [])
            if not dry_run:
                self._check_writable()
            conn.execute("BEGIN" if dry_run else "BEGIN IMMEDIATE")
            try:
                now = now_iso()
                ops = check_bases(conn, session_id, ops)  # "changed by someone else" (graph/edit_base.py)
                plan = Planner(Overlay(conn, session_id), now).run(ops)
                result = ApplyResult(None, dict(plan.created), summarize(plan.counts), dict(plan.counts),
                                     plan.resolved)
                if dry_run or plan.is_noop:
                    conn.execute("ROLLBACK")
                    return result
                change, event = write_plan(conn, session_id, plan, origin, now, reverts)
                self._own.note_change(change.id)  # before COMMIT: the feed may see it right after
                conn.execute("COMMIT")
                result.change = change
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, (StoreError, *self.DRIVER_ERRORS)) or not isinstance(exc, Exception):
                    raise
                raise StoreError(f"Writing the change failed and nothing was written: {exc}") from exc
        self._emit(event)
        return result

    def object_version(self, session_id: str, ref: str) -> str | None:
        """The object's version (the last change that touched it), for an edit's
        ``if_unchanged_since`` (graph/edit_base.py); None when no change of it is kept."""
        with self._reading(session_id) as conn:
            return object_version(conn, session_id, queries.resolve(conn, session_id, ref).id)

    def revert_impact(self, session_id: str, change_id: str) -> list[Change]:
        """The later changes (heads, newest first) that touched the objects ``change_id``
        touched: what reverting it would also undo. Empty when nothing was built upon it."""
        with self._reading(session_id) as conn:
            return later_changes(conn, session_id, self._change(conn, session_id, change_id))

    def revert(self, session_id: str, change_id: str, origin: str, *,
               unless_built_upon: bool = False) -> ApplyResult:
        """Apply the change's inverse as a NEW change (``reverts`` = change_id), or nothing.

        ``unless_built_upon``: refuse (StoreError naming the later changes) when later
        changes touched the same objects — ask first, then revert anyway without it."""
        with self._reading(session_id) as conn:
            change = self._change(conn, session_id, change_id)
            done = conn.execute("SELECT id FROM changes WHERE session_id = ? AND reverts = ? LIMIT 1",
                                (session_id, change_id)).fetchone()
            later = later_changes(conn, session_id, change) if unless_built_upon and done is None else []
        if done is not None:
            raise StoreError(f"Change {change_id} was already reverted by {done[0]}.")
        if later:
            raise StoreError(built_upon_sentence(change_id, later))
        if not change.inverse_ops:
            raise StoreError(f"Change {change_id} has nothing to revert.")
        inverse = change.inverse_ops
        del change
        try:
            if _streams(inverse):  # e.g. the revert of an import: chunk by chunk, still one change
                from cks_desktop.graph.compact_ops import expand_indexed

                return self.apply_stream(session_id, expand_indexed(inverse), origin, reverts=change_id)
            return self._apply(session_id, inverse, origin, False, reverts=change_id)
        except ValidationFailed as exc:
            note = f" (the graph changed after {change_id}, so it cannot be reverted cleanly)"
            raise ValidationFailed([{"index": e["index"], "message": e["message"] + note}
                                    for e in exc.errors]) from None

    def apply_stream(self, session_id: str, items: Iterable[tuple[int, dict[str, Any]]], origin: str, *,
                     reverts: str | None = None, chunk_size: int | None = None,
                     prelude: Callable[[sqlite3.Connection], bool] | None = None) -> ApplyResult:
        """Like ``apply``, for a big batch given as ``(op index, op)`` pairs (an iterator, e.g.
        an importer's): planned and written chunk by chunk in ONE transaction
        (``graph/stream.py``), so its memory does not grow with its size. All or nothing;
        ``ValidationFailed`` lists every failing op. ``ops`` and ``created`` of the result
        stay empty and the returned change holds no op lists (``get_change`` reads them).
        Not for batches that define types. ``prelude(conn)`` runs first inside the same
        transaction (an import's documents) and says whether it wrote anything: then the
        transaction commits even when the ops change nothing."""
        from cks_desktop.graph.stream import STREAM_CHUNK, stream_batch

        if not isinstance(origin, str) or not origin:
            raise StoreError("A change needs an origin (who made it).")
        pause_gc = gc.isenabled()
        if pause_gc:
            gc.disable()
        event: GraphChanged | None = None
        try:
            with self.connection_lock() as conn:
                self._session(conn, session_id)
                self._check_writable()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    wrote = prelude(conn) if prelude is not None else False
                    outcome = stream_batch(conn, session_id, items, origin, now_iso(), reverts,
                                           chunk_size or STREAM_CHUNK)
                    if outcome.change is None:
                        conn.execute("COMMIT" if wrote else "ROLLBACK")
                        return ApplyResult(None, {}, outcome.summary, outcome.counts, [])
                    self._own.note_change(outcome.change.id)  # before COMMIT: the feed may see it right after
                    conn.execute("COMMIT")
                    event = outcome.event
                    result = ApplyResult(outcome.change, {}, outcome.summary, outcome.counts, [])
                    del outcome
                except BaseException as exc:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    if isinstance(exc, (StoreError, *self.DRIVER_ERRORS)) or not isinstance(exc, Exception):
                        raise
                    raise StoreError(f"Writing the change failed and nothing was written: {exc}") from exc
        finally:
            if pause_gc:
                gc.enable()
        if event is not None:
            self._emit(event)
        return result

    # -- import/export ----------------------------------------------------------------------

    def export(self, session_id: str, format: str) -> str:
        """Formats: json, graphml, markdown, mermaid, memory-jsonl."""
        from cks_desktop.graph.formats import export_graph

        session = self.get_session(session_id)
        evidence = None
        if format == "json":  # cks-graph version 2 carries the sources (graph/evidence.py)
            from cks_desktop.graph.evidence import export_rows

            with self._reading(session_id) as conn:
                evidence = export_rows(conn, session_id)
        return export_graph(format, session, self.all_objects(session_id), self.all_relations(session_id),
                            evidence)

    def import_data(self, session_id: str, format: str, data: str, origin: str,
                    on_conflict: str | None = None, documents: "CarriedDocuments | None" = None) -> ApplyResult:
        """Formats: json, graphml, memory-jsonl. One change; bad input → StoreError (an
        ``ImportRefused`` naming every problem), nothing written. ``on_conflict``: skip,
        merge, rename or error (``formats/conflicts.py``); None keeps the old rule.
        ``documents``: what the file carries, written in the same transaction as the graph."""
        from cks_desktop.graph.formats import import_graph

        return import_graph(self, session_id, format, data, origin, on_conflict, documents)

    def preview_import(self, session_id: str, format: str, data: str) -> Any:
        """An ``ImportPreview``: counts, types, a sample and every conflict; writes nothing."""
        from cks_desktop.graph.formats import preview_import

        return preview_import(self, session_id, format, data)


def _streams(ops: list[Any]) -> bool:
    """A revert streams when it is big and defines no types (``graph/stream.py``)."""
    from cks_desktop.graph.compact_ops import expanded_len
    from cks_desktop.graph.stream import STREAM_OVER

    if any(type(op) is dict and op.get("op") in ("define_type", "undefine_type") for op in ops):
        return False
    return expanded_len(ops) > STREAM_OVER


def _connect(path: Path, busy_timeout: float, *, exclusive: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        if exclusive:
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")  # before the first read: WAL index in memory
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _title(title: Any) -> str:
    if not isinstance(title, str) or not title.strip():
        raise StoreError("A session title must be a non-empty text.")
    return title.strip()
