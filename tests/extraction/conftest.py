"""The extraction tests: the ones that run a module's SQL take ``open_graph`` and run on both backends."""

from __future__ import annotations

from tests.pgfixtures import open_graph, pg_cluster, pg_url  # noqa: F401
