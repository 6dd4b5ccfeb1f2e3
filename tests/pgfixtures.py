"""pytest fixtures over ``tests/pgcluster.py``: import them into a conftest to use them.

``pg_cluster`` (session): the real server, skipped with the reason only where its
binaries are missing. ``pg_url``: a fresh migrated database for one test, dropped after.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

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
