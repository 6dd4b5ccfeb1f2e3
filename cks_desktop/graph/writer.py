"""Writing a validated plan: net row changes, the change record, the event.

Only the NET effect of the batch is written (an object added then updated is
one INSERT; added then removed is nothing), in an order the immediate
foreign-key checks accept: relations that go away first, then new and
changed objects, then changed and new relations, and removed objects last.
Rows of one kind go in one ``executemany``: that is what keeps a 10k-op batch
close to raw insert speed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring as _str
from typing import Any

from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.evidence import write_evidence
from cks_desktop.graph.history import encode_parts
from cks_desktop.graph.model import Change, Object, Relation
from cks_desktop.graph.plan import Plan
from cks_desktop.graph.sqlite_util import dumps, search_text
from cks_desktop.ids import new_id


def summarize(counts: dict[str, int]) -> str:
    """"adds 2 objects, 1 relation; changes 1 property" — for history lists and approval previews."""

    def n(count: int, word: str) -> str:
        if word == "property":
            return f"{count} {'property' if count == 1 else 'properties'}"
        if word == "source":  # evidence rows: where a fact came from
            return f"{count} source{'' if count == 1 else 's'}"
        return f"{count} {word}{'' if count == 1 else 's'}"

    def group(verb: str, *items: tuple[int, str]) -> str | None:
        parts = [n(c, w) for c, w in items if c]
        return f"{verb} {', '.join(parts)}" if parts else None

    c = counts
    prop_only_updates = c["objects_updated"] - c["objects_renamed"] - c["objects_retyped"]
    groups = [
        group("adds", (c["objects_added"], "object"), (c["relations_added"], "relation"),
              (c.get("evidence_added", 0), "source")),
        group("changes", (c["properties_changed"], "property")),
        group("renames", (c["objects_renamed"], "object")),
        group("retypes", (c["objects_retyped"], "object")),
        group("updates", (c["relations_updated"], "relation"),
              (prop_only_updates if not c["properties_changed"] else 0, "object")),
        group("removes", (c["objects_removed"], "object"), (c["relations_removed"], "relation"),
              (c.get("evidence_removed", 0), "source")),
        group("moves", (c.get("evidence_moved", 0), "source")),
        f"marks {n(c['evidence_reviewed'], 'source')} as reviewed" if c.get("evidence_reviewed") else None,
        group("defines", (c["types_defined"], "type")),
        group("drops", (c["types_removed"], "type definition")),
        group("reuses", (c["objects_reused"], "existing object")),
    ]
    text = "; ".join(g for g in groups if g)
    return text or "no changes"


def ops_json(plan: Plan) -> str:
    """The resolved ops as JSON text (see ``ops_parts``)."""
    return "".join(ops_parts(plan))


def ops_parts(plan: Plan) -> Iterator[str]:
    """The resolved ops as JSON, piece by piece. Add ops are assembled from their parts
    with the properties text encoded during validation: encoding 10k ops again was a
    sixth of a bulk batch's cost. Pieces, not one string, so a big list can be
    compressed without ever being whole (``history.encode_parts``)."""
    yield "["
    for i, (op, props) in enumerate(zip(plan.resolved, plan.props_json)):
        kind = op["op"]
        if i:
            yield ","
        if props is None:  # only new objects and relations carry their encoded properties
            yield dumps(op)
            continue
        label = f',"label":{_str(op["label"])}' if "label" in op else ""
        if kind == "add_relation":
            yield (f'{{"op":"add_relation","id":{_str(op["id"])},"type":{_str(op["type"])},'
                   f'"source":{_str(op["source"])},"target":{_str(op["target"])},"properties":{props}{label}}}')
        else:
            yield (f'{{"op":"add_object","id":{_str(op["id"])},"type":{_str(op["type"])},'
                   f'"name":{_str(op["name"])},"properties":{props}{label}}}')
    yield "]"


def inverse_parts(inverse: list[dict[str, Any]]) -> Iterator[str]:
    """Inverse ops as JSON pieces, with the one-field removals of bulk adds assembled directly."""
    yield "["
    for i, op in enumerate(inverse):
        if i:
            yield ","
        if len(op) == 2 and op["op"] == "remove_relation":
            yield f'{{"op":"remove_relation","relation_id":{_str(op["relation_id"])}}}'
        elif len(op) == 2 and op["op"] == "remove_object":
            yield f'{{"op":"remove_object","ref":{_str(op["ref"])}}}'
        else:
            yield dumps(op)
    yield "]"


@dataclass
class NetWrites:
    """What ``write_rows`` wrote: for the change index and the event."""

    touched: set[str]  # object ids (a relation touches its two ends)
    added_objects: list[Object]
    updated_objects: list[Object]
    removed_objects: list[str]
    added_relations: list[Relation]
    updated_relations: list[Relation]
    removed_relations: list[str]
    types_changed: bool
    evidence_changed: bool = False


def write_plan(conn: sqlite3.Connection, session_id: str, plan: Plan, origin: str, at: str,
               reverts: str | None = None) -> tuple[Change, GraphChanged]:
    """Execute the net writes and record the change; the caller owns the transaction."""
    change_id = new_id("c_")
    net = write_rows(conn, session_id, plan, change_id, at)
    sid = session_id
    summary = summarize(plan.counts)
    inverse = plan.inverse_ops
    change = Change(id=change_id, session_id=sid, at=at, origin=origin, ops=plan.resolved,
                    inverse_ops=inverse, summary=summary, reverts=reverts)
    conn.execute("INSERT INTO changes (id, session_id, at, origin, summary, ops, inverse_ops, reverts) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (change.id, sid, at, origin, summary, encode_parts(ops_parts(plan)),
                  encode_parts(inverse_parts(inverse)), reverts))
    index_change(conn, change.id, net.touched)
    event = GraphChanged(
        session_id=sid, change_id=change.id, origin=origin,
        added_objects=tuple(net.added_objects), updated_objects=tuple(net.updated_objects),
        removed_objects=tuple(net.removed_objects),
        added_relations=tuple(net.added_relations), updated_relations=tuple(net.updated_relations),
        removed_relations=tuple(net.removed_relations), types_changed=net.types_changed,
        reverts=reverts, evidence_changed=net.evidence_changed)
    return change, event


def index_change(conn: sqlite3.Connection, change_id: str, touched: set[str]) -> None:
    """The object → change index rows (a streamed change adds them chunk by chunk)."""
    if touched:
        conn.executemany("INSERT OR IGNORE INTO change_objects (object_id, change_id) VALUES (?, ?)",
                         [(oid, change_id) for oid in sorted(touched)])


def write_rows(conn: sqlite3.Connection, session_id: str, plan: Plan, change_id: str, at: str) -> NetWrites:
    """Execute the plan's net row writes (objects, relations, full-text index, type
    definitions, evidence: new rows record ``change_id`` and ``at``); the caller owns the
    transaction and records the change."""
    ov = plan.overlay
    sid = session_id
    obj_insert: list[tuple[Any, ...]] = []
    obj_update: list[tuple[Any, ...]] = []
    obj_delete: list[tuple[str, str]] = []
    added_objs: list[Object] = []
    updated_objs: list[Object] = []
    touched: set[str] = set()
    fts_delete: list[tuple[int]] = []
    fts_insert: list[tuple[int, str, str]] = []
    next_n = conn.execute("SELECT coalesce(max(n), 0) FROM objects").fetchone()[0]
    for st in ov.objs.values():
        if not st.dirty and st.existed:
            continue
        if st.existed and st.n is not None:
            fts_delete.append((st.n,))
        if st.alive and not st.existed:
            next_n += 1
            obj_insert.append((next_n, st.id, sid, st.type, st.name, st.key, st.props_json, st.created_at,
                               st.updated_at))
            fts_insert.append((next_n, st.name, search_text(st.properties)))
            added_objs.append(Object(st.id, sid, st.type, st.name, st.properties, st.created_at, st.updated_at))
        elif st.alive:
            fts_insert.append((st.n, st.name, search_text(st.properties)))  # type: ignore[arg-type]
            obj_update.append((st.type, st.name, st.key, st.props_json, st.created_at, st.updated_at, sid, st.id))
            updated_objs.append(Object(st.id, sid, st.type, st.name, st.properties, st.created_at, st.updated_at))
        elif st.existed:
            obj_delete.append((sid, st.id))
        else:
            continue
        touched.add(st.id)

    rel_insert: list[tuple[Any, ...]] = []
    rel_update: list[tuple[Any, ...]] = []
    rel_delete: list[tuple[str, str]] = []
    added_rels: list[Relation] = []
    updated_rels: list[Relation] = []
    for r in ov.rels.values():
        if not r.dirty and r.existed:
            continue
        if r.alive and not r.existed:
            rel_insert.append((r.id, sid, r.type, r.source_id, r.target_id, r.props_json, r.created_at))
            added_rels.append(Relation(r.id, sid, r.type, r.source_id, r.target_id, r.properties, r.created_at))
        elif r.alive:
            rel_update.append((r.type, r.source_id, r.target_id, r.props_json, r.created_at, sid, r.id))
            updated_rels.append(Relation(r.id, sid, r.type, r.source_id, r.target_id, r.properties, r.created_at))
        elif r.existed:
            rel_delete.append((sid, r.id))
        else:
            continue
        touched.add(r.source_id)
        touched.add(r.target_id)
    # A relation that was re-pointed also touched its old ends (kept in its inverse op).
    for inverse_ops in plan.inverses:
        for op in inverse_ops:
            if op["op"] == "update_relation":
                touched.update((op["source"], op["target"]))

    if rel_delete:
        conn.executemany("DELETE FROM relations WHERE session_id = ? AND id = ?", rel_delete)
    if obj_insert:
        conn.executemany("INSERT INTO objects (n, id, session_id, type, name, name_key, properties, created_at, "
                         "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", obj_insert)
    if obj_update:
        conn.executemany("UPDATE objects SET type = ?, name = ?, name_key = ?, properties = ?, created_at = ?, "
                         "updated_at = ? WHERE session_id = ? AND id = ?", obj_update)
    if rel_update:
        conn.executemany("UPDATE relations SET type = ?, source_id = ?, target_id = ?, properties = ?, "
                         "created_at = ? WHERE session_id = ? AND id = ?", rel_update)
    if rel_insert:
        conn.executemany("INSERT INTO relations (id, session_id, type, source_id, target_id, properties, "
                         "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rel_insert)
    if obj_delete:
        conn.executemany("DELETE FROM objects WHERE session_id = ? AND id = ?", obj_delete)
    if fts_delete:
        conn.executemany("DELETE FROM objects_fts WHERE rowid = ?", fts_delete)
    if fts_insert:
        conn.executemany("INSERT INTO objects_fts (rowid, name, body) VALUES (?, ?, ?)", fts_insert)

    types_changed = _write_typedefs(conn, session_id, plan)
    evidence_changed = write_evidence(conn, session_id, plan.evidence, change_id, at)
    touched.update(plan.evidence.touched)  # a change of sources shows in the object's history
    return NetWrites(touched, added_objs, updated_objs, [i for _, i in obj_delete], added_rels, updated_rels,
                     [i for _, i in rel_delete], types_changed, evidence_changed)


def _write_typedefs(conn: sqlite3.Connection, session_id: str, plan: Plan) -> bool:
    ov = plan.overlay
    changed = False
    for key, td in ov.typedefs.items():
        if ov.typedefs_before.get(key, None) is td:
            continue
        changed = True
        conn.execute("DELETE FROM type_defs WHERE session_id = ? AND kind = ? AND name_key = ?",
                     (session_id, key[0], key[1]))
        if td is not None:
            conn.execute("INSERT INTO type_defs (session_id, kind, name, name_key, description, "
                         "properties_schema) VALUES (?, ?, ?, ?, ?, ?)",
                         (session_id, td.kind, td.name, key[1], td.description,
                          dumps(td.properties_schema) if td.properties_schema is not None else None))
    return changed
