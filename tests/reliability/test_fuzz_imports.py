"""Imports (``memory-jsonl``, GraphML, cks-graph JSON) with hostile and broken
input: every import either lands whole (one change, integrity intact) or fails
with one sentence starting "Nothing was imported" and leaves the database
byte-for-byte as it was. XML entity tricks (XXE, billion laughs, parameter
entities) are refused before parsing; deep nesting and odd bytes never crash."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cks_desktop.graph.errors import StoreError
from tests.reliability.schema_strategies import JSON_VALUES
from tests.reliability.world import World, build_world, check_store, dump

CI = settings(max_examples=40, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = build_world(tmp_path / "imports.sqlite3")
    try:
        yield w
        check_store(w.store)
    finally:
        w.store.close()


def try_import(w: World, fmt: str, data: str, session_id: str | None = None) -> bool:
    """True if imported; on failure the message is one sentence and nothing changed."""
    target = session_id or w.mine
    before = dump(w.store)
    changes = len(w.store.list_changes(target, limit=1000))
    try:
        result = w.store.import_data(target, fmt, data, "user")
    except StoreError as exc:
        assert str(exc).startswith("Nothing was imported") or "database" in str(exc), str(exc)
        assert "Traceback" not in str(exc)
        assert dump(w.store) == before, f"a failed {fmt} import wrote: {exc}"
        return False
    assert len(w.store.list_changes(target, limit=1000)) == changes + (1 if result.change else 0)
    return True


TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["Ada", "Eve", "", " ", "\x00", "a\u202eb", "$x", "o_1"]))
ENTITY = st.fixed_dictionaries({"type": st.just("entity")}, optional={
    "name": st.one_of(TEXT, JSON_VALUES), "entityType": st.one_of(TEXT, JSON_VALUES),
    "observations": st.one_of(st.lists(TEXT, max_size=3), JSON_VALUES)})
RELATION = st.fixed_dictionaries({"type": st.just("relation")}, optional={
    "from": st.one_of(TEXT, JSON_VALUES), "to": st.one_of(TEXT, JSON_VALUES),
    "relationType": st.one_of(TEXT, JSON_VALUES)})
LINE = st.one_of(ENTITY, ENTITY, RELATION, JSON_VALUES.map(lambda v: {"type": v}), JSON_VALUES)


@CI
@given(lines=st.lists(LINE, max_size=8), noise=st.sampled_from(["", "\r", "\n\n", "{", "\ufeff", "\x00"]))
def test_memory_jsonl_fuzz(world: World, lines: list[object], noise: str) -> None:
    data = "\n".join(json.dumps(line) for line in lines) + noise
    try_import(world, "memory-jsonl", data)


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, float, str, int]:
    """How to damage an export (positions as fractions: the export grows as imports land)."""
    how = draw(st.sampled_from(["as_is", "truncate", "insert", "delete"]))
    piece = draw(st.sampled_from(["<", ">", "&", "\"", "'", "<node/>", "&amp;", "\x00", "]]>", "<!--", "}", "{",
                                  "null", ",", "\\", "<edge source='x' target='y'/>"]))
    return how, draw(st.floats(0, 1)), piece, draw(st.integers(1, 20))


def damage(text: str, m: tuple[str, float, str, int]) -> str:
    how, where, piece, span = m
    at = int(where * len(text))
    if how == "truncate":
        return text[:at]
    if how == "insert":
        return text[:at] + piece + text[at:]
    if how == "delete":
        return text[:at] + text[at + span:]
    return text


@pytest.mark.parametrize("fmt", ["graphml", "json"])
@CI
@given(m=mutation())
def test_mutated_exports_import_whole_or_not_at_all(world: World, fmt: str, m: tuple[str, float, str, int]) -> None:
    # Into a fresh session each time: "mine" (the export's source) stays the same size.
    target = world.store.create_session("import target").id
    try_import(world, fmt, damage(world.store.export(world.mine, fmt), m), target)


XML_ATTACKS = {
    "xxe file": '<?xml version="1.0"?><!DOCTYPE g [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><graph><node id="n"><data key="name">&x;'
                '</data></node></graph></graphml>',
    "xxe url": '<!DOCTYPE g [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]><graphml><graph>&x;</graph></graphml>',
    "billion laughs": '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                      + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
                                for i in range(1, 10))
                      + ']><graphml><graph><node id="a"><data key="name">&lol9;</data></node></graph></graphml>',
    "parameter entity": '<!DOCTYPE g [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><graphml/>',
    "lower-case doctype": '<!doctype graphml><graphml><graph/></graphml>',
    "spaced declaration": '<! DOCTYPE graphml><graphml><graph/></graphml>',
    "doctype after comment": '<!-- hi --><!DOCTYPE graphml SYSTEM "http://127.0.0.1:9/d.dtd"><graphml/>',
    "xinclude": '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xi="http://www.w3.org/2001/XInclude">'
                '<graph><xi:include href="file:///etc/passwd" parse="text"/></graph></graphml>',
    "utf-16 with doctype": "\ufeff<!DOCTYPE g [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><graphml/>",
    "deep nesting": "<graphml><graph>" + "<x>" * 50_000 + "</x>" * 50_000 + "</graph></graphml>",
    "not xml": "\x00\x01 graphml",
    "huge attribute": '<graphml><graph><node id="' + "n" * 2_000_000 + '"/></graph></graphml>',
}


@pytest.mark.parametrize("case", list(XML_ATTACKS))
def test_xml_attacks_are_refused(world: World, case: str) -> None:
    started = time.perf_counter()
    imported = try_import(world, "graphml", XML_ATTACKS[case])
    assert time.perf_counter() - started < 10
    everything = json.dumps(dump(world.store), default=str)
    assert "root:" not in everything and "lollol" not in everything
    if case not in ("xinclude", "huge attribute", "deep nesting"):  # unknown elements are not graph data
        assert not imported, case


JSON_ATTACKS = {
    "deep json": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "deep jsonl line": '{"type": "entity", "name": "x", "entityType": "T", "observations": '
                       + "[" * 100_000 + "]" * 100_000 + "}",
    "nan": '{"format": "cks-graph", "version": 1, "objects": [{"id": "o_x", "type": "T", "name": "n", '
           '"properties": {"v": NaN}}], "relations": []}',
    "huge int": '{"format": "cks-graph", "version": 1, "objects": [{"id": "x", "type": "T", "name": "n", '
                '"properties": {"v": ' + "9" * 5000 + "}}], \"relations\": []}",
}


@pytest.mark.parametrize("case", list(JSON_ATTACKS))
def test_json_attacks_fail_cleanly(world: World, case: str) -> None:
    fmt = "memory-jsonl" if "jsonl" in case else "json"
    try_import(world, fmt, JSON_ATTACKS[case])


def test_a_relation_to_a_missing_entity_is_not_dropped_silently(world: World) -> None:
    data = "\n".join(json.dumps(x) for x in [
        {"type": "entity", "name": "A", "entityType": "T", "observations": []},
        {"type": "relation", "from": "A", "to": "Nobody", "relationType": "knows"}])
    assert not try_import(world, "memory-jsonl", data)
