"""GraphML export and import (xml.etree; Gephi, yEd, Cytoscape, networkx read it).

Export: each node carries ``type``, ``name`` and ``properties`` (the whole
property object as JSON — the lossless part that our import reads back), plus
one GraphML attribute per property key whose values are all of one scalar
kind, so other tools can show and filter them.

Import of files from other tools: ``properties`` JSON is used when present;
otherwise every other data key becomes a property (converted by its
``attr.type``). The name comes from ``name``/``label`` (else the node id), the
type from ``type`` (else "Thing"); an edge's type from ``type``/``label``/
``relationType`` (else "related_to").

Safety: input with a DOCTYPE or ENTITY declaration is refused before parsing,
which rules out entity expansion ("billion laughs") and external entities.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.common import ParsedGraph, ParsedObject, ParsedRelation, Problems
from cks_desktop.graph.model import Object, Relation, Session

NS = "http://graphml.graphdrawing.org/xmlns"
_RESERVED = {"type", "name", "properties", "title"}
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_DECL = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters; they become U+FFFD."""
    return _XML_INVALID.sub("\ufffd", text)


def _scalar_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    return None


def _attribute_keys(items: list[dict[str, Any]]) -> dict[str, str]:
    """Property keys whose values are all of one scalar kind -> GraphML attr.type."""
    kinds: dict[str, str | None] = {}
    for props in items:
        for key, value in props.items():
            kind = _scalar_kind(value)
            if key in kinds and kinds[key] != kind:
                kind = None
            kinds[key] = kind
    return {k: v for k, v in sorted(kinds.items()) if v is not None and k not in _RESERVED}


def _json(value: Any) -> str:
    """Property JSON for a data element; escaped to ASCII if it holds characters XML cannot."""
    text = json.dumps(value, ensure_ascii=False)
    return json.dumps(value) if _XML_INVALID.search(text) else text


def _text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _clean(str(value))


def export_graphml(session: Session, objects: list[Object], relations: list[Relation]) -> str:
    ET.register_namespace("", NS)
    root = ET.Element(f"{{{NS}}}graphml")

    def key(id_: str, for_: str, name: str, type_: str = "string") -> None:
        ET.SubElement(root, f"{{{NS}}}key", {"id": id_, "for": for_, "attr.name": name, "attr.type": type_})

    key("title", "graph", "title")
    key("type", "all", "type")
    key("name", "node", "name")
    key("properties", "all", "properties")
    node_attrs = _attribute_keys([o.properties for o in objects])
    edge_attrs = _attribute_keys([r.properties for r in relations])
    node_keys = {k: f"n{i}" for i, k in enumerate(node_attrs)}
    edge_keys = {k: f"e{i}" for i, k in enumerate(edge_attrs)}
    for prop, kind in node_attrs.items():
        key(node_keys[prop], "node", _clean(prop), kind)
    for prop, kind in edge_attrs.items():
        key(edge_keys[prop], "edge", _clean(prop), kind)
    graph = ET.SubElement(root, f"{{{NS}}}graph", {"id": session.id, "edgedefault": "directed"})
    ET.SubElement(graph, f"{{{NS}}}data", {"key": "title"}).text = _clean(session.title)

    def data(parent: ET.Element, k: str, text: str) -> None:
        ET.SubElement(parent, f"{{{NS}}}data", {"key": k}).text = text

    for o in objects:
        node = ET.SubElement(graph, f"{{{NS}}}node", {"id": o.id})
        data(node, "type", _clean(o.type))
        data(node, "name", _clean(o.name))
        data(node, "properties", _json(o.properties))
        for prop, value in o.properties.items():
            if prop in node_keys:
                data(node, node_keys[prop], _text_of(value))
    for r in relations:
        edge = ET.SubElement(graph, f"{{{NS}}}edge", {"id": r.id, "source": r.source_id, "target": r.target_id})
        data(edge, "type", _clean(r.type))
        data(edge, "properties", _json(r.properties))
        for prop, value in r.properties.items():
            if prop in edge_keys:
                data(edge, edge_keys[prop], _text_of(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _convert(text: str, attr_type: str, where: str, name: str) -> Any:
    try:
        if attr_type in ("int", "long"):
            return int(text.strip())
        if attr_type in ("float", "double"):
            return float(text.strip())
    except ValueError:
        raise StoreError(f"Nothing was imported: {where}: {name!r} should be a number, got {text!r}.") from None
    if attr_type == "boolean":
        return text.strip().lower() in ("true", "1", "yes")
    return text


def parse_graphml(data: str) -> ParsedGraph:
    if _DECL.search(data):
        raise StoreError("Nothing was imported: GraphML with a DOCTYPE or ENTITY declaration is not accepted "
                         "(it could expand entities or read other files).")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line, column = exc.position
        raise StoreError(f"Nothing was imported: the GraphML is not well-formed XML (line {line}, "
                         f"column {column + 1}).") from None
    if _local(root.tag) != "graphml":
        raise StoreError("Nothing was imported: this is not GraphML (the root element is not <graphml>).")
    keys: dict[str, tuple[str, str, str, str | None]] = {}  # id -> (for, attr.name, attr.type, default)
    for el in root:
        if _local(el.tag) == "key" and el.get("id"):
            default = next((c.text or "" for c in el if _local(c.tag) == "default"), None)
            keys[el.get("id", "")] = (el.get("for", "all"), el.get("attr.name") or el.get("id") or "",
                                      el.get("attr.type", "string"), default)
    graph_el = next((el for el in root if _local(el.tag) == "graph"), None)
    if graph_el is None:
        raise StoreError("Nothing was imported: the GraphML has no <graph> element.")
    parsed = ParsedGraph()
    seen: set[str] = set()
    children = list(graph_el)
    problems = Problems()  # every bad node and edge is named, not only the first
    # Nodes first: GraphML allows an edge before the nodes it joins.
    for el in sorted(children, key=lambda e: _local(e.tag) != "node"):
        try:
            _element(parsed, el, keys, seen)
        except StoreError as exc:
            problems.add(exc)
    problems.check()
    return parsed


def _element(parsed: ParsedGraph, el: ET.Element, keys: dict[str, tuple[str, str, str, str | None]],
             seen: set[str]) -> None:
    tag = _local(el.tag)
    if tag == "node":
        node_id = el.get("id")
        if not node_id:
            raise StoreError("Nothing was imported: a <node> has no id.")
        if node_id in seen:
            raise StoreError(f"Nothing was imported: the node id {node_id!r} appears twice.")
        seen.add(node_id)
        where = f"node {node_id!r}"
        values = _data(el, keys, "node", where)
        props = _properties(values, where, ("type", "name", "label"))
        name = values.get("name") or values.get("label") or node_id
        type_ = values.get("type") or "Thing"
        parsed.objects.append(ParsedObject(node_id, str(type_), str(name), props, where))
    elif tag == "edge":
        source, target = el.get("source"), el.get("target")
        where = f"edge {el.get('id') or (source, target)!r}"
        for end in (source, target):
            if not end or end not in seen:
                raise StoreError(f"Nothing was imported: {where} refers to a node {end!r} that does not exist.")
        values = _data(el, keys, "edge", where)
        props = _properties(values, where, ("type", "label", "relationType"))
        type_ = values.get("type") or values.get("label") or values.get("relationType") or "related_to"
        parsed.relations.append(ParsedRelation(el.get("id"), str(type_), str(source), str(target), props, where))


def _data(el: ET.Element, keys: dict[str, tuple[str, str, str, str | None]], kind: str,
          where: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key_id, (for_, name, attr_type, default) in keys.items():
        if for_ in (kind, "all") and default is not None:
            values[name] = _convert(default, attr_type, where, name)
    for child in el:
        if _local(child.tag) != "data":
            continue
        key_id = child.get("key", "")
        _for, name, attr_type, _default = keys.get(key_id, ("all", key_id, "string", None))
        text = "".join(child.itertext())
        values[name] = text if name in ("properties", "type", "name") else _convert(text, attr_type, where, name)
    return values


def _properties(values: dict[str, Any], where: str, structural: tuple[str, ...]) -> dict[str, Any]:
    if "properties" in values:
        try:
            props = json.loads(values["properties"]) if values["properties"].strip() else {}
        except json.JSONDecodeError as exc:
            raise StoreError(f"Nothing was imported: {where}: its properties are not valid JSON ({exc.msg}).") from None
        if not isinstance(props, dict):
            raise StoreError(f"Nothing was imported: {where}: its properties must be a JSON object.")
        return props
    return {k: v for k, v in values.items() if k not in structural and k != "title"}
