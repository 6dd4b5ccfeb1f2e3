"""The passages index of a session: rows in ``passages`` and ``passages_fts``, kept current.

``sync`` brings the index up to the session's documents, incrementally:
- documents are content-addressed (their id is the sha256 of the file), so a document already
  cut with today's ``CUT`` and ``MODEL`` is current and costs one query;
- a document cut otherwise (new, or cut by an older version) is cut again; a passage whose text
  hash the session already has keeps its vector, only new texts are embedded;
- a removed document's passages go with it (the foreign key cascades); full-text rows left by
  them are swept here.

Embedding runs outside the store's lock, so readers are never held up by it. ``sync`` is blocking
work: callers run it on a worker thread (the use case does), never on the event loop.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cks_desktop.retrieval import embedder, passages, repair

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

Progress = Callable[[int, int, str], None]  # (documents done, documents to do, file name)
EMBED_BATCH = 256

_generation_lock = threading.Lock()
_generation = 0


def generation() -> int:
    """Bumped by every write of this process to any passages index (the dense cache's key)."""
    return _generation


def bump() -> None:
    global _generation
    with _generation_lock:
        _generation += 1


@dataclass
class IndexReport:
    """What one ``sync`` did."""

    documents: int = 0  # documents (re)cut
    passages: int = 0  # passages written
    embedded: int = 0  # passages whose text had to be embedded
    reused: int = 0  # passages whose vector was kept by text hash
    swept: int = 0  # full-text rows of removed passages cleaned up


def _stale_documents(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, str, str]]:
    """(id, name, page_starts JSON) of documents not cut with today's cut and model.

    One indexed look-up per document (a document's passages are written together, so its first
    row tells its cut): never a scan of the passages, which would cost every query at 100,000.
    """
    out: list[tuple[str, str, str]] = []
    for doc_id, name, starts in conn.execute("SELECT id, name, page_starts FROM documents WHERE session_id = ? "
                                             "ORDER BY n", (session_id,)).fetchall():
        row = conn.execute("SELECT cut, model FROM passages WHERE session_id = ? AND document_id = ? LIMIT 1",
                           (session_id, doc_id)).fetchone()
        if row is None or tuple(row) != (passages.CUT, embedder.MODEL):
            out.append((str(doc_id), str(name), str(starts)))
    return out


class PassageIndex:
    """The passages index on one store (its connection, lock and transactions)."""

    def __init__(self, store: "GraphStore") -> None:
        self.store = store

    def sync(self, session_id: str, progress: Progress | None = None, *, sweep: bool = True) -> IndexReport:
        """Bring the session's index up to date; ``sweep=False`` (a query) skips the clean-up of
        full-text rows of removed passages unless this call re-cut something (searches skip such
        rows anyway; counting them costs a scan)."""
        report = IndexReport()
        with repair.reading(self.store) as conn:
            stale = _stale_documents(conn, session_id)
        for done, (doc_id, name, starts_json) in enumerate(stale):
            if progress is not None:
                progress(done, len(stale), name)
            self._index_document(session_id, doc_id, tuple(int(s) for s in json.loads(starts_json)), report)
        if sweep or report.documents:
            report.swept = self._sweep()
        if progress is not None and stale:
            progress(len(stale), len(stale), "")
        return report

    def _index_document(self, session_id: str, doc_id: str, page_starts: tuple[int, ...],
                        report: IndexReport) -> None:
        with repair.reading(self.store) as conn:
            row = conn.execute("SELECT text FROM documents WHERE session_id = ? AND id = ?",
                               (session_id, doc_id)).fetchone()
        if row is None:  # removed meanwhile
            return
        cut = passages.cut(str(row[0]), page_starts)
        hashes = [p.text_hash for p in cut]
        known = self._known_vectors(session_id, sorted(set(hashes)))
        missing = [p for p in cut if p.text_hash not in known]
        todo = list({p.text_hash: p for p in missing}.values())  # one embedding per distinct text
        for i in range(0, len(todo), EMBED_BATCH):
            batch = todo[i:i + EMBED_BATCH]
            vectors = embedder.embed([p.indexed for p in batch])
            for p, v in zip(batch, vectors):
                known[p.text_hash] = v.astype(np.float32).tobytes()
        report.embedded += len(todo)
        report.reused += len(cut) - len(missing)
        with repair.writing(self.store) as conn:
            if conn.execute("SELECT 1 FROM documents WHERE session_id = ? AND id = ?",
                            (session_id, doc_id)).fetchone() is None:
                return
            old = [r[0] for r in conn.execute("SELECT n FROM passages WHERE session_id = ? AND document_id = ?",
                                              (session_id, doc_id))]
            conn.executemany("DELETE FROM passages_fts WHERE rowid = ?", [(n,) for n in old])
            conn.execute("DELETE FROM passages WHERE session_id = ? AND document_id = ?", (session_id, doc_id))
            for p in cut:
                cur = conn.execute(
                    "INSERT INTO passages (session_id, document_id, idx, span_start, span_end, page, text_hash, cut, model, "
                    "dims, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (session_id, doc_id, p.index, p.start, p.end, p.page, p.text_hash, passages.CUT,
                     embedder.MODEL, embedder.DIMS, known[p.text_hash]))
                conn.execute("INSERT INTO passages_fts (rowid, body) VALUES (?, ?)", (cur.lastrowid, p.indexed))
        bump()
        report.documents += 1
        report.passages += len(cut)

    def _known_vectors(self, session_id: str, hashes: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with repair.reading(self.store) as conn:
            for i in range(0, len(hashes), 500):
                part = hashes[i:i + 500]
                marks = ",".join("?" * len(part))
                for h, v in conn.execute(
                        f"SELECT text_hash, vector FROM passages WHERE session_id = ? AND model = ? AND dims = ? "
                        f"AND text_hash IN ({marks})", (session_id, embedder.MODEL, embedder.DIMS, *part)):
                    out[str(h)] = bytes(v)
        return out

    def _sweep(self) -> int:
        """Remove full-text rows whose passage is gone (a removed document or session)."""
        with repair.reading(self.store) as conn:
            fts = conn.execute("SELECT count(*) FROM passages_fts").fetchone()[0]
            rows = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
        if fts == rows:
            return 0
        with repair.writing(self.store) as conn:
            cur = conn.execute("DELETE FROM passages_fts WHERE rowid NOT IN (SELECT n FROM passages)")
            swept = int(cur.rowcount)
        bump()
        return swept
