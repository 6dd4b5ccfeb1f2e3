"""Changes, inverse ops and revert."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import NotFound, StoreError, ValidationFailed
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

from .conftest import dump, fts_rows, graph_rows


def _build(store: GraphStore, session: Session) -> dict[str, str]:
    r = store.apply(session.id, [
        {"op": "add_object", "type": "Person", "name": "Alice", "label": "$a",
         "properties": {"bio": "plays the violin", "tags": ["x", {"y": 1}]}},
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$b"},
        {"op": "add_object", "type": "City", "name": "Paris", "label": "$p"},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows", "properties": {"since": 2001}},
        {"op": "add_relation", "source": "$b", "target": "$a", "type": "admires"},
        {"op": "add_relation", "source": "$a", "target": "$p", "type": "lives_in"},
        {"op": "add_relation", "source": "$a", "target": "$a", "type": "self"},
        {"op": "define_type", "kind": "object", "name": "City", "description": "a city"},
    ], "setup")
    return r.created


def test_revert_of_remove_object_restores_identical_rows(store: GraphStore, session: Session) -> None:
    _build(store, session)
    before_rows = graph_rows(store, session.id)
    before_fts = fts_rows(store, session.id)
    removal = store.apply(session.id, [{"op": "remove_object", "ref": "Alice"}], "model")
    assert removal.change is not None
    assert len(store.all_relations(session.id)) == 0
    undo = store.revert(session.id, removal.change.id, "user")
    assert undo.change is not None and undo.change.reverts == removal.change.id
    assert undo.summary == "adds 1 object, 4 relations"
    assert graph_rows(store, session.id) == before_rows  # same ids, properties, timestamps
    assert fts_rows(store, session.id) == before_fts
    assert [c.id for c in store.list_changes(session.id)][:2] == [undo.change.id, removal.change.id]


def test_revert_of_a_mixed_change_restores_the_graph(store: GraphStore, session: Session) -> None:
    ids = _build(store, session)
    before = graph_rows(store, session.id), store.type_defs(session.id)
    change = store.apply(session.id, [
        {"op": "update_object", "ref": "Bob", "name": "Robert", "type": "Human",
         "set_properties": {"age": 40}, "remove_properties": []},
        {"op": "update_object", "ref": "Alice", "set_properties": {"bio": "cello"}, "remove_properties": ["tags"]},
        {"op": "add_object", "type": "Person", "name": "Carol", "label": "$c"},
        {"op": "add_relation", "source": "$c", "target": "Robert", "type": "knows"},
        {"op": "remove_object", "ref": "Paris"},
        {"op": "define_type", "kind": "object", "name": "city", "description": "changed",
         "properties_schema": {"type": "object"}},
        {"op": "define_type", "kind": "relation", "name": "knows"},
        {"op": "add_object", "type": "person", "name": "alice", "on_conflict": "update",
         "properties": {"extra": True}},
        {"op": "update_relation", "relation_id": store.relations_of(session.id, ids["$a"])[1][0].id,
         "target": "Carol", "properties": {"new": 1}},
    ], "model").change
    assert change is not None
    store.revert(session.id, change.id, "user")
    assert (graph_rows(store, session.id), store.type_defs(session.id)) == before


def test_reverting_a_revert_redoes(store: GraphStore, session: Session) -> None:
    _build(store, session)
    change = store.apply(session.id, [{"op": "remove_object", "ref": "Bob"}], "model").change
    assert change is not None
    after = graph_rows(store, session.id)
    undo = store.revert(session.id, change.id, "user").change
    assert undo is not None
    redo = store.revert(session.id, undo.id, "user")
    assert redo.change is not None and redo.change.reverts == undo.id
    assert graph_rows(store, session.id) == after


def test_revert_conflicts_fail_cleanly(store: GraphStore, session: Session) -> None:
    _build(store, session)
    added = store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Dora", "label": "$d"},
                                     {"op": "add_relation", "source": "$d", "target": "Alice", "type": "knows"}],
                        "model").change
    assert added is not None
    store.apply(session.id, [{"op": "remove_object", "ref": "Dora"}], "user")
    before = dump(store)
    with pytest.raises(ValidationFailed) as info:
        store.revert(session.id, added.id, "user")
    assert all("cannot be reverted cleanly" in e["message"] for e in info.value.errors)
    assert dump(store) == before


def test_revert_after_a_later_edit_applies_cleanly(store: GraphStore, session: Session) -> None:
    _build(store, session)
    added = store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Eve", "label": "$e"}],
                        "model")
    assert added.change is not None
    store.apply(session.id, [{"op": "update_object", "ref": "Eve", "set_properties": {"x": 1}},
                             {"op": "add_relation", "source": "Eve", "target": "Bob", "type": "knows"}], "user")
    store.revert(session.id, added.change.id, "user")  # removes Eve and the later relation with it
    with pytest.raises(NotFound):
        store.resolve(session.id, "Eve")


def test_revert_guards(store: GraphStore, session: Session) -> None:
    _build(store, session)
    change = store.apply(session.id, [{"op": "remove_object", "ref": "Bob"}], "model").change
    assert change is not None
    store.revert(session.id, change.id, "user")
    with pytest.raises(StoreError, match="already reverted"):
        store.revert(session.id, change.id, "user")
    with pytest.raises(NotFound, match="No change"):
        store.revert(session.id, "c_nope", "user")
    other = store.create_session("other")
    with pytest.raises(NotFound):
        store.revert(other.id, change.id, "user")


def test_changes_touching_an_object(store: GraphStore, session: Session) -> None:
    ids = _build(store, session)
    c1 = store.apply(session.id, [{"op": "update_object", "ref": "Bob", "set_properties": {"a": 1}}], "t").change
    c2 = store.apply(session.id, [{"op": "add_object", "type": "X", "name": "x", "label": "$x"},
                                  {"op": "add_relation", "source": "$x", "target": "Bob", "type": "t"}], "t").change
    c3 = store.apply(session.id, [{"op": "update_object", "ref": "Alice", "set_properties": {"a": 1}}], "t").change
    assert c1 and c2 and c3
    touching = [c.id for c in store.changes_touching(session.id, ids["$b"])]
    assert touching[:2] == [c2.id, c1.id] and c3.id not in touching
    assert len(touching) == 3  # and the change that created Bob
    assert store.list_changes(session.id, limit=2)[0].id == c3.id
    assert store.list_changes(session.id, limit=1, with_ops=False)[0].ops == []
