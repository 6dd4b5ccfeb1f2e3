"""Removing a document recomputes what still supports each fact: its sources go,
what had no other source is named (kept by default) or removed in the same change; through the
store and through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.errors import StoreError
from cks_desktop.provenance import queries as Q
from cks_desktop.provenance.documents import preview_removal, remove_document
from tests.cli.test_cli import as_json, cks, home, ok  # noqa: F401  (home is a fixture)

from .conftest import TEXT, World, passage, rows
from .test_evidence_ops import _facts


def test_orphans_are_the_facts_whose_only_sources_cite_the_document(world: World) -> None:
    w = world
    ids = _facts(w)  # Ada: notes.txt + letters.pdf; Charles and "met": notes.txt only
    w.store.apply(w.sid, [{"op": "add_object", "type": "Person", "name": "Typed by hand"}], "user")
    doc, orphans = preview_removal(w.store, w.sid, "notes.txt")
    assert doc.id == w.txt.id
    assert [o.name for o in orphans.objects] == ["Charles Babbage"]  # Ada keeps the PDF; the hand-typed one never had any
    assert orphans.relations == []  # "met" goes with Charles
    assert len(orphans.evidence) == 3
    removal = remove_document(w.store, w.sid, "notes.txt")
    assert removal.sentence() == ("Removed notes.txt and its 3 sources. 1 object (Charles Babbage) no longer has a "
                                  "source (kept; remove them with --orphans remove).")
    assert w.store.counts(w.sid) == {"objects": 3, "relations": 1}
    assert [s.evidence.quote for s in Q.sources_of(w.store, w.sid, "object", ids["$ada"])] == ["Ada in London"]
    assert [d.name for d in DocumentStore(w.store).list_documents(w.sid)] == ["letters.pdf"]
    # the change cannot be reverted while the document is gone; once it is back, it can
    assert removal.change is not None
    with pytest.raises(StoreError, match="no document"):
        w.store.revert(w.sid, removal.change.id, "user")
    DocumentStore(w.store).add(w.sid, [_reread(w)])
    w.store.revert(w.sid, removal.change.id, "user")
    assert len(rows(w.store, w.sid)) == 4


def _reread(w: World):  # type: ignore[no-untyped-def]
    from cks_desktop.documents.model import ReadDocument

    t = w.txt
    return ReadDocument(t.id, t.name, t.size, t.media_type, t.source, t.reader, t.text, t.page_starts)


def test_removing_orphans_is_one_change_with_the_sources(world: World) -> None:
    w = world
    _facts(w)
    before = len(w.store.list_changes(w.sid))
    removal = remove_document(w.store, w.sid, w.txt.id[:8], orphans="remove")
    assert removal.sentence() == ("Removed notes.txt and its 3 sources. Also removed 1 object (Charles Babbage), "
                                  "which had no other source.")
    assert w.store.counts(w.sid) == {"objects": 1, "relations": 0}
    assert len(w.store.list_changes(w.sid)) == before + 1
    assert removal.change is not None and removal.change.summary == "removes 1 object, 1 relation, 3 sources"


def test_a_document_that_supports_nothing_is_just_removed(world: World) -> None:
    removal = remove_document(world.store, world.sid, "letters.pdf")
    assert removal.change is None and removal.sentence() == "Removed letters.pdf."


def test_cli_remove_names_the_orphans_and_removes_them_when_asked(home: Path, tmp_path: Path) -> None:
    sid = ok(cks(home, "sessions", "create", "Docs")).strip()
    (tmp_path / "notes.txt").write_text(TEXT)
    added = as_json(cks(home, "documents", "add", "--session", sid, str(tmp_path / "notes.txt"), "--json"))
    doc = added["added"][0]
    start = TEXT.index("Charles Babbage")
    graph = {"format": "cks-graph", "version": 2, "session": {"id": "s_x", "title": "x"},
             "objects": [{"id": "a", "type": "Person", "name": "Charles Babbage", "properties": {}},
                         {"id": "b", "type": "Person", "name": "Hand made", "properties": {}}],
             "relations": [],
             "evidence": [{"object": "a", "document_id": doc["id"], "start": start, "end": start + 15,
                           "quote": "Charles Babbage", "alignment": "exact", "origin": "extraction"}]}
    (tmp_path / "g.json").write_text(json.dumps(graph))
    ok(cks(home, "sessions", "import", sid, str(tmp_path / "g.json"), "--format", "json"))
    kept = ok(cks(home, "documents", "remove", "--session", sid, "notes.txt"))
    assert kept.startswith("Removed notes.txt and its 1 source. 1 object (Charles Babbage) no longer has a source")
    summary = as_json(cks(home, "tools", "call", "graph_summary", "--session", sid, "--args", "{}", "--json"))
    assert "2" in json.dumps(summary)  # both objects kept
    ok(cks(home, "documents", "add", "--session", sid, str(tmp_path / "notes.txt")))
    again = as_json(cks(home, "sessions", "import", sid, str(tmp_path / "g.json"), "--format", "json",
                        "--on-conflict", "skip", "--json"))  # the objects are there: only the source is new
    assert "adds 1 source" in again["summary"], again
    gone = as_json(cks(home, "documents", "remove", "--session", sid, "notes.txt", "--orphans", "remove", "--json"))
    assert gone["orphans"]["objects"][0]["name"] == "Charles Babbage" and gone["orphans_removed"] is True
    assert gone["sources_removed"] == 1 and gone["change_id"].startswith("c_")
    bad = cks(home, "documents", "remove", "--session", sid, "x", "--orphans", "maybe")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
