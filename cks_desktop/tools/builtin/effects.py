"""What a built-in call does, in the terms approval understands.

Several tools can do what a stricter tool does: ``evolve_knowledge`` removes objects like
``remove_object``, ``merge_objects`` removes the duplicate, ``revert_change`` undoes an
addition by removing it, ``import_graph`` and ``construct_knowledge`` overwrite existing
objects' properties like ``update_object``, and ``add_object`` with ``on_conflict:
"update"`` does too. Each of them declares an ``effects`` function returning counts keyed
by the single-purpose tool each part corresponds to; the registry then asks with the
strictest of those tools' policies (``ToolSpec.effects``). Store operations that no
single-purpose tool performs map to the nearest one that does the same harm:
``update_relation`` (only merges and reverts re-point relations) follows
``merge_objects``, ``undefine_type`` follows ``define_type``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any


from cks_desktop.graph.errors import NotFound, StoreError
from cks_desktop.tools.approval import CHANGE_EXISTING, canonical_json
from cks_desktop.tools.context import ToolContext

OP_TOOL: dict[str, str] = {
    "add_object": "add_object",
    "update_object": "update_object",
    "remove_object": "remove_object",
    "add_relation": "add_relation",
    "update_relation": "merge_objects",
    "remove_relation": "remove_relation",
    "define_type": "define_type",
    "undefine_type": "define_type",
}
# The compact forms the history stores for big imports and reverts: (tool, the field with the rows).
COMPACT_OP_TOOL: dict[str, tuple[str, str]] = {
    "add_objects": ("add_object", "objects"),
    "add_relations": ("add_relation", "relations"),
    "remove_objects": ("remove_object", "ids"),
}
# An operation kind this table does not know is counted under a name no tool has: the registry
# then asks (unknown effects never run silently).
UNKNOWN = "unknown operation"


def op_effects(ops: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """Counts per single-purpose tool for a list of store operations."""
    counts: Counter[str] = Counter()
    for op in ops:
        kind = op.get("op") if isinstance(op, Mapping) else None
        if kind in COMPACT_OP_TOOL:  # the history's bulk forms (graph/compact_ops.py): one per row
            tool, field = COMPACT_OP_TOOL[kind]
            rows = op.get(field)
            counts[tool] += len(rows) if isinstance(rows, list) else 1
            if kind == "remove_objects":
                counts["remove_relation"] += 1  # each object goes with all its relations
            continue
        counts[OP_TOOL.get(kind, UNKNOWN) if isinstance(kind, str) else UNKNOWN] += 1
        if kind == "add_object" and op.get("on_conflict") == "update":
            counts["update_object"] += 1  # an existing object of that name gets its properties overwritten
    return counts


async def evolve_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    ops = args.get("operations") or []
    return with_overwrites(op_effects(ops), await overwrite_count(ops, ctx))


async def add_object_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    if args.get("on_conflict") != "update":
        return {}
    op = {"op": "add_object", "type": args.get("type"), "name": args.get("name"),
          "properties": args.get("properties") or {}, "on_conflict": "update"}
    return with_overwrites({"update_object": 1}, await overwrite_count([op], ctx))


async def merge_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    # Always removes the duplicate and may drop relations that would repeat; stated statically so
    # the policy never depends on a lookup that could fail.
    return {"remove_object": 1, "remove_relation": 1, "update_object": 1}


async def revert_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    """The inverse operations the revert would apply; an unknown change does nothing (the
    handler then fails without writing)."""
    import asyncio

    from cks_desktop.graph.errors import StoreError

    def read() -> Counter[str]:
        try:
            change = ctx.store.get_change(ctx.session_id, args["change_id"])
        except StoreError:
            return Counter()
        return op_effects(change.inverse_ops)

    return await asyncio.to_thread(read)  # a change may hold hundreds of thousands of operations


async def import_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    # An import adds, and merges into existing objects of the same name (on_conflict: update).
    return {"add_object": 1, "update_object": 1, "add_relation": 1}


# -- changing what a person or a document wrote --------------------------------------------
# Operations that can change something already there; a batch without them never needs the dry run.
_MAY_OVERWRITE = ("update_object", "define_type", "undefine_type")


def may_overwrite(ops: Iterable[Mapping[str, Any]]) -> bool:
    return any(isinstance(op, Mapping) and (op.get("op") in _MAY_OVERWRITE or (
        op.get("op") == "add_object" and op.get("on_conflict") == "update")) for op in ops)


def type_key(kind: str, name: str) -> str:
    return f"type:{kind}:{name.casefold()}"


def note_own_additions(ctx: ToolContext, result: Any) -> None:
    """Remember what a model caller's write added itself (new objects, relations and types):
    editing those later in the same run does not ask. Only the built-ins' own write path calls
    this (``refs.apply_ops``); a revert that brings back a person's object adds nothing here."""
    if not ctx.run.caller.is_model or result.change is None:
        return
    own = ctx.run.own_additions
    for op in result.ops:
        kind = op.get("op")
        if kind in ("add_object", "add_relation") and "outcome" not in op and isinstance(op.get("id"), str):
            own.add(op["id"])
    for inv in result.change.inverse_ops:
        if inv.get("op") == "undefine_type":  # the inverse of defining a type that was not there
            own.add(type_key(str(inv.get("kind")), str(inv.get("name"))))


def _differs(a: Any, b: Any) -> bool:
    return canonical_json(a) != canonical_json(b)


def _object_overwritten(before: Any, op: Mapping[str, Any]) -> bool:
    """Does this resolved update (or add-with-update) change what ``before`` already held?
    Adding a property it did not have is an addition, not a change."""
    if "name" in op and op["name"] != before.name:
        return True
    if "type" in op and op["type"] != before.type:
        return True
    props = before.properties
    new = op.get("set_properties") if op.get("op") == "update_object" else op.get("properties")
    for key, value in (new or {}).items():
        if key in props and _differs(props[key], value):
            return True
    return any(key in props for key in op.get("remove_properties") or ())


def _type_overwritten(ctx: ToolContext, op: Mapping[str, Any], own: set[str]) -> bool:
    """Does this resolved define/undefine replace a definition a person wrote, or set a schema
    that objects (or relations) already there, not the model's own, would fail?"""
    kind, name = str(op.get("kind")), str(op.get("name"))
    key = type_key(kind, name)
    old = next((t for t in ctx.store.type_defs(ctx.session_id)
                if t.kind == kind and t.name.casefold() == name.casefold()), None)
    if old is not None and key not in own:
        if op.get("op") == "undefine_type":
            return True
        if (old.description or "") != (op.get("description") or "") or _differs(
                old.properties_schema, op.get("properties_schema")):
            return True
    schema = op.get("properties_schema") if op.get("op") == "define_type" else None
    if not schema:
        return False
    import jsonschema  # here, not at start-up: only a type with a schema needs it

    try:
        return bool(failing_items(ctx, kind, name, schema, own))
    except (jsonschema.SchemaError, RecursionError):
        return True  # cannot tell: ask


def failing_items(ctx: ToolContext, kind: str, name: str, schema: Any,
                  exempt: set[str] | frozenset[str] = frozenset()) -> list[Any]:
    """The objects (or relations) of type ``name`` already in the graph, other than ``exempt``
    ids, whose properties ``schema`` would refuse. Raises ``jsonschema.SchemaError`` or
    ``RecursionError`` for a schema that cannot be checked."""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
    items = ctx.store.all_objects(ctx.session_id) if kind == "object" else ctx.store.all_relations(ctx.session_id)
    key = name.strip().casefold()
    return [item for item in items
            if item.type.casefold() == key and item.id not in exempt and not validator.is_valid(item.properties)]


def _count_overwrites(ctx: ToolContext, ops: list[dict[str, Any]]) -> int:
    try:
        result = ctx.store.apply(ctx.session_id, [dict(op) for op in ops], ctx.run.origin, dry_run=True)
    except StoreError:
        return 0  # the handler's own write fails the same way, writing nothing
    own = ctx.run.own_additions
    count = 0
    for op in result.ops:
        kind = op.get("op")
        if kind == "update_object" or (kind == "add_object" and op.get("outcome") == "updated"):
            ident = op.get("ref") if kind == "update_object" else op.get("id")
            if not isinstance(ident, str) or ident in own:
                continue
            try:
                before = ctx.store.get_object(ctx.session_id, ident)
            except NotFound:
                continue  # added earlier in this same batch
            count += _object_overwritten(before, op)
        elif kind in ("define_type", "undefine_type"):
            count += _type_overwritten(ctx, op, own)
    return count


async def overwrite_count(ops: list[dict[str, Any]], ctx: ToolContext) -> int:
    """How many of ``ops`` change or remove what a person, a document or an import wrote (a
    rename, a new type, a changed or removed property, a replaced type definition or a schema
    that objects already there fail), judged by a dry run against the graph as it is. Writes
    the model added itself earlier in this run are its own to edit; callers that are not a model
    (a person's CLI command, the window) are never asked by this rule."""
    import asyncio

    if not ctx.run.caller.is_model or not may_overwrite(ops):
        return 0
    return await asyncio.to_thread(_count_overwrites, ctx, ops)


def with_overwrites(counts: Mapping[str, int], overwrites: int) -> dict[str, int]:
    out = dict(counts)
    if overwrites:
        out[CHANGE_EXISTING] = overwrites
    return out
