"""Deterministic 10,000-operation batches for the crash-consistency tests, and
the checks that a reopened database holds exactly the batches that committed.

Batch ``k`` of a chain with ``n`` objects per batch, on top of batch ``k-1``:
  * adds ``n`` objects ``k{k}-{i}`` (properties ``batch``, ``i``), with labels,
  * adds ``n-1`` relations ``k{k}-{i} -> k{k}-{i+1}`` through those labels,
  * sets ``seen_by = k`` on objects ``i <= n/4`` of batch ``k-1``,
  * removes the relations of batch ``k-1`` whose source is ``n/4 <= i < 3n/8``,
  * removes the objects ``i >= 7n/8`` of batch ``k-1`` (and with them their relations).
With ``n = 4000`` that is exactly 10,000 operations (5,000 with ``n = 2000``,
the most ``evolve_knowledge`` accepts). Batch 0 (only the adds) is the seed.

Because every batch is a pure function of ``k`` and ``n``, the state after
``m`` committed batches has a closed form; a database that shows anything else
after a crash (half a batch, a change record without its rows, rows without
their change) fails ``check_database``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

ORIGINS = ("crash-test", "model")


def updated_upto(n: int) -> int:
    return n // 4  # inclusive


def removed_rel_sources(n: int) -> range:
    return range(n // 4, n // 4 + n // 8)


def removed_objects(n: int) -> range:
    return range(n - n // 8, n)


def batch_ops(k: int, n: int, prev_rel_ids: list[str]) -> list[dict[str, Any]]:
    """The operations of batch ``k``; ``prev_rel_ids`` are the ids of the relations of batch
    ``k-1`` to remove (the child looks them up, ids are random)."""
    ops: list[dict[str, Any]] = [
        {"op": "add_object", "type": "Node", "name": f"k{k}-{i}", "properties": {"batch": k, "i": i},
         "label": f"$o{i}"} for i in range(n)]
    ops += [{"op": "add_relation", "source": f"$o{i}", "target": f"$o{i + 1}", "type": "next",
             "properties": {"batch": k}} for i in range(n - 1)]
    if k > 0:
        ops += [{"op": "update_object", "ref": f"k{k - 1}-{i}", "set_properties": {"seen_by": k}}
                for i in range(updated_upto(n) + 1)]
        ops += [{"op": "remove_relation", "relation_id": rid} for rid in prev_rel_ids]
        ops += [{"op": "remove_object", "ref": f"k{k - 1}-{i}"} for i in removed_objects(n)]
    return ops


def relation_ids_to_remove(conn: sqlite3.Connection, session_id: str, k: int, n: int) -> list[str]:
    """Ids of batch ``k-1``'s relations that batch ``k`` removes by id."""
    if k == 0:
        return []
    names = [f"k{k - 1}-{i}" for i in removed_rel_sources(n)]
    rows = conn.execute(
        "SELECT r.id FROM relations r JOIN objects o ON o.session_id = r.session_id AND o.id = r.source_id "
        "WHERE r.session_id = ? AND o.name IN (SELECT value FROM json_each(?)) ORDER BY o.name",
        (session_id, json.dumps(names))).fetchall()
    ids = [r[0] for r in rows]
    assert len(ids) == len(names), f"batch {k - 1} is incomplete: {len(ids)} of {len(names)} relations"
    return ids


# -- the expected state ------------------------------------------------------------------------

def expected_state(m: int, n: int) -> tuple[dict[str, dict[str, Any]], set[tuple[str, str]]]:
    """Objects (name -> properties) and relations (source name, target name) after batches 0..m."""
    objects: dict[str, dict[str, Any]] = {}
    relations: set[tuple[str, str]] = set()
    gone = set(removed_objects(n))
    cut = set(removed_rel_sources(n))
    for k in range(m + 1):
        superseded = k < m  # batch k+1 committed and edited batch k
        for i in range(n):
            if superseded and i in gone:
                continue
            props: dict[str, Any] = {"batch": k, "i": i}
            if superseded and i <= updated_upto(n):
                props["seen_by"] = k + 1
            objects[f"k{k}-{i}"] = props
        for i in range(n - 1):
            if superseded and (i in cut or i in gone or i + 1 in gone):
                continue
            relations.add((f"k{k}-{i}", f"k{k}-{i + 1}"))
    return objects, relations


# -- replaying the change history --------------------------------------------------------------

def replay(changes: list[tuple[str, str]]) -> tuple[dict[str, tuple[str, str, dict[str, Any]]],
                                                    dict[str, tuple[str, str, str, dict[str, Any]]]]:
    """Apply the recorded (resolved) ops of every change, in order, to empty dicts."""
    objs: dict[str, tuple[str, str, dict[str, Any]]] = {}
    rels: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
    from cks_desktop.graph.compact_ops import expand  # a streamed change's add_objects, ... as plain ops
    from cks_desktop.graph.history import decode_ops  # large op lists are stored compressed

    for change_id, ops_json in changes:
        for op in expand(decode_ops(ops_json)):
            kind = op["op"]
            if kind == "add_object" and op.get("outcome") == "reused":
                continue
            if kind == "add_object" and op.get("outcome") == "updated":
                t, name, props = objs[op["id"]]
                objs[op["id"]] = (t, name, {**props, **(op.get("properties") or {})})
            elif kind == "add_object":
                assert op["id"] not in objs, f"{change_id} adds {op['id']} twice"
                objs[op["id"]] = (op["type"], op["name"], dict(op.get("properties") or {}))
            elif kind == "update_object":
                t, name, props = objs[op["ref"]]
                props = {**props, **(op.get("set_properties") or {})}
                for key in op.get("remove_properties") or []:
                    props.pop(key, None)
                objs[op["ref"]] = (op.get("type", t), op.get("name", name), props)
            elif kind == "remove_object":
                del objs[op["ref"]]
                for rid in op.get("removed_relations") or []:
                    del rels[rid]
            elif kind == "add_relation":
                assert op["source"] in objs and op["target"] in objs, f"{change_id}: dangling relation"
                rels[op["id"]] = (op["type"], op["source"], op["target"], dict(op.get("properties") or {}))
            elif kind == "remove_relation":
                del rels[op["relation_id"]]
            elif kind == "update_relation":
                t, src, dst, props = rels[op["relation_id"]]
                rels[op["relation_id"]] = (op.get("type", t), op.get("source", src), op.get("target", dst),
                                           dict(op["properties"]) if "properties" in op else props)
            elif kind in ("define_type", "undefine_type"):
                continue
            else:
                raise AssertionError(f"{change_id}: the replay does not know {kind!r}")
    return objs, rels


def check_database(path: Path, session_id: str, n: int) -> int:
    """Check everything in the (already reopened) file; return how many batches after the seed committed."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO objects_fts(objects_fts) VALUES ('integrity-check')")  # raises if out of step
        changes = conn.execute("SELECT id, ops, origin FROM changes WHERE session_id = ? ORDER BY id",
                               (session_id,)).fetchall()
        assert changes, "the seed change is missing"
        assert all(origin in ORIGINS for _, _, origin in changes)
        m = len(changes) - 1
        # 1. The graph is exactly batches 0..m: all or nothing per batch.
        want_objs, want_rels = expected_state(m, n)
        got_objs = {name: json.loads(props) for name, props in conn.execute(
            "SELECT name, properties FROM objects WHERE session_id = ?", (session_id,))}
        assert len(got_objs) == len(want_objs), f"{len(got_objs)} objects, expected {len(want_objs)} (m={m})"
        assert got_objs == want_objs, f"objects differ from batches 0..{m}"
        got_rels = set(conn.execute(
            "SELECT s.name, t.name FROM relations r "
            "JOIN objects s ON s.session_id = r.session_id AND s.id = r.source_id "
            "JOIN objects t ON t.session_id = r.session_id AND t.id = r.target_id WHERE r.session_id = ?",
            (session_id,)))
        assert got_rels == want_rels, f"relations differ from batches 0..{m}"
        # 2. The change history, replayed, is exactly the graph (ids, names, types, properties).
        objs, rels = replay([(c[0], c[1]) for c in changes])
        table_objs = {i: (t, name, json.loads(p)) for i, t, name, p in conn.execute(
            "SELECT id, type, name, properties FROM objects WHERE session_id = ?", (session_id,))}
        assert objs == table_objs, "the change history does not replay to the stored objects"
        table_rels = {i: (t, s, d, json.loads(p)) for i, t, s, d, p in conn.execute(
            "SELECT id, type, source_id, target_id, properties FROM relations WHERE session_id = ?",
            (session_id,))}
        assert rels == table_rels, "the change history does not replay to the stored relations"
        # 3. Side tables agree: the full-text index has one row per object, the change index
        #    points at recorded changes only.
        (fts_missing,) = conn.execute("SELECT count(*) FROM objects o WHERE NOT EXISTS "
                                      "(SELECT 1 FROM objects_fts f WHERE f.rowid = o.n)").fetchone()
        (fts_rows,) = conn.execute("SELECT count(*) FROM objects_fts").fetchone()
        assert fts_missing == 0 and fts_rows == len(table_objs), "full-text index out of step"
        (orphans,) = conn.execute("SELECT count(*) FROM change_objects co WHERE NOT EXISTS "
                                  "(SELECT 1 FROM changes c WHERE c.id = co.change_id)").fetchone()
        assert orphans == 0, "change_objects points at changes that do not exist"
        return m
    finally:
        conn.close()
