"""A quick "certainly valid" check for the plain JSON Schemas most tools have.

Why. Validating a model's arguments with ``jsonschema`` costs about a hundred Python calls per tool
call even for ``{"text": "hello"}`` (a new validator per sub-schema, a resource, a resolver...), a
noticeable share of an MCP call's client time. Most input schemas are an object of typed properties,
some required; such a schema is checked here by a predicate built once per schema.

The predicate only ever says "valid" where ``jsonschema`` would say so too: a schema that uses any
keyword outside the small subset below gets no predicate at all (``compile_quick`` returns None),
and wherever the subset's semantics hold a doubt (``1.0`` for an integer, a number in an ``enum``)
it answers False. False means "not sure": the caller then runs the full validator, which also words
the errors. So the quick check decides nothing on its own; it only skips work on the happy path.

Supported, for drafts 4 to 2020-12 (the caller passes the draft's validator class name):
``type`` (a name or a list of names), ``properties``, ``required``, ``additionalProperties`` (a
boolean or a schema), ``items`` (one schema), ``enum`` and ``const`` (strings, booleans and null),
``minLength``/``maxLength``, ``minItems``/``maxItems``, ``minimum``/``maximum`` and, past draft 4,
the numeric ``exclusiveMinimum``/``exclusiveMaximum``; annotations (``title``, ``description``,
``default``, ``examples``, ``format``, which the app's validators do not assert...) are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sized
from typing import Any

Quick = Callable[[Any], bool]
_Builder = Callable[[Any, Mapping[str, Any], str, int], "Quick"]

# Keywords that never change whether an instance is valid (``format`` is an annotation: the
# registry's validators are built without a format checker). ``$defs``/``definitions`` only hold
# schemas a ``$ref`` reaches, and a ``$ref`` anywhere makes the schema unsupported.
_IGNORED = frozenset({"title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
                      "writeOnly", "format", "$schema", "$defs", "definitions"})
_DRAFTS = frozenset({"Draft4Validator", "Draft6Validator", "Draft7Validator", "Draft201909Validator",
                     "Draft202012Validator"})
# The Python types that are certainly of each JSON type. Exact types only: a subclass, or an
# integral float for "integer", is left to the validator.
_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
}
# Plain JSON values that are certainly not numbers (for the bounds, which apply to numbers only).
_NOT_NUMBERS = frozenset({str, bool, type(None), dict, list})
MAX_DEPTH = 32  # deeper schemas get no quick check


class _Unsupported(Exception):
    """The schema uses something the quick check does not know."""


def compile_quick(schema: Any, draft: str) -> Quick | None:
    """A predicate that is True only for an instance ``schema`` certainly accepts, or None when the
    schema is outside the supported subset (``draft``: the name of the validator class in use)."""
    if draft not in _DRAFTS:
        return None
    try:
        return _compile(schema, draft, 0)
    except (_Unsupported, RecursionError):
        return None


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _compile(schema: Any, draft: str, depth: int) -> Quick:
    """One (sub-)schema's predicate: all of its keywords' checks."""
    if depth > MAX_DEPTH:
        raise _Unsupported
    if schema is True:
        return _always
    if not isinstance(schema, Mapping):
        raise _Unsupported  # False, or not a schema: the validator words it
    combined = _object(schema, draft, depth)
    if combined is not None:
        return combined
    checks: list[Quick] = []
    for key, value in schema.items():
        if key in _IGNORED:
            continue
        build = _KEYWORDS.get(key)
        if build is None:
            raise _Unsupported
        check = build(value, schema, draft, depth)
        if check is not _always:
            checks.append(check)
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    return _all_of(tuple(checks))


_OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties"})


def _plain_type(schema: Any) -> frozenset[type] | None:
    """The accepted Python types of a schema that is only a ``type`` (and annotations), else None."""
    if not isinstance(schema, Mapping) or "type" not in schema:
        return None
    if any(key != "type" and key not in _IGNORED for key in schema):
        return None
    names = schema["type"]
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        return None
    return frozenset().union(*(_TYPES[n] for n in names))


def _extra(schema: Mapping[str, Any], draft: str, depth: int) -> Quick | None:
    """The check of the properties ``properties`` does not declare (``additionalProperties``);
    None when any value is accepted."""
    rest = schema.get("additionalProperties", True)
    extra = None if rest is True else _never if rest is False else _compile(rest, draft, depth + 1)
    return None if extra is _always else extra


def _object(schema: Mapping[str, Any], draft: str, depth: int) -> Quick | None:
    """The usual tool schema — an object of properties, some required — as one check (one call per
    argument object, an inline type test per plainly typed property); None for any other shape."""
    if schema.get("type") != "object" or any(k not in _OBJECT_KEYS and k not in _IGNORED for k in schema):
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(props, Mapping) or not all(isinstance(k, str) for k in props):
        raise _Unsupported
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise _Unsupported
    plain: dict[str, frozenset[type]] = {}
    subs: dict[str, Quick] = {}
    for key, sub in props.items():
        accepted = _plain_type(sub)
        if accepted is not None:
            plain[key] = accepted
            continue
        compiled = _compile(sub, draft, depth + 1)
        if compiled is not _always:
            subs[key] = compiled
    declared = frozenset(props)
    extra = _extra(schema, draft, depth)
    keys = tuple(required)

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for key in keys:
            if key not in instance:
                return False
        for key, item in instance.items():
            accepted = plain.get(key)
            if accepted is not None:
                if type(item) not in accepted:
                    return False
                continue
            sub = subs.get(key)
            if sub is not None:
                if not sub(item):
                    return False
            elif extra is not None and key not in declared and not extra(item):
                return False
        return True

    return check


def _all_of(checks: tuple[Quick, ...]) -> Quick:
    def check(instance: Any) -> bool:
        for one in checks:
            if not one(instance):
                return False
        return True

    return check


def _type(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n in _TYPES for n in names):
        raise _Unsupported
    accepted = frozenset().union(*(_TYPES[n] for n in names))
    return lambda instance: type(instance) in accepted


def _properties(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    """``properties`` together with ``additionalProperties`` (there is no ``patternProperties``)."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise _Unsupported
    declared = frozenset(value)
    subs = {key: _compile(sub, draft, depth + 1) for key, sub in value.items()}
    subs = {key: sub for key, sub in subs.items() if sub is not _always}
    extra = _extra(schema, draft, depth)
    if not subs and extra is None:
        return _always

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return not isinstance(instance, dict)  # not an object: nothing to check; a subclass: not sure
        for key, item in instance.items():
            sub = subs.get(key)
            if sub is not None:
                if not sub(item):
                    return False
            elif extra is not None and key not in declared and not extra(item):
                return False
        return True

    return check


def _additional(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    if "properties" in schema:
        if not isinstance(value, (bool, Mapping)):
            raise _Unsupported
        return _always  # checked by the ``properties`` check
    return _properties({}, {"additionalProperties": value}, draft, depth)


def _required(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise _Unsupported
    keys = tuple(value)

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return not isinstance(instance, dict)
        for key in keys:
            if key not in instance:
                return False
        return True

    return check


def _items(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    if isinstance(value, list) or (isinstance(value, bool) and draft == "Draft4Validator"):
        raise _Unsupported  # tuple validation; a boolean is not a schema in draft 4
    sub = _compile(value, draft, depth + 1)
    if sub is _always:
        return _always

    def check(instance: Any) -> bool:
        if type(instance) is not list:
            return not isinstance(instance, list)
        for item in instance:
            if not sub(item):
                return False
        return True

    return check


def _choices(values: list[Any]) -> Quick:
    """Membership for strings, booleans and null (by identity: ``True`` is not ``1``); any other
    instance is left to the validator, which compares numbers and containers its own way."""
    texts = frozenset(v for v in values if type(v) is str)
    singletons = tuple(v for v in values if v is None or type(v) is bool)

    def check(instance: Any) -> bool:
        if type(instance) is str:
            return instance in texts
        for one in singletons:
            if instance is one:
                return True
        return False

    return check


def _enum(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    if not isinstance(value, list):
        raise _Unsupported
    return _choices(value)


def _const(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
    if draft == "Draft4Validator":
        raise _Unsupported  # not a keyword in draft 4
    return _choices([value])


def _counted(kind: type[Sized], low: bool) -> _Builder:
    """``minLength``/``maxLength`` (strings), ``minItems``/``maxItems`` (arrays)."""
    def build(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
        if type(value) is not int or value < 0:
            raise _Unsupported

        def check(instance: Any) -> bool:
            if type(instance) is not kind:
                return not isinstance(instance, kind)
            return len(instance) >= value if low else len(instance) <= value

        return check

    return build


def _bound(strict: bool, low: bool) -> _Builder:
    """``minimum``/``maximum`` and, past draft 4, the numeric ``exclusiveMinimum``/``exclusiveMaximum``."""
    def build(value: Any, schema: Mapping[str, Any], draft: str, depth: int) -> Quick:
        if type(value) is not int and type(value) is not float:
            raise _Unsupported
        if draft == "Draft4Validator" and ("exclusiveMinimum" in schema or "exclusiveMaximum" in schema):
            raise _Unsupported  # draft 4's booleans change what minimum and maximum mean
        limit: float = value

        def check(instance: Any) -> bool:
            kind = type(instance)
            if kind is int or kind is float:
                number: float = instance
                if low:
                    return number > limit if strict else number >= limit
                return number < limit if strict else number <= limit
            return kind in _NOT_NUMBERS  # a Decimal, a numpy number...: the validator decides

        return check

    return build


_KEYWORDS: dict[str, _Builder] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "minLength": _counted(str, True),
    "maxLength": _counted(str, False),
    "minItems": _counted(list, True),
    "maxItems": _counted(list, False),
    "minimum": _bound(False, True),
    "maximum": _bound(False, False),
    "exclusiveMinimum": _bound(True, True),
    "exclusiveMaximum": _bound(True, False),
}
