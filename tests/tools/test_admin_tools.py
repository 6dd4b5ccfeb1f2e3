"""The session-management tools for USER/CLI callers, and import_graph."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller
from tests.tools.conftest import call

pytestmark = pytest.mark.asyncio


async def test_session_lifecycle(store: Any, session_id: str, registry: ToolRegistry) -> None:
    run = Run(session_id, Caller.CLI)
    created = await call(registry, run, "create_session", title="  Second  ")
    assert not created.is_error, created.content
    new = created.structured["session"]
    assert new["title"] == "Second" and new["id"] != session_id
    listed = (await call(registry, run, "list_sessions")).structured["sessions"]
    assert {s["id"] for s in listed} == {session_id, new["id"]} and all("objects" in s for s in listed)
    # Not pinned: the id given is the one acted on, not the run's.
    renamed = await call(registry, run, "rename_session", session_id=new["id"], title="Renamed")
    assert renamed.structured["session"] == {**new, "title": "Renamed"}
    assert store.get_session(session_id).title == "Tool tests"
    deleted = await call(registry, run, "delete_session", session_id=new["id"])
    assert deleted.structured["deleted"]["id"] == new["id"]
    assert [s.id for s in store.list_sessions()] == [session_id]
    missing = await call(registry, run, "rename_session", session_id=new["id"], title="x")
    assert missing.is_error
    gone = await call(registry, run, "delete_session", session_id=new["id"])
    assert gone.is_error
    extra = await call(registry, run, "list_sessions", verbose=True)
    assert extra.is_error and "'verbose' was unexpected" in extra.content
    blank = await call(registry, run, "create_session", title="")
    assert blank.is_error and "at title" in blank.content


async def test_import_graph_round_trips_and_is_pinned(store: Any, session_id: str, registry: ToolRegistry) -> None:
    store.apply(session_id, [
        {"op": "add_object", "type": "Person", "name": "Ada", "label": "$a", "properties": {"born": 1815}},
        {"op": "add_object", "type": "Machine", "name": "Engine", "label": "$e"},
        {"op": "add_relation", "source": "$a", "target": "$e", "type": "wrote_about"}], "user")
    exported = store.export(session_id, "json")
    target = store.create_session("target").id
    # import_graph asks like the writes it performs: the CLI answers with --yes.
    run = Run(target, Caller.CLI, approver=StaticApprover(Decision.ALLOW))
    res = await call(registry, run, "import_graph", session_id=session_id, format="json", data=exported)
    assert not res.is_error, res.content
    assert res.structured["status"] == "imported" and res.structured["change_id"]
    assert store.counts(target) == {"objects": 2, "relations": 1}
    assert store.counts(session_id) == {"objects": 2, "relations": 1}  # the named session was not touched

    def shape(text: str) -> Any:
        doc = json.loads(text)
        return (sorted((o["type"], o["name"], json.dumps(o["properties"])) for o in doc["objects"]),
                sorted(r["type"] for r in doc["relations"]))

    assert shape(store.export(target, "json")) == shape(exported)
    bad = await call(registry, run, "import_graph", format="json", data="{not json")
    assert bad.is_error and store.counts(target)["objects"] == 2
