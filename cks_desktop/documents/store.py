"""The ``documents`` table of a session (schema migration 5): add, list, show, remove.

Content-addressed: a document's id is the sha256 of the file's bytes, so the same file added
twice (under any name, from any folder) is one document; the second add reports it as already
there and changes nothing. ``add`` writes every readable document of one call in ONE
transaction: all of them or none (a database error rolls the lot back). Files that could not be
read never reach this module (``readers`` refuses them first), so nothing is ever half-added.

A reference to a document (``show``/``remove``) is its full id, a unique prefix of it (at least
6 hex digits, like git), or its exact file name when only one document has it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cks_desktop.callbacks import Callbacks
from cks_desktop.documents.errors import DocumentError
from cks_desktop.documents.model import Document, ReadDocument

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

_COLS = "id, session_id, name, size, media_type, source, added_at, reader, length(text), page_starts"
MIN_PREFIX = 6

Listener = Callable[[str], None]
_listeners: Callbacks[[str]] = Callbacks("documents")


def subscribe(listener: Listener) -> Callable[[], None]:
    """Call ``listener(session_id)`` after documents of a session were added or removed (any store)."""
    return _listeners.subscribe(listener)


def _notify(session_id: str) -> None:
    _listeners.emit(session_id)


@dataclass
class AddResult:
    """What one ``add`` did: documents newly stored, and those the session already had."""

    added: list[Document] = field(default_factory=list)
    already: list[Document] = field(default_factory=list)


def _row(row: tuple[object, ...], text: str = "") -> Document:
    starts = json.loads(str(row[9]))
    return Document(id=str(row[0]), session_id=str(row[1]), name=str(row[2]), size=int(str(row[3])),
                    media_type=str(row[4]), source=str(row[5]), added_at=str(row[6]), reader=str(row[7]),
                    characters=int(str(row[8])), page_starts=tuple(int(s) for s in starts), text=text)


class DocumentStore:
    """Documents of the sessions in one ``GraphStore`` (its connection, lock and transactions)."""

    def __init__(self, store: "GraphStore") -> None:
        self.store = store

    def add(self, session_id: str, documents: Iterable[ReadDocument], added_at: str | None = None) -> AddResult:
        """Store the documents not yet in the session, in one transaction."""
        self.store.get_session(session_id)  # NotFound: one sentence, before anything is written
        with self.store.transaction() as conn:
            result = self.add_in(conn, session_id, documents, added_at)
        if result.added:
            _notify(session_id)
        return result

    def add_in(self, conn: sqlite3.Connection, session_id: str, documents: Iterable[ReadDocument],
               added_at: str | None = None) -> AddResult:
        """``add`` inside a write transaction the caller owns (an import writes its documents and
        its graph in one); the caller notifies (``notify``) after it commits."""
        from cks_desktop.graph.sqlite_util import now_iso

        stamp = added_at or now_iso()
        result = AddResult()
        seen: set[str] = set()
        for doc in documents:
            existing = self._find(conn, session_id, doc.sha256)
            if existing is not None or doc.sha256 in seen:
                result.already.append(existing or next(d for d in result.added if d.id == doc.sha256))
                continue
            seen.add(doc.sha256)
            conn.execute("INSERT INTO documents (session_id, id, name, size, media_type, source, added_at, "
                         "reader, text, page_starts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (session_id, doc.sha256, doc.name, doc.size, doc.media_type, doc.source, stamp,
                          doc.reader, doc.text, json.dumps(list(doc.page_starts))))
            found = self._find(conn, session_id, doc.sha256)
            assert found is not None
            result.added.append(found)
        if result.added:
            self.store.note_own_documents(conn, session_id)  # the change feed skips our own add
        return result

    @staticmethod
    def notify(session_id: str) -> None:
        """Tell the listeners that the session's documents changed (after a caller's commit)."""
        _notify(session_id)

    @staticmethod
    def _find(conn: sqlite3.Connection, session_id: str, doc_id: str) -> Document | None:
        row = conn.execute(f"SELECT {_COLS} FROM documents WHERE session_id = ? AND id = ?",
                           (session_id, doc_id)).fetchone()
        return _row(row) if row else None

    def list_documents(self, session_id: str) -> list[Document]:
        """The session's documents, oldest first (without their text)."""
        self.store.get_session(session_id)
        with self.store.connection_lock() as conn:
            return [_row(r) for r in conn.execute(
                f"SELECT {_COLS} FROM documents WHERE session_id = ? ORDER BY n", (session_id,))]

    def resolve(self, session_id: str, ref: str) -> Document:
        """The one document ``ref`` names (id, unique id prefix, or unique file name)."""
        self.store.get_session(session_id)
        ref = ref.strip()
        if not ref:
            raise DocumentError("Name a document by its id (or the start of it) or its file name.")
        with self.store.connection_lock() as conn:
            rows = conn.execute(f"SELECT {_COLS} FROM documents WHERE session_id = ? AND id = ?",
                                (session_id, ref.lower())).fetchall()
            if not rows and len(ref) >= MIN_PREFIX and all(c in "0123456789abcdefABCDEF" for c in ref):
                rows = conn.execute(f"SELECT {_COLS} FROM documents WHERE session_id = ? AND substr(id, 1, ?) = ?",
                                    (session_id, len(ref), ref.lower())).fetchall()
            if not rows:
                rows = conn.execute(f"SELECT {_COLS} FROM documents WHERE session_id = ? AND name = ?",
                                    (session_id, ref)).fetchall()
        if not rows:
            raise DocumentError(f"The session has no document {ref!r} (see: cks-desktop documents list).")
        if len(rows) > 1:
            raise DocumentError(f"{ref!r} names {len(rows)} documents; use more of the id to choose one.")
        return _row(rows[0])

    def get(self, session_id: str, ref: str) -> Document:
        """The document ``ref`` names, with its text."""
        doc = self.resolve(session_id, ref)
        with self.store.connection_lock() as conn:
            row = conn.execute(f"SELECT {_COLS}, text FROM documents WHERE session_id = ? AND id = ?",
                               (session_id, doc.id)).fetchone()
        if row is None:
            raise DocumentError(f"The document {ref!r} was removed meanwhile.")
        return _row(row, str(row[10]))

    def all_with_text(self, session_id: str) -> list[Document]:
        """Every document of the session with its text (for export)."""
        self.store.get_session(session_id)
        with self.store.connection_lock() as conn:
            return [_row(r, str(r[10])) for r in conn.execute(
                f"SELECT {_COLS}, text FROM documents WHERE session_id = ? ORDER BY n", (session_id,))]

    def remove(self, session_id: str, ref: str) -> Document:
        doc = self.resolve(session_id, ref)
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM documents WHERE session_id = ? AND id = ?", (session_id, doc.id))
            self.store.note_own_documents(conn, session_id)
        _notify(session_id)
        return doc
