"""Compact ops: many adds or removals in one op, as big changes record them.

Why: a 100k-object import recorded 400k single ops and an inverse of 400k
single removals; holding them as dicts cost hundreds of MB, and a revert of
it parsed them all. A streamed change (``graph/stream.py``) records runs of
plain adds as one op each, and the removal of everything it created as one
op:

  {"op": "add_objects", "objects": [[id, type, name, properties, created_at, updated_at], ...]}
  {"op": "add_relations", "relations": [[id, type, source_id, target_id, properties, created_at], ...]}
  {"op": "remove_objects", "ids": [object id, ...]}      # each with all its relations

They mean exactly the plain ops they stand for (``expand``): ``add_object``/
``add_relation`` with explicit ids and times, and ``remove_object`` per id
(which removes the object's relations, so an import's relations need no op of
their own in its inverse). Every reader of op lists — the planner (so revert
understands them), the change feed's summary (``feed.net_effect``), the crash
test's replay — expands them; old plain op lists read as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

OBJECT_ROW = ("id", "type", "name", "properties", "created_at", "updated_at")
RELATION_ROW = ("id", "type", "source", "target", "properties", "created_at")
COMPACT_OPS = ("add_objects", "add_relations", "remove_objects")


def shape_error(op: dict[str, Any]) -> str | None:
    """Why a compact op cannot be expanded (one sentence), or None when it can."""
    kind = op.get("op")
    if kind == "remove_objects":
        ids = op.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(op) != 2:
            return "'remove_objects' needs exactly 'ids': a list of object ids"
        return None
    field, row = ("objects", OBJECT_ROW) if kind == "add_objects" else ("relations", RELATION_ROW)
    rows = op.get(field)
    if (len(op) != 2 or not isinstance(rows, list)
            or not all(isinstance(r, list) and len(r) == len(row) for r in rows)):
        return f"'{kind}' needs exactly '{field}': a list of [{', '.join(row)}] rows"
    return None


def expand_op(op: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The plain ops one compact op stands for (a well-formed one: see ``shape_error``)."""
    kind = op["op"]
    if kind == "remove_objects":
        for ident in op["ids"]:
            yield {"op": "remove_object", "ref": ident}
    elif kind == "add_objects":
        for ident, type_, name, props, created, updated in op["objects"]:
            yield {"op": "add_object", "id": ident, "type": type_, "name": name, "properties": props,
                   "created_at": created, "updated_at": updated}
    else:
        for ident, type_, source, target, props, created in op["relations"]:
            yield {"op": "add_relation", "id": ident, "type": type_, "source": source, "target": target,
                   "properties": props, "created_at": created}


def is_compact(op: Any) -> bool:
    return type(op) is dict and op.get("op") in COMPACT_OPS


def expand(ops: Iterable[Any]) -> Iterator[Any]:
    """The ops with every well-formed compact op replaced by its plain ops (others as they are)."""
    for op in ops:
        if is_compact(op) and shape_error(op) is None:
            yield from expand_op(op)
        else:
            yield op


def expand_indexed(ops: Iterable[Any]) -> Iterator[tuple[int, Any]]:
    """``(index of the op in the list, plain op)``: an error in a compact op's part names the
    compact op."""
    for i, op in enumerate(ops):
        if is_compact(op) and shape_error(op) is None:
            for plain in expand_op(op):
                yield i, plain
        else:
            yield i, op


def expanded_len(ops: Iterable[Any]) -> int:
    """How many plain ops the list stands for (without building them)."""
    n = 0
    for op in ops:
        if is_compact(op) and shape_error(op) is None:
            n += len(op["ids"] if op["op"] == "remove_objects" else op[op["op"][4:]])
        else:
            n += 1
    return n
