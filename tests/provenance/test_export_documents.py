"""Exports that carry sources also say which documents they cite:
`storage export` (salvage) writes the documents' text with the graph, so a salvaged file
imports elsewhere with every source; the MCP graph resource names the cited documents by id,
name and size with a URI each (a large document is never inlined), and that URI reads its text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPDeprecationWarning  # noqa: F401  (the filter below names it)

from cks_desktop.documents.exchange import import_json
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.salvage import export_readable
from cks_desktop.graph.store import GraphStore
from cks_desktop.serve.resources import DOCUMENT_TEMPLATE
from tests.mcp.serve_helpers import make_home, stdio

from .conftest import TEXT, World, passage, rows


def _cite(w: World) -> None:
    w.store.apply(w.sid, [
        {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
        {"op": "add_evidence", "object": "$ada", **passage(w.txt, "Ada Lovelace")},
        {"op": "add_evidence", "object": "$ada", **passage(w.pdf, "Ada in London")},
    ], "extraction")


def test_salvage_writes_the_documents_so_the_sources_import_elsewhere(world: World, tmp_path: Path) -> None:
    w = world
    _cite(w)
    result = export_readable(w.store, tmp_path / "out")
    assert not result.failed
    (written,) = [r for r in result.written if r["session_id"] == w.sid]
    data = Path(written["file"]).read_text(encoding="utf-8")
    docs = json.loads(data)["documents"]
    assert sorted(d["name"] for d in docs) == ["letters.pdf", "notes.txt"] and TEXT in {d["text"] for d in docs}
    other = GraphStore.open(tmp_path / "other.sqlite3")
    try:
        sid = other.create_session("Salvaged").id
        _result, new_docs = import_json(other, sid, data, "import")
        assert new_docs == 2
        assert len(rows(other, sid)) == len(rows(w.store, w.sid)) == 2  # every source came along
    finally:
        other.close()


@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_graph_resource_names_cited_documents_and_each_reads_on_its_own(tmp_path: Path) -> None:
    home, (sid,) = make_home(tmp_path, "Shared", shared=(0,))
    big = "Ada Lovelace wrote the notes. " + "Filler sentence about engines. " * 20000  # ~600 KB
    (tmp_path / "big.txt").write_text(big, encoding="utf-8")
    (tmp_path / "unused.txt").write_text("Nothing cites this one.", encoding="utf-8")
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        docs = DocumentStore(store)
        added = docs.add(sid, [read_path(tmp_path / "big.txt", 10**7), read_path(tmp_path / "unused.txt", 10**7)])
        doc = docs.get(sid, added.added[0].id)
        store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada", "label": "$a"},
                          {"op": "add_evidence", "object": "$a", **passage(doc, "Ada Lovelace wrote the notes")}],
                    "extraction")
    finally:
        store.close()
    async with stdio(home, tmp_path / "stdio.err", mode="legacy") as c:
        text = (await c.read_resource(f"cks://sessions/{sid}/graph.json")).contents[0].text
        graph = json.loads(text)
        assert graph["version"] == 2 and len(graph["evidence"]) == 1
        assert "Filler sentence" not in text and "documents" not in graph  # not inlined
        (cited,) = graph["cited_documents"]  # only what the sources cite
        uri = f"cks://sessions/{sid}/documents/{doc.id}"
        assert cited == {"id": doc.id, "name": "big.txt", "media_type": "text/plain", "size": doc.size,
                         "characters": len(big), "pages": 0, "sources": 1, "uri": uri}
        # the resource still imports as a graph elsewhere (the sources left out: no documents there)
        other = GraphStore.open(tmp_path / "other.sqlite3")
        try:
            imported = other.import_data(other.create_session("Copy").id, "json", text, "import")
            assert imported.counts["objects_added"] >= 2
        finally:
            other.close()
        body = (await c.read_resource(uri)).contents[0]
        assert body.text == big and body.mime_type == "text/plain"
        templates = (await c.list_resource_templates()).resource_templates
        assert any(t.uri_template == "cks://sessions/{session}/documents/{document}" for t in templates)
        import mcp_types as types

        done = await c.complete(types.ResourceTemplateReference(type="ref/resource", uri=DOCUMENT_TEMPLATE),
                                {"name": "document", "value": doc.id[:6]}, context_arguments={"session": sid})
        assert done.completion.values == [doc.id]
        with pytest.raises(Exception, match="not found"):
            await c.read_resource(f"cks://sessions/{sid}/documents/{'0' * 64}")
