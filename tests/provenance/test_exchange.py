"""Provenance travels with the graph: cks-graph version 2 carries the sources, version 1 still
reads, a refused import leaves nothing behind, and re-importing adds nothing."""

from __future__ import annotations

import json

import pytest

from cks_desktop.documents.exchange import export_json, import_json
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.errors import StoreError
from cks_desktop.provenance import queries as Q

from .conftest import World, passage, rows
from .test_evidence_ops import _facts


def _quotes(w: World, sid: str, name: str) -> list[tuple[str, str | None, int | None, int | None, int | None]]:
    obj = w.store.resolve(sid, name)
    return [(s.evidence.quote, s.document_name, s.evidence.page, s.evidence.start, s.evidence.end)
            for s in Q.sources_of(w.store, sid, "object", obj.id)]


def test_export_is_version_two_with_evidence_and_imports_back_exactly(world: World) -> None:
    w = world
    _facts(w)
    data = export_json(w.store, w.sid)
    doc = json.loads(data)
    assert doc["version"] == 2 and len(doc["evidence"]) == 4 and len(doc["documents"]) == 2
    assert all("id" not in e and "change_id" not in e for e in doc["evidence"])
    other = w.store.create_session("Copy").id
    result, added = import_json(w.store, other, data, "cli")
    assert added == 2 and "4 sources" in result.summary
    assert _quotes(w, other, "Ada Lovelace") == _quotes(w, w.sid, "Ada Lovelace")
    rel = w.store.list_relations(other)[0][0]
    assert [s.evidence.quote for s in Q.sources_of(w.store, other, "relation", rel.id)] == [
        "Ada Lovelace met Charles Babbage"]
    again, added_again = import_json(w.store, other, data, "cli", on_conflict="skip")
    assert added_again == 0 and len(rows(w.store, other)) == 4  # the same sources: nothing new
    assert again.change is None and w.store.counts(other) == {"objects": 2, "relations": 1}


def test_a_graph_without_evidence_is_still_version_one_and_version_one_reads(world: World) -> None:
    w = world
    w.store.apply(w.sid, [{"op": "add_object", "type": "Person", "name": "Eve"}], "user")
    data = w.store.export(w.sid, "json")
    assert json.loads(data)["version"] == 1 and "evidence" not in json.loads(data)
    other = w.store.create_session("v1").id
    w.store.import_data(other, "json", data, "cli")
    assert w.store.counts(other)["objects"] == 1


def test_import_without_the_documents_keeps_the_facts_and_says_what_it_left_out(world: World) -> None:
    w = world
    _facts(w)
    data = w.store.export(w.sid, "json")  # the graph alone: no "documents" section
    other = w.store.create_session("No documents").id
    result = w.store.import_data(other, "json", data, "user")
    assert w.store.counts(other) == {"objects": 2, "relations": 1}
    assert "leaves out 4 sources whose document is not in the session" in result.summary
    assert rows(w.store, other) == []


@pytest.mark.parametrize("entry, expected", [
    ({"object": "o_nothere", "quote": "x"}, "evidence 0: its object 'o_nothere' is not in the file"),
    ({"quote": "x"}, "evidence 0 must name one object or one relation"),
    ("text", "evidence 0 is not a JSON object"),
])
def test_a_bad_evidence_entry_is_named_and_nothing_is_imported(world: World, entry: object, expected: str) -> None:
    w = world
    _facts(w)
    doc = json.loads(export_json(w.store, w.sid))
    doc["evidence"] = [entry]
    other = w.store.create_session("Bad").id
    with pytest.raises(StoreError) as info:
        import_json(w.store, other, json.dumps(doc), "cli")
    assert expected in str(info.value) and str(info.value).startswith("Nothing was imported")
    assert w.store.counts(other)["objects"] == 0 and DocumentStore(w.store).list_documents(other) == []


def test_a_span_outside_its_document_refuses_the_import_and_takes_the_documents_out(world: World) -> None:
    w = world
    ids = _facts(w)
    doc = json.loads(export_json(w.store, w.sid))
    doc["evidence"].append({"object": ids["$ada"], **{**passage(w.txt, "Ada Lovelace"), "end": 10**6}})
    other = w.store.create_session("Bad span").id
    with pytest.raises(StoreError) as info:
        import_json(w.store, other, json.dumps(doc), "cli")
    assert "evidence 4" in str(info.value) and "outside the document" in str(info.value)
    assert w.store.counts(other)["objects"] == 0 and DocumentStore(w.store).list_documents(other) == []
    assert rows(w.store, other) == []


def test_a_newer_version_is_refused_with_one_sentence(world: World) -> None:
    with pytest.raises(StoreError, match="version 3, written by a newer CKS Desktop; this version reads version 2"):
        world.store.import_data(world.sid, "json", '{"format": "cks-graph", "version": 3, "objects": []}', "cli")


@pytest.mark.asyncio
async def test_sources_survive_a_merge_a_revert_and_a_round_trip(world: World) -> None:
    from cks_desktop.tools.approval import Decision
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.types import Caller
    from tests.tools.conftest import ScriptedApprover, call

    w = world
    _facts(w)
    w.store.apply(w.sid, [{"op": "add_object", "type": "Person", "name": "Ada King", "label": "$d"},
                          {"op": "add_evidence", "object": "$d", **passage(w.pdf, "Yours, Ada")}], "extraction")
    registry = build_registry(w.store)
    run = Run(session_id=w.sid, caller=Caller.USER, approver=ScriptedApprover(default=Decision.ALLOW))
    first = await call(registry, run, "merge_objects", keep="Ada Lovelace", merge="Ada King")
    await call(registry, run, "revert_change", change_id=first.structured["change_id"])
    merged = await call(registry, run, "merge_objects", keep="Ada Lovelace", merge="Ada King")
    assert not merged.is_error, merged.content
    expected = _quotes(w, w.sid, "Ada Lovelace")
    assert [q[0] for q in expected] == ["Ada Lovelace", "Yours, Ada", "Ada in London"]
    other = w.store.create_session("Round trip").id
    import_json(w.store, other, export_json(w.store, w.sid), "cli")
    assert _quotes(w, other, "Ada Lovelace") == expected


def test_reverting_an_import_takes_its_sources_and_reverting_that_brings_them_back(world: World) -> None:
    w = world
    _facts(w)
    other = w.store.create_session("Import then undo").id
    result, _ = import_json(w.store, other, export_json(w.store, w.sid), "cli")  # a streamed change
    assert result.change is not None and len(rows(w.store, other)) == 4
    undo = w.store.revert(other, result.change.id, "cli")
    assert rows(w.store, other) == [] and w.store.counts(other) == {"objects": 0, "relations": 0}
    assert undo.change is not None
    w.store.revert(other, undo.change.id, "cli")
    assert len(rows(w.store, other)) == 4
    assert _quotes(w, other, "Ada Lovelace") == _quotes(w, w.sid, "Ada Lovelace")


def test_a_big_import_streams_its_sources_across_chunks(world: World) -> None:
    """More ops than one streamed chunk (4,000): sources in a later chunk cite objects and
    relations an earlier chunk wrote, by label."""
    from cks_desktop.graph.stream import STREAM_CHUNK

    w = world
    n = STREAM_CHUNK // 2 + 10
    quote = passage(w.txt, "Ada Lovelace")
    graph = {"format": "cks-graph", "version": 2, "session": {"id": "s", "title": "big"},
             "objects": [{"id": f"k{i}", "type": "T", "name": f"n{i}"} for i in range(n)],
             "relations": [{"id": f"r{i}", "type": "next", "source_id": f"k{i}", "target_id": f"k{i + 1}"}
                           for i in range(n - 1)],
             "evidence": [{"object": f"k{i}", **quote} for i in range(n)] + [{"relation": "r0", **quote}]}
    other = w.sid  # it has the document the sources cite
    result = w.store.import_data(other, "json", json.dumps(graph), "cli")
    assert f"adds {n} objects, {n - 1} relations, {n + 1} sources" == result.summary
    assert len(rows(w.store, other)) == n + 1
    first = w.store.resolve(other, "n0")
    assert [s.evidence.quote for s in Q.sources_of(w.store, other, "object", first.id)] == ["Ada Lovelace"]
