from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.schema import migrate

from tests.agent.helpers import Gate, StubGraph, build_test_registry


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


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Any]:
    """The real store on a temporary file, with one session."""
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(tmp_path / "graph.sqlite3")
    store.session = store.create_session("Test")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()


@pytest_asyncio.fixture
async def asyncgen_hooks() -> AsyncIterator[None]:
    """Give the running qasync loop the async-generator hooks plain asyncio installs.

    qasync's ``run_forever`` never calls ``sys.set_asyncgen_hooks``, so an async
    generator an SDK abandons mid-iteration (the ollama client leaves httpx's
    ``aiter_lines`` chain suspended when it raises on an in-stream error) is
    finalized later by the garbage collector, outside the loop, and warns.
    With the hooks, the loop closes such generators itself, as asyncio would.
    """
    loop = asyncio.get_running_loop()
    old = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
                           finalizer=loop._asyncgen_finalizer_hook)  # type: ignore[attr-defined]
    try:
        yield
        await asyncio.sleep(0)  # let a finalizer's scheduled aclose() run
        await loop.shutdown_asyncgens()
    finally:
        sys.set_asyncgen_hooks(*old)
