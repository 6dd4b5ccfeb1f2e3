"""The passages table and its full-text rows and vectors (``index.py``). A step of ``graph/schema.py``'s ``STEPS``."""

from __future__ import annotations

from cks_desktop.graph.migration import Migration

# passages of each document for retrieval.
# A passage is ``documents.text[span_start:span_end]`` of its document; removing the document removes its
# passages (the foreign key). ``vector`` is the passage's embedding (float32, ``dims`` values) by
# ``model``; ``text_hash`` lets a re-cut keep the vectors of passages whose text did not change.
# ``passages_fts`` (rowid = ``passages.n``) is written by the index, not by triggers; rows whose
# passage is gone are skipped by every search and swept at the next indexing.
PASSAGES = Migration('passages of documents for retrieval', """
CREATE TABLE passages (
    n            INTEGER PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    document_id  TEXT NOT NULL,
    idx          INTEGER NOT NULL,
    span_start   INTEGER NOT NULL,
    span_end     INTEGER NOT NULL,
    page         INTEGER,
    text_hash    TEXT NOT NULL,
    cut          TEXT NOT NULL,
    model        TEXT NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB NOT NULL,
    FOREIGN KEY (session_id, document_id) REFERENCES documents(session_id, id) ON DELETE CASCADE
);
CREATE INDEX passages_by_document ON passages (session_id, document_id, span_start);
CREATE INDEX passages_by_hash ON passages (session_id, text_hash);
CREATE VIRTUAL TABLE passages_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
""")
