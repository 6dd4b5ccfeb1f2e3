"""The SQLite knowledge-graph store. API CONTRACT — bodies being implemented.

One file, WAL, foreign keys on, FTS5 over names and property text,
``PRAGMA user_version`` migrations. Every mutation goes through ``apply``:
validate the whole batch first, then write it in one transaction, record a
``Change`` with its inverse ops, commit, then emit events.

Operations (plain dicts, the same shape ``evolve_knowledge`` accepts):
  {"op": "add_object", "type": str, "name": str, "properties"?: dict, "label"?: "$x",
   "on_conflict"?: "error"|"reuse"|"update", "id"?: str}          # "id" only for internal/revert use
  {"op": "update_object", "ref": str, "name"?: str, "type"?: str,
   "set_properties"?: dict, "remove_properties"?: [str]}
  {"op": "remove_object", "ref": str}                                # removes its relations too
  {"op": "add_relation", "source": str, "target": str, "type": str, "properties"?: dict,
   "label"?: "$r", "id"?: str}
  {"op": "update_relation", "relation_id": str, "source"?: str, "target"?: str, "type"?: str,
   "properties"?: dict}                                              # internal (merge, revert)
  {"op": "remove_relation", "relation_id": str}
  {"op": "define_type", "kind": "object"|"relation", "name": str, "description"?: str,
   "properties_schema"?: dict|None}
A ``ref`` is an object id, an exact name (case-insensitive; ambiguous → error
listing candidates), or a ``$label`` defined by an earlier op of the same batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cks_desktop.graph.events import Listener
from cks_desktop.graph.model import Change, Object, Relation, Session, TypeDef


class ApplyResult:
    """What ``apply`` returns. ``change`` is None for a dry run or an empty batch."""

    change: Change | None
    created: dict[str, str]  # label -> id (objects and relations created with a label)
    summary: str  # "adds 2 objects, 1 relation; changes 1 property"
    counts: dict[str, int]  # objects_added, objects_updated, objects_removed, relations_added, ...


class GraphStore:
    @classmethod
    def open(cls, path: Path) -> "GraphStore": ...  # DatabaseError: locked / corrupt / too new / unwritable
    def close(self) -> None: ...
    def subscribe(self, listener: Listener): ...  # returns an unsubscribe callable

    # sessions
    def create_session(self, title: str) -> Session: ...
    def get_session(self, session_id: str) -> Session: ...  # NotFound
    def list_sessions(self) -> list[Session]: ...
    def rename_session(self, session_id: str, title: str) -> Session: ...
    def set_session_instructions(self, session_id: str, instructions: str) -> Session: ...
    def delete_session(self, session_id: str) -> None: ...

    # reads
    def resolve(self, session_id: str, ref: str) -> Object: ...  # NotFound / AmbiguousRef
    def get_object(self, session_id: str, object_id: str) -> Object: ...
    def relations_of(self, session_id: str, object_id: str) -> tuple[list[Relation], list[Relation]]: ...  # (incoming, outgoing)
    def get_relation(self, session_id: str, relation_id: str) -> Relation: ...
    def list_objects(self, session_id: str, type: str | None = None, limit: int = 50,
                     cursor: str | None = None) -> tuple[list[Object], str | None]: ...
    def all_objects(self, session_id: str) -> list[Object]: ...
    def all_relations(self, session_id: str) -> list[Relation]: ...
    def search_objects(self, session_id: str, query: str, type: str | None = None,
                       limit: int = 20) -> list[tuple[Object, float]]: ...  # ranked (FTS5 bm25)
    def list_relations(self, session_id: str, ref: str | None = None, type: str | None = None,
                       direction: str = "both", limit: int = 50,
                       cursor: str | None = None) -> tuple[list[Relation], str | None]: ...
    def neighbors(self, session_id: str, ref: str, depth: int = 1,
                  limit: int = 200) -> tuple[list[Object], list[Relation]]: ...
    def find_path(self, session_id: str, source: str, target: str,
                  max_depth: int = 6) -> tuple[list[Object], list[Relation]] | None: ...
    def type_stats(self, session_id: str) -> dict[str, Any]: ...  # {"object_types": [{name,count,description,properties_schema}], "relation_types": [...]}
    def type_defs(self, session_id: str) -> list[TypeDef]: ...
    def counts(self, session_id: str) -> dict[str, int]: ...  # {"objects": n, "relations": m}
    def list_changes(self, session_id: str, limit: int = 20) -> list[Change]: ...
    def get_change(self, session_id: str, change_id: str) -> Change: ...
    def changes_touching(self, session_id: str, object_id: str, limit: int = 50) -> list[Change]: ...

    # writes
    def apply(self, session_id: str, ops: list[dict[str, Any]], origin: str,
              dry_run: bool = False) -> ApplyResult: ...  # ValidationFailed(errors=[{index, message}])
    def revert(self, session_id: str, change_id: str, origin: str) -> ApplyResult: ...

    # import/export (formats: json, graphml, markdown, mermaid, memory-jsonl; import: json, graphml, memory-jsonl)
    def export(self, session_id: str, format: str) -> str: ...
    def import_data(self, session_id: str, format: str, data: str, origin: str) -> ApplyResult: ...
