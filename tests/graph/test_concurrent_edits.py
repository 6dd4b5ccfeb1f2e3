"""Two editors on the same object (graph/edit_base.py), on both backends: an edit made on
top of an older read applies when the fields differ and fails whole, naming who changed
what, when they overlap; a revert others built upon says what it would undo."""

from __future__ import annotations

import pytest

from cks_desktop.graph.edit_base import ChangedBySomeoneElse
from cks_desktop.graph.errors import StoreError, ValidationFailed
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore


def _read(store: GraphStore, session: Session) -> str:
    version = store.object_version(session.id, "Ship it")
    assert version is not None and version.startswith("c_")
    return version


def _setup(store: GraphStore, session: Session) -> str:
    store.apply(session.id, [{"op": "add_object", "type": "Task", "name": "Ship it",
                              "properties": {"status": "open", "owner": "ann"}}], "t")
    return _read(store, session)


def test_an_edit_on_an_unchanged_object_applies(store: GraphStore, session: Session) -> None:
    seen = _setup(store, session)
    store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"status": "done"},
                              "if_unchanged_since": seen}], "inspector")
    assert store.resolve(session.id, "Ship it").properties == {"status": "done", "owner": "ann"}


def test_a_second_edit_of_other_fields_applies_on_top(store: GraphStore, session: Session) -> None:
    seen = _setup(store, session)  # both editors read this version
    store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"owner": "bo"},
                              "if_unchanged_since": seen}], "bob")
    r = store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"status": "done"},
                                  "if_unchanged_since": seen}], "ann")
    assert r.change is not None and "if_unchanged_since" not in str(r.change.ops)
    assert store.resolve(session.id, "Ship it").properties == {"status": "done", "owner": "bo"}  # both kept


def test_a_second_edit_of_the_same_field_fails_whole_and_names_who(store: GraphStore, session: Session) -> None:
    seen = _setup(store, session)
    first = store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"status": "won't do"},
                                      "if_unchanged_since": seen}], "bob").change
    assert first is not None
    before = store.list_changes(session.id, with_ops=False)
    with pytest.raises(ChangedBySomeoneElse) as info:
        store.apply(session.id, [{"op": "add_object", "type": "Note", "name": "n"},
                                 {"op": "update_object", "ref": "Ship it", "set_properties": {"status": "done"},
                                  "if_unchanged_since": seen}], "ann")
    assert isinstance(info.value, ValidationFailed)
    (error,) = info.value.errors
    assert error["index"] == 1
    assert error["message"].startswith("changed by someone else: property 'status' was changed by bob")
    assert first.id in error["message"] and "read the object again" in error["message"]
    assert store.list_changes(session.id, with_ops=False) == before  # nothing written, not even op 0
    assert store.resolve(session.id, "Ship it").properties["status"] == "won't do"


def test_a_rename_conflicts_with_a_rename(store: GraphStore, session: Session) -> None:
    seen = _setup(store, session)
    store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "name": "Ship it now"}], "bob")
    with pytest.raises(ChangedBySomeoneElse, match="its name was changed by bob"):
        store.apply(session.id, [{"op": "update_object", "ref": "Ship it now", "name": "Ship later",
                                  "if_unchanged_since": seen}], "ann")
    store.apply(session.id, [{"op": "update_object", "ref": "Ship it now", "set_properties": {"x": 1},
                              "if_unchanged_since": seen}], "ann")  # a property: on top of the rename


def test_bad_bases_are_reported_like_any_op_error(store: GraphStore, session: Session) -> None:
    _setup(store, session)
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"a": 1},
                                  "if_unchanged_since": 5},
                                 {"op": "add_object", "type": "T", "name": "x", "if_unchanged_since": "t"}], "t")
    assert [e["index"] for e in info.value.errors] == [0, 1]


def test_a_revert_others_built_upon_says_what_it_would_undo(store: GraphStore, session: Session) -> None:
    _setup(store, session)
    mine = store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"status": "doing"}}],
                       "ann").change
    assert mine is not None
    assert store.revert_impact(session.id, mine.id) == []
    later = store.apply(session.id, [{"op": "update_object", "ref": "Ship it", "set_properties": {"owner": "cy"}},
                                     {"op": "add_object", "type": "T", "name": "unrelated"}], "bob").change
    assert later is not None
    impact = store.revert_impact(session.id, mine.id)
    assert [c.id for c in impact] == [later.id] and impact[0].origin == "bob"
    with pytest.raises(StoreError, match=f"Change {mine.id} was built upon.*{later.id} by bob"):
        store.revert(session.id, mine.id, "ann", unless_built_upon=True)
    assert store.resolve(session.id, "Ship it").properties["status"] == "doing"  # nothing reverted
    store.revert(session.id, mine.id, "ann")  # "revert anyway"
    assert store.resolve(session.id, "Ship it").properties == {"status": "open", "owner": "cy"}
