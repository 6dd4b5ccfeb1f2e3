"""Run any suite on the PostgreSQL backend: ``pytest -p tests.pg.pg_backend_plugin tests/agent``.

A measuring tool, not part of the default run: it makes ``GraphStore.open(path)`` return a
``PgGraphStore`` on a fresh database of a throw-away cluster (one database per distinct path,
so reopening the same file reopens the same database). Suites whose modules keep their own
tables in the store (transcript, documents, usage, provenance …) then show which of their SQL
runs on PostgreSQL (docs/team.md and the team-graph notes list the result).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import pgcluster


@pytest.fixture(scope="session")
def _plugin_cluster() -> Iterator[pgcluster.Cluster]:
    cluster = pgcluster.acquire()
    try:
        yield cluster
    finally:
        pgcluster.release()


@pytest.fixture(autouse=True)
def _graph_store_on_postgresql(monkeypatch: pytest.MonkeyPatch, _plugin_cluster: pgcluster.Cluster) -> Iterator[None]:
    from cks_desktop.graph.pg.store import PgGraphStore
    from cks_desktop.graph.store import GraphStore

    cluster = _plugin_cluster
    databases: dict[str, str] = {}

    def open_pg(cls: Any, path: Path, *args: Any, **kwargs: Any) -> GraphStore:
        key = str(Path(path).resolve())
        if key not in databases:
            databases[key] = pgcluster.new_database(cluster)
        return PgGraphStore.connect(cluster.dsn(databases[key]))

    monkeypatch.setattr(GraphStore, "open", classmethod(open_pg))
    try:
        yield
    finally:
        for name in databases.values():
            pgcluster.drop_database(cluster, name)
