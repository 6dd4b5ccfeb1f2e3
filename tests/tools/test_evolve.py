"""evolve_knowledge: labels, all-or-nothing, every failing op reported, dry runs."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from tests.tools.conftest import call

pytestmark = pytest.mark.asyncio


async def test_applies_a_batch_with_labels(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    res = await call(registry, run, "evolve_knowledge", operations=[
        {"op": "add_object", "type": "Person", "name": "Alice", "label": "$alice", "properties": {"age": 30}},
        {"op": "add_object", "type": "Company", "name": "Acme", "label": "$acme"},
        {"op": "add_relation", "source": "$alice", "target": "$acme", "type": "works_at", "label": "$job"},
        {"op": "update_object", "ref": "$alice", "set_properties": {"role": "engineer"}},
    ])
    assert not res.is_error, res.content
    data = res.structured
    assert data["status"] == "applied" and data["change_id"] and data["summary"]
    assert set(data["created"]) == {"$alice", "$acme", "$job"}
    alice = store.get_object(session_id, data["created"]["$alice"])
    assert alice.properties == {"age": 30, "role": "engineer"}
    assert store.get_relation(session_id, data["created"]["$job"]).target_id == data["created"]["$acme"]
    assert len(store.list_changes(session_id)) == 1


async def test_every_failing_operation_is_listed_and_nothing_is_written(
        store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    ops = [
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$bob"},
        {"op": "add_relation", "source": "$bob", "target": "Nobody", "type": "knows"},
        {"op": "add_object", "type": "Person", "name": "Carol"},
        {"op": "remove_object", "ref": "Ghost"},
    ]
    res = await call(registry, run, "evolve_knowledge", operations=ops)
    assert res.is_error
    assert res.structured["status"] == "validation_failed"
    assert [e["index"] for e in res.structured["errors"]] == [1, 3]
    assert "operation 1 (add_relation)" in res.content and "operation 3 (remove_object)" in res.content
    assert "Nothing was written" in res.content
    assert store.counts(session_id)["objects"] == 0 and store.list_changes(session_id) == []


async def test_malformed_operations_are_reported_by_index(store: Any, session_id: str, registry: ToolRegistry,
                                                          run: Run) -> None:
    res = await call(registry, run, "evolve_knowledge", operations=[
        {"op": "add_object", "type": "Person"},
        {"op": "add_object", "type": "Person", "name": "Ok"},
        {"op": "remove_object", "ref": "x", "name": "y"},
        {"op": "update_object", "ref": "Ok"},
    ])
    assert res.is_error and res.structured["status"] == "validation_failed"
    errors = {e["index"]: e["message"] for e in res.structured["errors"]}
    assert set(errors) == {0, 2, 3}
    assert "needs 'name'" in errors[0] and "does not take 'name'" in errors[2] and "changes nothing" in errors[3]
    assert store.counts(session_id)["objects"] == 0
    schema_bad = await call(registry, run, "evolve_knowledge", operations=[{"op": "explode"}])
    assert schema_bad.is_error and "at operations/0/op" in schema_bad.content
    empty = await call(registry, run, "evolve_knowledge", operations=[])
    assert empty.is_error and "at operations" in empty.content


async def test_dry_run_writes_nothing(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    res = await call(registry, run, "evolve_knowledge", dry_run=True, operations=[
        {"op": "add_object", "type": "T", "name": "a", "label": "$a"},
        {"op": "add_object", "type": "T", "name": "b", "label": "$b"},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "r"}])
    assert not res.is_error, res.content
    assert res.structured["status"] == "dry_run"
    assert res.structured["counts"]["objects_added"] == 2 and res.structured["counts"]["relations_added"] == 1
    assert "2 objects" in res.structured["summary"]
    assert store.counts(session_id)["objects"] == 0 and store.list_changes(session_id) == []
    failing = await call(registry, run, "evolve_knowledge", dry_run=True,
                         operations=[{"op": "remove_object", "ref": "nothing"}])
    assert failing.is_error and failing.structured["status"] == "validation_failed"


async def test_a_big_batch_runs_off_the_loop(store: Any, session_id: str, registry: ToolRegistry, run: Run) -> None:
    threads: list[int] = []
    store.subscribe(lambda event: threads.append(threading.get_ident()))
    ops = [{"op": "add_object", "type": "N", "name": f"n{i}", "label": f"$n{i}"} for i in range(300)]
    ops += [{"op": "add_relation", "source": f"$n{i}", "target": f"$n{i + 1}", "type": "next"} for i in range(299)]
    res = await call(registry, run, "evolve_knowledge", operations=ops)
    assert not res.is_error, res.content[:500]
    assert store.counts(session_id) == {"objects": 300, "relations": 299}
    assert threads and threading.get_ident() not in threads  # the write ran on a worker thread
