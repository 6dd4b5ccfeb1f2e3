"""Field checks for batch ops, and per-type property schemas (JSON Schema).

Messages are written for the reader of a tool result (often a model): they
say which field, what was wrong, and where inside the properties.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.model import TypeDef
from cks_desktop.graph.sqlite_util import dumps

if TYPE_CHECKING:
    import jsonschema

_LABEL = re.compile(r"\$\S{1,199}")
MAX_NAME = 2000
MAX_TYPE = 200


class OpError(Exception):
    """One operation is invalid; the message is one sentence."""


def check_fields(op: dict[str, Any], allowed: set[str] | frozenset[str]) -> None:
    if allowed.issuperset(op):
        return
    unknown = sorted(set(op) - allowed)
    if unknown:
        raise OpError(f"unknown field {unknown[0]!r} for {op.get('op')}; allowed: "
                      f"{', '.join(sorted(allowed - {'op'}))}")


def check_name(given: Any, field: str) -> str:
    if not isinstance(given, str) or not given.strip():
        raise OpError(f"'{field}' must be a non-empty string")
    value = given.strip()
    _check_unicode(value, field)
    limit = MAX_TYPE if field == "type" else MAX_NAME
    if len(value) > limit:
        raise OpError(f"'{field}' is {len(value)} characters long; the limit is {limit}")
    return value


def check_props(value: Any, field: str) -> tuple[dict[str, Any], str]:
    """A JSON object whose values are JSON (no NaN, nothing exotic), and its JSON text."""
    if not isinstance(value, dict):
        raise OpError(f"'{field}' must be a JSON object")
    if not value:
        return value, "{}"
    for key in value:
        if not isinstance(key, str) or not key:
            raise OpError(f"'{field}' has a key that is not a non-empty string: {key!r}")
    try:
        text = dumps(value)
    except (TypeError, ValueError) as exc:
        raise OpError(f"'{field}' is not valid JSON: {exc}") from None
    _check_unicode(text, field)
    return value, text


def _check_unicode(text: str, field: str) -> None:
    """Lone surrogates (e.g. from a JSON "\\ud800") cannot be stored as UTF-8."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise OpError(f"'{field}' contains text that is not valid Unicode (a lone surrogate)") from None


def check_label(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or _LABEL.fullmatch(value) is None:
        raise OpError(f"'label' must look like \"$name\" (a $ and no spaces), got {value!r}")
    return value


def check_timestamp(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
            return value
        except ValueError:
            pass
    raise OpError(f"'{field}' must be an ISO 8601 timestamp, got {value!r}")


# Where a JSON Schema keeps subschemas: keyword -> "one" (a schema), "many" (a list) or "named" (a dict).
_SUBSCHEMAS = {
    **dict.fromkeys(("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                     "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"), "one"),
    **dict.fromkeys(("allOf", "anyOf", "oneOf", "prefixItems"), "many"),
    **dict.fromkeys(("properties", "$defs", "definitions", "dependentSchemas", "dependencies"), "named"),
}


def unsafe_schema_keyword(schema: Any) -> str | None:
    """Why a property schema (written by a model, so untrusted) is refused, or None.

    Regular expressions (``pattern``, ``patternProperties``) are refused: Python's
    engine backtracks, so ``^(a+)+$`` or even ``.*.*=`` can take minutes on one
    property value, with the store's lock held and the window frozen, and no
    pattern can be proven safe cheaply. References must stay inside the schema:
    a remote ``$ref`` would be fetched (or fail) on every write of the type.
    """
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key in ("pattern", "patternProperties"):
                return (f"may not use {key!r}: checking a regular expression can freeze the app; "
                        "use enum, const, minLength/maxLength or format instead")
            if key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
                return f"may only refer inside itself (\"#/...\"), not to {value[:200]!r}"
            kind = _SUBSCHEMAS.get(key)
            if kind in ("one", "many"):
                stack.append(value)
            elif kind == "named" and isinstance(value, dict):
                stack.extend(value.values())
    return None


class SchemaCache:
    """Compiled validators for the batch's type definitions (which may change mid-batch)."""

    def __init__(self, typedefs: dict[tuple[str, str], TypeDef | None]) -> None:
        self._typedefs = typedefs
        self._validators: dict[tuple[str, str], Any] = {}

    def invalidate(self, kind: str, name: str) -> None:
        self._validators.pop((kind, name.casefold()), None)

    def check_schema(self, schema: Any) -> None:
        if not isinstance(schema, dict):
            raise OpError("'properties_schema' must be a JSON Schema object or null")
        # jsonschema is imported where a schema is first met, not with the store (~0.1 s at start-up)
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path)
            raise OpError(f"'properties_schema' is not a valid JSON Schema: {exc.message}"
                          + (f" (at {where})" if where else "")) from None
        problem = unsafe_schema_keyword(schema)
        if problem:
            raise OpError(f"'properties_schema' {problem}")

    @property
    def active(self) -> bool:
        """True if any type of the session has (had, in this batch) a property schema."""
        return any(td is not None and td.properties_schema is not None for td in self._typedefs.values())

    def check(self, kind: str, type_name: str, props: dict[str, Any]) -> None:
        if not self._typedefs:
            return
        key = (kind, type_name.casefold())
        td = self._typedefs.get(key)
        if td is None or td.properties_schema is None:
            return
        from jsonschema.exceptions import best_match
        from jsonschema.validators import validator_for
        from referencing.exceptions import Unresolvable

        validator = self._validators.get(key)
        if validator is None:
            schema = td.properties_schema
            validator = validator_for(schema)(schema)
            self._validators[key] = validator
        try:
            error: "jsonschema.ValidationError | None" = best_match(validator.iter_errors(props))
        except (RecursionError, Unresolvable) as exc:
            reason = "it refers to itself without end" if isinstance(exc, RecursionError) else f"{exc}"
            raise OpError(f"the properties schema of {kind} type {td.name!r} cannot be checked ({reason}); "
                          "define the type again with a corrected schema") from None
        if error is None:
            return
        path = "".join(f"[{json.dumps(p, ensure_ascii=False)}]" for p in error.absolute_path)
        where = f"properties{path}" if path else "the properties object"
        raise OpError(f"properties do not match the schema of {kind} type {td.name!r}: "
                      f"{error.message} (at {where})")
