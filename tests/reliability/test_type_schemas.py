"""Per-type property schemas come from a model (``define_type`` is exposed and
runs without asking), so a schema is untrusted input: it must not be able to
freeze the app (a regular expression with catastrophic backtracking, checked on
every write of that type), reach out to the network (a remote ``$ref``), or make
every later write of its type fail with an internal error (a ``$ref`` cycle)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult
from tests.reliability.lag import LagProbe
from tests.reliability.world import World, build_world, dump


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = build_world(tmp_path / "types.sqlite3")
    try:
        yield w
    finally:
        w.store.close()


async def call(registry: ToolRegistry, w: World, tool: str, /, **args: Any) -> ToolResult:
    run = Run(session_id=w.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    return await registry.invoke(ToolCall("t", tool, args), run)


REFUSED = {
    "catastrophic pattern": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}},
    "pattern deep inside": {"type": "object", "properties": {"tags": {"type": "array", "items": {
        "anyOf": [{"type": "string", "pattern": ".*.*.*=x"}]}}}},
    "patternProperties": {"type": "object", "patternProperties": {"^(x|x)*$": {"type": "string"}}},
    "propertyNames pattern": {"type": "object", "propertyNames": {"pattern": "^([a-z]+)*$"}},
    "remote $ref": {"type": "object", "properties": {"a": {"$ref": "http://example.com/schema.json"}}},
    "file $ref": {"$ref": "file:///etc/passwd"},
    "remote $dynamicRef": {"$dynamicRef": "https://example.com/x#meta"},
}


@pytest.mark.asyncio
@pytest.mark.parametrize("case", list(REFUSED))
async def test_dangerous_type_schemas_are_refused(world: World, case: str) -> None:
    registry = build_registry(world.store)
    before = dump(world.store)
    async with LagProbe(case):
        res = await call(registry, world, "define_type", kind="object", name="Code", properties_schema=REFUSED[case])
    assert res.is_error, res.content
    assert "properties_schema" in res.content and "Traceback" not in res.content
    assert dump(world.store) == before
    async with LagProbe(case):
        res = await call(registry, world, "add_object", type="Code", name="x", properties={"code": "a" * 40 + "!"})
    assert not res.is_error, res.content


@pytest.mark.asyncio
async def test_a_ref_cycle_fails_writes_with_a_sentence(world: World) -> None:
    registry = build_registry(world.store)
    schema = {"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "type": "object",
              "properties": {"b": {"$ref": "#/$defs/loop"}}}
    res = await call(registry, world, "define_type", kind="object", name="Loop", properties_schema=schema)
    before = dump(world.store)
    res = await call(registry, world, "add_object", type="Loop", name="x", properties={"b": 1})
    assert res.is_error
    assert "recursion" not in res.content.lower(), res.content
    assert "schema" in res.content
    assert dump(world.store) == before


@pytest.mark.asyncio
async def test_safe_schemas_still_work(world: World) -> None:
    registry = build_registry(world.store)
    schema = {"type": "object", "required": ["code"], "$defs": {"code": {"type": "string", "maxLength": 5}},
              "properties": {"code": {"$ref": "#/$defs/code"}, "kind": {"enum": ["a", "b"]}}}
    res = await call(registry, world, "define_type", kind="object", name="Code", properties_schema=schema)
    assert not res.is_error, res.content
    res = await call(registry, world, "add_object", type="Code", name="ok", properties={"code": "ab", "kind": "a"})
    assert not res.is_error, res.content
    res = await call(registry, world, "add_object", type="Code", name="bad", properties={"code": "abcdefg"})
    assert res.is_error and "too long" in res.content


@pytest.mark.asyncio
async def test_an_mcp_tool_schema_with_a_backtracking_pattern_cannot_freeze_the_app(world: World) -> None:
    """An MCP server's input schema is the server's (untrusted). The server validates its own input; our
    early check must not run a regular expression that can backtrack for minutes on the loop."""
    from cks_desktop.tools.context import ToolContext
    from cks_desktop.tools.types import Policy, Scope, ToolSpec

    ran: list[dict[str, Any]] = []

    async def handler(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args)
        return "the server answered"

    registry = build_registry(world.store)
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"},
                                               "tags": {"type": "object", "patternProperties": {
                                                   "^(x+)+$": {"type": "string"}}, "additionalProperties": False}},
              "required": ["code"]}
    registry.register(ToolSpec(name="mcp:evil:check", description="d", input_schema=schema,
                               scopes=frozenset({Scope.NET_FETCH}), default_policy=Policy.AUTO, llm_exposed=True,
                               handler=handler, pin_session=False, source="mcp:evil"))
    async with LagProbe("an MCP schema with a backtracking pattern"):
        res = await call(registry, world, "mcp:evil:check", code="a" * 26 + "!", tags={"x" * 26 + "!": "v"})
    assert not res.is_error and ran, res.content  # the server decides; it got the call
    res = await call(registry, world, "mcp:evil:check", code=7)
    assert res.is_error and "code" in res.content  # every other keyword is still checked early
