"""Search results of one session do not depend on what other sessions contain.

The full-text index is shared by every session; FTS5's bm25 reads its GLOBAL
statistics (row count, average length, how many rows hold a word), so a host
of ``mcp serve`` could learn whether a word occurs in another session from
the scores (or even the order) of its own results. These tests run the same
query before and after another session gets the word 1,000 times and demand
byte-identical results: through the store, the tool layer and a real
``cks-desktop mcp serve`` subprocess driven by the SDK's client.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cks_desktop.graph.store import GraphStore
from cks_desktop.serve.server import serving_run
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.types import ToolCall

MAIN = Path(__file__).resolve().parents[2]
QUERIES = ("violin", "violin cello", "violin kazoo harp", "vio", "cello")


def _seed(store: GraphStore, session_id: str) -> None:
    store.apply(session_id, [
        {"op": "add_object", "type": "Person", "name": "Alice", "properties": {"bio": "plays the violin and the cello"}},
        {"op": "add_object", "type": "Person", "name": "Bob", "properties": {"bio": "a violin maker, violin violin"}},
        {"op": "add_object", "type": "Instrument", "name": "Violin"},
        {"op": "add_object", "type": "Instrument", "name": "Cello",
         "properties": {"note": "bigger than a violin; a long description of the cello and its strings"}},
        {"op": "add_object", "type": "Instrument", "name": "Harp"},
    ], "test")


def _flood(store: GraphStore, session_id: str, word: str = "violin") -> None:
    """Another session: the word 1,000 times, in names and long bodies."""
    store.apply(session_id, [
        {"op": "add_object", "type": "Noise", "name": f"{word} {i}",
         "properties": {"text": " ".join([word] * (i % 7 + 1) + ["filler"] * (i % 13))}}
        for i in range(1000)], "test")


def _store_results(store: GraphStore, session_id: str) -> list[tuple[str, float]]:
    return [(o.id, score) for q in QUERIES for o, score in store.search_objects(session_id, q)]


def test_store_search_is_independent_of_other_sessions(tmp_path: Path) -> None:
    with GraphStore.open(tmp_path / "cks.sqlite3") as store:
        mine = store.create_session("mine")
        other = store.create_session("other")
        _seed(store, mine.id)
        before = _store_results(store, mine.id)
        _flood(store, other.id)
        _flood(store, other.id, "cello")
        assert _store_results(store, mine.id) == before
        # and the ranking still means something: a name match first, lower score = better
        hits = store.search_objects(mine.id, "violin")
        assert hits[0][0].name == "Violin"
        assert [s for _, s in hits] == sorted(s for _, s in hits)


@pytest.mark.asyncio
async def test_search_tool_is_independent_of_other_sessions(tmp_path: Path) -> None:
    with GraphStore.open(tmp_path / "cks.sqlite3") as store:
        mine = store.create_session("mine")
        other = store.create_session("other")
        _seed(store, mine.id)
        registry = build_registry(store)
        run = serving_run(mine.id)  # the run an `mcp serve` host gets

        async def results() -> list[str]:
            out = []
            for i, q in enumerate(QUERIES):
                res = await registry.invoke(ToolCall(f"call_{i}", "search_objects", {"query": q}), run)
                assert not res.is_error, res.content
                out.append(json.dumps([res.content, res.structured], sort_keys=True))
            return out

        before = await results()
        _flood(store, other.id)
        assert await results() == before


async def _serve_results(home: Path) -> list[str]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                                         "--session", _session_of(home, "mine")],
                                   cwd=str(MAIN), env={"PYTHONPATH": str(MAIN)})
    out: list[str] = []
    with open(home / "serve.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            for q in QUERIES:
                r = await client.call_tool("search_objects", {"query": q})
                assert not r.is_error, r.content
                out.append(json.dumps([c.model_dump(mode="json") for c in r.content], sort_keys=True))
                out.append(json.dumps(r.structured_content, sort_keys=True))
    return out


def _session_of(home: Path, title: str) -> str:
    with GraphStore.open(home / "cks.sqlite3") as store:
        return next(s.id for s in store.list_sessions() if s.title == title)


@pytest.mark.asyncio
async def test_mcp_serve_search_is_independent_of_other_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with GraphStore.open(home / "cks.sqlite3") as store:
        mine = store.create_session("mine")
        other = store.create_session("other")
        _seed(store, mine.id)
    before = await _serve_results(home)
    with GraphStore.open(home / "cks.sqlite3") as store:
        _flood(store, other.id)
    after = await _serve_results(home)
    assert after == before
    assert any("Violin" in chunk for chunk in before)
