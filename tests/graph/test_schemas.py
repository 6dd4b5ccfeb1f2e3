"""Per-type property schemas (JSON Schema), enforced on writes once defined."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import ValidationFailed
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

PERSON = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0},
                                           "email": {"type": "string"}},
          "required": ["age"]}


def test_schema_enforced_on_every_write_of_the_type(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Before", "properties": {}}], "t")
    result = store.apply(session.id, [{"op": "define_type", "kind": "object", "name": "Person",
                                       "description": "A human", "properties_schema": PERSON}], "t")
    assert result.summary == "defines 1 type"
    # Existing objects are not re-checked; new writes are.
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [
            {"op": "add_object", "type": "person", "name": "Kid", "properties": {"age": -1}},
            {"op": "add_object", "type": "Person", "name": "Anon", "properties": {}},
            {"op": "add_object", "type": "Person", "name": "Ok", "properties": {"age": 3}},
            {"op": "update_object", "ref": "Ok", "set_properties": {"email": 42}},
            {"op": "add_object", "type": "Robot", "name": "R2", "properties": {"age": "old"}},
        ], "t")
    errors = {e["index"]: e["message"] for e in info.value.errors}
    assert set(errors) == {0, 1, 3}
    assert "-1 is less than the minimum of 0" in errors[0] and 'properties["age"]' in errors[0]
    assert "'age' is a required property" in errors[1] and "the properties object" in errors[1]
    assert "42 is not of type 'string'" in errors[3] and 'properties["email"]' in errors[3]
    assert "'Person'" in errors[0]
    # Retyping into a schema'd type is a write of that type too.
    with pytest.raises(ValidationFailed, match="required"):
        store.apply(session.id, [{"op": "update_object", "ref": "Before", "type": "Person"}], "t")
    store.apply(session.id, [{"op": "update_object", "ref": "Before", "set_properties": {"age": 5}}], "t")


def test_schemas_hold_for_the_end_state_of_a_batch(store: GraphStore, session: Session) -> None:
    """Everything a batch writes must fit the schemas as they are when the batch ends."""
    with pytest.raises(ValidationFailed) as info:
        store.apply(session.id, [
            {"op": "add_object", "type": "Person", "name": "Early", "properties": {}},
            {"op": "define_type", "kind": "object", "name": "Person", "properties_schema": PERSON},
            {"op": "add_object", "type": "Person", "name": "Late", "properties": {}},
            {"op": "add_object", "type": "Person", "name": "Fixed", "properties": {}},
            {"op": "update_object", "ref": "Fixed", "set_properties": {"age": 1}},
        ], "t")
    assert [e["index"] for e in info.value.errors] == [0, 2]
    # Defining a schema and removing an object that does not fit it, then reverting: fine.
    store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Misfit"}], "t")
    change = store.apply(session.id, [
        {"op": "define_type", "kind": "object", "name": "Person", "properties_schema": PERSON},
        {"op": "remove_object", "ref": "Misfit"}], "t").change
    assert change is not None
    store.revert(session.id, change.id, "t")
    assert store.resolve(session.id, "Misfit").properties == {} and store.type_defs(session.id) == []


def test_relation_schemas_and_invalid_schemas(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [
        {"op": "add_object", "type": "T", "name": "a"},
        {"op": "define_type", "kind": "relation", "name": "rated",
         "properties_schema": {"type": "object", "properties": {"stars": {"enum": [1, 2, 3]}}}},
    ], "t")
    with pytest.raises(ValidationFailed, match="is not one of"):
        store.apply(session.id, [{"op": "add_relation", "source": "a", "target": "a", "type": "rated",
                                  "properties": {"stars": 5}}], "t")
    with pytest.raises(ValidationFailed, match="not a valid JSON Schema"):
        store.apply(session.id, [{"op": "define_type", "kind": "object", "name": "X",
                                  "properties_schema": {"type": "frobnicated"}}], "t")
    with pytest.raises(ValidationFailed, match="'kind' must be"):
        store.apply(session.id, [{"op": "define_type", "kind": "edge", "name": "X"}], "t")
    # Dropping the schema (define_type replaces the definition) lifts the rule.
    store.apply(session.id, [{"op": "define_type", "kind": "relation", "name": "rated"}], "t")
    store.apply(session.id, [{"op": "add_relation", "source": "a", "target": "a", "type": "rated",
                              "properties": {"stars": 5}}], "t")
