"""The single-write tools and merge_objects through registry.invoke."""

from __future__ import annotations

from typing import Any

import pytest

from cks_desktop.tools.approval import Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller
from tests.tools.conftest import ScriptedApprover, call

pytestmark = pytest.mark.asyncio


async def test_add_object_and_conflicts(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    res = await call(registry, run, "add_object", type="Person", name="Ada", properties={"born": 1815})
    assert not res.is_error, res.content
    data = res.structured
    assert data["status"] == "created" and data["object"]["name"] == "Ada" and data["change_id"]
    assert data["object"]["properties"] == {"born": 1815}
    again = await call(registry, run, "add_object", type="Person", name="ada")
    assert again.is_error and "already exists" in again.content and "operation 0" not in again.content
    assert again.structured["status"] == "validation_failed"
    reused = await call(registry, run, "add_object", type="Person", name="ADA", on_conflict="reuse")
    assert reused.structured["status"] == "reused" and reused.structured["object"]["id"] == data["object"]["id"]
    updated = await call(registry, run, "add_object", type="Person", name="Ada", on_conflict="update",
                         properties={"died": 1852})
    assert updated.structured["status"] == "updated"
    assert updated.structured["object"]["properties"] == {"born": 1815, "died": 1852}
    assert store.counts(session_id)["objects"] == 1
    # Changes record who wrote them.
    assert store.list_changes(session_id)[0].origin == "user"


async def test_update_object(registry: ToolRegistry, run: Run) -> None:
    await call(registry, run, "add_object", type="Person", name="Ada", properties={"a": 1, "b": 2})
    res = await call(registry, run, "update_object", ref="Ada", name="Ada Lovelace", set_properties={"c": 3},
                     remove_properties=["a"])
    assert not res.is_error, res.content
    assert res.structured["object"]["name"] == "Ada Lovelace"
    assert res.structured["object"]["properties"] == {"b": 2, "c": 3}
    nothing = await call(registry, run, "update_object", ref="Ada Lovelace")
    assert nothing.is_error and "Nothing to change" in nothing.content
    missing = await call(registry, run, "update_object", ref="Nobody", name="x")
    assert missing.is_error and "Nobody" in missing.content


async def test_remove_object_asks_once_with_a_preview(store: Any, session_id: str, registry: ToolRegistry) -> None:
    store.apply(session_id, [
        {"op": "add_object", "type": "T", "name": "a"}, {"op": "add_object", "type": "T", "name": "b"},
        {"op": "add_object", "type": "T", "name": "c"},
        {"op": "add_relation", "source": "a", "target": "b", "type": "r"}], "user")
    denied = ScriptedApprover(default=Decision.DENY, denial_hint="Say yes next time.")
    res = await call(registry, Run(session_id, Caller.MODEL, approver=denied), "remove_object", ref="a")
    assert res.is_error and res.content.endswith("Say yes next time.") and store.counts(session_id)["objects"] == 3
    request = denied.requests[0]
    assert request.tool.name == "remove_object" and request.preview and "would fail" not in request.preview

    approver = ScriptedApprover(default=Decision.ALLOW)
    run = Run(session_id, Caller.MODEL, approver=approver)
    res = await call(registry, run, "remove_object", ref="a")
    assert not res.is_error, res.content
    assert res.structured["removed"]["name"] == "a" and res.structured["relations_removed"] == 1
    assert store.counts(session_id) == {"objects": 2, "relations": 0}
    res = await call(registry, run, "remove_object", ref="b")
    assert not res.is_error and len(approver.requests) == 1  # once per run
    res = await call(registry, run, "remove_object", ref="a")
    assert res.is_error and "'a'" in res.content


async def test_add_and_remove_relation(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    store.apply(session_id, [{"op": "add_object", "type": "T", "name": "a"},
                             {"op": "add_object", "type": "T", "name": "b"}], "user")
    res = await call(registry, run, "add_relation", source="a", target="B", type="likes", properties={"w": 1})
    assert not res.is_error, res.content
    rel = res.structured["relation"]
    assert (rel["source"]["name"], rel["target"]["name"], rel["type"], rel["properties"]) == ("a", "b", "likes",
                                                                                              {"w": 1})
    bad = await call(registry, run, "add_relation", source="a", target="zzz", type="likes")
    assert bad.is_error and "zzz" in bad.content
    removed = await call(registry, run, "remove_relation", relation_id=rel["id"])
    assert not removed.is_error, removed.content
    assert removed.structured["removed"]["id"] == rel["id"] and store.counts(session_id)["relations"] == 0
    again = await call(registry, run, "remove_relation", relation_id=rel["id"])
    assert again.is_error


async def test_merge_objects(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    ids = store.apply(session_id, [
        {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$keep",
         "properties": {"born": 1815, "aliases": ["Ada"]}},
        {"op": "add_object", "type": "Person", "name": "Augusta Ada King", "label": "$dup",
         "properties": {"born": 1816, "title": "Countess"}},
        {"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$cb"},
        {"op": "add_object", "type": "Machine", "name": "Analytical Engine", "label": "$ae"},
        {"op": "add_relation", "source": "$keep", "target": "$cb", "type": "knows"},
        {"op": "add_relation", "source": "$dup", "target": "$cb", "type": "knows"},      # duplicate after merge
        {"op": "add_relation", "source": "$dup", "target": "$ae", "type": "wrote_about", "label": "$w"},
        {"op": "add_relation", "source": "$cb", "target": "$dup", "type": "admired", "label": "$adm"},
        {"op": "add_relation", "source": "$dup", "target": "$keep", "type": "same_as"},  # link between the two
    ], "user").created
    before = store.export(session_id, "json")

    res = await call(registry, run, "merge_objects", keep="Ada Lovelace", merge="Augusta Ada King")
    assert not res.is_error, res.content
    data = res.structured
    assert data["kept"]["properties"] == {"born": 1815, "aliases": ["Ada", "Augusta Ada King"],
                                          "title": "Countess"}
    assert data["conflicts"] == [{"property": "born", "kept": 1815, "dropped": 1816}]
    assert (data["relations_repointed"], data["relations_dropped"]) == (2, 2)
    assert data["removed"]["id"] == ids["$dup"]
    assert store.counts(session_id) == {"objects": 3, "relations": 3}
    assert store.get_relation(session_id, ids["$w"]).source_id == ids["$keep"]
    assert store.get_relation(session_id, ids["$adm"]).target_id == ids["$keep"]
    assert len(store.list_changes(session_id)) == 2  # one change for the whole merge

    undo = await call(registry, run, "revert_change", change_id=data["change_id"])
    assert not undo.is_error, undo.content
    assert store.export(session_id, "json") == before

    same = await call(registry, run, "merge_objects", keep="Ada Lovelace", merge=ids["$keep"])
    assert same.is_error and "same object" in same.content


async def test_define_type_enforces_its_schema(registry: ToolRegistry, run: Run) -> None:
    schema = {"type": "object", "properties": {"born": {"type": "integer"}}, "required": ["born"]}
    res = await call(registry, run, "define_type", kind="object", name="Person", description="A human.",
                     properties_schema=schema)
    assert not res.is_error, res.content
    assert res.structured["type"]["properties_schema"] == schema and res.structured["type"]["description"]
    bad_obj = await call(registry, run, "add_object", type="Person", name="Ada", properties={"born": "1815"})
    assert bad_obj.is_error
    good = await call(registry, run, "add_object", type="Person", name="Ada", properties={"born": 1815})
    assert not good.is_error, good.content
    types = (await call(registry, run, "list_types")).structured
    person = next(t for t in types["object_types"] if t["name"] == "Person")
    assert person["properties_schema"] == schema
    broken = await call(registry, run, "define_type", kind="object", name="X", properties_schema={"type": 5})
    assert broken.is_error and "not a valid JSON Schema" in broken.content


async def test_revert_change(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    added = (await call(registry, run, "add_object", type="T", name="temp")).structured
    res = await call(registry, run, "revert_change", change_id=added["change_id"])
    assert not res.is_error, res.content
    assert res.structured["status"] == "reverted" and res.structured["reverted"] == added["change_id"]
    assert store.counts(session_id)["objects"] == 0
    assert store.list_changes(session_id)[0].reverts == added["change_id"]
    missing = await call(registry, run, "revert_change", change_id="c_nope")
    assert missing.is_error


async def test_revert_preview_describes_the_undo(store: Any, session_id: str, registry: ToolRegistry) -> None:
    change = store.apply(session_id, [{"op": "add_object", "type": "T", "name": "x"}], "user").change
    approver = ScriptedApprover(default=Decision.DENY)
    await call(registry, Run(session_id, Caller.MODEL, approver=approver), "revert_change", change_id=change.id)
    assert approver.requests[0].preview.startswith(f"Reverts change {change.id}")
    assert store.counts(session_id)["objects"] == 1
