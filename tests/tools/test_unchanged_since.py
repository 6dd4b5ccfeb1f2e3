"""The write tools take ``if_unchanged_since`` (graph/edit_base.py), on both backends: the model
reads the object's version with get_object, someone else edits meanwhile, and the model's
update either applies on top (other fields) or comes back as a tool error naming who changed
what (the same field) — data the model can act on — with nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401
from tests.tools.conftest import call


@pytest.fixture(params=("sqlite", "postgresql"))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from cks_desktop.graph.store import GraphStore

    if request.param == "sqlite":
        st = GraphStore.open(tmp_path / "graph.sqlite3")
    else:
        from cks_desktop.graph.pg.store import PgGraphStore

        st = PgGraphStore.connect(request.getfixturevalue("pg_url"))
    try:
        yield st
    finally:
        st.close()


@pytest.fixture
def model(store: Any) -> tuple[ToolRegistry, Run, str]:
    from cks_desktop.tools.builtin import build_registry

    sid = store.create_session("Concurrent").id
    store.apply(sid, [{"op": "add_object", "type": "Task", "name": "Ship it",
                       "properties": {"status": "open", "owner": "ann"}}], "t")
    return build_registry(store), Run(sid, Caller.MODEL, approver=StaticApprover(Decision.ALLOW)), sid


@pytest.mark.asyncio
async def test_update_object_on_top_of_what_the_model_read(store: Any, model: tuple[ToolRegistry, Run, str]) -> None:
    registry, run, sid = model
    spec = registry.resolve("update_object")
    assert spec is not None and "if_unchanged_since" in spec.input_schema["properties"]
    read = await call(registry, run, "get_object", session_id=sid, ref="Ship it")
    version = read.structured["object"]["version"]
    assert isinstance(version, str) and version.startswith("c_")
    store.apply(sid, [{"op": "update_object", "ref": "Ship it", "set_properties": {"status": "blocked"}}], "bob")

    clash = await call(registry, run, "update_object", session_id=sid, ref="Ship it",
                       set_properties={"status": "done"}, if_unchanged_since=version)
    assert clash.is_error and "changed by someone else: property 'status' was changed by bob" in clash.content
    assert store.resolve(sid, "Ship it").properties["status"] == "blocked"  # nothing written

    on_top = await call(registry, run, "update_object", session_id=sid, ref="Ship it",
                        set_properties={"owner": "bo"}, if_unchanged_since=version)
    assert not on_top.is_error, on_top.content
    assert store.resolve(sid, "Ship it").properties == {"status": "blocked", "owner": "bo"}


@pytest.mark.asyncio
async def test_evolve_knowledge_refuses_the_whole_batch_on_a_clash(store: Any,
                                                                   model: tuple[ToolRegistry, Run, str]) -> None:
    registry, run, sid = model
    version = store.object_version(sid, "Ship it")
    store.apply(sid, [{"op": "update_object", "ref": "Ship it", "name": "Ship it now"}], "bob")
    result = await call(registry, run, "evolve_knowledge", session_id=sid, operations=[
        {"op": "add_object", "type": "Task", "name": "Write notes"},
        {"op": "update_object", "ref": "Ship it now", "name": "Ship it today", "if_unchanged_since": version}])
    assert result.is_error and "operation 1 (update_object): changed by someone else: its name" in result.content
    assert [o.name for o in store.list_objects(sid)[0]] == ["Ship it now"]  # all or nothing
    guard_only = await call(registry, run, "evolve_knowledge", session_id=sid, operations=[
        {"op": "update_object", "ref": "Ship it now", "if_unchanged_since": version}])
    assert guard_only.is_error and "Nothing was written" in guard_only.content
