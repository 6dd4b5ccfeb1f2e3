"""The "cks-graph" v1 interchange format (the app's own, lossless for the graph).

{"format": "cks-graph", "version": 1, "session": {"id", "title"},
 "objects": [{"id", "type", "name", "properties"}],
 "relations": [{"id", "type", "source_id", "target_id", "properties"}]}
"""

from __future__ import annotations

import json
from typing import Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.common import ParsedGraph, ParsedObject, ParsedRelation, require_props, require_str
from cks_desktop.graph.model import Object, Relation, Session

FORMAT = "cks-graph"
VERSION = 1


def export_json(session: Session, objects: list[Object], relations: list[Relation]) -> str:
    doc = {"format": FORMAT, "version": VERSION, "session": {"id": session.id, "title": session.title},
           "objects": [o.to_json() for o in objects], "relations": [r.to_json() for r in relations]}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _why(exc: BaseException) -> str:
    return "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]


def parse_json(data: str) -> ParsedGraph:
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise StoreError(f"Nothing was imported: the data is not valid JSON ({exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}).") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
        raise StoreError(f"Nothing was imported: the data cannot be read as JSON ({_why(exc)}).") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StoreError('Nothing was imported: this is not a CKS graph file (expected "format": "cks-graph").')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StoreError("Nothing was imported: the file has no valid \"version\".")
    if version > VERSION:
        raise StoreError(f"Nothing was imported: the file is cks-graph version {version}, written by a newer "
                         f"CKS Desktop; this version reads version {VERSION}.")
    objects, relations = doc.get("objects", []), doc.get("relations", [])
    if not isinstance(objects, list) or not isinstance(relations, list):
        raise StoreError('Nothing was imported: "objects" and "relations" must be lists.')
    graph = ParsedGraph()
    seen: set[str] = set()
    for i, item in enumerate(objects):
        where = f"object {i}"
        if not isinstance(item, dict):
            raise StoreError(f"Nothing was imported: {where} is not a JSON object.")
        key = require_str(item.get("id"), "its id", where)
        if key in seen:
            raise StoreError(f"Nothing was imported: {where}: the id {key!r} appears twice.")
        seen.add(key)
        where = f"object {i} ({key})"
        graph.objects.append(ParsedObject(
            key=key, type=require_str(item.get("type"), "type", where), name=require_str(item.get("name"), "name", where),
            properties=require_props(item.get("properties"), where), where=where))
    for i, item in enumerate(relations):
        where = f"relation {i}"
        if not isinstance(item, dict):
            raise StoreError(f"Nothing was imported: {where} is not a JSON object.")
        rel_id: Any = item.get("id")
        if rel_id is not None:
            rel_id = require_str(rel_id, "its id", where)
            where = f"relation {i} ({rel_id})"
        graph.relations.append(ParsedRelation(
            id=rel_id, type=require_str(item.get("type"), "type", where),
            source=require_str(item.get("source_id"), "source_id", where),
            target=require_str(item.get("target_id"), "target_id", where),
            properties=require_props(item.get("properties"), where), where=where))
    return graph
