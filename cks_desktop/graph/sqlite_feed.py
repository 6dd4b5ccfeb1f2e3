"""The change feed of the SQLite store: ``PRAGMA data_version`` on a worker thread.

``data_version`` is per connection and changes only when ANOTHER connection
commits to the file. The feed keeps its own read-only connection and checks it
every ``interval`` seconds (one pragma, a few microseconds: negligible when
idle, see ``bench/change_feed.py``). When it moved, the feed

1. diffs the ``sessions`` table against its last snapshot (creating, renaming
   and deleting a session records no ``changes`` row) → ``SessionEvent``s;
2. reads the ``changes`` rows it has not seen → one ``GraphChanged`` each, built
   from the change's resolved ops (``feed.net_effect``) and the current rows of
   the objects and relations it added or updated;
3. diffs the document ids per session (``documents add|remove`` record no change
   either) → ``SessionEvent("documents", …)``: a signature per session (count and a hash
   of the ids, concatenated by SQLite over the covering UNIQUE index), only when
   ``data_version`` moved — 3–7 ms for 11,000 documents, 0.2 ms for 1,000;

and skips whatever ``OwnWrites`` says this process wrote itself (the store
already emitted those). Events are emitted on the feed's thread.

Where inotify works (Linux; ``file_watch.py``), a write to the database or its ``-wal`` wakes the
poll at once, and a few quick re-reads follow (the commit's wal-index update lands through shared
memory, after the write that woke it), so another process's commit arrives in milliseconds; the
interval poll stays as the fallback and its idle cost is unchanged.

"Not seen": change ids sort by creation time and writers are serialised by
SQLite's write lock, so a new commit's id is never older than the newest one
seen, except for ids of two processes made within the same millisecond (or a
small clock step). The feed therefore reads ids from ``LOOKBACK_MS`` before the
newest seen one and skips those it already knows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.graph import rows
from cks_desktop.graph.events import GraphChanged, StoreEvent
from cks_desktop.graph.feed import Emit, OwnWrites, document_events, net_effect, session_events
from cks_desktop.graph.history import decode_ops
from cks_desktop.graph.model import Session
from cks_desktop.ids import id_floor, id_ms

if TYPE_CHECKING:
    from cks_desktop.graph.file_watch import FileWatch

log = logging.getLogger(__name__)

FOLLOW_UP_S = (0.002, 0.01, 0.03)  # re-reads after a wake that found nothing committed yet
DEFAULT_INTERVAL_S = 0.15  # latency is at most this plus one read; idle cost ~7 pragma calls a second
LOOKBACK_MS = 5000
_CHUNK = 500  # ids per IN (...) query
_BUSY_TIMEOUT_S = 1.0


class SqliteChangeFeed:
    """``ChangeFeed`` for one SQLite file (see the module docstring)."""

    def __init__(self, path: Path, own: OwnWrites, emit: Emit, interval: float = DEFAULT_INTERVAL_S) -> None:
        self.path = Path(path)
        self.own = own
        self.emit = emit
        self.interval = interval
        self._conn: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by the file watch (a write to the database) and by stop
        self._watch: "FileWatch | None" = None
        self._version = -1
        self._sessions: dict[str, Session] = {}
        self._documents: dict[str, str] = {}  # session id -> signature of its document ids
        self._seen: set[str] = set()
        self._newest_ms = 0
        self.polls = 0  # data_version reads (for the benchmark)
        self.scans = 0  # times it moved and the tables were read
        self._failing = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Open the feed's connection and take the baseline here (a few ms), so nothing
        committed after this returns is missed; then poll on a daemon thread."""
        if self._thread is not None:
            return
        conn = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        self.own.active = True  # before the baseline: our writes from now on are noted, none slips through
        try:
            conn.execute("PRAGMA query_only = ON")
            self._version = self._data_version(conn)
            self._sessions = self._read_sessions(conn)
            self._documents = document_signatures(conn)
            newest = conn.execute("SELECT max(id) FROM changes").fetchone()[0]
            self._newest_ms = (id_ms(newest, "c_") or 0) if newest else 0
            self._seen = {r[0] for r in conn.execute("SELECT id FROM changes WHERE id >= ?", (self._floor(),))}
        except BaseException:
            self.own.active = False
            conn.close()
            raise
        self._conn = conn
        self._stop.clear()
        self._wake.clear()
        from cks_desktop.graph.file_watch import watch_files

        name = self.path.name
        self._watch = watch_files(self.path.parent, (name, f"{name}-wal", f"{name}-journal"), self._wake.set)
        self._thread = threading.Thread(target=self._run, name="cks-change-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop polling and wait for the worker (which closes the connection). Safe to call
        from a listener running on the worker itself: then it just ends after that event."""
        thread, self._thread = self._thread, None
        self._stop.set()
        self._wake.set()
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()
        self.own.active = False
        self.own.clear()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    # -- the worker --------------------------------------------------------------------------

    def _run(self) -> None:
        conn = self._conn
        assert conn is not None
        try:
            self._loop(conn)
        finally:
            self._conn = None
            conn.close()

    def _loop(self, conn: sqlite3.Connection) -> None:
        follow: list[float] = []  # quick re-reads still due after a wake
        while not self._stop.is_set():
            woken = self._wake.wait(follow.pop(0) if follow else self.interval)
            if self._stop.is_set():
                return
            if woken:
                self._wake.clear()
            try:
                scans = self.scans
                self.poll(conn)
                if woken:
                    follow = [] if self.scans != scans else list(FOLLOW_UP_S)
                elif self.scans != scans:
                    follow = []
                if self._failing:
                    log.info("the change feed of %s reads again", self.path)
                    self._failing = False
            except sqlite3.Error as exc:  # a busy/odd moment; the next tick tries again
                if not self._failing:
                    log.warning("the change feed of %s could not read: %s", self.path, exc)
                    self._failing = True
            except Exception:
                log.exception("the change feed of %s failed; it keeps polling", self.path)

    def poll(self, conn: sqlite3.Connection) -> None:
        """One tick: emit what others committed since the last tick, if anything."""
        self.polls += 1
        version = self._data_version(conn)
        if version == self._version:
            return
        self.scans += 1
        # Everything that can fail (reads) first, in ONE read transaction (a session and
        # the changes in it are seen together); state and our own notes change only after.
        conn.execute("BEGIN")
        try:
            sessions = self._read_sessions(conn)
            documents = document_signatures(conn)
            heads = conn.execute("SELECT id, session_id, origin, reverts FROM changes WHERE id >= ? ORDER BY id",
                                 (self._floor(),)).fetchall()
            fresh = [h for h in heads if h[0] not in self._seen]
            graph: list[StoreEvent] = []
            for change_id, session_id, origin, reverts in fresh:
                if self.own.is_own_change(change_id):
                    continue
                event = self._graph_event(conn, change_id, session_id, origin, reverts)
                if event is not None:
                    graph.append(event)
        finally:
            conn.execute("COMMIT")
        first, last = session_events(self._sessions, sessions, self.own)
        docs = document_events(self._documents, documents, sessions, self.own)
        self._documents = documents
        for change_id, *_ in fresh:
            self._seen.add(change_id)
            self.own.take_change(change_id)
        self._version, self._sessions = version, sessions
        if heads:
            self._newest_ms = max(self._newest_ms, id_ms(heads[-1][0], "c_") or 0)
            floor = self._floor()
            self._seen = {i for i in self._seen if i >= floor}
        for out in (*first, *graph, *docs, *last):
            if self._stop.is_set():
                return
            self.emit(out)

    # -- reading -----------------------------------------------------------------------------

    def _floor(self) -> str:
        return id_floor(self._newest_ms - LOOKBACK_MS, "c_") if self._newest_ms else ""

    @staticmethod
    def _data_version(conn: sqlite3.Connection) -> int:
        return int(conn.execute("PRAGMA data_version").fetchone()[0])

    @staticmethod
    def _read_sessions(conn: sqlite3.Connection) -> dict[str, Session]:
        return {r[0]: rows.session(r) for r in conn.execute(f"SELECT {rows.SESSION_COLS} FROM sessions")}

    def _graph_event(self, conn: sqlite3.Connection, change_id: str, session_id: str, origin: str,
                     reverts: str | None) -> GraphChanged | None:
        return change_event(conn, change_id, session_id, origin, reverts)


def change_event(conn: sqlite3.Connection, change_id: str, session_id: str, origin: str,
                 reverts: str | None) -> GraphChanged | None:
    """The ``GraphChanged`` of a recorded change, as a feed emits it (``external=True``):
    its net effect from the resolved ops, objects and relations as they are NOW. Plain
    store SQL, so the PostgreSQL feed (``graph/pg/feed.py``) uses it too."""
    row = conn.execute("SELECT ops FROM changes WHERE id = ?", (change_id,)).fetchone()
    if row is None:  # compacted or its session deleted meanwhile
        return None
    effect = net_effect(decode_ops(row[0]))
    objects = _by_id(conn, "objects", rows.OBJECT_COLS, session_id,
                     effect.added_objects + effect.updated_objects, rows.obj)
    relations = _by_id(conn, "relations", rows.RELATION_COLS, session_id,
                       effect.added_relations + effect.updated_relations, rows.relation)
    return GraphChanged(
        session_id=session_id, change_id=change_id, origin=origin,
        added_objects=_pick(objects, effect.added_objects),
        updated_objects=_pick(objects, effect.updated_objects),
        removed_objects=tuple(effect.removed_objects),
        added_relations=_pick(relations, effect.added_relations),
        updated_relations=_pick(relations, effect.updated_relations),
        removed_relations=tuple(effect.removed_relations),
        types_changed=effect.types_changed, reverts=reverts, external=True,
        evidence_changed=effect.evidence_changed)


def document_signatures(conn: sqlite3.Connection, session_id: str | None = None) -> dict[str, str]:
    """session id -> "count:hash of its document ids" (all sessions, or one): equal exactly
    when the session has the same documents. The ids come in the UNIQUE (session_id, id)
    index's order; were a plan ever to change that order, the cost is one needless reload."""
    where = " WHERE session_id = ?" if session_id is not None else ""
    params: tuple[str, ...] = (session_id,) if session_id is not None else ()
    return {str(sid): f"{n}:{hashlib.blake2b(str(ids).encode(), digest_size=16).hexdigest()}"
            for sid, n, ids in conn.execute("SELECT session_id, count(*), group_concat(id, ',') FROM documents"
                                            f"{where} GROUP BY session_id", params)}


def _by_id(conn: sqlite3.Connection, table: str, cols: str, session_id: str, ids: list[str],
           build: Callable[[Sequence[Any]], Any]) -> dict[str, Any]:
    """The CURRENT rows of ``ids`` (a later change may have removed some: they are left out,
    and that change's own event reports the removal)."""
    found: dict[str, Any] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(f"SELECT {cols} FROM {table} WHERE session_id = ? AND id IN ({marks})",
                              (session_id, *chunk)):
            try:
                found[r[0]] = build(r)
            except (json.JSONDecodeError, TypeError):  # a damaged row: leave it to a reopen
                log.warning("the change feed skipped an unreadable row %s", r[0])
    return found


def _pick(found: dict[str, Any], ids: Sequence[str]) -> tuple[Any, ...]:
    return tuple(found[i] for i in ids if i in found)

