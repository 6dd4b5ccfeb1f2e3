"""The graph import/export use case: a JSON export carries the session's documents and an import
of one brings them back; other formats carry the graph alone; preview writes nothing; an import
is one change with the conflict choice, and a refused one writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.runtime.documents import DocumentsUseCase
from cks_desktop.runtime.graph_io import EXPORT_FORMATS, GraphIOUseCase, ImportRefused


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "g.db")
    yield s
    s.close()


def _session_with_a_document(store: GraphStore, tmp_path: Path) -> str:
    sid = store.create_session("Source").id
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada"}], "user")
    (tmp_path / "notes.txt").write_text("Ada met Bob.")
    DocumentsUseCase(store, lambda: 10**7).add_files(sid, [tmp_path / "notes.txt"])
    return sid


def test_json_carries_the_documents_and_other_formats_do_not(store: GraphStore, tmp_path: Path) -> None:
    sid = _session_with_a_document(store, tmp_path)
    graph_io = GraphIOUseCase(store)
    assert "documents" in json.loads(graph_io.export_text(sid, "json"))
    for fmt in EXPORT_FORMATS:
        if fmt != "json":
            assert "Ada met Bob." not in graph_io.export_text(sid, fmt), fmt
    path = tmp_path / "out.json"
    written = graph_io.export_file(sid, "json", path)
    assert path.read_text(encoding="utf-8") == written

    target = store.create_session("Copy").id
    preview = graph_io.preview(target, "json", written)
    assert not store.all_objects(target)  # a preview writes nothing
    assert preview is not None
    imported = graph_io.import_text(target, "json", written, "user")
    assert imported.documents_added == 1 and imported.result.change is not None
    assert [o.name for o in store.all_objects(target)] == ["Ada"]
    assert [d.name for d in DocumentsUseCase(store, lambda: 10**7).list(target)] == ["notes.txt"]

    plain = store.create_session("GraphML").id
    again = graph_io.import_text(plain, "graphml", graph_io.export_text(sid, "graphml"), "user")
    assert again.documents_added == 0 and DocumentsUseCase(store, lambda: 1).list(plain) == []


def test_a_conflict_is_refused_or_resolved_by_the_choice(store: GraphStore, tmp_path: Path) -> None:
    sid = _session_with_a_document(store, tmp_path)
    graph_io = GraphIOUseCase(store)
    data = graph_io.export_text(sid, "json")
    target = store.create_session("Target").id
    store.apply(target, [{"op": "add_object", "type": "Person", "name": "Ada", "properties": {"x": 1}}], "user")
    before = len(store.all_objects(target))
    assert graph_io.preview(target, "json", data).conflicts
    with pytest.raises(ImportRefused):
        graph_io.import_text(target, "json", data, "user", on_conflict="error")
    assert len(store.all_objects(target)) == before
    assert DocumentsUseCase(store, lambda: 1).list(target) == []  # the refused import's documents went again
    graph_io.import_text(target, "json", data, "user", on_conflict="skip")
    assert len(store.all_objects(target)) == before
