"""The knowledge-graph store on PostgreSQL: the SAME ``GraphStore``, on another connection.

Why a subclass and not a second store: every rule of the store — the batch
planner (``graph/batch.py``), the net writer (``graph/writer.py``), streamed
imports, reverts, history compaction, the graph walks, the change events — is
backend-neutral once its SQL can run here, and ``graph/pg/conn.py`` +
``dialect.py`` make the store's SQLite SQL run on PostgreSQL. What this class
changes is only what really differs:

- opening: a psycopg 3 connection pool (``psycopg_pool``), the schema migrated
  from the shared description (``graph/pg/schema.py``), errors as one sentence
  that names the server (never the password);
- the store keeps ONE connection from the pool under its lock (as the SQLite
  store keeps one connection); when the server goes away the call fails with
  "cannot be reached" and the next call takes a fresh connection from the pool;
- search: ``tsvector`` + GIN (``graph/pg/search.py``);
- the change feed: LISTEN/NOTIFY (``graph/pg/feed.py``);
- members: each change records its database role (``changes.member``), sessions
  are shared or private (``set_session_shared``), enforced by row-level security.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

import psycopg
from psycopg import conninfo as pg_conninfo
from psycopg.adapt import Loader
from psycopg_pool import ConnectionPool, PoolTimeout

from cks_desktop.graph.errors import DatabaseError, NotFound, StoreError, Unreachable
from cks_desktop.graph.feed import ChangeFeed
from cks_desktop.graph.model import Object
from cks_desktop.graph.pg import schema as pg_schema
from cks_desktop.graph.pg.conn import PgConnection
from cks_desktop.graph.store import GraphStore

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5
GETCONN_TIMEOUT_S = 1.0  # how long a call waits for the pool to (re)connect
DOWN_RETRY_S = 2.0  # after a failed wait, calls fail at once for this long
POOL_MAX = 4
APPLICATION_NAME = "cks-desktop"


class _NumericLoader(Loader):
    """``numeric`` (what ``sum()`` of integers returns) as int when whole, like SQLite."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode("ascii"))
        return int(value) if value == value.to_integral_value() else float(value)


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Every pooled connection: numeric loader, and no JIT. The store's statements are short;
    a row-level policy's subquery inflates their cost estimates past ``jit_above_cost``, and
    compiling then took longer than running (a member's history compaction: 7 ms → 170 ms)."""
    conn.adapters.register_loader("numeric", _NumericLoader)
    conn.execute("SET jit = off")


def where(url: str) -> str:
    """The connection as a person may see it: ``postgresql://user@host:port/db``, no password."""
    try:
        params = pg_conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    user = str(params.get("user") or "")
    host = str(params.get("host") or "localhost")
    port = str(params.get("port") or "")
    db = str(params.get("dbname") or user or "")
    return f"postgresql://{user + '@' if user else ''}{host}{':' + str(port) if port else ''}/{db}"


def failure_sentence(exc: BaseException, place: str) -> str:
    """One sentence for a PostgreSQL failure: what went wrong with which server, no password."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return (f"The database server {place} refused the user name or password; check them in "
                "Settings → Storage (the password is kept in the system keychain).")
    if "does not exist" in low and "database" in low:
        return f"The database {place} does not exist on that server; create it first (cks-desktop team init)."
    if isinstance(exc, PoolTimeout) or any(w in low for w in (
            "connection refused", "could not connect", "timeout", "timed out", "server closed",
            "terminating connection", "connection is closed", "consuming input failed", "no route",
            "name or service not known", "could not translate host", "the connection is lost")):
        return (f"The database server {place} cannot be reached ({text.rstrip('.')}); "
                "nothing was written. Check the network or the server, then try again.")
    if "permission denied" in low or "must be owner" in low:
        return (f"The database {place} refused this member the operation ({text.rstrip('.')}); "
                "ask the team's admin (cks-desktop team init grants members their rights).")
    return f"The database {place} failed: {text.rstrip('.')}."


UNREACHABLE_MARK = " cannot be reached ("


def failure(exc: BaseException, place: str) -> DatabaseError:
    """``failure_sentence`` as the error to raise: ``Unreachable`` when the server cannot be
    reached (the window then keeps the typed text and stops the turn), else ``DatabaseError``."""
    sentence = failure_sentence(exc, place)
    return Unreachable(sentence) if UNREACHABLE_MARK in sentence else DatabaseError(sentence)


class PgGraphStore(GraphStore):
    """``GraphStore`` on PostgreSQL (see the module docstring)."""

    DRIVER_ERRORS: tuple[type[Exception], ...] = (psycopg.Error,)
    backend = "postgresql"

    def __init__(self, pool: ConnectionPool[Any], conninfo: str, place: str, keys: dict[str, str]) -> None:
        self._pool = pool
        self._conninfo = conninfo
        self._keys = keys
        self.where = place
        self._totals: dict[str, tuple[int, int]] = {}  # session -> (newest change seq, object count)
        self._down_until = 0.0
        self._down_sentence = ""
        self._returned = False  # the current (broken) connection was given back to the pool
        self._pg = PgConnection(self._acquire(), keys)
        super().__init__(cast(sqlite3.Connection, self._pg), cast(Path, place))

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def connect(cls, url: str, *, password: str | None = None, migrate: bool = True,
                connect_timeout: int = CONNECT_TIMEOUT_S) -> "PgGraphStore":
        """Connect, check and migrate. DatabaseError (one sentence) when the server cannot
        be reached, refuses the login, or holds a newer schema. ``password`` (from the
        keychain) is used only when given; libpq also reads PGPASSFILE/~/.pgpass."""
        place = where(url)
        extra: dict[str, Any] = {"connect_timeout": connect_timeout, "application_name": APPLICATION_NAME}
        if password:
            extra["password"] = password
        try:
            conninfo = pg_conninfo.make_conninfo(url, **extra)
        except psycopg.ProgrammingError as exc:
            raise DatabaseError(f"The database address {place} is not valid ({exc}).") from None
        try:  # a direct first connection: its error is the one worth showing (the pool's is a timeout)
            with psycopg.connect(conninfo, autocommit=True) as first:
                if first.info.server_version < 150000:
                    raise DatabaseError(f"The database server {place} runs PostgreSQL "
                                        f"{first.info.server_version // 10000}; CKS Desktop needs 15 or newer.")
                if migrate:
                    pg_schema.migrate(first, place)
                else:
                    known, current = pg_schema.schema_version(), pg_schema.current_version(first)
                    if current != known:
                        raise DatabaseError(f"The database {place} has schema {current}, this version "
                                            f"needs {known}; run cks-desktop team init as the admin.")
        except psycopg.Error as exc:
            raise failure(exc, place) from None
        pool: ConnectionPool[Any] = ConnectionPool(
            conninfo, min_size=1, max_size=POOL_MAX, open=False, name="cks-store",
            kwargs={"autocommit": True}, configure=_configure, timeout=connect_timeout)
        try:
            pool.open(wait=True, timeout=connect_timeout)
            return cls(pool, conninfo, place, pg_schema.serial_keys())
        except (PoolTimeout, psycopg.Error) as exc:
            pool.close()
            raise failure(exc, place) from None

    def _acquire(self) -> psycopg.Connection[Any]:
        """A connection from the pool. While the server is down every call would wait for the
        pool; after one such wait, calls within ``DOWN_RETRY_S`` fail at once with the same
        sentence (the window's thread must not stall on each of them)."""
        if time.monotonic() < self._down_until:
            raise Unreachable(self._down_sentence)
        try:
            conn: psycopg.Connection[Any] = self._pool.getconn(timeout=GETCONN_TIMEOUT_S)
            return conn
        except (PoolTimeout, psycopg.Error) as exc:
            self._down_sentence = failure_sentence(exc, self.where)
            self._down_until = time.monotonic() + DOWN_RETRY_S
            raise failure(exc, self.where) from None

    def _live(self) -> PgConnection:
        """The store's connection, a fresh one from the pool when the last one broke."""
        if self._pg.broken:
            if not self._returned:
                self._returned = True
                try:
                    self._pool.putconn(self._pg.raw)  # the pool discards a broken connection
                except Exception:  # noqa: BLE001 - it is gone either way
                    pass
            self._pg = PgConnection(self._acquire(), self._keys)
            self._returned = False
            self._conn = cast(sqlite3.Connection, self._pg)
            log.info("reconnected to %s", self.where)
        return self._pg

    def close(self) -> None:
        self.stop_feed()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._pg.in_transaction and not self._pg.broken:
                    self._pg.raw.execute("ROLLBACK")
                if not self._returned:
                    self._pool.putconn(self._pg.raw)
            except Exception:  # noqa: BLE001 - closing never fails
                pass
            self._pool.close()

    # -- connection access ------------------------------------------------------------------

    @contextmanager
    def connection_lock(self) -> Iterator[sqlite3.Connection]:
        """The store's connection (``PgConnection``: SQLite-dialect SQL is translated),
        under its lock. psycopg errors become one DatabaseError sentence."""
        with self._lock:
            if self._closed:
                raise DatabaseError(f"The database {self.where} is closed.")
            conn = self._live()
            try:
                yield cast(sqlite3.Connection, conn)
            except psycopg.Error as exc:
                if conn.in_transaction and not conn.broken:
                    try:
                        conn.raw.execute("ROLLBACK")
                    except psycopg.Error:
                        pass
                raise failure(exc, self.where) from None
            except UnicodeEncodeError:
                raise StoreError("The request contains text that is not valid Unicode (a lone surrogate).") from None

    @contextmanager
    def raw_connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The psycopg connection itself (PostgreSQL SQL, ``%s`` parameters), under the lock."""
        with self.connection_lock() as conn:
            yield cast(PgConnection, conn).raw

    def _check_writable(self) -> None:
        return None

    def mark_damaged(self, problem: str) -> None:
        log.info("ignored for PostgreSQL: %s", problem)

    # -- the change feed --------------------------------------------------------------------

    def start_feed(self, interval: float | None = None) -> ChangeFeed:
        """LISTEN/NOTIFY on a connection of its own (``graph/pg/feed.py``)."""
        from cks_desktop.graph.pg.feed import PgChangeFeed

        with self._lock:
            if self._closed:
                raise DatabaseError(f"The database {self.where} is closed.")
            if self._feed is not None:
                return self._feed
            feed = PgChangeFeed(self._conninfo, self.where, self._own, self._events.emit)
            try:
                feed.start()
            except psycopg.Error as exc:
                raise failure(exc, self.where) from None
            self._feed = feed
            return feed

    def note_own_documents(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Inside a documents add/remove, before commit: NOTIFY every feed (other members'
        included; documents record no change row to wake them) and, when our own feed runs,
        note the signature this write leaves so the feed does not emit it again."""
        from cks_desktop.graph.pg.feed import PgChangeFeed, document_signatures, notify_documents

        raw = cast(PgConnection, conn).raw
        notify_documents(raw)
        if self._own.active and isinstance(self._feed, PgChangeFeed):
            self._own.note_documents(session_id, document_signatures(raw, session_id).get(session_id, ""))

    # -- queries that differ ----------------------------------------------------------------

    def search_objects(self, session_id: str, query: str, type: str | None = None,
                       limit: int = 20) -> list[tuple[Object, float]]:
        from cks_desktop.graph.pg.search import search_objects

        with self._reading(session_id) as conn:
            return search_objects(cast(PgConnection, conn), session_id, query, type, limit, self._totals)

    # -- members and private sessions -------------------------------------------------------

    def member(self) -> str:
        """The database role this store writes as (what ``changes.member`` records)."""
        with self.raw_connection() as raw:
            row = raw.execute("SELECT current_user").fetchone()
            return str(row[0]) if row else ""

    def set_session_shared(self, session_id: str, shared: bool) -> None:
        """Share a session with every member, or make it private to its owner. Only the
        owner may make a session private (row-level security refuses anyone else)."""
        with self.transaction() as conn:
            self._session(conn, session_id)
            raw = cast(PgConnection, conn).raw
            owner = raw.execute("SELECT owner FROM sessions WHERE id = %s", (session_id,)).fetchone()
            me = raw.execute("SELECT current_user").fetchone()
            if not shared and owner and me and owner[0] != me[0]:
                raise StoreError(f"Only {owner[0]}, who created this session, can make it private.")
            raw.execute("UPDATE sessions SET shared = %s WHERE id = %s", (shared, session_id))

    def session_access(self, session_id: str) -> tuple[str, bool]:
        """``(owner, shared)`` of a session."""
        with self._reading(session_id) as conn:
            row = cast(PgConnection, conn).raw.execute(
                "SELECT owner, shared FROM sessions WHERE id = %s", (session_id,)).fetchone()
            if row is None:
                raise NotFound(f"No session {session_id!r}.")
            return str(row[0]), bool(row[1])

    def change_members(self, session_id: str, change_ids: list[str]) -> dict[str, str]:
        """``{change id: member (database role)}`` for these changes."""
        with self._reading(session_id) as conn:
            return {r[0]: r[1] for r in cast(PgConnection, conn).raw.execute(
                "SELECT id, member FROM changes WHERE session_id = %s AND id = ANY(%s)",
                (session_id, list(change_ids)))}
