"""JSON Schema fragments shared by the built-in tools, and the spec factory.

Every schema is draft 2020-12 with ``additionalProperties: false``: a model
that invents an argument hears about it instead of having it silently
ignored. Defaults are stated both as ``default`` and in the description,
because several providers drop the ``default`` keyword before the model sees it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cks_desktop.tools.types import EffectsFn, Handler, Policy, PreviewFn, Scope, ToolSpec

READ = frozenset({Scope.GRAPH_READ})
MUTATE = frozenset({Scope.GRAPH_MUTATE})
NO_SCOPES: frozenset[Scope] = frozenset()

EXPORT_FORMATS = ("json", "graphml", "markdown", "mermaid", "memory-jsonl")
IMPORT_FORMATS = ("json", "graphml", "memory-jsonl")

SESSION_ID: dict[str, Any] = {
    "type": "string",
    "description": "The session whose graph to use. Filled in automatically with the current session.",
}
REF: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 1000,
    "description": "An object's id, or its exact name (case-insensitive). If several objects share the "
                   "name, the error lists their ids; call again with one of them.",
}
TYPE_NAME: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "description": "A type name such as \"Person\" or \"works_at\". Reuse existing types (see list_types).",
}
OBJECT_NAME: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 500,
    "description": "The object's name, as a person would write it (e.g. \"Ada Lovelace\").",
}
PROPERTIES: dict[str, Any] = {
    "type": "object",
    "description": "Properties as a JSON object of name → value (strings, numbers, booleans, lists, "
                   "nested objects). Property text is searchable.",
}
# ``graph/edit_base.py``: an update made on top of what was read. "changed by someone else"
# comes back as the tool's error (nothing written) when a field it writes changed since.
UNCHANGED_SINCE: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "description": "Optional: the object's version as you read it (the `version` get_object returned). "
                   "If someone else changed a field you write since then, nothing is written and the error "
                   "says who changed what: read the object again and decide. Fields you do not write may "
                   "have changed: your edit then applies on top.",
}


PROPERTY_NAMES: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "uniqueItems": True,
    "description": "Names of properties to delete.",
}
CURSOR: dict[str, Any] = {
    "type": ["string", "null"],
    "description": "Paging: pass the next_cursor of the previous result to get the next page; omit for the first.",
}
RELATION_ID: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "The relation's id (from get_object, list_relations or neighbors).",
}
LABEL: dict[str, Any] = {
    "type": "string",
    "pattern": r"^\$[A-Za-z0-9_.-]{1,64}$",
    "description": "A local label such as \"$alice\"; later operations in the same batch may use it as a ref "
                   "(source, target, ref). The result maps each label to the new id.",
}
ON_CONFLICT: dict[str, Any] = {
    "type": "string",
    "enum": ["error", "reuse", "update"],
    "default": "error",
    "description": "When an object of this type and name already exists: \"error\" (default) fails, "
                   "\"reuse\" returns the existing object unchanged, \"update\" merges the given properties "
                   "into it.",
}


def limit(default: int, maximum: int, what: str = "items") -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "default": default,
        "description": f"The most {what} to return (1–{maximum}, default {default}).",
    }


def object_schema(properties: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": dict(properties),
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def make_tool(
    name: str,
    *,
    title: str,
    description: str,
    properties: Mapping[str, Any],
    required: tuple[str, ...] = (),
    scopes: frozenset[Scope],
    policy: Policy,
    handler: Handler,
    exposed: bool = True,
    pin_session: bool = True,
    preview: PreviewFn | None = None,
    annotations: Mapping[str, Any] | None = None,
    effects: EffectsFn | None = None,
    result_keys: tuple[str, ...] | None = None,
    summary_args: tuple[str, ...] = (),
) -> ToolSpec:
    """One place that spells out every field, so no built-in forgets ``llm_exposed``."""
    return ToolSpec(
        name=name,
        title=title,
        description=description,
        input_schema=object_schema(properties, required),
        scopes=scopes,
        default_policy=policy,
        llm_exposed=exposed,
        handler=handler,
        pin_session=pin_session,
        preview=preview,
        annotations=dict(annotations or {}),
        source="builtin",
        effects=effects,
        result_keys=result_keys,
        summary_args=summary_args,
    )


READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
ADDITIVE = {"readOnlyHint": False, "destructiveHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
