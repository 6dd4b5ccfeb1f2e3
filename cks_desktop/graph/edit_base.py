"""Edits made on top of what someone READ: "changed by someone else", and reverts others built upon.

Why: on a shared graph two members (or a member and a model) edit the same
object at once. Writes are serialised (one write lock on both backends), so the
second one always lands on the latest graph — the question is whether it was
made knowing about the first. An ``update_object`` op may say which version it
was made from:

    {"op": "update_object", "ref": "o_…", "set_properties": {"status": "done"},
     "if_unchanged_since": "c_…"}   # the object's version as the editor read it

(the version is the id of the last change that touched the object,
``GraphStore.object_version``: unique, unlike a millisecond timestamp).

- the object is still at that version → the op applies;
- someone changed it since, but only OTHER fields → the op applies on top
  (their change is kept, ours added: nothing is lost);
- someone changed one of the fields this op writes → the whole batch fails,
  nothing written, with one sentence naming the field, who changed it and when,
  so the person or the model can read it again and decide.

The fields changed since are read from the change history (``change_objects``
finds the changes; their resolved ops say which fields they wrote), walking back
to the version the editor read. If that change is no
longer in the history (compacted), every field counts as changed: refusing is
the safe side.

``later_changes``: the changes that came after a given one on the same objects
(what a revert of it would also undo), for ``GraphStore.revert_impact``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from cks_desktop.graph import history, queries
from cks_desktop.graph.errors import StoreError, ValidationFailed
from cks_desktop.graph.model import Change

BASE_KEY = "if_unchanged_since"
CHANGED_ELSEWHERE = "changed by someone else"  # every conflict's sentence starts so (the window reloads on it)
_EVERYTHING = "*"


class ChangedBySomeoneElse(ValidationFailed):
    """A batch was refused because a field it writes changed after the editor read it."""


def fields_written(op: dict[str, Any], object_id: str) -> set[str]:
    """The fields of ``object_id`` a RESOLVED op wrote: "name", "type", "properties.k";
    "*" when it created or removed the object."""
    kind = op.get("op")
    if kind == "update_object" and op.get("ref") == object_id:
        out: set[str] = {f for f in ("name", "type") if f in op}
        out |= {f"properties.{k}" for k in (op.get("set_properties") or {})}
        out |= {f"properties.{k}" for k in (op.get("remove_properties") or [])}
        return out
    if kind == "add_object" and op.get("id") == object_id:
        if op.get("outcome") == "reused":
            return set()
        if op.get("outcome") == "updated":
            return {f"properties.{k}" for k in (op.get("properties") or {})}
        return {_EVERYTHING}
    if kind == "remove_object" and op.get("ref") == object_id:
        return {_EVERYTHING}
    return set()


def _wanted(op: dict[str, Any]) -> set[str]:
    out: set[str] = {f for f in ("name", "type") if f in op}
    for key in ("set_properties", "remove_properties"):
        value = op.get(key) or ()
        out |= {f"properties.{k}" for k in value if isinstance(k, str)}
    return out


def _label(field: str) -> str:
    return "the object" if field == _EVERYTHING else (
        f"property {field.split('.', 1)[1]!r}" if field.startswith("properties.") else f"its {field}")


def check_bases(conn: sqlite3.Connection, session_id: str, ops: list[Any]) -> list[Any]:
    """The ops without their ``if_unchanged_since`` (the planner does not know it), after
    checking each against the history; ChangedBySomeoneElse when one conflicts. Runs
    inside the write transaction, so nothing can change between the check and the write."""
    if not any(type(op) is dict and BASE_KEY in op for op in ops):
        return ops
    errors: list[dict[str, Any]] = []
    out: list[Any] = []
    for index, op in enumerate(ops):
        if type(op) is not dict or BASE_KEY not in op:
            out.append(op)
            continue
        base = op[BASE_KEY]
        op = {k: v for k, v in op.items() if k != BASE_KEY}
        out.append(op)
        if op.get("op") != "update_object":
            errors.append({"index": index, "message": f"'{BASE_KEY}' is only for update_object"})
            continue
        if not isinstance(base, str) or not base:
            errors.append({"index": index, "message": f"'{BASE_KEY}' must be the object's version as read "
                                                      "(the id of the last change that touched it)"})
            continue
        ref = op.get("ref")
        try:
            obj = queries.resolve(conn, session_id, ref) if isinstance(ref, str) else None
        except StoreError:
            obj = None  # the planner reports the reference
        if obj is None:
            continue
        conflict = _conflict(conn, session_id, obj.id, base, _wanted(op))
        if conflict is not None:
            errors.append({"index": index, "message": conflict})
    if errors:
        raise ChangedBySomeoneElse(errors)
    return out


def _conflict(conn: sqlite3.Connection, session_id: str, object_id: str, base: str,
              wanted: set[str]) -> str | None:
    for change_id, at, origin, ops in conn.execute(
            "SELECT c.id, c.at, c.origin, c.ops FROM change_objects co JOIN changes c ON c.id = co.change_id "
            "WHERE co.object_id = ? AND c.session_id = ? ORDER BY c.id DESC", (object_id, session_id)):
        if change_id == base:
            return None  # reached the version the editor read: nothing conflicting after it
        written: set[str] = set()
        for op in history.decode_ops(ops):
            if isinstance(op, dict):
                written |= fields_written(op, object_id)
        clash = sorted(written & wanted) or (sorted(wanted) if _EVERYTHING in written else [])
        if clash:
            return (f"changed by someone else: {_label(clash[0])} was changed by {origin} at {at} "
                    f"(change {change_id}) after you read it; read the object again and retry")
    return (f"changed by someone else: the object changed after version {base}, which is no longer "
            "in the history; read the object again and retry")


def object_version(conn: sqlite3.Connection, session_id: str, object_id: str) -> str | None:
    """The object's version: the id of the last change that touched it (None: none kept)."""
    row = conn.execute("SELECT max(co.change_id) FROM change_objects co JOIN changes c ON c.id = co.change_id "
                       "WHERE co.object_id = ? AND c.session_id = ?", (object_id, session_id)).fetchone()
    return row[0] if row and row[0] else None


def later_changes(conn: sqlite3.Connection, session_id: str, change: Change) -> list[Change]:
    """Changes after ``change`` that touched any object it touched (newest first, heads only;
    a revert of ``change`` itself is left out): what reverting it would also undo."""
    touched = [r[0] for r in conn.execute("SELECT object_id FROM change_objects WHERE change_id = ?",
                                          (change.id,))]
    if not touched:
        return []
    found: dict[str, Change] = {}
    for start in range(0, len(touched), 500):
        chunk = touched[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
                f"SELECT {history.HEAD_COLS} FROM changes WHERE session_id = ? AND id > ? "
                f"AND id IN (SELECT change_id FROM change_objects WHERE object_id IN ({marks}))",
                (session_id, change.id, *chunk)):
            head = history.change_head(row)
            if head.reverts != change.id:
                found[head.id] = head
    return sorted(found.values(), key=lambda c: c.id, reverse=True)


def built_upon_sentence(change_id: str, later: list[Change]) -> str:
    listed = "; ".join(f"{c.id} by {c.origin} at {c.at} ({c.summary})" for c in later[:5])
    more = f" and {len(later) - 5} more" if len(later) > 5 else ""
    return (f"Change {change_id} was built upon: later changes touched the same objects ({listed}{more}). "
            "Reverting it would also undo what they rely on; revert those first, or revert anyway.")
