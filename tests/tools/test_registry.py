"""ToolRegistry.invoke with fake in-memory tools: the check order, errors as
results, approval policies and their run memory, and the result cap."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from cks_desktop.tools.approval import Decision, canonical_json, fingerprint
from cks_desktop.tools.context import Run, ToolContext
from cks_desktop.tools.registry import ToolRegistry, model_schema
from cks_desktop.tools.types import Caller, Outcome, Policy, Scope, ToolCall, ToolError, ToolSpec
from tests.tools.conftest import ScriptedApprover, call

SCHEMA = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string"},
        "count": {"type": "integer", "minimum": 0},
        "items": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["session_id", "count"],
    "additionalProperties": False,
}


class Recorder:
    def __init__(self, value: Any = None) -> None:
        self.calls: list[tuple[dict[str, Any], ToolContext]] = []
        self.value = value

    async def __call__(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        self.calls.append((args, ctx))
        return {"ok": True, "args": args} if self.value is None else self.value


def fake(name: str = "fake", handler: Any = None, *, policy: Policy = Policy.AUTO, exposed: bool = True,
         scopes: frozenset[Scope] = frozenset({Scope.GRAPH_READ}), timeout: float | None = None,
         schema: dict[str, Any] | None = None, **kw: Any) -> ToolSpec:
    return ToolSpec(name=name, description="A fake tool.", input_schema=schema or SCHEMA, scopes=scopes,
                    default_policy=policy, llm_exposed=exposed, handler=handler or Recorder(), timeout=timeout,
                    **kw)


def make_run(caller: Caller = Caller.CLI, approver: Any = None, **kw: Any) -> Run:
    return Run(session_id="S1", caller=caller, approver=approver or ScriptedApprover(default=Decision.ALLOW), **kw)


@pytest.mark.asyncio
async def test_checks_run_in_the_documented_order() -> None:
    handler = Recorder()
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(handler=handler, exposed=False, policy=Policy.ALWAYS, scopes=frozenset({Scope.FS_READ})))
    bad = {"count": "many"}

    # 1. unknown
    res = await call(reg, make_run(), "nope", **bad)
    assert res.is_error and res.content.startswith("Unknown tool 'nope'")
    # 2. not exposed to a model: said before anything else is checked
    approver = ScriptedApprover(default=Decision.ALLOW)
    res = await call(reg, make_run(Caller.MODEL, approver, granted_scopes=frozenset()), "fake", **bad)
    assert res.is_error and res.content.startswith("Unknown tool 'fake'")
    # 3. scope
    res = await call(reg, make_run(Caller.CLI, approver, granted_scopes=frozenset({Scope.GRAPH_READ})), "fake",
                     **bad)
    assert res.is_error and "needs fs.read, which this chat does not grant" in res.content
    # 4. invalid arguments, quoting where and what
    res = await call(reg, make_run(Caller.CLI, approver), "fake", count=1, items=[1, "two"])
    assert res.is_error and "at items/1: 'two' is not of type 'integer'" in res.content
    assert res.structured == {"validation_errors": ["at items/1: 'two' is not of type 'integer'"]}
    res = await call(reg, make_run(Caller.CLI, approver), "fake", **bad)
    assert "at count: 'many' is not of type 'integer'" in res.content
    res = await call(reg, make_run(Caller.CLI, approver), "fake", count=1, extra=True)
    assert "at (top level): Additional properties are not allowed ('extra' was unexpected)" in res.content
    assert approver.requests == [] and handler.calls == []
    # 5. pinning happens before approval: the dialog sees the pinned call
    deny = ScriptedApprover(default=Decision.DENY)
    res = await call(reg, make_run(Caller.CLI, deny), "fake", session_id="OTHER", count=1)
    assert res.is_error and res.outcome is Outcome.DENIED and res.structured is None
    assert "declined" in res.content
    assert deny.requests[0].call.arguments == {"session_id": "S1", "count": 1}
    assert handler.calls == []
    # 6./7. approval, then the handler
    res = await call(reg, make_run(Caller.CLI, approver), "fake", session_id="OTHER", count=1)
    assert not res.is_error and len(approver.requests) == 1
    assert handler.calls[0][0] == {"session_id": "S1", "count": 1}
    assert handler.calls[0][1].session_id == "S1"


@pytest.mark.asyncio
async def test_every_failure_is_a_result() -> None:
    async def boom(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise RuntimeError("kaput")

    async def expected(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise ToolError("No such thing.", structured={"why": "missing"})

    async def slow(args: dict[str, Any], ctx: ToolContext) -> Any:
        await asyncio.Event().wait()

    async def own_timeout(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise TimeoutError("socket read")

    reg = ToolRegistry(None)  # type: ignore[arg-type]
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    reg.register(fake("boom", boom, schema=schema))
    reg.register(fake("expected", expected, schema=schema))
    reg.register(fake("slow", slow, schema=schema, timeout=0.05))
    reg.register(fake("own_timeout", own_timeout, schema=schema))
    run = make_run()

    res = await call(reg, run, "boom")
    assert res.is_error and res.content == "boom failed: RuntimeError: kaput"
    res = await call(reg, run, "expected")
    assert res.is_error and res.content == "No such thing." and res.structured == {"why": "missing"}
    res = await call(reg, run, "slow")
    assert res.is_error and res.content == "slow timed out after 0.05 s."
    res = await call(reg, run, "own_timeout")
    assert res.is_error and res.content == "own_timeout failed: TimeoutError: socket read"
    res = await reg.invoke(ToolCall("c", "boom", ["not", "a", "dict"]), run)  # type: ignore[arg-type]
    assert res.is_error and "must be a JSON object" in res.content
    assert all(r.call_id for r in [res])


@pytest.mark.asyncio
async def test_a_broken_approver_refuses_instead_of_raising() -> None:
    class Broken:
        async def request_approval(self, request: Any) -> Decision:
            raise OSError("display gone")

    handler = Recorder()
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(handler=handler, policy=Policy.ONCE))
    res = await call(reg, make_run(approver=Broken()), "fake", count=1)
    assert res.is_error and "display gone" in res.content and handler.calls == []


@pytest.mark.asyncio
async def test_cancellation_propagates() -> None:
    started = asyncio.Event()

    async def waits(args: dict[str, Any], ctx: ToolContext) -> Any:
        started.set()
        await asyncio.Event().wait()

    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake("waits", waits, schema={"type": "object"}))
    task = asyncio.ensure_future(call(reg, make_run(), "waits"))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)


def test_fingerprint_is_sha256_of_canonical_name_and_arguments() -> None:
    a = fingerprint("t", {"b": 2, "a": [1, {"y": 1, "x": 2}]})
    assert a == fingerprint("t", {"a": [1, {"x": 2, "y": 1}], "b": 2})  # key order does not matter
    assert a != fingerprint("u", {"b": 2, "a": [1, {"y": 1, "x": 2}]})
    assert a != fingerprint("t", {"b": 2, "a": [{"y": 1, "x": 2}, 1]})  # list order does
    expected = hashlib.sha256(canonical_json({"name": "t", "arguments": {"a": [1, {"x": 2, "y": 1}], "b": 2}})
                              .encode()).hexdigest()
    assert a == expected
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


@pytest.mark.asyncio
async def test_once_asks_on_the_first_call_and_the_answer_covers_the_run() -> None:
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    handler = Recorder()
    reg.register(fake(handler=handler, policy=Policy.ONCE))
    approver = ScriptedApprover(Decision.ALLOW)
    run = make_run(approver=approver)
    for n in range(3):
        assert not (await call(reg, run, "fake", count=n)).is_error
    assert len(approver.requests) == 1 and len(handler.calls) == 3
    assert approver.requests[0].policy is Policy.ONCE and "once" in approver.requests[0].reason

    denied = ScriptedApprover(Decision.DENY, default=Decision.ALLOW)
    run = make_run(approver=denied)
    for n in range(2):
        assert (await call(reg, run, "fake", count=n)).is_error
    assert len(denied.requests) == 1  # a "no" also covers the run

    fresh = ScriptedApprover(Decision.ALLOW)
    await call(reg, make_run(approver=fresh), "fake", count=0)
    assert len(fresh.requests) == 1  # a new run asks again


@pytest.mark.asyncio
async def test_always_asks_for_each_distinct_call_only() -> None:
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(policy=Policy.ALWAYS))
    approver = ScriptedApprover(Decision.ALLOW, Decision.DENY)
    run = make_run(approver=approver)
    assert not (await call(reg, run, "fake", count=1)).is_error
    assert not (await call(reg, run, "fake", count=1, session_id="ignored")).is_error  # same after pinning
    assert len(approver.requests) == 1
    assert (await call(reg, run, "fake", count=2)).is_error
    assert (await call(reg, run, "fake", count=2)).is_error  # the denial is remembered too
    assert len(approver.requests) == 2
    assert approver.requests[1].preview is None and approver.requests[1].session_id == "S1"


@pytest.mark.asyncio
async def test_allow_for_run_upgrades_the_tool_to_auto() -> None:
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(policy=Policy.ALWAYS))
    reg.register(fake("other", policy=Policy.ALWAYS))
    approver = ScriptedApprover(Decision.ALLOW_FOR_RUN, default=Decision.DENY)
    run = make_run(approver=approver)
    for n in range(3):
        assert not (await call(reg, run, "fake", count=n)).is_error
    assert len(approver.requests) == 1 and run.allowed_for_run == {"fake"}
    assert (await call(reg, run, "other", count=1)).is_error  # only that tool


@pytest.mark.asyncio
async def test_policy_overrides_and_previews() -> None:
    async def preview(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"would count to {args['count']}"

    async def bad_preview(args: dict[str, Any], ctx: ToolContext) -> str:
        raise ValueError("no store")

    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(policy=Policy.AUTO, preview=preview))
    reg.register(fake("other", policy=Policy.ONCE, preview=bad_preview))
    approver = ScriptedApprover(default=Decision.ALLOW)
    run = make_run(approver=approver)
    await call(reg, run, "fake", count=3)
    assert approver.requests == []
    reg.set_policy_overrides({"fake": "always", "other": "auto"})
    await call(reg, run, "fake", count=3)
    await call(reg, run, "other", count=3)
    assert [r.preview for r in approver.requests] == ["would count to 3"]
    reg.set_policy_overrides({"other": Policy.ALWAYS})
    await call(reg, run, "other", count=3)
    assert approver.requests[-1].preview == "(no preview: no store)"


@pytest.mark.asyncio
async def test_result_cap_truncates_with_a_notice() -> None:
    reg = ToolRegistry(None, result_cap=100)  # type: ignore[arg-type]
    reg.register(fake("big", Recorder("x" * 1000), schema={"type": "object"}))
    reg.register(fake("small", Recorder("y" * 100), schema={"type": "object"}))
    res = await call(reg, make_run(), "big")
    assert res.content.startswith("x" * 100) and not res.content.startswith("x" * 101)
    assert "[truncated: the result was 1,000 characters; only the first 100 are shown]" in res.content
    assert (await call(reg, make_run(), "small")).content == "y" * 100


@pytest.mark.asyncio
async def test_results_are_json_text_with_structured_data() -> None:
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    reg.register(fake(handler=Recorder({"ids": ["a"], "n": 1})))
    res = await call(reg, make_run(), "fake", count=0)
    assert json.loads(res.content) == {"ids": ["a"], "n": 1} == res.structured
    assert res.name == "fake" and res.duration_ms is not None and res.duration_ms >= 0
    assert res.to_json() == {"call_id": res.call_id, "name": "fake", "is_error": False, "content": res.content,
                             "structured": res.structured, "outcome": "ok", "change_id": None}


def test_register_refuses_duplicates_and_invalid_schemas() -> None:
    reg = ToolRegistry(None)  # type: ignore[arg-type]
    seen: list[int] = []
    reg.subscribe(lambda: seen.append(1))
    reg.register(fake())
    with pytest.raises(ValueError, match="already registered"):
        reg.register(fake())
    with pytest.raises(ValueError, match="invalid input schema"):
        reg.register(fake("bad", schema={"type": "no-such-type"}))
    reg.unregister("fake")
    assert reg.get("fake") is None and len(seen) == 2


def test_model_schema_hides_the_pinned_session() -> None:
    shown = model_schema(fake())
    assert "session_id" not in shown["properties"] and shown["required"] == ["count"]
    assert "session_id" in model_schema(fake(pin_session=False))["properties"]


def test_wire_names_resolve_from_one_map_per_tool_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call by wire name (``srv__tool``) looks the tool up in a map built once per tool list; a
    changed list builds it again, so a replaced or removed tool resolves as it now is."""
    import cks_desktop.tools.registry as registry_module

    reg = ToolRegistry(None)  # type: ignore[arg-type]
    for i in range(100):
        reg.register(fake(f"srv:tool{i}", source="srv"))
    calls: list[str] = []
    real = registry_module.to_wire
    monkeypatch.setattr(registry_module, "to_wire", lambda name: calls.append(name) or real(name))
    for _ in range(50):
        assert reg.resolve("srv__tool7") is reg.get("srv:tool7")
    assert len(calls) <= 100  # one map, not 100 names per call
    reg.unregister("srv:tool7")
    assert reg.resolve("srv__tool7") is None
    reg.register(fake("srv:tool7", source="srv"))
    assert reg.resolve("srv__tool7") is reg.get("srv:tool7")
