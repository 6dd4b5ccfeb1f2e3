"""A real session database with real documents for the retrieval tests."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.documents.model import ReadDocument
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.store import GraphStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    yield s
    s.close()


def add_text(store: GraphStore, session_id: str, name: str, text: str,
             page_starts: tuple[int, ...] = ()) -> str:
    """Store ``text`` as a document named ``name``; its id."""
    sha = hashlib.sha256(text.encode()).hexdigest()
    DocumentStore(store).add(session_id, [ReadDocument(sha256=sha, name=name, size=len(text.encode()),
                                                       media_type="text/plain", source="", reader="text",
                                                       text=text, page_starts=page_starts)])
    return sha


DISTRACTORS = [
    "The harbour of Genoa handles container ships from Asia and Africa every week.",
    "Ecuador exports more bananas than any other country on earth.",
    "The weather in the Alps turns cold in October, and the passes close in winter.",
    "Industrial output in the region passed its peak in 1970, and the old road away from the city was paved.",
    "A choir of forty voices sang in the cathedral on the first Sunday of spring.",
    "The library lends maps, atlases and old newspapers to anyone with a card.",
]
