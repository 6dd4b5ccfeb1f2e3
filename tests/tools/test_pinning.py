"""Session pinning: whatever session id a caller names, a pinned tool acts on
the run's own session — at the top level and nested in objects and lists."""

from __future__ import annotations

from typing import Any

import pytest

from cks_desktop.tools.context import Run, ToolContext
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, Policy, Scope, ToolSpec
from tests.tools.conftest import call

NESTED = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string"},
        "target": {"type": "object", "properties": {"session_id": {"type": "string"}, "v": {"type": "integer"}}},
        "batch": {"type": "array", "items": {"type": "object", "properties": {"session_id": {"type": "string"}}}},
        "either": {"anyOf": [{"type": "object", "properties": {"session_id": {"type": "string"}}},
                             {"type": "string"}]},
    },
    "required": ["session_id"],
    "additionalProperties": False,
}


def recording_tool(seen: list[dict[str, Any]], *, pin: bool = True) -> ToolSpec:
    async def handler(args: dict[str, Any], ctx: ToolContext) -> Any:
        seen.append(args)
        return "ok"

    return ToolSpec(name="rec", description="records", input_schema=NESTED, scopes=frozenset({Scope.GRAPH_READ}),
                    default_policy=Policy.AUTO, llm_exposed=True, handler=handler, pin_session=pin)


@pytest.mark.asyncio
async def test_top_level_and_nested_session_ids_are_overwritten() -> None:
    seen: list[dict[str, Any]] = []
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(recording_tool(seen))
    run = Run(session_id="MINE", caller=Caller.MODEL)
    args = {"session_id": "THEIRS", "target": {"session_id": "THEIRS", "v": 1},
            "batch": [{"session_id": "THEIRS"}, {}], "either": {"session_id": "THEIRS"}}
    res = await call(reg, run, "rec", **args)
    assert not res.is_error, res.content
    assert seen[0] == {"session_id": "MINE", "target": {"session_id": "MINE", "v": 1},
                       "batch": [{"session_id": "MINE"}, {"session_id": "MINE"}], "either": {"session_id": "MINE"}}
    assert args["session_id"] == "THEIRS"  # the caller's dict is not mutated
    # A missing session id is filled in, and a junk one (null) does not make the call invalid.
    res = await call(reg, run, "rec", session_id=None)
    assert not res.is_error and seen[-1] == {"session_id": "MINE"}
    await call(reg, run, "rec", either="text")
    assert seen[-1] == {"session_id": "MINE", "either": "text"}


@pytest.mark.asyncio
async def test_unpinned_tools_keep_the_callers_session_id() -> None:
    seen: list[dict[str, Any]] = []
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(recording_tool(seen, pin=False))
    await call(reg, Run(session_id="MINE", caller=Caller.CLI), "rec", session_id="THEIRS")
    assert seen == [{"session_id": "THEIRS"}]


@pytest.mark.asyncio
async def test_builtin_writes_only_reach_the_pinned_session(store: Any, registry: ToolRegistry) -> None:
    mine = store.create_session("mine").id
    theirs = store.create_session("theirs").id
    run = Run(session_id=mine, caller=Caller.MODEL)
    res = await call(registry, run, "add_object", session_id=theirs, type="Person", name="Ada")
    assert not res.is_error, res.content
    res = await call(registry, run, "evolve_knowledge", session_id=theirs, operations=[
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$b"},
        {"op": "add_relation", "source": "$b", "target": "Ada", "type": "knows"}])
    assert not res.is_error, res.content
    res = await call(registry, run, "evolve_knowledge", operations=[
        {"op": "add_object", "type": "Person", "name": "Eve", "session_id": theirs}])
    assert res.is_error and "'session_id' was unexpected" in res.content  # no door to another session
    assert store.counts(theirs) == {"objects": 0, "relations": 0} or store.counts(theirs)["objects"] == 0
    assert store.counts(mine)["objects"] == 2 and store.counts(mine)["relations"] == 1
    res = await call(registry, run, "graph_summary", session_id=theirs)
    assert res.structured["session"]["id"] == mine
