"""Big but legal tool calls must not freeze the app: the loop stays responsive
(lag probe under 250 ms) while the registry validates, the store writes and the
result is formatted. The sizes are the tools' own limits (5,000 operations) or
more than a model can write in one answer (a 1 MB property). At 5 MB a single
property still costs ~250 ms on the loop, mostly JSON encoding of the result under
GIL contention; no model output comes near that."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from tests.reliability.lag import LagProbe
from tests.reliability.world import World, build_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = build_world(tmp_path / "lag.sqlite3")
    try:
        yield w
    finally:
        w.store.close()


CASES = {
    "evolve_knowledge, 5,000 operations": ("evolve_knowledge", {"operations": [
        {"op": "add_object", "type": "Note", "name": f"note {i}", "properties": {"i": i, "text": "some words"}}
        for i in range(5000)]}),
    "evolve_knowledge, 5,000 invalid operations": ("evolve_knowledge", {"operations": [
        {"op": "add_relation", "source": f"nobody {i}", "target": "Ada", "type": "knows"} for i in range(5000)]}),
    "add_object with a 1 MB property": ("add_object", {"type": "Doc", "name": "big",
                                                       "properties": {"text": "word " * 200_000}}),
    "update_object with a 1 MB property": ("update_object", {"ref": "Ada", "set_properties": {"bio": "x" * 1_000_000}}),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("case", list(CASES))
async def test_big_calls_keep_the_loop_responsive(world: World, case: str) -> None:
    registry = build_registry(world.store)
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    name, args = CASES[case]
    async with LagProbe(case):
        result = await registry.invoke(ToolCall("big", name, args), run)
    assert result.content


@pytest.fixture(scope="module")
def hub_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, World]:
    """A session with an object joined to 10,000 others (a tag, a country, a popular author), built once."""
    path = tmp_path_factory.mktemp("hub") / "hub.sqlite3"
    w = build_world(path)
    ops = [{"op": "add_object", "type": "Tag", "name": "hub", "label": "$h"}]
    ops += [{"op": "add_object", "type": "Note", "name": f"n{i}", "label": f"$n{i}"} for i in range(10_000)]
    ops += [{"op": "add_relation", "source": f"$n{i}", "target": "$h", "type": "tagged"} for i in range(10_000)]
    w.store.apply(w.mine, ops, "user")
    w.store.close()  # closed cleanly: the one file holds everything
    return path, w


@pytest.fixture
def hub(hub_file: tuple[Path, World], tmp_path: Path) -> Iterator[tuple[World, str]]:
    path, template = hub_file
    copy = tmp_path / "hub.sqlite3"
    shutil.copyfile(path, copy)
    store = GraphStore.open(copy)
    w = dataclasses.replace(template, store=store)
    change_id = store.list_changes(w.mine, limit=1)[0].id
    try:
        yield w, change_id
    finally:
        store.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("case", ["remove_object", "merge_objects", "revert_change"])
async def test_small_calls_with_big_effects_keep_the_loop_responsive(hub: tuple[World, str], case: str) -> None:
    world, change_id = hub
    registry = build_registry(world.store)
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    args = {"remove_object": {"ref": "hub"}, "merge_objects": {"keep": "Ada", "merge": "hub"},
            "revert_change": {"change_id": change_id}}[case]
    async with LagProbe(f"{case} on an object with 10,000 relations"):
        result = await registry.invoke(ToolCall("big", case, args), run)
    assert not result.is_error, result.content


READS = [("graph_summary", {}), ("list_types", {}), ("list_objects", {"limit": 200}),
         ("search_objects", {"query": "n1*", "limit": 100}), ("get_object", {"ref": "hub"}),
         ("neighbors", {"ref": "hub", "depth": 3, "limit": 200}), ("find_path", {"source": "n1", "target": "n9999"}),
         ("list_relations", {"ref": "hub", "limit": 200}), ("list_changes", {"limit": 100}),
         *[("export_graph", {"format": f}) for f in ("json", "graphml", "markdown", "mermaid", "memory-jsonl")]]


@pytest.mark.asyncio
async def test_reads_of_a_big_graph_keep_the_loop_responsive(hub: tuple[World, str]) -> None:
    world, _ = hub
    registry = build_registry(world.store)
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    for name, args in READS:
        async with LagProbe(f"{name} {args} on 10,000 objects"):
            result = await registry.invoke(ToolCall("r", name, args), run)
        assert not result.is_error, (name, result.content[:300])
