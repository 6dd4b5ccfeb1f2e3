"""The change feed on PostgreSQL: LISTEN/NOTIFY, resumed from the changes table.

Every insert into ``changes`` and every write to ``sessions`` fires a trigger
that NOTIFYs (``graph/pg/schema.py``); the notification is delivered when that
transaction COMMITs, to every connection that LISTENs — any process, any
machine. The payload is empty on purpose: a member must not learn even the id
of another member's private session from it. The feed's worker wakes on a
notification and reads what is new:

- changes with ``seq`` greater than the last one it emitted (``seq`` is an
  identity column assigned while the writer holds the database's write lock,
  so it grows in commit order: nothing committed later can have a smaller one);
- the sessions it may see, diffed against its last snapshot;
- a signature of each visible session's document ids (count + hash, as the SQLite
  feed's ``document_signatures``), diffed against the last one →
  ``SessionEvent("documents")``. ``documents add|remove`` record no change, so the
  documents store's write sends ``NOTIFY cks_documents`` (empty payload) in its
  transaction (``PgGraphStore.note_own_documents``): delivered at commit, it wakes
  this scan.

Both are read in ONE repeatable-read snapshot, so a session and its changes
are seen together, under the member's row-level security. Own writes (noted by
the store before commit in ``OwnWrites``) are skipped: the store emitted them.

When the connection drops (server restart, network), the worker reconnects with
a bounded backoff, LISTENs again and reads from the last ``seq`` it emitted: a
notification missed while it was away costs nothing, the rows are still there.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from typing import Any, cast

import psycopg

from cks_desktop.graph import rows
from cks_desktop.graph.events import StoreEvent
from cks_desktop.graph.feed import Emit, OwnWrites, document_events, session_events
from cks_desktop.graph.model import Session
from cks_desktop.graph.pg.conn import PgConnection
from cks_desktop.graph.sqlite_feed import change_event

log = logging.getLogger(__name__)

WAKE_S = 0.25  # how often the idle worker looks at its stop flag (a wait, not a poll of the database)
BACKOFF_S = (0.1, 0.25, 0.5, 1.0, 2.0)  # reconnect delays; the last one repeats
CHANNELS = ("cks_changes", "cks_sessions", "cks_documents")
DOCUMENTS_CHANNEL = "cks_documents"  # the documents store NOTIFYs it (no change row records a document)
APPLICATION_NAME = "cks-desktop-feed"  # how an admin tells the feed's connections apart


class PgChangeFeed:
    """``ChangeFeed`` on a PostgreSQL database (see the module docstring)."""

    def __init__(self, conninfo: str, place: str, own: OwnWrites, emit: Emit) -> None:
        self.conninfo = conninfo
        self.place = place
        self.own = own
        self.emit = emit
        self._conn: psycopg.Connection[Any] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_seq = 0
        self._sessions: dict[str, Session] = {}
        self._documents: dict[str, str] = {}  # session id -> signature of its document ids
        self.scans = 0
        self.reconnects = 0
        self.connected = threading.Event()  # set while the worker has a live connection

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Connect, LISTEN and take the baseline before returning (nothing committed after
        this returns is missed), then wait for notifications on a daemon thread."""
        if self._thread is not None:
            return
        self.own.active = True  # before the baseline: our writes from now on are noted
        try:
            conn = self._connect()
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                row = conn.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()
                self._last_seq = int(row[0]) if row else 0
                self._sessions = self._read_sessions(conn)
                self._documents = document_signatures(conn)
        except BaseException:
            self.own.active = False
            raise
        self._conn = conn
        self.connected.set()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="cks-pg-change-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop and wait for the worker (at most one ``WAKE_S``); safe from a listener on it."""
        thread, self._thread = self._thread, None
        self._stop.set()
        self.own.active = False
        self.own.clear()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    # -- the worker --------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self.conninfo, autocommit=True, application_name=APPLICATION_NAME)
        try:
            for channel in CHANNELS:
                conn.execute(f"LISTEN {channel}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self) -> None:
        attempt = 0
        try:
            while not self._stop.is_set():
                conn = self._conn
                try:
                    if conn is None:
                        conn = self._conn = self._connect()
                        self.reconnects += 1
                        self.connected.set()
                        log.info("the change feed of %s is connected again", self.place)
                        attempt = 0
                        self.scan(conn)  # resume: whatever was committed while away
                    woke = {n.channel for n in conn.notifies(timeout=WAKE_S, stop_after=1)}
                    if woke:
                        self.scan(conn, woke)
                except psycopg.Error as exc:
                    self.connected.clear()
                    if conn is None or conn.closed or conn.broken:  # lost, or reconnecting failed
                        if attempt == 0:
                            log.warning("the change feed of %s lost its connection: %s", self.place, exc)
                        self._close()
                        delay = BACKOFF_S[min(attempt, len(BACKOFF_S) - 1)]
                        attempt += 1
                        self._stop.wait(delay)
                    else:
                        log.warning("the change feed of %s could not read: %s", self.place, exc)
                        self._stop.wait(WAKE_S)
                except Exception:
                    log.exception("the change feed of %s failed; it keeps listening", self.place)
                    self._stop.wait(WAKE_S)
        finally:
            self._close()

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already gone
                pass

    def scan(self, conn: psycopg.Connection[Any], woke: set[str] | None = None) -> None:
        """Emit what others committed after the last change seen (and session edits; and
        documents when ``woke`` — the channels notified — names them, or is None: a resume
        after a reconnect reads everything). Reading the document signatures only on their
        own notification keeps them off the path of every graph change (7.5 ms at 11,000
        documents)."""
        self.scans += 1
        channels = set(woke) if woke is not None else set(CHANNELS)
        while True:  # drained: this one scan covers every notification already queued
            more = {n.channel for n in conn.notifies(timeout=0, stop_after=64)}
            if not more:
                break
            channels |= more
        store_sql = cast(Any, PgConnection(conn, {}))
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            sessions = self._read_sessions(conn)
            documents = document_signatures(conn) if DOCUMENTS_CHANNEL in channels else self._documents
            heads = conn.execute("SELECT seq, id, session_id, origin, reverts FROM changes WHERE seq > %s "
                                 "ORDER BY seq", (self._last_seq,)).fetchall()
            graph: list[StoreEvent] = []
            for _seq, change_id, session_id, origin, reverts in heads:
                if self.own.is_own_change(change_id):
                    continue
                event = change_event(store_sql, change_id, session_id, origin, reverts)
                if event is not None:
                    graph.append(event)
        first, last = session_events(self._sessions, sessions, self.own)
        for _seq, change_id, *_ in heads:
            self.own.take_change(change_id)
        if heads:
            self._last_seq = int(heads[-1][0])
        self._sessions = sessions
        docs = document_events(self._documents, documents, sessions, self.own)
        self._documents = documents
        for out in (*first, *graph, *docs, *last):
            if self._stop.is_set():
                return
            self.emit(out)

    @staticmethod
    def _read_sessions(conn: psycopg.Connection[Any]) -> dict[str, Session]:
        return {r[0]: rows.session(r) for r in conn.execute(f"SELECT {rows.SESSION_COLS} FROM sessions")}


def document_signatures(conn: psycopg.Connection[Any], session_id: str | None = None) -> dict[str, str]:
    """session id -> "count:hash of its document ids", for the sessions this member may see
    (row-level security): equal exactly when the session has the same documents. The same
    form as ``sqlite_feed.document_signatures``; ids in byte order (the columns are
    ``COLLATE "C"``), so a signature noted by our own write matches the feed's."""
    where = " WHERE session_id = %s" if session_id is not None else ""
    params: tuple[str, ...] = (session_id,) if session_id is not None else ()
    return {str(sid): f"{n}:{hashlib.blake2b(str(ids).encode(), digest_size=16).hexdigest()}"
            for sid, n, ids in conn.execute("SELECT session_id, count(*), string_agg(id, ',' ORDER BY id) "
                                            f"FROM documents{where} GROUP BY session_id", params)}


def notify_documents(conn: psycopg.Connection[Any]) -> None:
    """Inside a transaction that adds or removes documents: wake every feed at commit. The
    payload is empty — a session id there would leak a private session to other members."""
    conn.execute("SELECT pg_notify(%s, '')", (DOCUMENTS_CHANNEL,))
