"""The evidence table: where each object and relation came from (``queries.py`` reads it; the
graph store writes it with the facts, ``graph/evidence.py``). A step of ``graph/schema.py``'s ``STEPS``."""

from __future__ import annotations

from cks_desktop.graph.migration import Migration

# where each object and relation came from.
# One row per source of a fact: a document passage (document id = its sha256, chunk, character span
# [start, end) in the document's text, page, the verbatim quote, how the quote was aligned, its review
# state) or a hand edit / chat write (origin, change). A fact found in several places has several rows.
EVIDENCE = Migration('provenance of objects and relations', """
CREATE TABLE evidence (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    target_kind  TEXT NOT NULL CHECK (target_kind IN ('object', 'relation')),
    target_id    TEXT NOT NULL,
    document_id  TEXT,
    chunk_index  INTEGER,
    span_start   INTEGER,
    span_end     INTEGER,
    page         INTEGER,
    quote        TEXT NOT NULL DEFAULT '',
    alignment    TEXT NOT NULL DEFAULT 'none',
    review       TEXT NOT NULL DEFAULT 'auto',
    origin       TEXT NOT NULL,
    change_id    TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX evidence_by_target ON evidence (session_id, target_kind, target_id);
CREATE INDEX evidence_by_document ON evidence (session_id, document_id, span_start);
""")
