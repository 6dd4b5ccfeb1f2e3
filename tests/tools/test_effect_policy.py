"""Approval follows the effect, not the tool's name.

A call asks with the strictest policy among its tool's own and those of every
single-purpose tool whose effect it has: a batch with removals asks like
``remove_object``; merges, reverts and imports likewise; and the request's
reason says which operations made it ask. Real store, real registry.
"""

from __future__ import annotations

from typing import Any

import pytest

from cks_desktop.tools.approval import Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, Outcome, Policy
from tests.tools.conftest import ScriptedApprover, call

pytestmark = pytest.mark.asyncio


def seed(store: Any, session_id: str) -> dict[str, str]:
    result = store.apply(session_id, [
        {"op": "add_object", "type": "Person", "name": "Ada", "label": "$a"},
        {"op": "add_object", "type": "Person", "name": "Ada L.", "label": "$b"},
        {"op": "add_object", "type": "Machine", "name": "Engine", "label": "$e"},
        {"op": "add_relation", "source": "$a", "target": "$e", "type": "designed", "label": "$r"}], "user")
    return {**result.created, "change": result.change.id}


def model_run(session_id: str, approver: ScriptedApprover) -> Run:
    return Run(session_id, Caller.MODEL, approver=approver)


def graph(store: Any, session_id: str) -> tuple[int, int]:
    counts = store.counts(session_id)
    return counts.get("objects", 0), counts.get("relations", 0)


async def test_a_batch_with_removals_asks_like_remove_object_and_a_denial_writes_nothing(
        store: Any, session_id: str, registry: ToolRegistry) -> None:
    ids = seed(store, session_id)
    approver = ScriptedApprover(default=Decision.DENY)
    run = model_run(session_id, approver)
    before = graph(store, session_id)
    res = await call(registry, run, "evolve_knowledge", operations=[
        {"op": "remove_object", "ref": ids["$a"]}, {"op": "remove_object", "ref": "Engine"},
        {"op": "remove_relation", "relation_id": ids["$r"]}])
    assert res.is_error and res.outcome is Outcome.DENIED and res.structured is None
    assert graph(store, session_id) == before
    (request,) = approver.requests
    assert request.policy is Policy.ONCE
    assert dict(request.operations) == {"remove_object": 2, "remove_relation": 1}
    assert "2 remove_object operations (asks like Remove object" in request.reason
    assert "1 remove_relation operation (asks like Remove relation" in request.reason
    # Another kind of batch (only removals of objects) is asked about on its own; asked and denied.
    again = await call(registry, run, "evolve_knowledge", operations=[{"op": "remove_object", "ref": "Ada L."}])
    assert again.is_error and len(approver.requests) == 2
    assert graph(store, session_id) == before


async def test_additions_alone_do_not_ask(store: Any, session_id: str, registry: ToolRegistry) -> None:
    approver = ScriptedApprover(default=Decision.DENY)
    res = await call(registry, model_run(session_id, approver), "evolve_knowledge", operations=[
        {"op": "add_object", "type": "Person", "name": "Bob"}])
    assert not res.is_error, res.content
    assert approver.requests == []


async def test_overriding_the_batch_tool_to_auto_does_not_lift_the_stricter_policy(
        store: Any, session_id: str, registry: ToolRegistry) -> None:
    ids = seed(store, session_id)
    registry.set_policy_overrides({"evolve_knowledge": "auto", "merge_objects": "auto", "revert_change": "auto",
                                   "remove_object": "always"})
    approver = ScriptedApprover(default=Decision.DENY)
    run = model_run(session_id, approver)
    before = graph(store, session_id)
    ev = await call(registry, run, "evolve_knowledge", operations=[{"op": "remove_object", "ref": ids["$a"]}])
    merged = await call(registry, run, "merge_objects", keep=ids["$a"], merge=ids["$b"])
    reverted = await call(registry, run, "revert_change", change_id=ids["change"])  # undoing adds = removing
    assert all(r.is_error and r.outcome is Outcome.DENIED for r in (ev, merged, reverted)), \
        [r.content for r in (ev, merged, reverted)]
    assert graph(store, session_id) == before
    assert [r.policy for r in approver.requests] == [Policy.ALWAYS] * 3
    assert [r.tool.name for r in approver.requests] == ["evolve_knowledge", "merge_objects", "revert_change"]
    assert all("remove_object" in r.reason for r in approver.requests)


async def test_the_policies_of_additions_and_updates_carry_over_too(
        store: Any, session_id: str, registry: ToolRegistry) -> None:
    seed(store, session_id)
    registry.set_policy_overrides({"add_relation": "once", "update_object": "always"})
    approver = ScriptedApprover(default=Decision.DENY)
    run = model_run(session_id, approver)
    rel = await call(registry, run, "evolve_knowledge", operations=[
        {"op": "add_relation", "source": "Ada", "target": "Engine", "type": "admired"}])
    upd = await call(registry, run, "add_object", type="Person", name="Ada", properties={"born": 1}, on_conflict="update")
    plain = await call(registry, run, "add_object", type="Person", name="Carol")
    assert rel.is_error and upd.is_error and not plain.is_error
    assert [dict(r.operations) for r in approver.requests] == [{"add_relation": 1}, {"update_object": 1}]


async def test_allowing_a_batch_for_the_run_does_not_cover_other_kinds_of_operation(
        store: Any, session_id: str, registry: ToolRegistry) -> None:
    ids = seed(store, session_id)
    approver = ScriptedApprover(Decision.ALLOW_FOR_RUN, default=Decision.DENY)
    run = model_run(session_id, approver)
    first = await call(registry, run, "evolve_knowledge", operations=[{"op": "remove_relation",
                                                                      "relation_id": ids["$r"]}])
    assert not first.is_error, first.content
    second = await call(registry, run, "evolve_knowledge", operations=[{"op": "remove_object", "ref": "Engine"}])
    assert second.is_error and len(approver.requests) == 2
    assert store.resolve(session_id, "Engine").name == "Engine"


async def test_import_graph_asks_and_needs_graph_mutate(store: Any, session_id: str, registry: ToolRegistry) -> None:
    seed(store, session_id)
    data = store.export(session_id, "json")
    target = store.create_session("target").id
    approver = ScriptedApprover(default=Decision.DENY)
    res = await call(registry, Run(target, Caller.CLI, approver=approver), "import_graph", format="json", data=data)
    assert res.is_error and res.outcome is Outcome.DENIED and res.structured is None
    assert graph(store, target) == (0, 0)
    (request,) = approver.requests
    assert request.policy is Policy.ONCE and "Imports" in (request.preview or "")
    from cks_desktop.tools.types import Scope
    read_only = Run(target, Caller.CLI, approver=ScriptedApprover(default=Decision.ALLOW),
                    granted_scopes=frozenset({Scope.GRAPH_READ}))
    refused = await call(registry, read_only, "import_graph", format="json", data=data)
    assert refused.is_error and "graph.mutate" in refused.content and graph(store, target) == (0, 0)


async def test_every_tool_that_removes_asks_even_with_its_own_policy_set_to_auto(
        store: Any, session_id: str, registry: ToolRegistry) -> None:
    """The class, not the instances: every built-in that can remove something is overridden to
    ``auto`` and called with arguments that remove; each one still asks."""
    ids = seed(store, session_id)
    removing = {
        "remove_object": {"ref": ids["$a"]},
        "remove_relation": {"relation_id": ids["$r"]},
        "evolve_knowledge": {"operations": [{"op": "remove_object", "ref": ids["$a"]}]},
        "merge_objects": {"keep": ids["$a"], "merge": ids["$b"]},
        "revert_change": {"change_id": ids["change"]},
    }
    destructive = {s.name for s in registry.specs() if s.annotations.get("destructiveHint")} | {"evolve_knowledge"}
    assert destructive <= set(removing) | {"delete_session"}, destructive  # a new destructive tool joins this test
    overrides = {name: "auto" for name in removing if name not in ("remove_object", "remove_relation")}
    registry.set_policy_overrides(overrides)
    approver = ScriptedApprover(default=Decision.DENY)
    run = model_run(session_id, approver)
    before = graph(store, session_id)
    for name, args in removing.items():
        res = await call(registry, run, name, **args)
        assert res.is_error and res.outcome is Outcome.DENIED and res.structured is None, (name, res.content)
    assert graph(store, session_id) == before


async def test_a_registry_without_the_built_ins_asks_about_their_effects_as_they_would() -> None:
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.tools.builtin.effects import OP_TOOL
    from cks_desktop.tools.registry import ToolRegistry

    specs = {s.name: s for s in build_registry(None).specs()}
    bare = ToolRegistry(None)  # type: ignore[arg-type]
    for name in set(OP_TOOL.values()):
        assert bare.policy_of(name)[0] is specs[name].default_policy, name
    assert bare.policy_of("no_such_tool")[0] is Policy.ALWAYS


async def test_the_historys_compact_operations_count_like_their_single_tools() -> None:
    """A streamed import's undo is one ``remove_objects`` op: reverting it asks like Remove object."""
    from cks_desktop.graph.compact_ops import COMPACT_OPS
    from cks_desktop.tools.builtin.effects import COMPACT_OP_TOOL, UNKNOWN, op_effects

    assert set(COMPACT_OP_TOOL) == set(COMPACT_OPS)
    counts = op_effects([{"op": "remove_objects", "ids": ["o1", "o2", "o3"]},
                         {"op": "add_objects", "objects": [["o4", "T", "n", {}, 0, 0]]},
                         {"op": "add_relations", "relations": [["r1", "k", "o4", "o4", {}, 0]] * 2}])
    assert counts == {"remove_object": 3, "remove_relation": 1, "add_object": 1, "add_relation": 2}
    assert UNKNOWN not in counts
