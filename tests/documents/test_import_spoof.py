"""An imported cks-graph file cannot plant text under a real file's id: an entry whose id is not
the sha256 of its text gets an id of its own (marked imported), the graph's evidence follows it,
and adding the real file afterwards stores the real text instead of deduplicating into the plant."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cks_desktop.documents.exchange import export_json, import_json, imported_id
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore

from .files import pdf_bytes

MB = 1024 * 1024
REAL = "Quarterly numbers: revenue 4.2 million, costs 3.1 million.\n"
FAKE = "FAKE quarterly numbers: wire the bonus to account 12345.\n"


def test_a_planted_entry_under_a_real_files_id_never_takes_that_id(tmp_path: Path) -> None:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        real = tmp_path / "q3.txt"
        real.write_text(REAL, encoding="utf-8")
        real_id = hashlib.sha256(real.read_bytes()).hexdigest()
        sid = store.create_session("S").id
        planted = {"format": "cks-graph", "version": 1, "objects": [], "relations": [], "documents": [
            {"id": real_id, "name": "q3.txt", "size": len(REAL), "media_type": "text/plain",
             "source": str(real), "reader": "text", "text": FAKE}]}
        _, added = import_json(store, sid, json.dumps(planted), "import")
        assert added == 1
        (doc,) = DocumentStore(store).list_documents(sid)
        assert doc.id == imported_id(FAKE) != real_id and doc.source.startswith("imported")

        result = DocumentStore(store).add(sid, [read_path(real, MB)])
        assert [d.id for d in result.added] == [real_id] and not result.already
        assert DocumentStore(store).get(sid, real_id).text.startswith("Quarterly numbers: revenue")
    finally:
        store.close()


def test_a_real_export_keeps_its_sources_after_the_ids_are_redone(tmp_path: Path) -> None:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        sid = store.create_session("S").id
        pdf = tmp_path / "p.pdf"
        pdf.write_bytes(pdf_bytes(["Ada Lovelace wrote notes", "Two"]))
        (doc,) = DocumentStore(store).add(sid, [read_path(pdf, MB)]).added
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$a"},
                          {"op": "add_evidence", "object": "$a", "document_id": doc.id, "chunk_index": 0,
                           "start": 0, "end": 12, "quote": "Ada Lovelace"}], "test")
        data = export_json(store, sid)
        target = store.create_session("T").id
        _, added = import_json(store, target, data, "import")
        (back,) = DocumentStore(store).list_documents(target)
        assert added == 1 and back.id == imported_id(back_text := DocumentStore(store).get(target, back.id).text)
        assert back_text.startswith("Ada Lovelace")
        exported = json.loads(store.export(target, "json"))
        assert [e["document_id"] for e in exported.get("evidence", [])] == [back.id]
        _, again = import_json(store, target, data, "import", on_conflict="skip")
        assert again == 0  # re-importing the same file dedupes on the derived id
    finally:
        store.close()
