"""The documents table (``store.py``). A step of ``graph/schema.py``'s ``STEPS``."""

from __future__ import annotations

from cks_desktop.graph.migration import Migration

# documents added to a session (read and written by store.py).
# ``id`` is the sha256 of the file's bytes (content-addressed: the same file twice is one row);
# ``page_starts`` is a JSON list of the character offset where each page begins in ``text``
# (empty for formats without pages), so provenance can map a character span to a page.
DOCUMENTS = Migration('documents in a session', """
CREATE TABLE documents (
    n           INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    media_type  TEXT NOT NULL,
    source      TEXT NOT NULL DEFAULT '',
    added_at    TEXT NOT NULL,
    reader      TEXT NOT NULL DEFAULT '',
    text        TEXT NOT NULL,
    page_starts TEXT NOT NULL DEFAULT '[]',
    UNIQUE (session_id, id)
);
""")
