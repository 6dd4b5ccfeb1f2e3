"""Hypothesis strategies built from a tool's JSON Schema (the subset the built-in
tools use: type and type lists, enum, min/max length and value, pattern,
properties/required/additionalProperties, items/minItems/maxItems/uniqueItems).

``arguments(schema, hints)`` draws arguments that mostly satisfy the schema;
``broken(schema, hints)`` draws arguments with one thing wrong (a missing required
key, an unknown key, a value of the wrong type, a non-object). ``hints`` maps a
property name to a strategy for its strings (refs that exist, ids of another
session, paths), so valid draws reach the handlers rather than bouncing off
"No object" every time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

Hints = Mapping[str, st.SearchStrategy[Any]]

# Text a model (or an injected instruction) might send: SQL and FTS syntax, markup, control
# characters, NUL, right-to-left marks, look-alikes, very long runs.
NASTY_TEXT = st.sampled_from([
    "", " ", "\x00", "a\x00b", "'; DROP TABLE objects; --", '"', '""', "*", "NEAR(a b)", "a OR b", "-x", "^",
    "AND", "(", ")", "\\", "%", "_", "\u202e", "\ufeff", "Ａｄａ", "ＡＤＡ", "\U0001F600", "$", "$x", "$$",
    "<script>alert(1)</script>", "../../etc/passwd", "\n\r\t", "a" * 5000, "null", "{}", "[]",
])
JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30), NASTY_TEXT)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.text(max_size=10), NASTY_TEXT), inner, max_size=4)),
    max_leaves=12)


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return list(t)
    if isinstance(t, str):
        return [t]
    return ["string", "integer", "boolean", "object", "array", "null"]


def value(schema: Mapping[str, Any], hints: Hints, name: str = "") -> st.SearchStrategy[Any]:
    """Mostly-valid values for ``schema``; ``name`` is the property it belongs to."""
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    options = [_typed(t, schema, hints, name) for t in _types(schema)]
    return st.one_of(*options)


def _typed(kind: str, schema: Mapping[str, Any], hints: Hints, name: str) -> st.SearchStrategy[Any]:
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        lo, hi = schema.get("minLength", 0), min(schema.get("maxLength", 60), 60)
        plain = st.text(min_size=lo, max_size=max(lo, hi))
        nasty = NASTY_TEXT.filter(lambda s: lo <= len(s) <= schema.get("maxLength", math.inf))
        if name in hints:
            return st.one_of(hints[name], hints[name], plain, nasty)
        return st.one_of(plain, nasty)
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return st.integers(min_value=lo, max_value=hi)
    if kind == "number":
        return st.floats(min_value=schema.get("minimum"), max_value=schema.get("maximum"), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema.get("items")
        element = value(items, hints, name) if isinstance(items, Mapping) else JSON_VALUES
        lo = schema.get("minItems", 0)
        hi = min(schema.get("maxItems", 6), max(lo, 6))
        return st.lists(element, min_size=lo, max_size=hi, unique_by=_key if schema.get("uniqueItems") else None)
    if kind == "object":
        if "properties" in schema:
            return arguments(schema, hints)
        return st.dictionaries(st.one_of(st.text(max_size=12), NASTY_TEXT), JSON_VALUES, max_size=5)
    raise AssertionError(f"schema type {kind!r} is not covered by the fuzzer")


def _key(v: Any) -> str:
    return repr(v)


@st.composite
def arguments(draw: st.DrawFn, schema: Mapping[str, Any], hints: Hints) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for key, sub in props.items():
        if key in required or draw(st.booleans()):
            out[key] = draw(value(sub, hints, key))
    return out


@st.composite
def broken(draw: st.DrawFn, schema: Mapping[str, Any], hints: Hints) -> Any:
    """Arguments with one deliberate defect (or a whole non-object)."""
    args = draw(arguments(schema, hints))
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = [k for k in schema.get("required") or [] if k != "session_id"]
    defects = ["unknown", "wrong_type", "not_object"] + (["missing"] if required else [])
    defect = draw(st.sampled_from(defects))
    if defect == "missing":
        args.pop(draw(st.sampled_from(required)), None)
    elif defect == "unknown":
        args[draw(st.sampled_from(["extra", "sessionId", "SESSION_ID", "id", "__proto__", "session_id "]))] = \
            draw(JSON_VALUES)
    elif defect == "wrong_type" and props:
        key = draw(st.sampled_from(sorted(props)))
        args[key] = draw(JSON_VALUES)
    else:
        return draw(st.one_of(st.lists(JSON_SCALARS, max_size=3), JSON_SCALARS))
    return args
