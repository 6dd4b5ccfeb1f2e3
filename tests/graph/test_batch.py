"""The batch path: validation of every op, all-or-nothing writes, the change record."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import AmbiguousRef, NotFound, StoreError, ValidationFailed
from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

from .conftest import dump, fts_rows


def add(name: str, type: str = "Person", **extra: object) -> dict[str, object]:
    return {"op": "add_object", "type": type, "name": name, **extra}


def test_labels_names_and_ids_resolve_within_a_batch(store: GraphStore, session: Session) -> None:
    result = store.apply(session.id, [
        add("Alice", label="$a", properties={"age": 30}),
        add("Bob", label="$b"),
        {"op": "add_relation", "source": "$a", "target": "bob", "type": "knows", "label": "$r"},
        {"op": "update_object", "ref": "ALICE", "set_properties": {"city": "Paris"}},
    ], "test")
    alice = store.get_object(session.id, result.created["$a"])
    assert alice.name == "Alice" and alice.properties == {"age": 30, "city": "Paris"}
    relation = store.get_relation(session.id, result.created["$r"])
    assert (relation.source_id, relation.target_id) == (result.created["$a"], result.created["$b"])
    assert result.summary == "adds 2 objects, 1 relation; changes 1 property"
    assert result.counts["objects_added"] == 2 and result.counts["relations_added"] == 1
    assert result.change is not None and result.change.origin == "test"
    # The recorded ops carry explicit ids, never names or labels.
    ops = store.get_change(session.id, result.change.id).ops
    assert ops[2]["source"] == result.created["$a"] and ops[3]["ref"] == result.created["$a"]


def test_a_batch_failing_at_its_last_op_writes_nothing(store: GraphStore, session: Session,
                                                       events: list[object]) -> None:
    store.apply(session.id, [add("Alice"), add("Bob")], "setup")
    before = dump(store)
    events.clear()
    ops = [add("Carol", label="$c", properties={"bio": "findable text"}),
           {"op": "update_object", "ref": "Alice", "set_properties": {"x": 1}},
           {"op": "remove_object", "ref": "Bob"},
           {"op": "add_relation", "source": "$c", "target": "Alice", "type": "knows"},
           {"op": "remove_object", "ref": "Nobody"}]
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, ops, "test")
    assert info.value.errors == [{"index": 4, "message": "No object 'Nobody' in this session."}]
    assert dump(store) == before
    assert events == []


def test_every_failing_op_is_reported(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [add("Alice")], "setup")
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [
            add("Alice"),                                             # 0: exists
            add("", label="$x"),                                      # 1: empty name
            {"op": "add_relation", "source": "$x", "target": "Alice", "type": "t"},  # 2: label of a failed op
            {"op": "frobnicate"},                                     # 3: unknown op
            add("Dan", colour="red"),                                 # 4: unknown field
            {"op": "add_relation", "source": "$nope", "target": "Alice", "type": "t"},  # 5: unknown label
            add("Eve", properties=[1, 2]),                            # 6: properties not an object
            add("Fay", properties={"x": float("nan")}),               # 7: not JSON
            "not an op",                                              # 8
            {"op": "update_object", "ref": "Alice"},                  # 9: nothing to update
            {"op": "add_relation", "source": ["x"], "target": {"y": 1}, "type": "t"},  # 10: refs not strings
            {"op": "remove_object", "ref": 42},                       # 11
        ], "test")
    errors = info.value.errors
    assert [e["index"] for e in errors] == list(range(12))
    assert "source: 'source' must be a non-empty string" in errors[10]["message"]
    assert "target: 'target' must be" in errors[10]["message"]
    messages = [e["message"] for e in errors]
    assert "already exists" in messages[0] and "on_conflict" in messages[0]
    assert "'name' must be a non-empty string" in messages[1]
    assert "comes from operation 1, which failed" in messages[2]
    assert "unknown op 'frobnicate'" in messages[3]
    assert "unknown field 'colour'" in messages[4]
    assert "unknown label $nope" in messages[5]
    assert "'properties' must be a JSON object" in messages[6]
    assert "not valid JSON" in messages[7]
    assert "'op' field" in messages[8]
    assert "at least one of" in messages[9]
    assert str(info.value).startswith("Nothing was written: operation 0:")


def test_on_conflict_modes(store: GraphStore, session: Session) -> None:
    first = store.apply(session.id, [add("Alice", label="$a", properties={"age": 30, "city": "Rome"})], "t")
    alice_id = first.created["$a"]
    reuse = store.apply(session.id, [add("alice", type="person", label="$a", on_conflict="reuse",
                                         properties={"age": 99})], "t")
    assert reuse.created == {"$a": alice_id} and reuse.change is None and reuse.summary == "reuses 1 existing object"
    assert store.get_object(session.id, alice_id).properties["age"] == 30
    update = store.apply(session.id, [add("ALICE", label="$a", on_conflict="update", properties={"age": 31}),
                                      {"op": "add_relation", "source": "$a", "target": "$a", "type": "self"}], "t")
    assert update.created["$a"] == alice_id
    assert store.get_object(session.id, alice_id).properties == {"age": 31, "city": "Rome"}
    assert update.summary == "adds 1 relation; changes 1 property"
    # Same name, other type: a different object.
    other = store.apply(session.id, [add("Alice", type="Ship", label="$s")], "t")
    assert other.created["$s"] != alice_id


def test_ambiguous_names_list_the_candidates(store: GraphStore, session: Session) -> None:
    r = store.apply(session.id, [add("Mercury", type="Planet", label="$p"),
                                 add("Mercury", type="Element", label="$e")], "t")
    with pytest.raises(AmbiguousRef) as info:
        store.resolve(session.id, "mercury")
    assert {c["id"] for c in info.value.candidates} == {r.created["$p"], r.created["$e"]}
    assert r.created["$p"] in str(info.value) and "Planet" in str(info.value)
    with pytest.raises(ValidationFailed) as vf:
        store.apply(session.id, [{"op": "remove_object", "ref": "Mercury"}], "t")
    assert "matches 2 objects" in vf.value.errors[0]["message"]
    assert store.resolve(session.id, r.created["$e"]).type == "Element"  # ids always work
    with pytest.raises(NotFound, match="No object 'Venus' in this session."):
        store.resolve(session.id, "Venus")


def test_refs_to_objects_removed_earlier_in_the_batch_fail(store: GraphStore, session: Session) -> None:
    r = store.apply(session.id, [add("Alice", label="$a"), add("Bob")], "t")
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [{"op": "remove_object", "ref": "Alice"},
                                 {"op": "add_relation", "source": "Bob", "target": r.created["$a"], "type": "t"},
                                 {"op": "update_object", "ref": "alice", "name": "Alicia"}], "t")
    assert [e["index"] for e in info.value.errors] == [1, 2]
    assert "removed by operation 0" in info.value.errors[0]["message"]
    assert "removed by operation 0" in info.value.errors[1]["message"]


def test_rename_frees_and_takes_names_within_the_batch(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [add("Alice"), add("Bob")], "t")
    store.apply(session.id, [{"op": "update_object", "ref": "Alice", "name": "Alicia"},
                             add("Alice", label="$new"),
                             {"op": "add_relation", "source": "Alicia", "target": "Alice", "type": "was"}], "t")
    assert {o.name for o in store.all_objects(session.id)} == {"Alice", "Alicia", "Bob"}
    with pytest.raises(ValidationFailed, match="already exists"):
        store.apply(session.id, [{"op": "update_object", "ref": "Bob", "name": "alicia"}], "t")


def test_remove_object_removes_its_relations(store: GraphStore, session: Session,
                                             events: list[object]) -> None:
    r = store.apply(session.id, [add("A", label="$a"), add("B", label="$b"), add("C", label="$c"),
                                 {"op": "add_relation", "source": "$a", "target": "$b", "type": "t", "label": "$1"},
                                 {"op": "add_relation", "source": "$c", "target": "$a", "type": "t", "label": "$2"},
                                 {"op": "add_relation", "source": "$b", "target": "$c", "type": "t", "label": "$3"}],
                    "t")
    events.clear()
    result = store.apply(session.id, [{"op": "remove_object", "ref": "A"}], "t")
    assert result.summary == "removes 1 object, 2 relations"
    assert [rel.id for rel in store.all_relations(session.id)] == [r.created["$3"]]
    (event,) = events
    assert isinstance(event, GraphChanged)
    assert event.removed_objects == (r.created["$a"],)
    assert set(event.removed_relations) == {r.created["$1"], r.created["$2"]}


def test_dry_run_validates_and_writes_nothing(store: GraphStore, session: Session, events: list[object]) -> None:
    before = dump(store)
    events.clear()
    result = store.apply(session.id, [add("A", label="$a"), {"op": "add_relation", "source": "$a", "target": "$a",
                                                               "type": "t"}], "t", dry_run=True)
    assert result.change is None and result.summary == "adds 1 object, 1 relation"
    assert "$a" in result.created and len(result.ops) == 2
    assert dump(store) == before and events == []
    with pytest.raises(ValidationFailed):
        store.apply(session.id, [{"op": "remove_object", "ref": "Nope"}], "t", dry_run=True)


def test_empty_batch_records_nothing(store: GraphStore, session: Session) -> None:
    result = store.apply(session.id, [], "t")
    assert result.change is None and result.summary == "no changes"
    assert store.list_changes(session.id) == []


def test_unknown_session_and_bad_input(store: GraphStore) -> None:
    with pytest.raises(NotFound, match="No session"):
        store.apply("s_nope", [add("A")], "t")
    s = store.create_session("x")
    with pytest.raises(ValidationFailed):
        store.apply(s.id, {"op": "add_object"}, "t")  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="origin"):
        store.apply(s.id, [add("A")], "")


def test_relation_updates_and_property_merges(store: GraphStore, session: Session) -> None:
    r = store.apply(session.id, [add("A", label="$a"), add("B", label="$b"), add("C", label="$c"),
                                 {"op": "add_relation", "source": "$a", "target": "$b", "type": "t", "label": "$r",
                                  "properties": {"w": 1, "k": "v"}}], "t")
    rid = r.created["$r"]
    res = store.apply(session.id, [{"op": "update_relation", "relation_id": rid, "target": "C", "type": "u",
                                    "set_properties": {"w": 2}, "remove_properties": ["k"]}], "t")
    rel = store.get_relation(session.id, rid)
    assert (rel.target_id, rel.type, rel.properties) == (r.created["$c"], "u", {"w": 2})
    assert res.summary == "updates 1 relation"
    store.apply(session.id, [{"op": "update_object", "ref": "A", "remove_properties": ["missing"],
                              "set_properties": {"a": [1, {"b": None}]}, "type": "Thing"}], "t")
    obj = store.resolve(session.id, "A")
    assert obj.properties == {"a": [1, {"b": None}]} and obj.type == "Thing"
    with pytest.raises(ValidationFailed, match="both set and removed"):
        store.apply(session.id, [{"op": "update_object", "ref": "A", "set_properties": {"a": 1},
                                  "remove_properties": ["a"]}], "t")
    with pytest.raises(ValidationFailed, match="No relation"):
        store.apply(session.id, [{"op": "remove_relation", "relation_id": "r_nope"}], "t")


def test_fts_follows_every_write(store: GraphStore, session: Session) -> None:
    r = store.apply(session.id, [add("Alice", label="$a", properties={"bio": "violin", "n": 7, "ok": True})], "t")
    a = r.created["$a"]
    assert fts_rows(store, session.id) == [(a, "Alice", "violin 7")]
    store.apply(session.id, [{"op": "update_object", "ref": a, "name": "Alicia",
                              "set_properties": {"bio": "cello"}}], "t")
    assert fts_rows(store, session.id) == [(a, "Alicia", "cello 7")]
    store.apply(session.id, [{"op": "remove_object", "ref": a}], "t")
    assert fts_rows(store, session.id) == []


def test_explicit_ids_are_checked(store: GraphStore, session: Session) -> None:
    with pytest.raises(ValidationFailed, match="must be an id made by CKS Desktop"):
        store.apply(session.id, [add("A", id="my-id")], "t")
    r = store.apply(session.id, [add("A", id="o_01M8MVM9E9DJZRE4S1852SP0GN")], "t")
    assert r.change is not None
    with pytest.raises(ValidationFailed, match="already exists"):
        store.apply(session.id, [add("B", id="o_01M8MVM9E9DJZRE4S1852SP0GN")], "t")
    other = store.create_session("other")
    with pytest.raises(ValidationFailed, match="already used in another session"):
        store.apply(other.id, [add("A", id="o_01M8MVM9E9DJZRE4S1852SP0GN")], "t")


def test_text_that_cannot_be_stored_is_rejected_up_front(store: GraphStore, session: Session) -> None:
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [add("bad \ud800 name"), add("ok", properties={"p": "x\udfffy"})], "t")
    assert [e["index"] for e in info.value.errors] == [0, 1]
    assert "not valid Unicode" in info.value.errors[0]["message"]


def test_internal_timestamps(store: GraphStore, session: Session) -> None:
    r = store.apply(session.id, [add("A", label="$a", created_at="2020-01-02T03:04:05.000Z", updated_at=None),
                                 add("B", label="$b", created_at=None),
                                 {"op": "add_relation", "source": "$a", "target": "$b", "type": "t",
                                  "created_at": None, "label": "$r"}], "t")
    a = store.get_object(session.id, r.created["$a"])
    assert a.created_at == a.updated_at == "2020-01-02T03:04:05.000Z"
    b = store.get_object(session.id, r.created["$b"])
    assert b.created_at == b.updated_at and b.created_at.startswith("20")
    assert store.get_relation(session.id, r.created["$r"]).created_at == b.created_at
    with pytest.raises(ValidationFailed, match="ISO 8601"):
        store.apply(session.id, [add("C", created_at="yesterday")], "t")
