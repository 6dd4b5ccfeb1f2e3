"""The graph as a batch sees it: database rows plus the batch's own edits so far.

Validation of op ``i`` must see the effects of ops ``0..i-1`` (an object made
by an earlier op, a name freed by an earlier rename, a removal), without
writing anything. The overlay loads only the rows the batch mentions — in a few
bulk queries up front (``prefetch``), so a 10k-op batch does not run 10k
SELECTs — and keeps every touched object and relation as a mutable state
record. At the end, comparing each record's ``existed``/``alive``/``dirty``
flags gives the net writes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from cks_desktop.graph.model import TypeDef
from cks_desktop.graph.sqlite_util import dumps, json_list


class _LazyProperties:
    """Properties kept as the row's JSON text until someone reads them: most rows a
    batch loads are only endpoints, and most writes can store the text unchanged."""

    __slots__ = ("_props", "_props_json")

    _props: dict[str, Any] | None
    _props_json: str | None

    @property
    def properties(self) -> dict[str, Any]:
        if self._props is None:  # parsed lazily: most loaded rows are only endpoints
            self._props = json.loads(self._props_json or "{}")
        return self._props

    def set_properties(self, props: dict[str, Any], props_json: str | None = None) -> None:
        self._props = props
        self._props_json = props_json

    @property
    def props_json(self) -> str:
        if self._props_json is None:
            self._props_json = dumps(self._props or {})
        return self._props_json


class ObjState(_LazyProperties):
    """One object as the batch currently sees it."""

    __slots__ = ("id", "type", "name", "key", "created_at", "updated_at", "existed", "alive", "dirty", "n")

    def __init__(self, id: str, type: str, name: str, props: dict[str, Any] | None,
                 props_json: str | None, created_at: str, updated_at: str, existed: bool,
                 n: int | None = None) -> None:
        self.n = n  # objects.n (the full-text rowid) of a row loaded from the database
        self.id = id
        self.type = type
        self.name = name
        self.key = name.casefold()
        self._props = props
        self._props_json = props_json
        self.created_at = created_at
        self.updated_at = updated_at
        self.existed = existed
        self.alive = True
        self.dirty = False

    @property
    def conflict_key(self) -> tuple[str, str]:
        return (self.type.casefold(), self.key)

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to re-create this object exactly (used by inverse ops)."""
        return {"op": "add_object", "id": self.id, "type": self.type, "name": self.name,
                "properties": dict(self.properties), "created_at": self.created_at,
                "updated_at": self.updated_at}


class RelState(_LazyProperties):
    __slots__ = ("id", "type", "source_id", "target_id", "created_at", "existed", "alive", "dirty")

    def __init__(self, id: str, type: str, source_id: str, target_id: str,
                 props: dict[str, Any] | None, props_json: str | None, created_at: str,
                 existed: bool) -> None:
        self.id = id
        self.type = type
        self.source_id = source_id
        self.target_id = target_id
        self._props = props
        self._props_json = props_json
        self.created_at = created_at
        self.existed = existed
        self.alive = True
        self.dirty = False

    def snapshot(self) -> dict[str, Any]:
        return {"op": "add_relation", "id": self.id, "type": self.type, "source": self.source_id,
                "target": self.target_id, "properties": dict(self.properties),
                "created_at": self.created_at}


_OBJ_SELECT = ("SELECT id, type, name, properties, created_at, updated_at, n FROM objects "
               "WHERE session_id = ? AND ")
_REL_SELECT = ("SELECT id, type, source_id, target_id, properties, created_at FROM relations "
               "WHERE session_id = ? AND ")


class Overlay:
    def __init__(self, conn: sqlite3.Connection, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id
        self.objs: dict[str, ObjState] = {}
        self.rels: dict[str, RelState] = {}
        self._by_key: dict[str, set[str]] = {}  # name_key -> ids of alive objects known to the overlay
        self._loaded_keys: set[str] = set()
        self._missing_objs: set[str] = set()
        self._missing_rels: set[str] = set()
        # object id -> ids of alive relations touching it; built on first need (a bulk
        # insert of relations never needs it, and maintaining it costs a tenth of the batch)
        self._rels_by_obj: dict[str, set[str]] | None = None
        self._loaded_obj_rels: set[str] = set()
        self.typedefs: dict[tuple[str, str], TypeDef | None] = {}
        self.typedefs_before: dict[tuple[str, str], TypeDef | None] = {}
        for row in conn.execute("SELECT session_id, kind, name, description, properties_schema "
                                "FROM type_defs WHERE session_id = ?", (session_id,)):
            td = TypeDef(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else None)
            self.typedefs[(td.kind, td.name.casefold())] = td
        self.typedefs_before = dict(self.typedefs)

    # -- loading ----------------------------------------------------------------------------

    def prefetch(self, obj_ids: Iterable[str], rel_ids: Iterable[str], keys: Iterable[str]) -> None:
        """Load, in one query each, every object/relation/name the batch mentions."""
        wanted = [i for i in set(obj_ids) if i not in self.objs]
        if wanted:
            found = self._load_objs(_OBJ_SELECT + "id IN (SELECT value FROM json_each(?))", json_list(wanted))
            self._missing_objs.update(set(wanted) - found)
        wanted_keys = [k for k in set(keys) if k not in self._loaded_keys]
        if wanted_keys:
            self._load_objs(_OBJ_SELECT + "name_key IN (SELECT value FROM json_each(?))", json_list(wanted_keys))
            self._loaded_keys.update(wanted_keys)
        wanted_rels = [i for i in set(rel_ids) if i not in self.rels]
        if wanted_rels:
            found = self._load_rels(_REL_SELECT + "id IN (SELECT value FROM json_each(?))", json_list(wanted_rels))
            self._missing_rels.update(set(wanted_rels) - found)

    def _load_objs(self, sql: str, *params: Any) -> set[str]:
        found: set[str] = set()
        for id_, type_, name, props, created, updated, n in self.conn.execute(sql, (self.session_id, *params)):
            found.add(id_)
            if id_ not in self.objs:  # the overlay's own state wins over the database row
                self._index(ObjState(id_, type_, name, None, props, created, updated, existed=True, n=n))
        return found

    def _load_rels(self, sql: str, *params: Any) -> set[str]:
        found: set[str] = set()
        for id_, type_, src, tgt, props, created in self.conn.execute(sql, (self.session_id, *params)):
            found.add(id_)
            if id_ not in self.rels:
                self.add_rel(RelState(id_, type_, src, tgt, None, props, created, existed=True))
        return found

    # -- objects ----------------------------------------------------------------------------

    def obj(self, object_id: str) -> ObjState | None:
        """The object with this id, alive or removed by the batch; None if unknown."""
        st = self.objs.get(object_id)
        if st is None and object_id not in self._missing_objs:
            if not self._load_objs(_OBJ_SELECT + "id = ?", object_id):
                self._missing_objs.add(object_id)
            st = self.objs.get(object_id)
        return st

    def named(self, key: str) -> list[ObjState]:
        """Alive objects whose casefolded name is ``key``, in id order."""
        if key not in self._loaded_keys:
            self._load_objs(_OBJ_SELECT + "name_key = ?", key)
            self._loaded_keys.add(key)
        ids = self._by_key.get(key)
        if not ids:
            return []
        return sorted((self.objs[i] for i in ids), key=lambda s: s.id)

    def _index(self, st: ObjState) -> None:
        self.objs[st.id] = st
        if st.alive:
            self._by_key.setdefault(st.key, set()).add(st.id)

    def add_obj(self, st: ObjState) -> None:
        self._missing_objs.discard(st.id)
        self._index(st)

    def rename(self, st: ObjState, name: str) -> None:
        self._by_key.get(st.key, set()).discard(st.id)
        st.name = name
        st.key = name.casefold()
        self._by_key.setdefault(st.key, set()).add(st.id)

    def revive(self, st: ObjState) -> None:
        st.alive = True
        self._by_key.setdefault(st.key, set()).add(st.id)

    def kill_obj(self, st: ObjState) -> None:
        st.alive = False
        st.dirty = True
        self._by_key.get(st.key, set()).discard(st.id)

    # -- relations --------------------------------------------------------------------------

    def rel(self, relation_id: str) -> RelState | None:
        st = self.rels.get(relation_id)
        if st is None and relation_id not in self._missing_rels:
            if not self._load_rels(_REL_SELECT + "id = ?", relation_id):
                self._missing_rels.add(relation_id)
            st = self.rels.get(relation_id)
        return st

    def add_rel(self, st: RelState) -> None:
        self.rels[st.id] = st
        if self._missing_rels:
            self._missing_rels.discard(st.id)
        if st.alive and self._rels_by_obj is not None:
            self._link(st)

    def _link(self, st: RelState) -> None:
        assert self._rels_by_obj is not None
        self._rels_by_obj.setdefault(st.source_id, set()).add(st.id)
        self._rels_by_obj.setdefault(st.target_id, set()).add(st.id)

    def _by_obj(self) -> dict[str, set[str]]:
        if self._rels_by_obj is None:
            self._rels_by_obj = {}
            for st in self.rels.values():
                if st.alive:
                    self._link(st)
        return self._rels_by_obj

    def kill_rel(self, st: RelState) -> None:
        st.alive = False
        st.dirty = True
        self._unlink(st)

    def repoint(self, st: RelState, source_id: str, target_id: str) -> None:
        self._unlink(st)
        st.source_id, st.target_id = source_id, target_id
        if st.alive and self._rels_by_obj is not None:
            self._link(st)

    def _unlink(self, st: RelState) -> None:
        if self._rels_by_obj is None:
            return
        for end in (st.source_id, st.target_id):
            ids = self._rels_by_obj.get(end)
            if ids is not None:
                ids.discard(st.id)

    def prefetch_relations_of(self, object_ids: list[str]) -> None:
        """Load every relation touching these objects in two queries (a removal of many
        objects by id — e.g. the revert of an import — would otherwise run two per object)."""
        wanted = [i for i in set(object_ids) if i not in self._loaded_obj_rels]
        if not wanted:
            return
        ids = json_list(wanted)
        self._load_rels(_REL_SELECT + "source_id IN (SELECT value FROM json_each(?))", ids)
        self._load_rels(_REL_SELECT + "target_id IN (SELECT value FROM json_each(?))", ids)
        self._loaded_obj_rels.update(wanted)

    def rels_of(self, object_id: str) -> list[RelState]:
        """Alive relations touching the object (database rows plus the batch's edits), id order."""
        if object_id not in self._loaded_obj_rels:
            self._load_rels(_REL_SELECT + "source_id = ?", object_id)
            self._load_rels(_REL_SELECT + "target_id = ?", object_id)
            self._loaded_obj_rels.add(object_id)
        return sorted((self.rels[i] for i in self._by_obj().get(object_id, ())), key=lambda r: r.id)

    def foreign_ids(self, object_ids: list[str], relation_ids: list[str]) -> set[str]:
        """Of these ids, those already used in ANOTHER session (ids are global)."""
        # Per other session, through the (session_id, id) index: "session_id != ?" alone scans
        # the whole table, which a streamed import asks once per chunk.
        clash: set[str] = set()
        for table, ids in (("objects", object_ids), ("relations", relation_ids)):
            if ids:
                clash.update(r[0] for r in self.conn.execute(
                    f"SELECT t.id FROM sessions s CROSS JOIN {table} t ON t.session_id = s.id "
                    "AND t.id IN (SELECT value FROM json_each(?)) WHERE s.id != ?",
                    (json_list(ids), self.session_id)))
        return clash
