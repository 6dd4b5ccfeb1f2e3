"""The single-purpose graph writes (scope graph.mutate).

Each tool is a ``build`` step (arguments → store operations, resolving refs
first so errors name the right thing) plus a ``finish`` step (the applied
result → what the model reads). The same ``build`` feeds the approval
preview, a dry run through ``store.apply``, so the dialog shows exactly what
the handler would write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any


from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.builtin.effects import (
    add_object_effects, failing_items, merge_effects, overwrite_count, revert_effects, with_overwrites,
)
from cks_desktop.tools.builtin.merge import build_merge, finish_merge
from cks_desktop.tools.builtin.refs import (
    Ends, apply_ops, blocking, full, preview_ops, recorded, resolve, store_errors, write_result,
)
from cks_desktop.graph.edit_base import BASE_KEY
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolError, ToolSpec

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object
    from cks_desktop.graph.store import ApplyResult

Ops = list[dict[str, Any]]
Build = Callable[[dict[str, Any], ToolContext], Awaitable[tuple[Ops, Any]]]
Finish = Callable[[dict[str, Any], ToolContext, "ApplyResult", Any], dict[str, Any]]

NEW = "$new"


def batch_tool(build: Build, finish: Finish) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A handler and a preview that share one ``build``."""

    async def handler(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        ops, state = await build(args, ctx)
        result = await apply_ops(ctx, ops, single_op=len(ops) == 1)
        with store_errors():
            return finish(args, ctx, result, state)

    async def preview(args: dict[str, Any], ctx: ToolContext) -> str:
        try:
            ops, _ = await build(args, ctx)
        except ToolError as exc:
            return f"This call would fail: {exc.message}"
        return await preview_ops(ctx, ops)

    return handler, preview


def _with(op: dict[str, Any], args: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        if key in args:
            op[key] = args[key]
    return op


# -- add_object ---------------------------------------------------------------
async def _build_add_object(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    op = _with({"op": "add_object", "type": args["type"], "name": args["name"], "label": NEW,
                "on_conflict": args.get("on_conflict", "error")}, args, "properties")
    return [op], None


def _finish_add_object(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult", _: Any) -> dict[str, Any]:
    # The store maps the label to the object for "reuse" and "update" too, not only for new ones.
    obj = ctx.store.get_object(ctx.session_id, result.created[NEW])
    counts = result.counts
    status = "created" if counts.get("objects_added") else "updated" if counts.get("objects_updated") else "reused"
    return {"status": status, "object": full(obj), **write_result(result)}


# -- update_object ------------------------------------------------------------
CHANGE_KEYS = ("name", "type", "set_properties", "remove_properties")


async def _build_update_object(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    if not any(k in args for k in CHANGE_KEYS):
        raise ToolError("Nothing to change: give at least one of name, type, set_properties or "
                        "remove_properties.")
    obj = resolve(ctx, args["ref"])
    return [_with({"op": "update_object", "ref": obj.id}, args, *CHANGE_KEYS, BASE_KEY)], obj


def _finish_update_object(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult",
                          obj: "Object") -> dict[str, Any]:
    return {"object": full(ctx.store.get_object(ctx.session_id, obj.id)), **write_result(result)}


async def _update_object_effects(args: dict[str, Any], ctx: ToolContext) -> dict[str, int]:
    """A rename, retype, or changed/removed property of what a person or a document wrote asks."""
    try:
        ops, _ = await _build_update_object(args, ctx)
    except ToolError:
        return {}  # the handler fails the same way, writing nothing
    return with_overwrites({}, await overwrite_count(ops, ctx))


# -- remove_object ------------------------------------------------------------
async def _build_remove_object(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    obj = resolve(ctx, args["ref"])
    with store_errors():
        incoming, outgoing = ctx.store.relations_of(ctx.session_id, obj.id)
    touching = {r.id for r in incoming} | {r.id for r in outgoing}
    return [{"op": "remove_object", "ref": obj.id}], (obj, len(touching))


def _finish_remove_object(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult",
                          state: tuple["Object", int]) -> dict[str, Any]:
    obj, n_relations = state
    return {"removed": {"id": obj.id, "type": obj.type, "name": obj.name}, "relations_removed": n_relations,
            **write_result(result)}


# -- add_relation -------------------------------------------------------------
async def _build_add_relation(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    source = resolve(ctx, args["source"])
    target = resolve(ctx, args["target"])
    op = _with({"op": "add_relation", "source": source.id, "target": target.id, "type": args["type"],
                "label": NEW}, args, "properties")
    return [op], (source, target)


def _finish_add_relation(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult",
                         ends_: tuple["Object", "Object"]) -> dict[str, Any]:
    ends = Ends(ctx.store, ctx.session_id)
    for obj in ends_:
        ends.remember(obj)
    rel = ctx.store.get_relation(ctx.session_id, result.created[NEW])
    return {"relation": ends.relation(rel), **write_result(result)}


# -- remove_relation ----------------------------------------------------------
async def _build_remove_relation(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    with store_errors():
        rel = ctx.store.get_relation(ctx.session_id, args["relation_id"])
        shown = Ends(ctx.store, ctx.session_id).relation(rel)
    return [{"op": "remove_relation", "relation_id": rel.id}], shown


def _finish_remove_relation(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult",
                            shown: dict[str, Any]) -> dict[str, Any]:
    return {"removed": shown, **write_result(result)}


# -- define_type --------------------------------------------------------------
async def _build_define_type(args: dict[str, Any], ctx: ToolContext) -> tuple[Ops, Any]:
    schema = args.get("properties_schema")
    if schema is not None:
        import jsonschema  # here, not at start-up: only a type with a schema needs it

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ToolError(f"properties_schema is not a valid JSON Schema: {exc.message}") from None
    op = _with({"op": "define_type", "kind": args["kind"], "name": args["name"]}, args,
               "description", "properties_schema")
    return [op], None


def _finish_define_type(args: dict[str, Any], ctx: ToolContext, result: "ApplyResult", _: Any) -> dict[str, Any]:
    defs = [t for t in ctx.store.type_defs(ctx.session_id) if t.kind == args["kind"] and t.name == args["name"]]
    shown: dict[str, Any] = {"kind": args["kind"], "name": args["name"]}
    if defs:
        shown.update(description=defs[0].description, properties_schema=defs[0].properties_schema)
    return {"type": shown, **write_result(result)}


async def _define_type_effects(args: dict[str, Any], ctx: ToolContext) -> dict[str, int]:
    """Replacing a person's type definition, or a schema objects already there fail, asks."""
    try:
        ops, _ = await _build_define_type(args, ctx)
    except ToolError:
        return {}
    return with_overwrites({}, await overwrite_count(ops, ctx))


async def _preview_define_type(args: dict[str, Any], ctx: ToolContext) -> str:
    """The dry run's summary, and which objects already there the schema would refuse."""
    import asyncio

    try:
        ops, _ = await _build_define_type(args, ctx)
    except ToolError as exc:
        return f"This call would fail: {exc.message}"
    text = await preview_ops(ctx, ops)
    schema = args.get("properties_schema")
    if not schema:
        return text

    def failing() -> list[str]:
        return [getattr(i, "name", i.id) for i in failing_items(ctx, args["kind"], str(args["name"]), schema)]

    bad = await asyncio.to_thread(failing)
    if not bad:
        return text
    shown = ", ".join(repr(n) for n in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    return (f"{text}. {len(bad)} existing {args['kind']}{'s' if len(bad) != 1 else ''} of this type would "
            f"fail the schema ({shown}): their next edit, and every new {args['name']}, must fit it.")


# -- revert_change ------------------------------------------------------------
async def revert_change(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    result = recorded(ctx, await blocking(ctx.store.revert, ctx.session_id, args["change_id"], ctx.run.origin))
    return {"status": "reverted", "reverted": args["change_id"], **write_result(result)}


async def preview_revert(args: dict[str, Any], ctx: ToolContext) -> str:
    try:
        with store_errors():
            change = ctx.store.get_change(ctx.session_id, args["change_id"])
    except ToolError as exc:
        return f"This call would fail: {exc.message}"
    undo = await preview_ops(ctx, list(change.inverse_ops))
    return f"Reverts change {change.id} ({change.summary or 'no summary'}): {undo}"


def write_tools() -> list[ToolSpec]:
    sid = {"session_id": S.SESSION_ID}
    req = ("session_id",)
    mutate: dict[str, Any] = {"scopes": S.MUTATE}

    def spec(name: str, build: Build, finish: Finish, preview_fn: Any = None, **kw: Any) -> ToolSpec:
        handler, preview = batch_tool(build, finish)
        return S.make_tool(name, handler=handler, preview=preview_fn or preview, **mutate, **kw)

    return [
        spec("add_object", _build_add_object, _finish_add_object, title="Add object", policy=Policy.AUTO,
             result_keys=("status", "object", "change_id", "summary"), summary_args=("name", "type"),
             annotations=S.ADDITIVE, effects=add_object_effects, required=(*req, "type", "name"),
             properties={**sid, "type": S.TYPE_NAME, "name": S.OBJECT_NAME, "properties": S.PROPERTIES,
                         "on_conflict": S.ON_CONFLICT},
             description="Adds one object (a person, place, idea, document…) to the graph. Returns {status: "
                         "created|reused|updated, object: {id, type, name, properties}, change_id, summary}. "
                         "Search first to avoid duplicates; to add several objects and relations at once use "
                         "evolve_knowledge."),
        spec("update_object", _build_update_object, _finish_update_object, title="Update object",
             result_keys=("object", "change_id", "summary"), summary_args=("ref", "name", "type"),
             policy=Policy.AUTO, annotations=S.ADDITIVE, effects=_update_object_effects, required=(*req, "ref"),
             properties={**sid, "ref": S.REF,
                         "name": {**S.OBJECT_NAME, "description": "A new name (optional)."},
                         "type": {**S.TYPE_NAME, "description": "A new type (optional)."},
                         "set_properties": {**S.PROPERTIES, "description": "Properties to add or overwrite; "
                                                                           "others are kept."},
                         "remove_properties": S.PROPERTY_NAMES, BASE_KEY: S.UNCHANGED_SINCE},
             description="Changes one object: rename it, change its type, set some properties and/or delete "
                         "some. Properties not mentioned stay as they are. Returns the object as it is now, "
                         "with change_id (its new version) and summary. On a shared graph pass "
                         "if_unchanged_since so an edit made meanwhile by someone else is not overwritten."),
        spec("remove_object", _build_remove_object, _finish_remove_object, title="Remove object",
             result_keys=("removed", "relations_removed", "change_id", "summary"), summary_args=("ref",),
             policy=Policy.ONCE, annotations=S.DESTRUCTIVE, required=(*req, "ref"),
             properties={**sid, "ref": S.REF},
             description="Deletes one object and every relation touching it. Returns {removed, "
                         "relations_removed, change_id, summary}; revert_change with that change_id brings "
                         "it back."),
        spec("add_relation", _build_add_relation, _finish_add_relation, title="Add relation",
             result_keys=("relation", "change_id", "summary"), summary_args=("source", "type", "target"),
             policy=Policy.AUTO, annotations=S.ADDITIVE, required=(*req, "source", "target", "type"),
             properties={**sid,
                         "source": {**S.REF, "description": "The object the relation goes from (id or exact "
                                                            "name)."},
                         "target": {**S.REF, "description": "The object the relation goes to (id or exact "
                                                            "name)."},
                         "type": {**S.TYPE_NAME, "description": "The relation type, read as 'source <type> "
                                                                "target', e.g. works_at, part_of, cites."},
                         "properties": S.PROPERTIES},
             description="Links two existing objects with a directed, typed relation. Returns {relation: {id, "
                         "type, source: {id, name, type}, target: {...}, properties}, change_id, summary}."),
        spec("remove_relation", _build_remove_relation, _finish_remove_relation, title="Remove relation",
             result_keys=("removed", "change_id", "summary"), summary_args=("relation_id",),
             policy=Policy.ONCE, annotations=S.DESTRUCTIVE, required=(*req, "relation_id"),
             properties={**sid, "relation_id": S.RELATION_ID},
             description="Deletes one relation by id (the objects stay). Returns {removed, change_id, "
                         "summary}."),
        spec("merge_objects", build_merge, finish_merge, title="Merge objects", policy=Policy.ONCE,
             result_keys=("kept", "removed", "relations_repointed", "relations_dropped", "conflicts", "change_id",
                          "summary"), summary_args=("keep", "merge"),
             annotations=S.DESTRUCTIVE, effects=merge_effects, required=(*req, "keep", "merge"),
             properties={**sid,
                         "keep": {**S.REF, "description": "The object that stays (id or exact name)."},
                         "merge": {**S.REF, "description": "The duplicate folded into keep and then removed "
                                                           "(id or exact name)."}},
             description="Folds a duplicate object into another in one undoable change: merge's relations "
                         "are re-pointed to keep (duplicates and links between the two are dropped), merge's "
                         "properties are copied over (keep's values win on conflicts), merge's name is added "
                         "to keep's 'aliases' list, and merge is removed. Returns {kept, removed, "
                         "relations_repointed, relations_dropped, conflicts, change_id, summary}."),
        spec("define_type", _build_define_type, _finish_define_type, title="Define type",
             result_keys=("type", "change_id", "summary"), summary_args=("name", "kind"),
             policy=Policy.AUTO, annotations=S.ADDITIVE, effects=_define_type_effects,
             preview_fn=_preview_define_type, required=(*req, "kind", "name"),
             properties={**sid,
                         "kind": {"type": "string", "enum": ["object", "relation"],
                                  "description": "Whether this is an object type or a relation type."},
                         "name": S.TYPE_NAME,
                         "description": {"type": "string", "maxLength": 2000,
                                         "description": "What the type means, for people and models."},
                         "properties_schema": {"type": ["object", "null"],
                                               "description": "A JSON Schema that the properties of every "
                                                              "object (or relation) of this type must satisfy "
                                                              "from now on; null removes it."}},
             description="Describes a type and optionally enforces a JSON Schema on its properties for every "
                         "later write. Returns {type: {kind, name, description, properties_schema}, "
                         "change_id, summary}."),
        S.make_tool("revert_change", handler=revert_change, preview=preview_revert, title="Revert change",
                    result_keys=("change_id", "summary"), summary_args=("change_id",),
                    effects=revert_effects, policy=Policy.ONCE, annotations=S.DESTRUCTIVE, required=(*req, "change_id"),
                    properties={**sid, "change_id": {"type": "string", "minLength": 1,
                                                     "description": "The id of the change to undo (from "
                                                                    "list_changes or a write's result)."}},
                    description="Undoes one earlier change by applying its inverse as a new change (history "
                                "is kept; reverting the revert redoes it). Fails without writing if later "
                                "changes make the undo impossible. Returns {status: reverted, reverted, "
                                "change_id, summary}.",
                    **mutate),
    ]


TOOLS = write_tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 30
