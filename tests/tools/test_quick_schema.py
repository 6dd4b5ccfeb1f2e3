"""The quick argument check says "valid" only where the JSON Schema validator agrees."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cks_desktop.tools.quick_schema import compile_quick
from cks_desktop.tools.registry import json_copy

DRAFTS = {
    "Draft4Validator": jsonschema.Draft4Validator,
    "Draft7Validator": jsonschema.Draft7Validator,
    "Draft202012Validator": jsonschema.Draft202012Validator,
}

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "number", "minimum": 0}},
     "required": ["a"], "additionalProperties": False},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 3},
                                               "minItems": 1, "maxItems": 2}}},
    {"type": "object", "properties": {"mode": {"enum": ["fast", "slow", None, True, 1]}},
     "additionalProperties": {"type": ["string", "null"]}},
    {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10}}},
    {"type": "object", "properties": {"c": {"const": "x"}, "s": {"type": "string", "minLength": 2,
                                                                 "format": "email"}}},
    {"type": "object", "additionalProperties": {"type": "object", "properties": {"k": {"type": "boolean"}},
                                                "required": ["k"]}},
    {"type": "object", "properties": {"o": {"type": "object"}, "l": {"type": "array"}, "z": {"type": "null"}},
     "title": "annotated", "description": "only annotations besides"},
    {},
]

INSTANCES: list[Any] = [
    {}, {"text": "hello"}, {"text": 1}, {"text": None}, {"text": "a" * 100}, {"a": 1}, {"a": 1.0}, {"a": True},
    {"a": 1, "b": -1}, {"a": 1, "b": 0}, {"a": 1, "b": 2.5}, {"a": 1, "c": 3}, {"tags": []}, {"tags": ["ab"]},
    {"tags": ["abcd"]}, {"tags": ["a", "b", "c"]}, {"tags": "ab"}, {"mode": "fast"}, {"mode": "other"},
    {"mode": None}, {"mode": True}, {"mode": 1}, {"mode": 1.0}, {"mode": False}, {"x": "y"}, {"x": 2},
    {"n": 0}, {"n": 10}, {"n": 5}, {"n": float("nan")}, {"n": "5"}, {"n": Decimal(5)}, {"c": "x"}, {"c": "y"},
    {"s": "a"}, {"s": "ab"}, {"s": "not an email"}, {"q": {"k": True}}, {"q": {"k": 1}}, {"q": {}},
    {"o": {}, "l": [], "z": None}, {"o": [], "l": {}, "z": 0}, [], "text", 3, None,
]


def _agrees(schema: dict[str, Any], instance: Any, draft: str = "Draft202012Validator") -> bool | None:
    quick = compile_quick(schema, draft)
    if quick is None:
        return None
    validator = DRAFTS[draft](schema)
    return not quick(instance) or validator.is_valid(instance)


@pytest.mark.parametrize("draft", sorted(DRAFTS))
@pytest.mark.parametrize("schema", SCHEMAS)
def test_never_valid_where_the_validator_refuses(schema: dict[str, Any], draft: str) -> None:
    if draft == "Draft4Validator" and ("const" in str(schema) or "exclusive" in str(schema)):
        assert compile_quick(schema, draft) is None
        return
    assert compile_quick(schema, draft) is not None
    for instance in INSTANCES:
        assert _agrees(schema, instance, draft), instance


def test_plain_valid_arguments_pass_quickly() -> None:
    quick = compile_quick(SCHEMAS[0], "Draft202012Validator")
    assert quick is not None and quick({"text": "hello"})
    assert not quick({})  # missing: not certain, so the validator runs and words the error
    quick = compile_quick(SCHEMAS[1], "Draft202012Validator")
    assert quick is not None and quick({"a": 3, "b": 0.5})
    assert not quick({"a": 1.0})  # an integral float: left to the validator (which accepts it)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}},
    {"type": "object", "patternProperties": {"^x": {}}},
    {"type": "object", "properties": {"r": {"$ref": "#/$defs/r"}}, "$defs": {"r": {"type": "string"}}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object", "properties": {"p": False}},
    {"type": "array", "items": [{"type": "string"}]},
    {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}},
    {"type": "object", "x-vendor": 1},
    {"type": "thing"},
])
def test_unsupported_schemas_get_no_quick_check(schema: dict[str, Any]) -> None:
    assert compile_quick(schema, "Draft202012Validator") is None


def test_draft_four_exclusive_bounds_and_unknown_drafts_are_left_to_the_validator() -> None:
    schema = {"type": "number", "maximum": 5, "exclusiveMaximum": True}
    assert compile_quick(schema, "Draft4Validator") is None
    assert compile_quick({"type": "string"}, "Draft3Validator") is None


def test_dict_and_str_subclasses_are_not_certain() -> None:
    class Odd(dict):  # type: ignore[type-arg]
        pass

    quick = compile_quick(SCHEMAS[0], "Draft202012Validator")
    assert quick is not None and not quick(Odd())


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 12) | st.floats(-2, 12) | st.just(float("nan")) | st.sampled_from(
        ["", "a", "ab", "abcd", "fast", "slow", "x", "text"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["text", "a", "b", "tags", "mode", "n", "c", "s", "q", "k", "o", "l", "z"]), inner,
        max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(instance=JSON, which=st.integers(0, len(SCHEMAS) - 1))
def test_random_arguments_never_pass_where_the_validator_refuses(instance: Any, which: int) -> None:
    assert _agrees(SCHEMAS[which], instance)


def test_json_copy_is_deep_and_equal() -> None:
    value = {"a": [1, {"b": "c"}], "d": {"e": None}, "f": 1.5, "g": (1, 2)}
    copied = json_copy(value)
    assert copied == value
    assert copied is not value and copied["a"] is not value["a"] and copied["a"][1] is not value["a"][1]
    assert copied["d"] is not value["d"]


def test_json_copy_of_a_value_that_holds_itself() -> None:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    copied = json_copy(value)
    assert copied is not value and copied["self"] is copied and copied["a"] == 1
