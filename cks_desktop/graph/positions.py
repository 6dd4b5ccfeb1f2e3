"""The graph view's store: saved node positions per session, in the store's own SQLite file.

It is the one owner of the ``view_positions`` table (no SQL lives in ``ui/``): the
graph view (``ui/graph``) reads and writes positions only through this class.

The table ``view_positions`` comes from the "graph view positions" step of
``graph/schema.py``'s migration list; it cascades with its session, so
deleting a session forgets its picture too. Reads and writes go through the
store's ``connection_lock``/``transaction`` so they never interleave with a
graph write on the one connection. Qt-free; the widget calls these from a
worker thread (``asyncio.to_thread``) because 20k rows take tens of ms.

Positions are a convenience, never worth an error dialog: a failure is
logged and the view falls back to computing a layout.

Regular saves upsert (cheap, and an object removed then restored by an undo
keeps its place); ``replace=True`` (after a full re-layout, when old places
mean nothing) also drops rows of objects that are gone.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from cks_desktop.graph.sqlite_util import bare_connection_access

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

log = logging.getLogger(__name__)

Row = tuple[str, float, float, bool]
ConnFactory = Callable[[], AbstractContextManager[sqlite3.Connection]]


class PositionStore:
    """Load and save one session's node positions; failures are logged, never raised."""

    def __init__(self, read: ConnFactory, write: ConnFactory) -> None:
        self._read = read
        self._write = write

    @classmethod
    def for_store(cls, store: "GraphStore") -> "PositionStore":
        return cls(store.connection_lock, store.transaction)

    @classmethod
    def for_connection(cls, conn: sqlite3.Connection) -> "PositionStore":
        """On a bare connection opened with ``isolation_level=None`` (tests, scripts)."""
        return cls(*bare_connection_access(conn))

    def load(self, session_id: str) -> dict[str, tuple[float, float, bool]]:
        try:
            with self._read() as conn:
                rows = conn.execute("SELECT object_id, x, y, pinned FROM view_positions WHERE session_id = ?",
                                    (session_id,)).fetchall()
        except (sqlite3.Error, OSError) as exc:
            log.warning("could not read saved graph positions: %s", exc)
            return {}
        except Exception as exc:  # a StoreError from the store's lock (closed store, damaged file)
            log.warning("could not read saved graph positions: %s", exc)
            return {}
        return {oid: (float(x), float(y), bool(pinned)) for oid, x, y, pinned in rows}

    def save(self, session_id: str, rows: Iterable[Row], *, replace: bool = False) -> bool:
        """Store positions; True if they were written."""
        data = [(session_id, oid, float(x), float(y), int(bool(pinned))) for oid, x, y, pinned in rows]
        try:
            with self._write() as conn:
                if replace:
                    conn.execute("DELETE FROM view_positions WHERE session_id = ?", (session_id,))
                conn.executemany(
                    "INSERT INTO view_positions (session_id, object_id, x, y, pinned) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (session_id, object_id) DO UPDATE SET x = excluded.x, y = excluded.y, "
                    "pinned = excluded.pinned", data)
        except sqlite3.IntegrityError:
            return False  # the session was deleted meanwhile: nothing to keep
        except Exception as exc:
            log.warning("could not save graph positions: %s", exc)
            return False
        return True
