from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.schema import migrate
from cks_desktop.graph.model import Session

from tests.agent.helpers import Gate, build_test_registry


class StubGraph:
    """Answers the few reads the loop's prompt needs (loop tests don't touch the graph)."""

    def __init__(self) -> None:
        self.session = Session("S1", "Test session", "2026-01-01T00:00:00Z", instructions="Be brief.")

    def get_session(self, session_id: str) -> Session:
        return self.session

    def counts(self, session_id: str) -> dict[str, int]:
        return {"objects": 3, "relations": 1}

    def type_stats(self, session_id: str) -> dict[str, Any]:
        return {"object_types": [{"name": "Person", "count": 2}, {"name": "City", "count": 1}],
                "relation_types": [{"name": "lives_in", "count": 1}]}


@pytest.fixture
def stub_store() -> StubGraph:
    return StubGraph()


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def registry(stub_store: StubGraph, gate: Gate):
    return build_test_registry(stub_store, gate)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    c.execute("PRAGMA foreign_keys = ON")
    migrate(c, tmp_path / "t.sqlite3")
    c.execute("INSERT INTO sessions (id, title, created_at) VALUES ('S1', 'one', 'now'), ('S2', 'two', 'now')")
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def transcript(conn: sqlite3.Connection) -> TranscriptStore:
    return TranscriptStore.for_connection(conn)
