"""What every importer shares: a parsed graph, turned into ONE batch.

Importers only parse; this module decides ids and conflicts and reports
failures as one sentence that says where in the input the problem is.

- Ids are kept when importing into an EMPTY session, when every id has the
  shape of an id this app makes, and when none is used anywhere in the
  database (ids are global); otherwise every object and relation gets a new id.
- In a non-empty session an imported object with the same type and name as an
  existing one is merged into it (``on_conflict: update``); relations may also
  point at existing objects by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.errors import StoreError, ValidationFailed
from cks_desktop.graph.sqlite_util import is_id, json_list

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult, GraphStore


@dataclass
class ParsedObject:
    key: str  # the object's id inside the input (used by relations)
    type: str
    name: str
    properties: dict[str, Any]
    where: str  # "line 3", "node 'n0'", "object 2"


@dataclass
class ParsedRelation:
    id: str | None
    type: str
    source: str  # a ParsedObject.key, or a name/id of an object already in the session
    target: str
    properties: dict[str, Any]
    where: str


@dataclass
class ParsedGraph:
    objects: list[ParsedObject] = field(default_factory=list)
    relations: list[ParsedRelation] = field(default_factory=list)


def apply_import(store: "GraphStore", session_id: str, graph: ParsedGraph, origin: str) -> "ApplyResult":
    empty = store.counts(session_id)["objects"] == 0
    keep_ids = empty and _ids_are_free(store, graph)
    labels = {o.key: f"$import{i}" for i, o in enumerate(graph.objects)}
    ops: list[dict[str, Any]] = []
    where: list[str] = []
    for o in graph.objects:
        op: dict[str, Any] = {"op": "add_object", "type": o.type, "name": o.name, "properties": o.properties,
                              "label": labels[o.key], "on_conflict": "error" if empty else "update"}
        if keep_ids:
            op["id"] = o.key
        ops.append(op)
        where.append(o.where)
    for r in graph.relations:
        op = {"op": "add_relation", "type": r.type, "properties": r.properties,
              "source": labels.get(r.source, r.source), "target": labels.get(r.target, r.target)}
        if keep_ids and r.id is not None:
            op["id"] = r.id
        ops.append(op)
        where.append(r.where)
    # The parsed graph is no longer needed (the ops share its property dicts): let it go
    # before the batch builds its own state, which lowers the import's peak memory.
    graph.objects.clear()
    graph.relations.clear()
    try:
        result = store.apply(session_id, ops, origin)
    except ValidationFailed as exc:
        first = exc.errors[0]
        more = f" ({len(exc.errors) - 1} more problems)" if len(exc.errors) > 1 else ""
        raise StoreError(f"Nothing was imported: {where[first['index']]}: {first['message']}{more}") from None
    result.created = {}  # the import's own labels mean nothing to the caller
    return result


def _ids_are_free(store: "GraphStore", graph: ParsedGraph) -> bool:
    obj_ids = [o.key for o in graph.objects]
    rel_ids = [r.id for r in graph.relations if r.id is not None]
    if not all(is_id(i, "o_") for i in obj_ids) or not all(is_id(i, "r_") for i in rel_ids):
        return False
    if len(set(obj_ids)) != len(obj_ids) or len(set(rel_ids)) != len(rel_ids):
        return False
    if len(rel_ids) != len(graph.relations):
        return False
    with store.connection_lock() as conn:
        for table, ids in (("objects", obj_ids), ("relations", rel_ids)):
            if ids and conn.execute(f"SELECT 1 FROM {table} WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1",
                                    (json_list(ids),)).fetchone():
                return False
    return True


def require_str(value: Any, what: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"Nothing was imported: {where}: {what} must be a non-empty string.")
    return value


def require_props(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StoreError(f"Nothing was imported: {where}: properties must be a JSON object.")
    return value
