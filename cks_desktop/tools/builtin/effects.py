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

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

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
    return op_effects(args.get("operations") or [])


async def add_object_effects(args: dict[str, Any], ctx: ToolContext) -> Mapping[str, int]:
    return {"update_object": 1} if args.get("on_conflict") == "update" else {}


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
