"""The "cks-graph" interchange format (the app's own, lossless for the graph).

Version 1:
{"format": "cks-graph", "version": 1, "session": {"id", "title"},
 "objects": [{"id", "type", "name", "properties"}],
 "relations": [{"id", "type", "source_id", "target_id", "properties"}]}

Version 2 adds where each fact came from:
 "evidence": [{"object": object id | "relation": relation id, "document_id", "chunk_index",
               "start", "end", "page", "quote", "alignment", "review", "origin", "created_at"}]
(the documents themselves travel in the ``"documents"`` section, ``documents/exchange.py``).
An export without evidence is written as version 1 (exactly what older releases read);
one with evidence as version 2 (older releases refuse it with "written by a newer CKS
Desktop" instead of silently dropping the sources). Both versions are read. The evidence
ids and change ids are not carried: the importing session mints its own.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.common import (ParsedEvidence, ParsedGraph, ParsedObject, ParsedRelation, Problems,
                                              require_props, require_str)
from cks_desktop.graph.model import Object, Relation, Session

FORMAT = "cks-graph"
VERSION = 2  # the newest version this build writes and reads
EVIDENCE_FIELDS = ("document_id", "chunk_index", "start", "end", "page", "quote", "alignment", "review", "origin",
                   "created_at")


def export_json(session: Session, objects: list[Object], relations: list[Relation],
                evidence: list[dict[str, Any]] | None = None) -> str:
    doc: dict[str, Any] = {"format": FORMAT, "version": 2 if evidence else 1,
                           "session": {"id": session.id, "title": session.title},
                           "objects": [o.to_json() for o in objects], "relations": [r.to_json() for r in relations]}
    if evidence:
        doc["evidence"] = evidence
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _evidence(graph: ParsedGraph, items: Any, problems: Problems) -> None:
    """The "evidence" list: each entry names one object or relation OF THE FILE; the other
    fields are checked by the store like any ``add_evidence`` op (errors name "evidence i")."""
    if items is None:
        return
    if not isinstance(items, list):
        problems.add(StoreError('Nothing was imported: "evidence" must be a list.'))
        return
    keys = {o.key for o in graph.objects}
    rel_ids = {r.id for r in graph.relations if r.id is not None}
    for i, item in enumerate(items):
        where = f"evidence {i}"
        if not isinstance(item, dict):
            problems.add(StoreError(f"Nothing was imported: {where} is not a JSON object."))
            continue
        kinds = [k for k in ("object", "relation") if item.get(k) is not None]
        if len(kinds) != 1 or not isinstance(item[kinds[0]], str):
            problems.add(StoreError(f"Nothing was imported: {where} must name one object or one relation."))
            continue
        kind, target = kinds[0], item[kinds[0]]
        if target not in (keys if kind == "object" else rel_ids):
            problems.add(StoreError(f"Nothing was imported: {where}: its {kind} {target!r} is not in the file."))
            continue
        graph.evidence.append(ParsedEvidence(kind, target, {k: item[k] for k in EVIDENCE_FIELDS if k in item}, where))


def _why(exc: BaseException) -> str:
    return "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]


def parse_json(data: str) -> ParsedGraph:
    """The graph in a cks-graph document. Well-formed documents are read element by element
    (``_parse_streamed``: the whole document never exists as Python objects, which was a
    third of a big import's memory); anything unusual — any error included — is read
    again by ``_parse_whole``, which gives the canonical error sentence."""
    try:
        graph = _parse_streamed(data)
    except (StoreError, ValueError, RecursionError, _Unusual):
        graph = None
    return graph if graph is not None else _parse_whole(data)


class _Unusual(Exception):
    """The document is not the plain shape ``_parse_streamed`` reads."""


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_LISTS = ("objects", "relations")


def _skip_ws(data: str, i: int) -> int:
    """The index of the first non-blank character at or after ``i`` (``_WS`` matches the empty string)."""
    match = _WS.match(data, i)
    return match.end() if match is not None else i


def _parse_streamed(data: str) -> ParsedGraph:
    """A top-level object walked key by key; "objects" and "relations" decoded one element
    at a time and turned into parsed items at once (types interned: they repeat)."""
    decode = _DECODER.raw_decode
    i = _skip_ws(data, 0)
    if data[i:i + 1] != "{":
        raise _Unusual
    i = _skip_ws(data, i + 1)
    seen_keys: set[str] = set()
    header: dict[str, Any] = {}
    graph = ParsedGraph()
    types: dict[str, str] = {}
    ids: set[str] = set()
    if data[i:i + 1] == "}":
        raise _Unusual
    while True:
        if data[i:i + 1] != '"':
            raise _Unusual
        key, i = scanstring(data, i + 1)
        if key in seen_keys:
            raise _Unusual  # duplicate keys: the last one wins in the whole-document reading
        seen_keys.add(key)
        i = _skip_ws(data, i)
        if data[i:i + 1] != ":":
            raise _Unusual
        i = _skip_ws(data, i + 1)
        if key in _LISTS and data[i:i + 1] == "[":
            i = _skip_ws(data, i + 1)
            n = 0
            if data[i:i + 1] == "]":
                i += 1
            else:
                while True:
                    item, i = decode(data, i)
                    if key == "objects":
                        _add_object(graph, n, item, ids, types)
                    else:
                        _add_relation(graph, n, item, types)
                    n += 1
                    i = _skip_ws(data, i)
                    c = data[i:i + 1]
                    i = _skip_ws(data, i + 1)
                    if c == "]":
                        break
                    if c != ",":
                        raise _Unusual
        else:
            header[key], i = decode(data, i)
        i = _skip_ws(data, i)
        c = data[i:i + 1]
        i = _skip_ws(data, i + 1)
        if c == "}":
            break
        if c != ",":
            raise _Unusual
    if i != len(data) or header.get("format") != FORMAT or type(header.get("version")) is not int:
        raise _Unusual
    if not 1 <= header["version"] <= VERSION or any(k in header for k in _LISTS):
        raise _Unusual  # too new, or "objects"/"relations" not lists: the whole reading says so
    if "evidence" in header:
        problems = Problems()
        _evidence(graph, header["evidence"], problems)
        if problems.items:
            raise _Unusual  # the whole reading names every problem
    return graph


def _add_object(graph: ParsedGraph, i: int, item: Any, ids: set[str], types: dict[str, str]) -> None:
    if type(item) is not dict:
        raise _Unusual
    key, type_, name, props = item.get("id"), item.get("type"), item.get("name"), item.get("properties")
    if (type(key) is not str or type(type_) is not str or type(name) is not str or not key.strip()
            or not type_.strip() or not name.strip() or key in ids or not (props is None or type(props) is dict)):
        raise _Unusual
    ids.add(key)
    graph.objects.append(ParsedObject(key, types.setdefault(type_, type_), name, props or {}, None))


def _add_relation(graph: ParsedGraph, i: int, item: Any, types: dict[str, str]) -> None:
    if type(item) is not dict:
        raise _Unusual
    rel_id, type_, src, tgt, props = (item.get("id"), item.get("type"), item.get("source_id"),
                                      item.get("target_id"), item.get("properties"))
    if ((rel_id is not None and (type(rel_id) is not str or not rel_id.strip()))
            or any(type(v) is not str or not v.strip() for v in (type_, src, tgt))
            or not (props is None or type(props) is dict)):
        raise _Unusual
    assert isinstance(type_, str) and isinstance(src, str) and isinstance(tgt, str)  # checked just above
    graph.relations.append(ParsedRelation(rel_id, types.setdefault(type_, type_), src, tgt, props or {}, None))


def _parse_whole(data: str) -> ParsedGraph:
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
    problems = Problems()  # every bad element is named, not only the first
    for i, item in enumerate(objects):
        try:
            _whole_object(graph, i, item, seen)
        except StoreError as exc:
            problems.add(exc)
    for i, item in enumerate(relations):
        try:
            _whole_relation(graph, i, item)
        except StoreError as exc:
            problems.add(exc)
    _evidence(graph, doc.get("evidence"), problems)
    problems.check()
    return graph


def _whole_object(graph: ParsedGraph, i: int, item: Any, seen: set[str]) -> None:
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


def _whole_relation(graph: ParsedGraph, i: int, item: Any) -> None:
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
