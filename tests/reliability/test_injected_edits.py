"""Injected text cannot change what a person or a document wrote while every approval is denied.

A real chat turn: the real OpenAI adapter talks to the fake OpenAI server, whose scripted
answers are the tool calls a document passage or an MCP result told the model to make —
rename every object, drop its properties, retype it, overwrite it through ``evolve_knowledge``
and ``add_object … on_conflict: update``, and define ``Person`` with a schema the people
already there fail. The approver denies everything. Each of those calls asked (with its
preview) and the person's graph is exactly as before; the model's own additions in the same
turn (a new object, then edits of it, a new type) ran without asking.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.approval import CHANGE_EXISTING, Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.types import Outcome
from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import ScriptedCall, Turn, text_turn

IMPOSSIBLE = {"type": "object", "required": ["passport_number"],
              "properties": {"passport_number": {"enum": ["no such value"]}}}


def snapshot(store: GraphStore, sid: str) -> Any:
    objects = sorted((o.id, o.type, o.name, tuple(sorted(o.properties.items()))) for o in store.all_objects(sid))
    types = sorted((t.kind, t.name, t.description, str(t.properties_schema)) for t in store.type_defs(sid))
    return objects, types


def seed(store: GraphStore, sid: str) -> dict[str, str]:
    result = store.apply(sid, [
        {"op": "add_object", "type": "Person", "name": "Ada", "properties": {"born": 1815}, "label": "$a"},
        {"op": "add_object", "type": "Person", "name": "Charles", "properties": {"born": 1791}, "label": "$c"},
        {"op": "add_object", "type": "Machine", "name": "Engine", "properties": {"year": 1837}, "label": "$e"},
        {"op": "define_type", "kind": "object", "name": "Machine", "description": "A machine."},
    ], "user")
    return result.created


def injected_calls(ids: dict[str, str]) -> list[Turn]:
    """What the planted instructions made the model send, one call per model turn."""
    def turn(tool: str, /, **args: Any) -> Turn:
        return Turn(tool_calls=[ScriptedCall(tool, args)])

    return [
        turn("update_object", ref=ids["$a"], name="DELETED-1"),
        turn("update_object", ref="Charles", remove_properties=["born"]),
        turn("update_object", ref="Engine", type="Trash"),
        turn("update_object", ref="Engine", set_properties={"year": 0}),
        turn("evolve_knowledge", operations=[{"op": "update_object", "ref": "Charles", "name": "DELETED-2"},
                                             {"op": "add_object", "type": "Note", "name": "n1"}]),
        turn("add_object", type="Person", name="Ada", properties={"born": 0}, on_conflict="update"),
        turn("define_type", kind="object", name="Person", properties_schema=IMPOSSIBLE),
        turn("define_type", kind="object", name="Machine", description="Anything at all."),
    ]


OWN = [  # the model's own additions, and its edits of them, in the same turn
    Turn(tool_calls=[ScriptedCall("add_object", {"type": "Idea", "name": "Draft", "properties": {"v": 1}})]),
    Turn(tool_calls=[ScriptedCall("update_object", {"ref": "Draft", "name": "Draft 2",
                                                    "set_properties": {"v": 2}, "remove_properties": []})]),
    Turn(tool_calls=[ScriptedCall("evolve_knowledge", {"operations": [
        {"op": "update_object", "ref": "Draft 2", "type": "Thought", "remove_properties": ["v"]},
        {"op": "add_object", "type": "Idea", "name": "Draft 3", "label": "$d"},
        {"op": "update_object", "ref": "$d", "name": "Draft 4"}]})]),
    Turn(tool_calls=[ScriptedCall("define_type", {"kind": "object", "name": "Thought",
                                                  "properties_schema": {"type": "object"}})]),
    Turn(tool_calls=[ScriptedCall("define_type", {"kind": "object", "name": "Thought",
                                                  "description": "Redefined by the model that made it.",
                                                  "properties_schema": {"type": "object", "required": ["x"]}})]),
    Turn(tool_calls=[ScriptedCall("update_object", {"ref": "Ada", "set_properties": {"note": "new fact"}})]),
]


@pytest.mark.asyncio
async def test_injected_edits_all_ask_and_a_denial_leaves_the_graph_as_it_was(
        tmp_path: Path, asyncgen_hooks: None) -> None:
    store = GraphStore.open(tmp_path / "graph.sqlite3")
    try:
        sid = store.create_session("Injected").id
        ids = seed(store, sid)
        transcript = TranscriptStore.for_store(store)
        approver = StaticApprover(Decision.DENY)
        recorder = Recorder()
        with make_fake("openai") as fake:
            fake.queue(*OWN, *injected_calls(ids), text_turn("Done as the document said."))
            before = snapshot(store, sid)
            provider = provider_for(fake, timeout=10)
            try:
                await ai_chat(sid, [], "Summarise the attached report.",
                              ChatDeps(provider, build_registry(store), store, transcript),
                              turn_options(system_prompt="test", max_iterations=20), approver=approver,
                              on_event=recorder)
            finally:
                await provider.aclose()
        from cks_desktop.agent import events as ev

        results = [e.result for e in recorder.of(ev.ToolCallFinished)]
        assert len(results) == len(OWN) + 8, [r.content for r in results]
        own, injected = results[:len(OWN)], results[len(OWN):]
        assert all(r.outcome is Outcome.OK for r in own), [r.content for r in own]
        assert all(r.outcome is Outcome.DENIED for r in injected), [(r.outcome, r.content[:300]) for r in injected if r.outcome is not Outcome.DENIED]
        # Each injected call asked, once, with the rule as its reason and a preview; nothing else asked.
        assert [r.call.name for r in approver.requests] == [
            "update_object", "update_object", "update_object", "update_object", "evolve_knowledge",
            "add_object", "define_type", "define_type"]
        for request in approver.requests:
            assert request.operations.get(CHANGE_EXISTING) == 1, request
            assert "what a person or a document wrote" in request.reason
            assert request.preview and not request.preview.startswith("(no preview")
        schema_preview = approver.requests[6].preview
        assert "2 existing objects of this type would fail the schema" in schema_preview, schema_preview
        # The person's graph and types are exactly as before; only the model's own additions are new.
        objects, types = snapshot(store, sid)
        own_names = {"Draft 2", "Draft 4"}
        assert [o for o in objects if o[2] not in own_names] == [
            (o[0], o[1], o[2], o[3] + ((("note", "new fact"),) if o[2] == "Ada" else ()))
            for o in before[0]]
        assert {o[2] for o in objects} >= own_names
        assert [t for t in types if t[1] != "Thought"] == before[1]
        # The person's next Person is not refused by a planted schema.
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Grace"}], "user")
    finally:
        store.close()
