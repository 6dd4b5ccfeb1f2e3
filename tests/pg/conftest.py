"""Fixtures of the PostgreSQL backend's own tests: the real server (tests/pgcluster.py)."""

from __future__ import annotations

from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401
