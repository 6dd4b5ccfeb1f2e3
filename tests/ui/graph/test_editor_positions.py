"""Hand edits go through the tool registry as origin "user" and undo; positions persist per session."""

from __future__ import annotations

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.ui.graph.editor import GraphEditor
from cks_desktop.graph.positions import PositionStore


@pytest.mark.asyncio
async def test_edits_are_recorded_as_user_changes_and_undo_reverts_them(
        store: GraphStore, registry: ToolRegistry, session: str) -> None:
    editor = GraphEditor(registry, session)
    added = await editor.add_object("Person", "Ada Lovelace", {"born": 1815})
    assert added.ok and added.created_id and added.change_id
    ada = added.created_id
    renamed = await editor.update_object(ada, name="Ada King", set_properties={"field": "maths"})
    assert renamed.ok
    assert store.get_object(session, ada).name == "Ada King"
    rel = await editor.add_relation(ada, store.resolve(session, "Person 0").id, "knows")
    assert rel.ok and rel.created_id
    changes = store.list_changes(session, 3)
    assert [c.origin for c in changes] == ["user", "user", "user"]
    assert editor.undo_stack == [added.change_id, renamed.change_id, rel.change_id]

    undone = await editor.undo()
    assert undone.ok and undone.message.startswith("Undone")
    assert store.list_changes(session, 1)[0].reverts == rel.change_id
    assert store.list_changes(session, 1)[0].origin == "user"
    await editor.undo()
    assert store.get_object(session, ada).name == "Ada Lovelace"
    assert "field" not in store.get_object(session, ada).properties
    await editor.undo()
    with pytest.raises(Exception):
        store.get_object(session, ada)
    assert not editor.can_undo
    nothing = await editor.undo()
    assert not nothing.ok and nothing.message == "Nothing to undo."


@pytest.mark.asyncio
async def test_deleting_many_is_one_change_and_one_undo(
        store: GraphStore, registry: ToolRegistry, session: str) -> None:
    editor = GraphEditor(registry, session)
    ids = [store.resolve(session, f"Person {i}").id for i in (0, 5, 10)]
    before = store.counts(session)
    result = await editor.remove_objects(ids)
    assert result.ok and len(editor.undo_stack) == 1
    assert store.counts(session)["objects"] == before["objects"] - 3
    await editor.undo()
    assert store.counts(session) == before


@pytest.mark.asyncio
async def test_failures_come_back_as_one_sentence(registry: ToolRegistry, session: str) -> None:
    editor = GraphEditor(registry, session)
    result = await editor.update_object("o_does_not_exist", name="x")
    assert not result.ok and "\n" not in result.message and result.message
    assert not editor.can_undo
    retyped = await editor.replace_relation("r_nope", "a", "b", "likes")
    assert not retyped.ok
    nothing = await editor.update_object("whatever")
    assert nothing.ok and nothing.message == "Nothing changed."
    closed = GraphEditor(registry, None)
    assert (await closed.add_object("A", "b")).message == "Open a session first."


def test_positions_round_trip_prune_and_cascade(store: GraphStore, session: str) -> None:
    positions = PositionStore.for_store(store)
    assert positions.load(session) == {}
    assert positions.save(session, [("o_a", 1.5, -2.0, False), ("o_b", 3.0, 4.0, True)])
    assert positions.save(session, [("o_a", 9.0, 9.0, True)])  # upsert
    assert positions.load(session) == {"o_a": (9.0, 9.0, True), "o_b": (3.0, 4.0, True)}
    assert positions.save(session, [("o_c", 0.0, 0.0, False)], replace=True)
    assert positions.load(session) == {"o_c": (0.0, 0.0, False)}
    store.delete_session(session)
    assert positions.load(session) == {}
    assert not positions.save(session, [("o_c", 0.0, 0.0, False)])  # session gone: nothing kept


def test_positions_survive_a_store_reopen(tmp_path) -> None:
    path = tmp_path / "p.sqlite3"
    with GraphStore.open(path) as s:
        sid = s.create_session("x").id
        PositionStore.for_store(s).save(sid, [("o_1", 1.0, 2.0, True)])
    with GraphStore.open(path) as s:
        assert PositionStore.for_store(s).load(sid) == {"o_1": (1.0, 2.0, True)}
