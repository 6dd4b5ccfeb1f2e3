"""The passages index: exact spans, incremental embedding, removal."""

from __future__ import annotations

from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.retrieval import passages
from cks_desktop.retrieval.index import PassageIndex
from tests.retrieval.conftest import add_text

PARAGRAPHS = [f"Paragraph {i} tells of the river town number {i}, its mill, its bridge and its {i} bakers. " * 3
              for i in range(12)]


def _rows(store: GraphStore, sid: str) -> list[tuple[str, int, int, int | None]]:
    with store.connection_lock() as conn:
        return [(str(d), int(s), int(e), p) for d, s, e, p in conn.execute(
            "SELECT document_id, span_start, span_end, page FROM passages WHERE session_id = ? ORDER BY n", (sid,))]


def test_passage_spans_are_slices_of_the_document_text_with_their_pages(store: GraphStore) -> None:
    sid = store.create_session("s").id
    text = "# Título\n\n" + "\n\n".join(PARAGRAPHS) + "\n\nÜber 🐍 emoji and café — done."
    starts = (0, len(text) // 3, 2 * len(text) // 3)
    doc_id = add_text(store, sid, "a.txt", text, starts)
    PassageIndex(store).sync(sid)
    rows = _rows(store, sid)
    assert len(rows) > 3
    with store.connection_lock() as conn:
        fts = dict(conn.execute("SELECT rowid, body FROM passages_fts"))
        ns = [n for (n,) in conn.execute("SELECT n FROM passages ORDER BY n")]
    stored = DocumentStore(store).get(sid, doc_id)
    for n, (doc, start, end, page) in zip(ns, rows):
        assert doc == doc_id and fts[n].endswith(text[start:end]) and stored.text[start:end] == text[start:end]
        assert page == stored.page_of(start)
    assert {p for *_, p in rows} == {1, 2, 3}
    assert rows[-1][2] == len(text.rstrip())


def test_reindexing_embeds_only_passages_whose_text_changed(store: GraphStore) -> None:
    sid = store.create_session("s").id
    add_text(store, sid, "a.txt", "\n\n".join(PARAGRAPHS[:8]))
    index = PassageIndex(store)
    first = index.sync(sid)
    assert first.documents == 1 and first.embedded == first.passages > 0 and first.reused == 0
    again = index.sync(sid)
    assert (again.documents, again.embedded) == (0, 0)  # nothing changed: one query, no embedding
    # a second document sharing most of the first one's text: only its new passages are embedded
    add_text(store, sid, "b.txt", "\n\n".join(PARAGRAPHS[:8]) + "\n\n" + PARAGRAPHS[11])
    second = index.sync(sid)
    assert second.documents == 1 and second.reused >= first.passages - 1
    assert 1 <= second.embedded <= 2
    # an index cut by an older version is cut again, and its unchanged texts keep their vectors
    with store.transaction() as conn:
        conn.execute("UPDATE passages SET cut = 'older'")
    recut = index.sync(sid)
    assert recut.documents == 2 and recut.embedded == 0 and recut.reused == recut.passages


def test_a_removed_documents_passages_are_gone(store: GraphStore) -> None:
    sid = store.create_session("s").id
    keep = add_text(store, sid, "keep.txt", "The lighthouse keeper polished the great lamp every evening.")
    gone = add_text(store, sid, "gone.txt", "\n\n".join(PARAGRAPHS[:4]))
    index = PassageIndex(store)
    index.sync(sid)
    DocumentStore(store).remove(sid, gone)
    assert {d for d, *_ in _rows(store, sid)} == {keep}  # at once, by the foreign key
    assert index.sync(sid).swept == len(passages.cut("\n\n".join(PARAGRAPHS[:4])))
    with store.connection_lock() as conn:
        assert conn.execute("SELECT count(*) FROM passages_fts").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH 'bakers'").fetchone()[0] == 0
