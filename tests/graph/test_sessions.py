"""Sessions: create, rename, instructions, delete (everything of the session goes)."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import NotFound, StoreError
from cks_desktop.graph.events import SessionEvent
from cks_desktop.graph.store import GraphStore

from .conftest import dump


def test_session_lifecycle_and_events(store: GraphStore, events: list[object]) -> None:
    a = store.create_session("  First  ")
    b = store.create_session("Second")
    assert a.title == "First" and a.id.startswith("s_") and a.created_at.endswith("Z")
    assert [s.id for s in store.list_sessions()] == [b.id, a.id]
    renamed = store.rename_session(a.id, "Renamed")
    assert store.get_session(a.id).title == "Renamed" == renamed.title
    instructed = store.set_session_instructions(a.id, "Be brief.")
    assert store.get_session(a.id).instructions == "Be brief." == instructed.instructions
    store.delete_session(b.id)
    assert [(e.kind, e.session.id) for e in events if isinstance(e, SessionEvent)] == [
        ("created", a.id), ("created", b.id), ("renamed", a.id), ("updated", a.id), ("deleted", b.id)]
    with pytest.raises(NotFound, match="No session"):
        store.get_session(b.id)
    with pytest.raises(StoreError, match="title"):
        store.create_session("   ")
    with pytest.raises(NotFound):
        store.rename_session("s_missing", "x")
    with pytest.raises(NotFound):
        store.delete_session("s_missing")


def test_delete_session_removes_everything_of_it(store: GraphStore) -> None:
    keep = store.create_session("keep")
    store.apply(keep.id, [{"op": "add_object", "type": "T", "name": "kept", "properties": {"w": "word"}}], "t")
    baseline = dump(store, fts_segments=False)
    gone = store.create_session("gone")
    store.apply(gone.id, [
        {"op": "add_object", "type": "T", "name": "a", "label": "$a", "properties": {"w": "word"}},
        {"op": "add_object", "type": "T", "name": "b", "label": "$b"},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "r"},
        {"op": "define_type", "kind": "object", "name": "T", "properties_schema": {"type": "object"}},
    ], "t")
    with store.transaction() as conn:  # rows another module keeps for the session cascade too
        conn.execute("INSERT INTO view_positions (session_id, object_id, x, y) VALUES (?, 'o', 1, 2)", (gone.id,))
    store.delete_session(gone.id)
    assert dump(store, fts_segments=False) == baseline
    assert [o.name for o, _ in store.search_objects(keep.id, "word")] == ["kept"]
