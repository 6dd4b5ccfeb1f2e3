"""Import and export: json, graphml, markdown, mermaid, memory-jsonl."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cks_desktop.graph.errors import NotFound, StoreError
from cks_desktop.graph.formats.markdown import md_escape
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

from .conftest import dump

NASTY = 'Bob <img src=http://x/y.png> [a](http://x) *b* _c_ `d` "q" #1 | {e} %% ;'


def _fill(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [
        {"op": "add_object", "type": "Person", "name": "Alice", "label": "$a",
         "properties": {"age": 30, "bio": "plays the violin", "tags": ["x", "y"], "ok": True, "score": 1.5,
                        "observations": ["likes tea", "lives in Paris"]}},
        {"op": "add_object", "type": "Person", "name": NASTY, "label": "$b", "properties": {"age": "unknown"}},
        {"op": "add_object", "type": "City", "name": "Paris", "label": "$p", "properties": {}},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows", "properties": {"since": 2001}},
        {"op": "add_relation", "source": "$a", "target": "$p", "type": "lives_in"},
        {"op": "add_relation", "source": "$b", "target": "$a", "type": "knows"},
    ], "setup")


@pytest.fixture
def other_store(tmp_path: Path):
    s = GraphStore.open(tmp_path / "other.sqlite3")
    yield s
    s.close()


def _graph(store: GraphStore, session_id: str) -> tuple[list[dict], list[dict]]:
    doc = json.loads(store.export(session_id, "json"))
    return doc["objects"], doc["relations"]


def test_json_export_shape_and_round_trip_keeps_ids(store: GraphStore, session: Session,
                                                    other_store: GraphStore) -> None:
    _fill(store, session)
    text = store.export(session.id, "json")
    doc = json.loads(text)
    assert set(doc) == {"format", "version", "session", "objects", "relations"}
    assert doc["format"] == "cks-graph" and doc["version"] == 1
    assert doc["session"] == {"id": session.id, "title": session.title}
    assert set(doc["objects"][0]) == {"id", "type", "name", "properties"}
    assert set(doc["relations"][0]) == {"id", "type", "source_id", "target_id", "properties"}
    target = other_store.create_session("copy")
    result = other_store.import_data(target.id, "json", text, "import")
    assert result.change is not None and result.summary == "adds 3 objects, 3 relations" and result.created == {}
    assert _graph(other_store, target.id) == (doc["objects"], doc["relations"])


def test_json_import_gets_new_ids_when_they_clash_or_the_session_is_not_empty(store: GraphStore,
                                                                              session: Session) -> None:
    _fill(store, session)
    text = store.export(session.id, "json")
    copy = store.create_session("copy")  # same database: the ids are taken
    store.import_data(copy.id, "json", text, "import")
    objects, relations = _graph(store, copy.id)
    original_objects, _ = _graph(store, session.id)
    assert {o["id"] for o in objects}.isdisjoint({o["id"] for o in original_objects})
    strip = lambda items: sorted((o["type"], o["name"], json.dumps(o["properties"])) for o in items)  # noqa: E731
    assert strip(objects) == strip(original_objects) and len(relations) == 3
    # Importing into a non-empty session merges objects with the same type and name.
    store.import_data(copy.id, "json", text, "import again")
    assert store.counts(copy.id) == {"objects": 3, "relations": 6}


@pytest.mark.parametrize(("data", "message"), [
    ("{not json", "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    ('{"format": "other"}', "not a CKS graph file"),
    ('{"format": "cks-graph", "version": 3, "objects": []}', "version 3, written by a newer CKS Desktop"),
    ('{"format": "cks-graph", "version": 1, "objects": {}}', '"objects" and "relations" must be lists'),
    ('{"format": "cks-graph", "version": 1, "objects": [{"id": "a", "type": "T"}]}',
     "object 0 (a): name must be a non-empty string"),
    ('{"format": "cks-graph", "version": 1, "objects": [{"id": "a", "type": "T", "name": "x"},'
     ' {"id": "a", "type": "T", "name": "y"}]}', "the id 'a' appears twice"),
    ('{"format": "cks-graph", "version": 1, "objects": [{"id": "a", "type": "T", "name": "x"}],'
     ' "relations": [{"type": "r", "source_id": "a", "target_id": "zz"}]}',
     "relation 0: target: No object 'zz' in this session."),
    ('{"format": "cks-graph", "version": 1, "objects": [{"id": "a", "type": "T", "name": "x", '
     '"properties": [1]}]}', "properties must be a JSON object"),
])
def test_bad_json_input_writes_nothing(store: GraphStore, session: Session, data: str, message: str) -> None:
    before = dump(store)
    with pytest.raises(StoreError) as info:
        store.import_data(session.id, "json", data, "import")
    assert message in str(info.value) and str(info.value).startswith("Nothing was imported")
    assert dump(store) == before


def test_graphml_round_trip(store: GraphStore, session: Session, other_store: GraphStore) -> None:
    _fill(store, session)
    text = store.export(session.id, "graphml")
    root = ET.fromstring(text)
    assert root.tag == "{http://graphml.graphdrawing.org/xmlns}graphml"
    # Scalar properties are also plain GraphML attributes for other tools.
    names = {k.get("attr.name"): k.get("attr.type") for k in root if k.tag.endswith("key")}
    assert names["score"] == "double" and names["ok"] == "boolean" and names["since"] == "long"
    assert "age" not in names  # int in one object, string in another: only in the JSON
    target = other_store.create_session("copy")
    other_store.import_data(target.id, "graphml", text, "import")
    assert _graph(other_store, target.id) == _graph(store, session.id)


def test_graphml_from_another_tool(store: GraphStore, session: Session) -> None:
    data = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="d0" for="node" attr.name="label" attr.type="string"/>
  <key id="d1" for="node" attr.name="weight" attr.type="double"><default>1.0</default></key>
  <key id="d2" for="edge" attr.name="relationType" attr.type="string"/>
  <key id="d3" for="node" attr.name="visible" attr.type="boolean"/>
  <graph edgedefault="undirected">
    <edge source="n0" target="n1"><data key="d2">links</data></edge>
    <node id="n0"><data key="d0">First</data><data key="d1">2.5</data><data key="d3">true</data></node>
    <node id="n1"/>
  </graph>
</graphml>"""
    result = store.import_data(session.id, "graphml", data, "import")
    assert result.summary == "adds 2 objects, 1 relation"
    first = store.resolve(session.id, "First")
    assert first.type == "Thing" and first.properties == {"weight": 2.5, "visible": True}
    assert store.resolve(session.id, "n1").properties == {"weight": 1.0}
    (rel,) = store.all_relations(session.id)
    assert rel.type == "links" and not rel.id.startswith("n")


@pytest.mark.parametrize(("data", "message"), [
    ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
     '<graphml><graph><node id="a"><data key="name">&lol2;</data></node></graph></graphml>', "DOCTYPE"),
    ('<!ENTITY xxe SYSTEM "file:///etc/passwd"><graphml/>', "DOCTYPE or ENTITY"),
    ("<graphml><graph><node id='a'></graph></graphml>", "not well-formed XML (line 1, column"),
    ("<other/>", "not GraphML"),
    ("<graphml/>", "no <graph> element"),
    ("<graphml><graph><edge source='a' target='b'/></graph></graphml>", "node 'a' that does not exist"),
    ("<graphml><graph><node id='a'/><node id='a'/></graph></graphml>", "appears twice"),
    ("<graphml><key id='w' for='node' attr.name='w' attr.type='int'/><graph><node id='a'>"
     "<data key='w'>heavy</data></node></graph></graphml>", "'w' should be a number"),
    ("<graphml><key id='p' for='node' attr.name='properties'/><graph><node id='a'>"
     "<data key='p'>[1]</data></node></graph></graphml>", "must be a JSON object"),
])
def test_bad_graphml_writes_nothing(store: GraphStore, session: Session, data: str, message: str) -> None:
    before = dump(store)
    with pytest.raises(StoreError) as info:
        store.import_data(session.id, "graphml", data, "import")
    assert message in str(info.value)
    assert dump(store) == before


def test_markdown_export_escapes_user_text(store: GraphStore, session: Session) -> None:
    _fill(store, session)
    text = store.export(session.id, "markdown")
    assert text.startswith(f"# {session.title}\n") and "3 objects, 3 relations" in text
    escaped = md_escape(NASTY)
    assert f"**{escaped}**" in text  # the name shows as typed: every special character escaped
    assert re.search(r"(?<!\\)[<>\[\]()*_`#|{}]", escaped) is None
    assert NASTY not in text
    assert "\\[a\\]\\(http://x\\)" in text
    assert "**Alice**" in text and "- age: 30" in text and "- bio: plays the violin" in text


def test_mermaid_export_escapes_labels(store: GraphStore, session: Session) -> None:
    _fill(store, session)
    text = store.export(session.id, "mermaid")
    lines = text.splitlines()
    assert "flowchart LR" in lines
    node_lines = [ln for ln in lines if '["' in ln]
    assert len(node_lines) == 3
    for line in node_lines + [ln for ln in lines if "-->" in ln]:
        inner = line.split('"', 1)[1].rsplit('"', 1)[0]
        assert '"' not in inner and "<img" not in inner and "|" not in inner and "[" not in inner
    assert "#quot;q#quot;" in text and "#lt;img" in text


def test_memory_jsonl_round_trip_is_exact(store: GraphStore, session: Session) -> None:
    data = "\n".join([
        '{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks Spanish"]}',
        '{"type":"entity","name":"Anthropic","entityType":"organization","observations":[]}',
        '{"type":"entity","name":"Émile \\"E\\"","entityType":"person","observations":["a","b"]}',
        '{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}',
        '{"type":"relation","from":"Émile \\"E\\"","to":"John_Smith","relationType":"knows"}',
    ])
    result = store.import_data(session.id, "memory-jsonl", data, "import")
    assert result.summary == "adds 3 objects, 2 relations"
    john = store.resolve(session.id, "john_smith")
    assert john.type == "person" and john.properties == {"observations": ["Speaks Spanish"]}
    assert store.export(session.id, "memory-jsonl") == data


def test_memory_jsonl_import_into_a_non_empty_session_merges_observations(store: GraphStore,
                                                                          session: Session) -> None:
    store.import_data(session.id, "memory-jsonl",
                      '{"type":"entity","name":"A","entityType":"t","observations":["one","two"]}', "i")
    store.import_data(session.id, "memory-jsonl",
                      '{"type":"entity","name":"A","entityType":"t","observations":["two","three"]}\n'
                      '{"type":"relation","from":"A","to":"A","relationType":"self"}\n'
                      '{"type":"relation","from":"A","to":"A","relationType":"self"}\n', "i")
    assert store.resolve(session.id, "A").properties == {"observations": ["one", "two", "three"]}
    assert store.counts(session.id) == {"objects": 1, "relations": 1}


def test_memory_jsonl_export_of_our_own_graph(store: GraphStore, session: Session) -> None:
    _fill(store, session)
    lines = [json.loads(line) for line in store.export(session.id, "memory-jsonl").split("\n")]
    assert lines[0] == {"type": "entity", "name": "Alice", "entityType": "Person",
                        "observations": ["likes tea", "lives in Paris"]}
    assert {"type": "relation", "from": "Alice", "to": "Paris", "relationType": "lives_in"} in lines


@pytest.mark.parametrize(("data", "message"), [
    ('{"type":"entity","name":"A","entityType":"t","observations":[]}\n{oops', "line 2 is not valid JSON"),
    ('\n\n[1, 2]', "line 3 is not a JSON object"),
    ('{"type":"entity","name":"","entityType":"t"}', 'line 1: "name" must be a non-empty string'),
    ('{"type":"entity","name":"A","entityType":"t","observations":"x"}', '"observations" must be a list'),
    ('{"type":"thing"}', 'line 1: "type" must be "entity" or "relation"'),
    ('{"type":"entity","name":"A","entityType":"t"}\n{"type":"entity","name":"A","entityType":"t"}',
     "line 2: the entity 'A' already appeared on line 1"),
    ('{"type":"entity","name":"A","entityType":"t"}\n{"type":"relation","from":"A","to":"B","relationType":"r"}',
     "line 2: target: No object 'B' in this session."),
])
def test_bad_memory_jsonl_writes_nothing_and_names_the_line(store: GraphStore, session: Session, data: str,
                                                            message: str) -> None:
    before = dump(store)
    with pytest.raises(StoreError) as info:
        store.import_data(session.id, "memory-jsonl", data, "import")
    assert message in str(info.value)
    assert dump(store) == before


def test_unknown_formats_and_sessions(store: GraphStore, session: Session) -> None:
    with pytest.raises(StoreError, match="Unknown export format 'pdf'"):
        store.export(session.id, "pdf")
    with pytest.raises(StoreError, match="Unknown import format 'markdown'"):
        store.import_data(session.id, "markdown", "# hi", "i")
    with pytest.raises(NotFound):
        store.export("s_missing", "json")
    with pytest.raises(NotFound):
        store.import_data("s_missing", "json", "{}", "i")


def test_empty_session_exports(store: GraphStore, session: Session) -> None:
    for fmt in ("json", "graphml", "markdown", "mermaid", "memory-jsonl"):
        assert isinstance(store.export(session.id, fmt), str)
    assert store.export(session.id, "memory-jsonl") == ""
    result = store.import_data(session.id, "memory-jsonl", "", "i")
    assert result.change is None


def test_graphml_keeps_characters_xml_cannot_carry(store: GraphStore, session: Session,
                                                   other_store: GraphStore) -> None:
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "bell\x07", "properties": {
        "ctl": "a\x00b\x1f\ufffe", "ok": "é"}}], "t")
    text = store.export(session.id, "graphml")
    ET.fromstring(text)  # well-formed
    target = other_store.create_session("copy")
    other_store.import_data(target.id, "graphml", text, "i")
    (obj,) = other_store.all_objects(target.id)
    assert obj.properties == {"ctl": "a\x00b\x1f\ufffe", "ok": "é"}  # exact, through the JSON
    assert obj.name == "bell\ufffd"  # names are plain XML text: such characters become U+FFFD
