"""Objects, relations and chat messages as searchable items: found by words and meaning, kept
current after writes and reverts, embedded only when their text changed, never across sessions."""

from __future__ import annotations

import json

import pytest

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.retrieval import items
from cks_desktop.retrieval.service import retrieve
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, Outcome, ToolCall
from tests.retrieval.conftest import DISTRACTORS, add_text


def _chat(store: GraphStore, sid: str, *messages: Message) -> None:
    TranscriptStore.for_store(store).append(sid, list(messages))


def _world(store: GraphStore, name: str = "s") -> str:
    sid = store.create_session(name).id
    add_text(store, sid, "notes.txt", "\n\n".join(DISTRACTORS))
    store.apply(sid, [
        {"op": "add_object", "type": "Person", "name": "Mirela Kovac", "label": "$m",
         "properties": {"aliases": ["the beekeeper"], "description": "Keeps forty hives above the vineyard."}},
        {"op": "add_object", "type": "Place", "name": "Hollow Ridge", "label": "$h"},
        {"op": "add_relation", "source": "$m", "target": "$h", "type": "lives_in"},
    ], "test")
    return sid


def test_an_objects_description_and_aliases_find_it(store: GraphStore) -> None:
    sid = _world(store)
    found = retrieve(store, sid, "Who keeps hives?")
    assert "Mirela Kovac" in [o.name for o in found.objects]
    by_alias = retrieve(store, sid, "beekeeper")
    assert by_alias.objects and by_alias.objects[0].name == "Mirela Kovac"
    assert "lives_in" in [r.type for r in retrieve(store, sid, "Where does Mirela live?").relations]
    assert set(found.to_json()) == {"passages", "objects", "relations", "messages"}


def test_a_past_message_and_a_tool_result_are_found_with_their_place_in_the_chat(store: GraphStore) -> None:
    sid = _world(store)
    _chat(store, sid, Message.user("Remember that the harvest festival moved to the ninth of October."),
          Message("assistant", [Text("Noted."), ToolCallPart("c1", "search", {"q": "x"})]),
          Message("tool", [ToolResultPart("c1", "search", "Ledger: the cooperative sold 312 jars of acacia honey.")]))
    found = retrieve(store, sid, "When is the harvest festival?")
    assert found.messages and found.messages[0].seq == 1 and found.messages[0].role == "user"
    assert "ninth of October" in found.messages[0].text
    tool = retrieve(store, sid, "How many jars of honey were sold?")
    assert tool.messages[0].role == "tool" and "312 jars" in tool.messages[0].text
    payload = json.loads(json.dumps(tool.to_json()))
    assert payload["messages"][0]["seq"] == tool.messages[0].seq


def test_a_search_never_returns_another_sessions_items(store: GraphStore) -> None:
    mine = _world(store, "mine")
    other = store.create_session("other").id
    store.apply(other, [{"op": "add_object", "type": "Person", "name": "Tobias Wren",
                         "properties": {"description": "Secret agent of the lighthouse."}}], "test")
    _chat(store, other, Message.user("The vault code is lighthouse 4471."))
    items.sync(store, other)
    found = retrieve(store, mine, "Tobias Wren lighthouse vault code 4471")
    assert "Tobias Wren" not in [o.name for o in found.objects]
    assert not any("4471" in m.text for m in found.messages)
    assert all(o.session_id == mine for o in found.objects)


def test_a_write_and_its_revert_are_seen_by_the_next_search_and_only_changed_texts_are_embedded(
        store: GraphStore) -> None:
    sid = _world(store)
    first = items.sync(store, sid)
    assert (first.items, first.embedded) == (3, 3)
    assert items.sync(store, sid).embedded == 0  # nothing changed: nothing embedded
    mirela = store.resolve(sid, "Mirela Kovac")
    store.apply(sid, [{"op": "update_object", "ref": mirela.id,
                       "set_properties": {"description": "Builds wooden boats on the lake."}}], "test")
    changed = items.sync(store, sid)
    # only the object's own text changed (the relation's names it, by name, which stayed)
    assert (changed.embedded, changed.removed) == (1, 1)
    assert "Mirela Kovac" in [o.name for o in retrieve(store, sid, "Who builds boats?").objects]
    added = store.apply(sid, [{"op": "add_object", "type": "Ship", "name": "Silver Heron",
                               "properties": {"description": "A schooner with red sails."}}], "test")
    assert items.sync(store, sid).embedded == 1
    assert "Silver Heron" in [o.name for o in retrieve(store, sid, "schooner red sails").objects]
    assert added.change is not None
    store.revert(sid, added.change.id, "test")
    gone = items.sync(store, sid)
    assert (gone.embedded, gone.removed) == (0, 1)
    assert "Silver Heron" not in [o.name for o in retrieve(store, sid, "schooner red sails").objects]
    with store.connection_lock() as conn:
        assert conn.execute("SELECT count(*) FROM retrieval_items_fts WHERE retrieval_items_fts MATCH 'schooner'"
                            ).fetchone()[0] == 0


def test_an_unchanged_text_under_a_new_item_reuses_its_vector(store: GraphStore) -> None:
    sid = store.create_session("s").id
    _chat(store, sid, Message.user("Same words twice."))
    assert items.sync(store, sid).embedded == 1
    _chat(store, sid, Message.user("Same words twice."))
    again = items.sync(store, sid)
    assert (again.embedded, again.reused) == (0, 1)


def test_a_session_with_nothing_in_it_finds_nothing(store: GraphStore) -> None:
    sid = store.create_session("empty").id
    found = retrieve(store, sid, "anything at all")
    assert found.to_json() == {"passages": [], "objects": [], "relations": [], "messages": []}


@pytest.mark.asyncio
async def test_the_models_tool_searches_its_own_session_whatever_session_it_names(store: GraphStore) -> None:
    mine = _world(store, "mine")
    other = store.create_session("other").id
    _chat(store, other, Message.user("The vault code is lighthouse 4471."))
    _chat(store, mine, Message.user("The vault code is river 9920."))
    run = Run(session_id=mine, caller=Caller.MODEL)
    result = await build_registry(store).invoke(
        ToolCall("c1", "retrieve_passages", {"session_id": other, "question": "What is the vault code?"}), run)
    assert result.outcome is Outcome.OK, result.content
    texts = [m["text"] for m in result.structured["messages"]]
    assert any("9920" in t for t in texts) and not any("4471" in t for t in texts)
