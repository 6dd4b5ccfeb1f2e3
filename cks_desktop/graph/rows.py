"""Database rows → model objects. The SELECT column lists live here, next to
the functions that read them, so the two never drift apart."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cks_desktop.graph.history import decode_ops
from cks_desktop.graph.model import Change, Object, Relation, Session, TypeDef

SESSION_COLS = "id, title, created_at, instructions"
OBJECT_COLS = "id, session_id, type, name, properties, created_at, updated_at"
RELATION_COLS = "id, session_id, type, source_id, target_id, properties, created_at"
CHANGE_COLS = "id, session_id, at, origin, ops, inverse_ops, summary, reverts"
TYPE_COLS = "session_id, kind, name, description, properties_schema"


def qualified(cols: str, alias: str) -> str:
    """``OBJECT_COLS`` with a table alias, for joins."""
    return ", ".join(f"{alias}.{c.strip()}" for c in cols.split(","))


def session(row: Sequence[Any]) -> Session:
    return Session(id=row[0], title=row[1], created_at=row[2], instructions=row[3])


def obj(row: Sequence[Any]) -> Object:
    return Object(id=row[0], session_id=row[1], type=row[2], name=row[3],
                  properties=json.loads(row[4]), created_at=row[5], updated_at=row[6])


def relation(row: Sequence[Any]) -> Relation:
    return Relation(id=row[0], session_id=row[1], type=row[2], source_id=row[3],
                    target_id=row[4], properties=json.loads(row[5]), created_at=row[6])


def change(row: Sequence[Any], with_ops: bool = True) -> Change:
    return Change(id=row[0], session_id=row[1], at=row[2], origin=row[3],
                  ops=decode_ops(row[4]) if with_ops else [],
                  inverse_ops=decode_ops(row[5]) if with_ops else [],
                  summary=row[6], reverts=row[7])


def type_def(row: Sequence[Any]) -> TypeDef:
    return TypeDef(session_id=row[0], kind=row[1], name=row[2], description=row[3],
                   properties_schema=json.loads(row[4]) if row[4] is not None else None)
