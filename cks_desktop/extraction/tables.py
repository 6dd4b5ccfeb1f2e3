"""The extraction runs and the per-part answer cache (``cache.py``, ``runner.py``). A step of ``graph/schema.py``'s ``STEPS``."""

from __future__ import annotations

from cks_desktop.graph.migration import Migration

# extraction runs and the per-chunk answer cache.
# The cache key is a hash of (chunk text, prompt version, schema, model): re-adding a document is free,
# and an interrupted run resumes without redoing finished chunks.
EXTRACTION = Migration('extraction runs and answer cache', """
CREATE TABLE extraction_cache (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    answer      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
CREATE TABLE extraction_runs (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    document_id  TEXT NOT NULL,
    state        TEXT NOT NULL,
    chunks_total INTEGER NOT NULL DEFAULT 0,
    chunks_done  INTEGER NOT NULL DEFAULT 0,
    detail       TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX extraction_runs_by_session ON extraction_runs (session_id, document_id);
""")
