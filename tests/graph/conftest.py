"""Fixtures for the store tests: every ``store`` test runs twice, on a real SQLite file and on a
fresh database of a real PostgreSQL server (tests/pgcluster.py); ``sqlite_only`` tests (about the
file itself) run on SQLite alone. And a full dump of a store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.events import StoreEvent
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401  (the real PostgreSQL server)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "cks.sqlite3"


BACKENDS = ("sqlite", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only(reason): a store test about the SQLite file itself "
                                       "(WAL, corruption, locks, pragmas); not run on PostgreSQL")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A ``sqlite_only`` test runs once, on SQLite: its PostgreSQL variant is deselected."""
    keep, drop = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        if (spec is not None and spec.params.get("backend") == "postgresql"
                and item.get_closest_marker("sqlite_only") is not None):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_store(backend: str, db_path: Path, request: pytest.FixtureRequest) -> GraphStore:
    """A store of the given backend: the SQLite file ``db_path``, or the test's database."""
    if backend == "sqlite":
        return GraphStore.open(db_path)
    from cks_desktop.graph.pg.store import PgGraphStore

    return PgGraphStore.connect(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(backend: str, db_path: Path, request: pytest.FixtureRequest) -> Iterator[GraphStore]:
    """Every store test runs on both backends (``sqlite_only`` ones on SQLite alone)."""
    s = open_store(backend, db_path, request)
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
    listing = ("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
               if getattr(store, "backend", "sqlite") == "sqlite" else
               "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")
    with store.connection_lock() as conn:
        tables = [r[0] for r in conn.execute(listing) if r[0] not in skip]
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


def count_elsewhere(store: GraphStore, db_path: Path, table: str) -> int:
    """Rows of ``table`` as ANOTHER connection sees them (what is committed)."""
    if store.backend == "sqlite":
        other = sqlite3.connect(db_path)
        try:
            return int(other.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        finally:
            other.close()
    import psycopg

    with psycopg.connect(store._conninfo) as conn:  # type: ignore[attr-defined]
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0
