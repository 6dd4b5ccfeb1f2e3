"""Evidence as batch ops: written in the same transaction and change as the facts,
validated like every op, removed with what it supports, restored by reverts, and kept by merges."""

from __future__ import annotations

from typing import Any

import pytest

from cks_desktop.graph.errors import ValidationFailed
from cks_desktop.provenance import queries as Q
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller
from tests.tools.conftest import ScriptedApprover, call
from cks_desktop.tools.approval import Decision

from .conftest import World, passage, rows


def _facts(w: World) -> dict[str, str]:
    return w.store.apply(w.sid, [
        {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
        {"op": "add_object", "type": "Person", "name": "Charles Babbage", "label": "$cb"},
        {"op": "add_relation", "source": "$ada", "target": "$cb", "type": "met", "label": "$met"},
        {"op": "add_evidence", "object": "$ada", **passage(w.txt, "Ada Lovelace"), "chunk_index": 0},
        {"op": "add_evidence", "object": "$ada", **passage(w.pdf, "Ada in London")},
        {"op": "add_evidence", "object": "$cb", **passage(w.txt, "Charles Babbage")},
        {"op": "add_evidence", "relation": "$met", **passage(w.txt, "Ada Lovelace met Charles Babbage")},
    ], "extraction").created


def test_evidence_is_written_with_its_facts_in_one_change(world: World) -> None:
    w = world
    before = w.store.list_changes(w.sid)
    ids = _facts(w)
    changes = w.store.list_changes(w.sid)
    assert len(changes) == len(before) + 1
    change = changes[0]
    assert change.summary == "adds 2 objects, 1 relation, 4 sources"
    got = rows(w.store, w.sid)
    assert len(got) == 4 and {r[12] for r in got} == {change.id}  # each row records its change
    sources = Q.sources_of(w.store, w.sid, "object", ids["$ada"])
    assert [(s.document_name, s.evidence.quote, s.evidence.page) for s in sources] == [
        ("notes.txt", "Ada Lovelace", None), ("letters.pdf", "Ada in London", 2)]  # page derived from the span
    for s in Q.sources_of(w.store, w.sid, "relation", ids["$met"]):
        doc = w.txt if s.evidence.document_id == w.txt.id else w.pdf
        assert doc.text[s.evidence.start:s.evidence.end] == s.evidence.quote
    # an evidence-only change shows in the object's history
    w.store.apply(w.sid, [{"op": "add_evidence", "object": ids["$cb"], **passage(w.pdf, "Dear Charles")}], "x")
    assert w.store.changes_touching(w.sid, ids["$cb"])[0].summary == "adds 1 source"


def test_every_bad_evidence_op_is_named_and_nothing_is_written(world: World) -> None:
    w = world
    ids = _facts(w)
    before = rows(w.store, w.sid)
    span = passage(w.txt, "Ada Lovelace")
    bad: list[dict[str, Any]] = [
        {"op": "add_evidence", "quote": "x"},                                               # no target
        {"op": "add_evidence", "object": ids["$ada"], "relation": ids["$met"], "quote": "x"},  # both
        {"op": "add_evidence", "object": "Nobody", "quote": "x"},
        {"op": "add_evidence", "relation": "$nolabel", "quote": "x"},
        {"op": "add_evidence", "object": ids["$ada"], "document_id": "f" * 64, "quote": "x"},
        {"op": "add_evidence", "object": ids["$ada"], **{**span, "end": 10**6}},
        {"op": "add_evidence", "object": ids["$ada"], **{**span, "quote": "Ada Lovelaze"}},
        {"op": "add_evidence", "object": ids["$ada"], **{**span, "start": None}},
        {"op": "add_evidence", "object": ids["$ada"], **span, "page": 3},                   # a text has no pages... ok
        {"op": "add_evidence", "object": ids["$ada"], **passage(w.pdf, "Dear Charles"), "page": 9},
        {"op": "add_evidence", "object": ids["$ada"], **span, "alignment": "perfect"},
        {"op": "add_evidence", "object": ids["$ada"], **span, "review": "maybe"},
        {"op": "add_evidence", "object": ids["$ada"], **span, "origin": "rumour"},
        {"op": "add_evidence", "object": ids["$ada"], "quote": 5},
        {"op": "add_evidence", "object": ids["$ada"], "quote": "x", "start": 0, "end": 1},  # span without document
        {"op": "add_evidence", "object": ids["$ada"], "quote": "x", "colour": "red"},
        {"op": "remove_evidence", "evidence_id": "e_" + "0" * 26},
        {"op": "remove_evidence", "evidence_id": "nope"},
    ]
    with pytest.raises(ValidationFailed) as info:
        w.store.apply(w.sid, bad, "x")
    failed = {e["index"]: e["message"] for e in info.value.errors}
    assert set(failed) == set(range(len(bad))) - {8}, failed  # a page on a document without pages is kept
    assert "exactly one target" in failed[0] and "exactly one target" in failed[1]
    assert "No object 'Nobody'" in failed[2] and "unknown label" in failed[3]
    assert "no document" in failed[4] and "outside the document" in failed[5]
    assert "is not the document's text" in failed[6] and "come together" in failed[7]
    assert "past the document's last page (2)" in failed[9]
    assert "alignment" in failed[10] and "review" in failed[11] and "origin" in failed[12]
    assert "unknown field 'colour'" in failed[15] and "No evidence" in failed[16] and "e_" in failed[17]
    assert rows(w.store, w.sid) == before


def test_the_same_source_twice_adds_nothing(world: World) -> None:
    w = world
    ids = _facts(w)
    again = w.store.apply(w.sid, [{"op": "add_evidence", "object": ids["$ada"], **passage(w.txt, "Ada Lovelace")}],
                          "x")
    assert again.change is None and again.ops[0]["outcome"] == "reused"


def test_removing_an_object_removes_its_evidence_and_revert_restores_it(world: World) -> None:
    w = world
    ids = _facts(w)
    before = rows(w.store, w.sid)
    gone = w.store.apply(w.sid, [{"op": "remove_object", "ref": "Ada Lovelace"}], "user")
    assert gone.summary == "removes 1 object, 1 relation, 3 sources"  # its own two and the relation's
    assert [r[2] for r in rows(w.store, w.sid)] == [ids["$cb"]]
    assert Q.sources_of(w.store, w.sid, "object", ids["$ada"]) == []
    w.store.revert(w.sid, gone.change.id, "user")
    assert rows(w.store, w.sid) == before  # same ids, spans, changes


def test_remove_evidence_and_revert(world: World) -> None:
    w = world
    ids = _facts(w)
    before = rows(w.store, w.sid)
    ev = Q.evidence_of(w.store, w.sid, "relation", ids["$met"])[0]
    gone = w.store.apply(w.sid, [{"op": "remove_evidence", "evidence_id": ev.id}], "user")
    assert gone.summary == "removes 1 source" and len(rows(w.store, w.sid)) == 3
    rel = w.store.apply(w.sid, [{"op": "remove_relation", "relation_id": ids["$met"]}], "user")
    assert rel.summary == "removes 1 relation"
    w.store.revert(w.sid, rel.change.id, "user")
    w.store.revert(w.sid, gone.change.id, "user")
    assert rows(w.store, w.sid) == before
    # reverting the extraction itself takes the facts and every source away
    w.store.revert(w.sid, w.store.list_changes(w.sid)[-1].id, "user")
    assert rows(w.store, w.sid) == [] and w.store.counts(w.sid) == {"objects": 0, "relations": 0}


@pytest.mark.asyncio
async def test_merge_moves_every_source_to_the_survivor_and_revert_moves_it_back(world: World) -> None:
    w = world
    ids = _facts(w)
    dup = w.store.apply(w.sid, [
        {"op": "add_object", "type": "Person", "name": "Augusta Ada King", "label": "$dup"},
        {"op": "add_relation", "source": "$dup", "target": ids["$cb"], "type": "met", "label": "$met2"},
        {"op": "add_evidence", "object": "$dup", **passage(w.pdf, "Yours, Ada")},
        {"op": "add_evidence", "relation": "$met2", **passage(w.pdf, "Dear Charles")},
    ], "extraction").created
    before = rows(w.store, w.sid)
    registry = build_registry(w.store)
    run = Run(session_id=w.sid, caller=Caller.USER, approver=ScriptedApprover(default=Decision.ALLOW))
    res = await call(registry, run, "merge_objects", keep="Ada Lovelace", merge="Augusta Ada King")
    assert not res.is_error, res.content
    assert res.structured["relations_dropped"] == 1  # "met" Charles twice: one stays
    assert "moves 2 sources" in res.structured["summary"]
    quotes = {s.evidence.quote for s in Q.sources_of(w.store, w.sid, "object", ids["$ada"])}
    assert quotes == {"Ada Lovelace", "Ada in London", "Yours, Ada"}
    met = {s.evidence.quote for s in Q.sources_of(w.store, w.sid, "relation", ids["$met"])}
    assert met == {"Ada Lovelace met Charles Babbage", "Dear Charles"}
    assert len(rows(w.store, w.sid)) == len(before)  # nothing lost, nothing copied
    undo = await call(registry, run, "revert_change", change_id=res.structured["change_id"])
    assert not undo.is_error, undo.content
    assert rows(w.store, w.sid) == before
    assert Q.evidence_of(w.store, w.sid, "object", dup["$dup"])[0].quote == "Yours, Ada"


@pytest.mark.asyncio
async def test_get_sources_lets_the_assistant_cite(world: World) -> None:
    w = world
    ids = _facts(w)
    registry = build_registry(w.store)
    run = Run(session_id=w.sid, caller=Caller.MODEL, approver=ScriptedApprover(default=Decision.ALLOW))
    res = await call(registry, run, "get_sources", ref="Ada Lovelace")
    assert not res.is_error, res.content
    data = res.structured
    assert data["count"] == 2 and data["object"]["id"] == ids["$ada"]
    first = data["sources"][0]
    assert (first["quote"], first["document"], first["start"], first["end"]) == ("Ada Lovelace", "notes.txt", 0, 12)
    assert data["sources"][1]["page"] == 2
    assert data["written_by"][0]["author"] == "extraction"
    rel = await call(registry, run, "get_sources", ref=ids["$met"])
    assert rel.structured["sources"][0]["quote"] == "Ada Lovelace met Charles Babbage"
    assert rel.structured["relation"]["source"]["name"] == "Ada Lovelace"
    # a hand edit records who made it (derived from the change's origin)
    w.store.apply(w.sid, [{"op": "update_object", "ref": ids["$cb"], "set_properties": {"born": 1791}}], "user")
    hand = await call(registry, run, "get_sources", ref="Charles Babbage")
    assert hand.structured["written_by"][0]["author"] == "person"
    # a chat write (origin "model", as the chat's tool calls record it) says "chat"
    w.store.apply(w.sid, [{"op": "update_object", "ref": ids["$cb"], "set_properties": {"died": 1871}}], "model")
    chat = await call(registry, run, "get_sources", ref="Charles Babbage")
    assert [a["author"] for a in chat.structured["written_by"][:2]] == ["chat", "person"]
    missing = await call(registry, run, "get_sources", ref="Nobody")
    assert missing.is_error and "Nobody" in missing.content
