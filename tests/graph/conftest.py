"""Fixtures for the store tests: a real SQLite file per test, and a full dump of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.events import StoreEvent
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "cks.sqlite3"


@pytest.fixture
def store(db_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(db_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def session(store: GraphStore) -> Session:
    return store.create_session("Test session")


@pytest.fixture
def events(store: GraphStore) -> list[StoreEvent]:
    seen: list[StoreEvent] = []
    store.subscribe(seen.append)
    return seen


def dump(store: GraphStore, fts_segments: bool = True) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (full-text shadow tables included), sorted.

    ``fts_segments=False`` leaves out FTS5's b-tree segments, which legitimately
    differ after deletes (FTS5 records deletions as new segments until it merges);
    the indexed content itself stays in the comparison.
    """
    skip = set() if fts_segments else {"objects_fts_data", "objects_fts_idx"}
    with store.connection_lock() as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            if r[0] not in skip]
        return {t: sorted(conn.execute(f"SELECT * FROM \"{t}\"").fetchall(), key=repr) for t in tables}


def graph_rows(store: GraphStore, session_id: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Objects and relations of a session as stored (without the internal row number)."""
    with store.connection_lock() as conn:
        objects = conn.execute("SELECT id, session_id, type, name, name_key, properties, created_at, updated_at "
                               "FROM objects WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        relations = conn.execute("SELECT * FROM relations WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
    return objects, relations


def fts_rows(store: GraphStore, session_id: str) -> list[tuple[Any, ...]]:
    """The full-text rows of a session's objects, keyed by object id."""
    with store.connection_lock() as conn:
        return sorted(conn.execute(
            "SELECT o.id, f.name, f.body FROM objects_fts f JOIN objects o ON o.n = f.rowid "
            "WHERE o.session_id = ?", (session_id,)).fetchall())
