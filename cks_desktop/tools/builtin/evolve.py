"""``evolve_knowledge``: many graph edits as one all-or-nothing change.

The item schema is deliberately flat (one object with every field, ``op`` an
enum) rather than ``oneOf``/``if``-``then`` per operation: several providers
accept only that subset of JSON Schema for tool parameters, and a flat schema
lets this module report *every* malformed operation with its index, in the
same ``validation_failed`` shape the store uses, instead of one opaque
"not valid under any of the given schemas".
"""

from __future__ import annotations

from typing import Any

from cks_desktop.graph.operations import BATCH_OPS, OPERATIONS
from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.builtin.effects import evolve_effects
from cks_desktop.tools.builtin.refs import apply_ops, preview_ops
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolError, ToolSpec

MAX_OPERATIONS = 5000

# What each operation a model may batch takes, from the one table (graph/operations.py).
REQUIRED: dict[str, tuple[str, ...]] = {name: OPERATIONS[name].required for name in BATCH_OPS}
OPTIONAL: dict[str, tuple[str, ...]] = {name: OPERATIONS[name].optional for name in BATCH_OPS}
# Keys that guard an op without changing anything (graph/edit_base.py): allowed, not a change.
GUARDS: dict[str, tuple[str, ...]] = {name: OPERATIONS[name].guards for name in BATCH_OPS}

OPERATION: dict[str, Any] = S.object_schema(
    {
        "op": {"type": "string", "enum": list(BATCH_OPS),
               "description": f"The operation: {', '.join(BATCH_OPS[:-1])} or {BATCH_OPS[-1]}."},
        "type": {**S.TYPE_NAME, "description": "add_object/add_relation: the type; update_object: a new type."},
        "name": {**S.OBJECT_NAME, "description": "add_object: the name; update_object: a new name."},
        "properties": {**S.PROPERTIES, "description": "add_object/add_relation: initial properties."},
        "label": S.LABEL,
        "on_conflict": S.ON_CONFLICT,
        "ref": {**S.REF, "description": "update_object/remove_object: the object (id, exact name, or a $label "
                                        "from an earlier operation)."},
        "set_properties": {**S.PROPERTIES, "description": "update_object: properties to add or overwrite."},
        "remove_properties": {**S.PROPERTY_NAMES, "description": "update_object: property names to delete."},
        "if_unchanged_since": {**S.UNCHANGED_SINCE, "description": "update_object: "
                               + S.UNCHANGED_SINCE["description"]},
        "source": {**S.REF, "description": "add_relation: where it starts (id, exact name or $label)."},
        "target": {**S.REF, "description": "add_relation: where it ends (id, exact name or $label)."},
        "relation_id": {**S.RELATION_ID, "description": "remove_relation: the relation's id."},
    },
    ("op",),
)


def shape_errors(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-operation field checks the flat schema cannot express."""
    errors: list[dict[str, Any]] = []
    for index, op in enumerate(operations):
        kind = op["op"]
        problems = [f"needs {key!r}" for key in REQUIRED[kind] if key not in op]
        allowed = {"op", *REQUIRED[kind], *OPTIONAL[kind], *GUARDS[kind]}
        stray = sorted(k for k in op if k not in allowed)
        if stray:
            takes = ", ".join(REQUIRED[kind] + OPTIONAL[kind])
            problems.append(f"does not take {', '.join(map(repr, stray))} (it takes: {takes})")
        if kind == "update_object" and not any(k in op for k in OPTIONAL[kind]):
            problems.append("changes nothing (give name, type, set_properties or remove_properties)")
        if problems:
            errors.append({"index": index, "message": f"{kind} {'; '.join(problems)}."})
    return errors


def failure(errors: list[dict[str, Any]], operations: list[dict[str, Any]]) -> ToolError:
    lines = []
    for err in errors:
        index = err.get("index")
        kind = operations[index]["op"] if isinstance(index, int) and 0 <= index < len(operations) else "?"
        lines.append(f"- operation {index} ({kind}): {err.get('message', 'invalid')}")
    head = (f"Nothing was written: {len(errors)} of {len(operations)} operation"
            f"{'s' if len(operations) != 1 else ''} failed validation. Fix them and send the whole batch again:")
    return ToolError("\n".join([head, *lines]), structured={"status": "validation_failed", "errors": errors})


async def _checked_apply(args: dict[str, Any], ctx: ToolContext, *, dry_run: bool) -> Any:
    operations = args["operations"]
    errors = shape_errors(operations)
    if errors:
        raise failure(errors, operations)
    try:
        return await apply_ops(ctx, [dict(op) for op in operations], dry_run=dry_run)
    except ToolError as exc:
        if isinstance(exc.structured, dict) and exc.structured.get("status") == "validation_failed":
            raise failure(exc.structured["errors"], operations) from None
        raise


async def evolve_knowledge(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args.get("dry_run", False):
        result = await _checked_apply(args, ctx, dry_run=True)
        return {"status": "dry_run", "summary": result.summary, "counts": dict(result.counts)}
    result = await _checked_apply(args, ctx, dry_run=False)
    return {
        "status": "applied",
        "change_id": result.change.id if result.change else None,
        "created": dict(result.created),
        "summary": result.summary,
    }


async def preview_evolve(args: dict[str, Any], ctx: ToolContext) -> str:
    errors = shape_errors(args["operations"])
    if errors:
        return f"This call would fail: {failure(errors, args['operations']).message}"
    return await preview_ops(ctx, [dict(op) for op in args["operations"]])


def evolve_tool() -> ToolSpec:
    return S.make_tool(
        "evolve_knowledge",
        result_keys=("status", "created", "change_id", "summary"), summary_args=("operations", "dry_run"),
        title="Evolve knowledge",
        handler=evolve_knowledge,
        preview=preview_evolve,
        effects=evolve_effects,  # removes ask like remove_object, and so on per operation
        scopes=S.MUTATE,
        policy=Policy.AUTO,
        annotations=S.ADDITIVE,
        required=("session_id", "operations"),
        properties={
            "session_id": S.SESSION_ID,
            "operations": {"type": "array", "minItems": 1, "maxItems": MAX_OPERATIONS, "items": OPERATION,
                           "description": f"The edits, applied in order (1–{MAX_OPERATIONS})."},
            "dry_run": {"type": "boolean", "default": False,
                        "description": "true: only check the batch and report what it would change (default "
                                       "false)."},
        },
        description=(
            "Applies a list of graph edits as ONE change: either every operation is applied or nothing is "
            "written. Operations: add_object {type, name, properties?, label?, on_conflict?}, update_object "
            "{ref, name?, type?, set_properties?, remove_properties?, if_unchanged_since?}, remove_object {ref}, add_relation "
            "{source, target, type, properties?, label?}, remove_relation {relation_id}. Give a new object a "
            "label like \"$alice\" and use that label as ref/source/target in later operations of the same "
            "batch. Example: [{\"op\": \"add_object\", \"type\": \"Person\", \"name\": \"Alice\", \"label\": "
            "\"$a\"}, {\"op\": \"add_relation\", \"source\": \"$a\", \"target\": \"Acme\", \"type\": "
            "\"works_at\"}]. Returns {status: \"applied\", change_id, created: {label: id}, summary}; on "
            "failure nothing is written and the error lists every failing operation by index. dry_run "
            "returns {status: \"dry_run\", summary, counts}. Prefer this over many single calls."
        ),
    )


def tools() -> list[ToolSpec]:
    return [evolve_tool()]


TOOLS = tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 40
