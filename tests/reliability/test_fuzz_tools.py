"""Every built-in tool's arguments, fuzzed from its own JSON Schema (valid and
broken draws), through ``ToolRegistry.invoke`` as a model would call them.

For every draw: ``invoke`` returns a result (never raises), the result says
something, a failed call leaves the whole database byte-for-byte as it was,
the other session is never touched, and nothing of it shows in any result. At
the end the file passes the integrity checks and its change history replays to
exactly the graph.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cks_desktop.agent.knowledge import register_agent_tools
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult
from tests.reliability import schema_strategies as S
from tests.reliability.crash_batches import replay
from tests.reliability.world import (
    World,
    build_world,
    check_store,
    cursors,
    dump,
    leaks,
    refs,
    session_rows,
)

CI = settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.filter_too_much, HealthCheck.data_too_large])


def _registry(w: World) -> ToolRegistry:
    registry = build_registry(w.store)
    register_agent_tools(registry)
    return registry


def exposed_names() -> list[str]:
    from cks_desktop.tools.builtin import builtin_specs

    names = [s.name for s in builtin_specs() if s.llm_exposed]
    return sorted([*names, "construct_knowledge"])


def admin_names() -> list[str]:
    from cks_desktop.tools.builtin import builtin_specs

    return sorted(s.name for s in builtin_specs() if not s.llm_exposed)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """One graph for all draws of a test (state carries over, as in a long chat); checked at the end."""
    w = build_world(tmp_path / "fuzz.sqlite3")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "notes.txt").write_text("hello\n")
    (tmp_path / "outside.txt").write_text(f"{'ZZSECRETZZ'} outside\n")
    try:
        yield w
        final_checks(w)
    finally:
        w.store.close()


@pytest.fixture
def registry(world: World) -> ToolRegistry:
    return _registry(world)


def hints(w: World, folder: Path) -> dict[str, st.SearchStrategy[Any]]:
    ref = st.sampled_from(refs(w))
    return {
        "ref": ref, "source": ref, "target": ref, "keep": ref, "merge": ref,
        "relation_id": st.sampled_from([*w.mine_relations, *w.their_relations, "r_x"]),
        "change_id": st.sampled_from([*w.mine_changes, *w.their_changes]),
        "session_id": st.sampled_from([w.theirs, w.mine, "", "s_X"]),
        "cursor": st.sampled_from(cursors(w)),
        "type": st.sampled_from(["Person", "person", "City", "Band", "ZZTYPEZZ"[:2] + "x", "knows"]),
        "query": st.sampled_from(["Ada", "Eve", "Twin*", '"Shared Name"', "NEAR(Ada Bob)", "born:1815"]),
        "path": st.sampled_from([str(folder / "files" / "notes.txt"), "notes.txt", "../outside.txt",
                                 str(folder / "outside.txt"), "/etc/passwd", "files/../../outside.txt"]),
    }


def invoke(registry: ToolRegistry, run: Run, name: str, args: Any) -> ToolResult:
    async def go() -> ToolResult:
        return await registry.invoke(ToolCall("fuzz", name, args), run)

    return asyncio.run(go())


def check_call(w: World, registry: ToolRegistry, run: Run, name: str, args: Any) -> ToolResult:
    before = dump(w.store)
    theirs_before = session_rows(w.store, w.theirs)
    result = invoke(registry, run, name, args)
    assert isinstance(result, ToolResult)
    assert isinstance(result.content, str) and result.content.strip(), f"{name}: an empty result"
    if result.is_error:
        assert dump(w.store) == before, f"{name} failed but wrote: {result.content[:300]}"
    if run.caller.is_model:
        assert session_rows(w.store, w.theirs) == theirs_before, f"{name} changed the other session"
        shown = result.content + json.dumps(result.structured, default=str, ensure_ascii=False)
        assert not leaks(w, shown, args), f"{name} leaked the other session: {leaks(w, shown, args)}"
    return result


def final_checks(w: World) -> None:
    check_store(w.store)
    with w.store.connection_lock() as conn:
        for sid in (w.mine, w.theirs):
            changes = conn.execute("SELECT id, ops FROM changes WHERE session_id = ? ORDER BY id", (sid,)).fetchall()
            objs, rels = replay([(c[0], c[1]) for c in changes])
            table_objs = {i: (t, n, json.loads(p)) for i, t, n, p in conn.execute(
                "SELECT id, type, name, properties FROM objects WHERE session_id = ?", (sid,))}
            table_rels = {i: (t, s, d, json.loads(p)) for i, t, s, d, p in conn.execute(
                "SELECT id, type, source_id, target_id, properties FROM relations WHERE session_id = ?", (sid,))}
            assert objs == table_objs and rels == table_rels, "history and graph disagree"


@pytest.mark.parametrize("name", exposed_names())
@CI
@given(data=st.data())
def test_model_calls_with_fuzzed_arguments(name: str, world: World, registry: ToolRegistry, tmp_path: Path,
                                           data: st.DataObject) -> None:
    spec = registry.get(name)
    assert spec is not None
    run = Run(session_id=world.mine, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW),
              allowed_folders=(tmp_path / "files",))
    h = hints(world, tmp_path)
    args = data.draw(st.one_of(S.arguments(spec.input_schema, h), S.broken(spec.input_schema, h)), label="args")
    check_call(world, registry, run, name, args)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", exposed_names())
@settings(CI, max_examples=300)
@given(data=st.data())
def test_model_calls_with_fuzzed_arguments_long(name: str, world: World, registry: ToolRegistry, tmp_path: Path,
                                               data: st.DataObject) -> None:
    test_model_calls_with_fuzzed_arguments.hypothesis.inner_test(name, world, registry, tmp_path, data)
