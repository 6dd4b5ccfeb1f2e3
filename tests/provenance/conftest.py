"""A real store with a session holding two real documents (a text file and a two-page PDF
read by the app's own readers), and a helper to dump a session's evidence rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.documents.model import Document
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore
from tests.documents.files import pdf_bytes

TEXT = "Ada Lovelace met Charles Babbage in London. Babbage designed the Analytical Engine."


@dataclass
class World:
    store: GraphStore
    sid: str
    txt: Document
    pdf: Document


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    store = GraphStore.open(tmp_path / "g.sqlite3")
    sid = store.create_session("Provenance").id
    (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "letters.pdf").write_bytes(pdf_bytes(["Dear Charles, the Engine", "Yours, Ada in London"]))
    docs = DocumentStore(store)
    added = docs.add(sid, [read_path(tmp_path / "notes.txt", 10**7), read_path(tmp_path / "letters.pdf", 10**7)])
    txt, pdf = (docs.get(sid, d.id) for d in added.added)
    try:
        yield World(store, sid, txt, pdf)
    finally:
        store.close()


def rows(store: GraphStore, sid: str) -> list[tuple[Any, ...]]:
    """Every evidence row of the session, without its time stamps, sorted (for comparisons)."""
    with store.connection_lock() as conn:
        return sorted(conn.execute(
            "SELECT id, target_kind, target_id, document_id, chunk_index, span_start, span_end, page, quote, "
            "alignment, review, origin, change_id FROM evidence WHERE session_id = ?", (sid,)).fetchall())


def passage(doc: Document, quote: str) -> dict[str, Any]:
    """The evidence fields of ``quote`` found in ``doc`` (exact alignment)."""
    start = doc.text.index(quote)
    return {"document_id": doc.id, "start": start, "end": start + len(quote), "quote": quote, "alignment": "exact"}
