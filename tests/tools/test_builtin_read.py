"""The read tools through registry.invoke: a happy path and an error path each."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller
from tests.tools.conftest import call

pytestmark = pytest.mark.asyncio

GRAPH = [
    {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada",
     "properties": {"born": 1815, "field": "mathematics and poetical science"}},
    {"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$cb"},
    {"op": "add_object", "type": "Machine", "name": "Analytical Engine", "label": "$ae"},
    {"op": "add_object", "type": "Place", "name": "London", "label": "$ldn"},
    {"op": "add_object", "type": "Place", "name": "Nowhere"},
    {"op": "add_relation", "source": "$ada", "target": "$cb", "type": "worked_with"},
    {"op": "add_relation", "source": "$cb", "target": "$ae", "type": "designed", "properties": {"year": 1837}},
    {"op": "add_relation", "source": "$ada", "target": "$ae", "type": "wrote_about"},
    {"op": "add_relation", "source": "$cb", "target": "$ldn", "type": "lived_in"},
]


@pytest.fixture
def ids(store: Any, session_id: str) -> dict[str, str]:
    return dict(store.apply(session_id, GRAPH, "user").created)


async def test_graph_summary(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "graph_summary")
    assert not res.is_error, res.content
    data = res.structured
    assert (data["objects"], data["relations"]) == (5, 4)
    assert {"name": "Person", "count": 2} in data["object_types"]
    assert {t["name"] for t in data["relation_types"]} == {"worked_with", "designed", "wrote_about", "lived_in"}
    assert len(data["latest_changes"]) == 1 and data["latest_changes"][0]["origin"] == "user"
    assert json.loads(res.content) == data
    gone = await call(registry, Run("s_missing", Caller.MODEL), "graph_summary")
    assert gone.is_error


async def test_list_objects_pages(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "list_objects", type="Person", limit=1)
    assert not res.is_error, res.content
    first = res.structured
    assert len(first["objects"]) == 1 and first["next_cursor"]
    second = (await call(registry, run, "list_objects", type="Person", limit=1, cursor=first["next_cursor"]))
    names = {first["objects"][0]["name"], second.structured["objects"][0]["name"]}
    assert names == {"Ada Lovelace", "Charles Babbage"}
    everything = (await call(registry, run, "list_objects")).structured
    assert len(everything["objects"]) == 5 and everything["next_cursor"] is None
    ada = next(o for o in everything["objects"] if o["name"] == "Ada Lovelace")
    assert ada["properties"]["born"] == 1815 and ada["type"] == "Person" and ada["id"] == ids["$ada"]
    bad = await call(registry, run, "list_objects", limit=0)
    assert bad.is_error and "at limit" in bad.content


async def test_get_object_with_relations(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "get_object", ref="charles BABBAGE")
    assert not res.is_error, res.content
    data = res.structured
    assert data["object"]["id"] == ids["$cb"] and data["object"]["created_at"]
    assert {(r["type"], r["target"]["name"]) for r in data["outgoing"]} == {
        ("designed", "Analytical Engine"), ("lived_in", "London")}
    assert [(r["type"], r["source"]["name"], r["source"]["type"]) for r in data["incoming"]] == [
        ("worked_with", "Ada Lovelace", "Person")]
    designed = next(r for r in data["outgoing"] if r["type"] == "designed")
    assert designed["properties"] == {"year": 1837}
    by_id = await call(registry, run, "get_object", ref=ids["$ada"])
    assert by_id.structured["object"]["name"] == "Ada Lovelace"
    missing = await call(registry, run, "get_object", ref="Grace Hopper")
    assert missing.is_error and "Grace Hopper" in missing.content


async def test_an_ambiguous_name_lists_the_candidates(store: Any, session_id: str, registry: ToolRegistry,
                                                      run: Run) -> None:
    created = store.apply(session_id, [
        {"op": "add_object", "type": "Planet", "name": "Mercury", "label": "$p"},
        {"op": "add_object", "type": "Element", "name": "mercury", "label": "$e"}], "user").created
    res = await call(registry, run, "get_object", ref="Mercury")
    assert res.is_error
    assert created["$p"] in res.content and created["$e"] in res.content
    assert {c["id"] for c in res.structured["candidates"]} == {created["$p"], created["$e"]}


async def test_search_objects(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "search_objects", query="poetical")
    assert not res.is_error, res.content
    assert [r["name"] for r in res.structured["results"]] == ["Ada Lovelace"]
    assert isinstance(res.structured["results"][0]["score"], float) and res.structured["count"] == 1
    typed = await call(registry, run, "search_objects", query="London", type="Person")
    assert typed.structured["results"] == []
    empty = await call(registry, run, "search_objects", query="")
    assert empty.is_error and "at query" in empty.content


async def test_list_relations(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "list_relations", ref="Ada Lovelace", direction="outgoing")
    assert not res.is_error, res.content
    assert {r["target"]["name"] for r in res.structured["relations"]} == {"Charles Babbage", "Analytical Engine"}
    assert all(r["source"]["id"] == ids["$ada"] for r in res.structured["relations"])
    incoming = await call(registry, run, "list_relations", ref="Ada Lovelace", direction="incoming")
    assert incoming.structured["relations"] == []
    typed = await call(registry, run, "list_relations", type="designed")
    [rel] = typed.structured["relations"]
    assert (rel["source"]["name"], rel["target"]["name"], rel["properties"]) == (
        "Charles Babbage", "Analytical Engine", {"year": 1837})
    bad = await call(registry, run, "list_relations", direction="sideways")
    assert bad.is_error and "at direction" in bad.content


async def test_neighbors(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "neighbors", ref="London")
    assert not res.is_error, res.content
    assert res.structured["center"]["name"] == "London"
    assert [o["name"] for o in res.structured["objects"]] == ["Charles Babbage"]
    two = (await call(registry, run, "neighbors", ref="London", depth=2)).structured
    assert {o["name"] for o in two["objects"]} == {"Charles Babbage", "Ada Lovelace", "Analytical Engine"}
    assert {r["type"] for r in two["relations"]} >= {"lived_in", "designed", "worked_with"}
    assert not two["truncated"]
    bad = await call(registry, run, "neighbors", ref="London", depth=4)
    assert bad.is_error and "at depth" in bad.content


async def test_find_path(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "find_path", source="London", target="Ada Lovelace")
    assert not res.is_error, res.content
    data = res.structured
    assert data["found"] and data["hops"] == 2
    assert [o["name"] for o in data["objects"]] == ["London", "Charles Babbage", "Ada Lovelace"]
    none = await call(registry, run, "find_path", source="London", target="Nowhere")
    assert not none.is_error and none.structured["found"] is False and "No path" in none.structured["message"]
    bad = await call(registry, run, "find_path", source="London", target="Atlantis")
    assert bad.is_error and "Atlantis" in bad.content


async def test_list_types_and_changes(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "list_types")
    assert not res.is_error, res.content
    assert {t["name"] for t in res.structured["object_types"]} == {"Person", "Machine", "Place"}
    changes = await call(registry, run, "list_changes", limit=5)
    assert not changes.is_error and len(changes.structured["changes"]) == 1
    change = changes.structured["changes"][0]
    assert change["id"] and change["summary"] and change["origin"] == "user"
    bad = await call(registry, run, "list_changes", limit=1000)
    assert bad.is_error and "at limit" in bad.content
    gone = await call(registry, Run("s_missing", Caller.MODEL), "list_types")
    assert gone.is_error and "s_missing" in gone.content


async def test_export_graph(registry: ToolRegistry, run: Run, ids: dict[str, str]) -> None:
    res = await call(registry, run, "export_graph", format="json")
    assert not res.is_error, res.content
    doc = json.loads(res.content)
    assert doc["format"] == "cks-graph" and len(doc["objects"]) == 5 and len(doc["relations"]) == 4
    assert res.structured == {"format": "json", "characters": len(res.content)}
    lines = (await call(registry, run, "export_graph", format="memory-jsonl")).content.strip().splitlines()
    assert {json.loads(line)["type"] for line in lines} == {"entity", "relation"}
    mermaid = await call(registry, run, "export_graph", format="mermaid")
    assert not mermaid.is_error and "Ada Lovelace" in mermaid.content
    bad = await call(registry, run, "export_graph", format="pdf")
    assert bad.is_error and "at format" in bad.content
