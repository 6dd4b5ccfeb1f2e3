"""The reference MCP memory server's file: one JSON object per line.

  {"type":"entity","name":…,"entityType":…,"observations":[…]}
  {"type":"relation","from":…,"to":…,"relationType":…}

Mapping: entity ↔ object (entityType ↔ type, observations ↔
properties["observations"], a list of strings); relations refer to entities
by name. The export writes what that server writes (compact JSON, entities
then relations, lines joined by "\\n", no trailing newline), so the file can
be handed straight back to it. Other properties are not part of that format
and are left out of the export.

Import: blank lines are skipped, identical relations are kept once (the
server does the same), and an entity merged into an existing object keeps the
existing observations and adds the new ones.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.common import ParsedGraph, ParsedObject, ParsedRelation, Problems
from cks_desktop.graph.model import Object, Relation
from cks_desktop.graph.sqlite_util import json_list

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore


def _line(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def observations_of(props: dict[str, Any]) -> list[str]:
    obs = props.get("observations")
    if obs is None:
        return []
    if isinstance(obs, list):
        return [o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in obs]
    return [obs if isinstance(obs, str) else json.dumps(obs, ensure_ascii=False)]


def export_memory_jsonl(objects: list[Object], relations: list[Relation]) -> str:
    names = {o.id: o.name for o in objects}
    lines = [_line({"type": "entity", "name": o.name, "entityType": o.type,
                    "observations": observations_of(o.properties)}) for o in objects]
    lines += [_line({"type": "relation", "from": names[r.source_id], "to": names[r.target_id],
                     "relationType": r.type}) for r in relations]
    return "\n".join(lines)


def parse_memory_jsonl(data: str) -> ParsedGraph:
    graph = ParsedGraph()
    entity_lines: dict[str, int] = {}
    seen_relations: set[tuple[str, str, str]] = set()
    problems = Problems()  # every bad line is named, not only the first
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            _parse_line(graph, number, raw, entity_lines, seen_relations)
        except StoreError as exc:
            problems.add(exc)
    problems.check()
    return graph


def _parse_line(graph: ParsedGraph, number: int, raw: str, entity_lines: dict[str, int],
                seen_relations: set[tuple[str, str, str]]) -> None:
    where = f"line {number}"
    try:
        item = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise StoreError(f"Nothing was imported: line {number} is not valid JSON ({exc.msg}).") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise StoreError(f"Nothing was imported: line {number} cannot be read as JSON ({why}).") from None
    if not isinstance(item, dict):
        raise StoreError(f"Nothing was imported: line {number} is not a JSON object.")
    kind = item.get("type")
    if kind == "entity":
        name = _text(item, "name", where)
        entity_type = _text(item, "entityType", where)
        obs = item.get("observations", [])
        if not isinstance(obs, list) or not all(isinstance(o, str) for o in obs):
            raise StoreError(f"Nothing was imported: {where}: \"observations\" must be a list of strings.")
        if name in entity_lines:
            raise StoreError(f"Nothing was imported: {where}: the entity {name!r} already appeared on "
                             f"line {entity_lines[name]}.")
        entity_lines[name] = number
        graph.objects.append(ParsedObject(key=name, type=entity_type, name=name,
                                          properties={"observations": list(obs)}, where=where))
    elif kind == "relation":
        source, target = _text(item, "from", where), _text(item, "to", where)
        rel_type = _text(item, "relationType", where)
        if (source, target, rel_type) in seen_relations:
            return
        seen_relations.add((source, target, rel_type))
        graph.relations.append(ParsedRelation(id=None, type=rel_type, source=source, target=target,
                                              properties={}, where=where))
    else:
        raise StoreError(f"Nothing was imported: {where}: \"type\" must be \"entity\" or \"relation\".")


def merge_existing_observations(store: "GraphStore", session_id: str, graph: ParsedGraph) -> None:
    """Entities that will merge into existing objects keep those objects' observations too."""
    if not graph.objects:
        return
    with store.connection_lock() as conn:
        existing: dict[tuple[str, str], dict[str, Any]] = {}
        for type_, name_key, props in conn.execute(
                "SELECT type, name_key, properties FROM objects WHERE session_id = ? "
                "AND name_key IN (SELECT value FROM json_each(?))",
                (session_id, json_list({o.name.strip().casefold() for o in graph.objects}))):
            existing[(type_.casefold(), name_key)] = json.loads(props)
    for o in graph.objects:
        old = existing.get((o.type.strip().casefold(), o.name.strip().casefold()))
        if old is None:
            continue
        merged = observations_of(old)
        merged += [x for x in o.properties["observations"] if x not in merged]
        o.properties = {"observations": merged}


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"Nothing was imported: {where}: \"{key}\" must be a non-empty string.")
    return value
