"""pytest fixtures over ``tests/pgcluster.py``: import them into a conftest to use them.

``pg_cluster`` (session): the real server, skipped with the reason only where its
binaries are missing. ``pg_url``: a fresh migrated database for one test, dropped after.
``open_graph``: the store on SQLite and on PostgreSQL, one test run per backend.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from tests import pgcluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[pgcluster.Cluster]:
    reason = pgcluster.missing_reason()
    if reason is not None:
        if os.environ.get("CKS_REQUIRE_PG") == "1":  # .ci/run: CI installs the server, so this is a failure
            pytest.fail(f"CKS_REQUIRE_PG=1 but {reason}")
        pytest.skip(reason)
    cluster = pgcluster.acquire()
    try:
        yield cluster
    finally:
        pgcluster.release()


@pytest.fixture
def pg_url(pg_cluster: pgcluster.Cluster) -> Iterator[str]:
    name = pgcluster.new_database(pg_cluster)
    try:
        yield pg_cluster.dsn(name)
    finally:
        pgcluster.drop_database(pg_cluster, name)


@pytest.fixture(params=["sqlite", "postgresql"])
def open_graph(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], GraphStore]:
    """Open the test's graph store on each backend: the SQLite file, or a fresh database on the real
    PostgreSQL server (each call opens the same database again, as reopening a file does).
    For the tests that exercise a module's own SQL (chat, documents, extraction) on both."""
    if request.param == "sqlite":
        return lambda: GraphStore.open(tmp_path / "graph.sqlite3")
    url = request.getfixturevalue("pg_url")

    def connect() -> GraphStore:
        from cks_desktop.graph.pg.store import PgGraphStore

        return PgGraphStore.connect(url)

    return connect
