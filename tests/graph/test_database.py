"""The database file: migrations, refusals with one clear sentence, threads, events after commit."""

from __future__ import annotations

import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cks_desktop.graph import schema
from cks_desktop.graph.errors import DatabaseError, StoreError
from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

from .conftest import count_elsewhere, dump


@pytest.mark.sqlite_only(reason="PRAGMA user_version, WAL and foreign_keys are the SQLite file's; tests/pg/test_pg_store.py checks the PostgreSQL schema version")
def test_new_database_is_migrated_with_wal_and_foreign_keys(store: GraphStore, db_path: Path) -> None:
    with store.connection_lock() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.schema_version()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()
    again = GraphStore.open(db_path)  # reopening runs no step twice
    again.close()


def test_migration_steps_run_in_order_and_only_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.sqlite3"
    GraphStore.open(path).close()
    extra = schema.Migration("test table", "CREATE TABLE test_extra (x INTEGER);")
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, extra])
    store = GraphStore.open(path)
    with store.connection_lock() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(schema.MIGRATIONS)
        conn.execute("SELECT x FROM test_extra").fetchall()
    store.close()
    GraphStore.open(path).close()


def test_a_failing_migration_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.sqlite3"
    GraphStore.open(path).close()
    bad = schema.Migration("broken", "CREATE TABLE half_done (x INTEGER); CREATE TABLE objects (y);")
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, bad])
    with pytest.raises(DatabaseError):
        GraphStore.open(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(schema.MIGRATIONS) - 1
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    GraphStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.schema_version() + 5}")
    conn.close()
    with pytest.raises(DatabaseError) as info:
        GraphStore.open(path)
    message = str(info.value)
    assert "written by a newer version of CKS Desktop" in message and str(path) in message
    assert f"schema {schema.schema_version() + 5}, this version knows {schema.schema_version()}" in message


def test_a_corrupt_file_is_refused_with_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.sqlite3"
    path.write_bytes(b"this is not a database at all, just text " * 200)
    with pytest.raises(DatabaseError) as info:
        GraphStore.open(path)
    assert str(info.value) == f"The file {path} is not a CKS Desktop database or it is damaged."


@pytest.mark.sqlite_only(reason="SQLite's file lock; PostgreSQL writers queue on the write lock instead")
def test_a_locked_database_gives_a_clear_error_and_writes_nothing(db_path: Path, session: Session,
                                                                  store: GraphStore) -> None:
    quick = GraphStore.open(db_path, busy_timeout=0.05)
    blocker = sqlite3.connect(db_path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(DatabaseError, match="is locked by another program"):
            quick.apply(session.id, [{"op": "add_object", "type": "T", "name": "x"}], "t")
        with pytest.raises(DatabaseError, match="locked"):
            quick.create_session("y")
        assert quick.counts(session.id) == {"objects": 0, "relations": 0}  # reads still work (WAL)
        blocker.execute("ROLLBACK")
        quick.apply(session.id, [{"op": "add_object", "type": "T", "name": "x"}], "t")
    finally:
        blocker.close()
        quick.close()


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else False,
                    reason="root ignores file permissions")
def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ro.sqlite3"
    GraphStore.open(path).close()
    path.chmod(0o444)
    try:
        with pytest.raises(DatabaseError, match="cannot be opened for writing"):
            GraphStore.open(path)
    finally:
        path.chmod(0o644)


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match=str(tmp_path / "nope")):
        GraphStore.open(tmp_path / "nope" / "x.sqlite3")


@pytest.mark.sqlite_only(reason="the failure is injected with a SQLite trigger; tests/pg/test_pg_store.py injects it with a PostgreSQL one")
def test_a_failure_while_writing_rolls_everything_back(store: GraphStore, session: Session,
                                                       events: list[object]) -> None:
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
    before = dump(store)
    events.clear()
    with store.transaction() as conn:  # a trigger makes the change-record insert fail midway
        conn.execute("CREATE TRIGGER boom BEFORE INSERT ON changes BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
    after_trigger = dump(store)
    with pytest.raises(DatabaseError, match="disk on fire"):
        store.apply(session.id, [{"op": "add_object", "type": "T", "name": "b", "properties": {"w": "x"}},
                                 {"op": "remove_object", "ref": "a"}], "t")
    assert dump(store) == after_trigger and events == []
    with store.transaction() as conn:
        conn.execute("DROP TRIGGER boom")
    assert dump(store) == before


def test_events_are_emitted_after_commit_only(store: GraphStore, session: Session, db_path: Path) -> None:
    seen: list[tuple[GraphChanged, int]] = []

    def listener(event: object) -> None:
        if isinstance(event, GraphChanged):
            # Another connection must already see the rows: the transaction is committed.
            seen.append((event, count_elsewhere(store, db_path, "objects")))

    unsubscribe = store.subscribe(listener)
    r = store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a", "label": "$a"}], "origin-x")
    assert len(seen) == 1
    event, visible = seen[0]
    assert visible == 1 and event.origin == "origin-x" and event.change_id == r.change.id  # type: ignore[union-attr]
    assert [o.name for o in event.added_objects] == ["a"]
    store.apply(session.id, [{"op": "update_object", "ref": "a", "set_properties": {"k": 1}}], "t")
    assert seen[-1][0].updated_objects[0].properties == {"k": 1}
    with pytest.raises(StoreError):
        store.apply(session.id, [{"op": "remove_object", "ref": "zzz"}], "t")
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "b"}], "t", dry_run=True)
    assert len(seen) == 2
    unsubscribe()
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "c"}], "t")
    assert len(seen) == 2


def test_a_failing_listener_does_not_undo_the_write(store: GraphStore, session: Session) -> None:
    def broken(event: object) -> None:
        raise RuntimeError("listener bug")

    store.subscribe(broken)
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
    assert store.counts(session.id)["objects"] == 1


def test_the_store_is_usable_from_worker_threads(store: GraphStore, session: Session) -> None:
    def work(i: int) -> str:
        result = store.apply(session.id, [{"op": "add_object", "type": "T", "name": f"n{i}", "label": "$x"}], "t")
        store.search_objects(session.id, f"n{i}")
        return result.created["$x"]

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(pool.map(work, range(40)))
    assert len(set(ids)) == 40 and store.counts(session.id)["objects"] == 40
    assert threading.current_thread() is threading.main_thread()


def test_closed_store_refuses_politely(db_path: Path) -> None:
    s = GraphStore.open(db_path)
    s.close()
    s.close()  # twice is fine
    with pytest.raises(DatabaseError, match="closed"):
        s.list_sessions()


@pytest.mark.sqlite_only(reason="SQLite's max_page_count simulates a full disk")
def test_a_full_disk_gives_a_clear_error_and_writes_nothing(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
    before = dump(store)
    with store.connection_lock() as conn:  # the file may not grow: SQLite reports SQLITE_FULL
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(DatabaseError) as info:
        store.apply(session.id, [{"op": "add_object", "type": "T", "name": f"n{i}",
                                  "properties": {"text": "x" * 2000}} for i in range(200)], "t")
    assert str(info.value) == (f"The disk is full: the database {store.path} cannot be written; "
                               "free some space on that disk and try again.")
    assert dump(store) == before


@pytest.mark.parametrize(("sqlite_message", "expected"), [
    ("attempt to write a readonly database", "cannot be opened for writing"),
    ("unable to open database file", "cannot be opened for writing"),
    ("database is locked", "locked by another program"),
    ("file is not a database", "not a CKS Desktop database or it is damaged"),
    ("database disk image is malformed", "not a CKS Desktop database or it is damaged"),
    ("database or disk is full", "is full"),
    ("disk I/O error", "disk error"),
])
def test_sqlite_failures_become_one_sentence_naming_the_file(sqlite_message: str, expected: str) -> None:
    from cks_desktop.graph.sqlite_util import database_error

    error = database_error(sqlite3.OperationalError(sqlite_message), "/data/cks.sqlite3")
    assert expected in str(error) and "/data/cks.sqlite3" in str(error)
    assert str(error).endswith(".") and "\n" not in str(error)
