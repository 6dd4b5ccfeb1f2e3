"""The database schema and its migrations (``PRAGMA user_version``).

``MIGRATIONS`` is an append-only list: step ``i`` takes a database from
``user_version == i`` to ``i + 1``. To add tables (the agent's transcript, for
example) append one ``Migration`` at the END of the list — never edit or
reorder an existing step, databases in the wild have already run it. Tables
that hold per-session rows should reference ``sessions(id) ON DELETE CASCADE``
so ``GraphStore.delete_session`` removes them too. Code in other packages then
reads and writes its tables through ``GraphStore.connection_lock()`` (reads)
and ``GraphStore.transaction()`` (writes), on the store's one connection.

Design notes:
- ``objects.n`` is an explicit INTEGER PRIMARY KEY so the FTS rowid that points
  at it survives VACUUM (an implicit rowid may be renumbered).
- Relations reference ``objects(session_id, id)``: an edge can never join two
  sessions, and the child indexes on ``(session_id, source_id)`` and
  ``(session_id, target_id)`` serve both the foreign key checks and the
  neighbour queries.
- ``name_key`` is the casefolded name: names resolve case-insensitively for
  every script, not just ASCII (which is all ``COLLATE NOCASE`` does).
- Type filters use ``COLLATE NOCASE`` indexes: "person" finds "Person".
- ``objects_fts`` (rowid = ``objects.n``) is written by the store's writer,
  not by triggers: an FTS5 insert from a trigger measured ~10x slower than a
  direct ``executemany`` (100 µs vs 11 µs a row). Anything that writes
  ``objects`` must go through ``GraphStore.apply``. Property values (not
  keys) are flattened to text (``sqlite_util.search_text``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cks_desktop.graph.errors import DatabaseError
from cks_desktop.graph.sqlite_util import split_sql


@dataclass(frozen=True)
class Migration:
    """One schema step: SQL statements, or a function for data migrations."""

    description: str
    sql: str = ""
    run: Callable[[sqlite3.Connection], None] | None = None


_V1 = """
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    title        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    instructions TEXT NOT NULL DEFAULT ''
);

CREATE TABLE objects (
    n          INTEGER PRIMARY KEY,
    id         TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    type       TEXT NOT NULL,
    name       TEXT NOT NULL,
    name_key   TEXT NOT NULL,
    properties TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (session_id, id)
);
CREATE INDEX objects_by_name ON objects (session_id, name_key);
CREATE INDEX objects_by_type ON objects (session_id, type COLLATE NOCASE, id);

CREATE TABLE relations (
    id         TEXT NOT NULL,
    session_id TEXT NOT NULL,
    type       TEXT NOT NULL,
    source_id  TEXT NOT NULL,
    target_id  TEXT NOT NULL,
    properties TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id),
    FOREIGN KEY (session_id, source_id) REFERENCES objects (session_id, id),
    FOREIGN KEY (session_id, target_id) REFERENCES objects (session_id, id)
);
CREATE INDEX relations_by_source ON relations (session_id, source_id);
CREATE INDEX relations_by_target ON relations (session_id, target_id);
CREATE INDEX relations_by_type ON relations (session_id, type COLLATE NOCASE, id);

CREATE TABLE type_defs (
    session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('object', 'relation')),
    name              TEXT NOT NULL,
    name_key          TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    properties_schema TEXT,
    PRIMARY KEY (session_id, kind, name_key)
);

CREATE TABLE changes (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    at          TEXT NOT NULL,
    origin      TEXT NOT NULL,
    summary     TEXT NOT NULL,
    ops         TEXT NOT NULL,
    inverse_ops TEXT NOT NULL,
    reverts     TEXT
);
CREATE INDEX changes_by_session ON changes (session_id, id);
CREATE INDEX changes_by_reverts ON changes (reverts) WHERE reverts IS NOT NULL;

-- Which objects a change touched (itself, or as an end of a relation it touched).
-- Object ids are unique across sessions, so the key needs no session_id (smaller rows:
-- bulk imports write one row per object and two per relation).
CREATE TABLE change_objects (
    object_id  TEXT NOT NULL,
    change_id  TEXT NOT NULL,
    PRIMARY KEY (object_id, change_id)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE objects_fts USING fts5 (
    name, body, tokenize = 'unicode61 remove_diacritics 2'
);
"""

_V2_TRANSCRIPT = """
CREATE TABLE chat_messages (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    parts       TEXT NOT NULL,
    notice      INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE TABLE chat_tool_calls (
    message_id   INTEGER NOT NULL REFERENCES chat_messages(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    session_id   TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    display_name TEXT NOT NULL,
    source       TEXT NOT NULL,
    state        TEXT NOT NULL,
    duration_ms  REAL,
    change_id    TEXT,
    reverted     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (message_id, position)
);
CREATE INDEX chat_tool_calls_by_message ON chat_tool_calls (session_id, message_id);
CREATE INDEX chat_tool_calls_by_change ON chat_tool_calls (session_id, change_id)
    WHERE change_id IS NOT NULL;
"""

_V3_VIEW_POSITIONS = """
CREATE TABLE view_positions (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    object_id  TEXT NOT NULL,
    x          REAL NOT NULL,
    y          REAL NOT NULL,
    pinned     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, object_id)
) WITHOUT ROWID;
"""

# a session's model parameters (NULL: Settings → Chat & agent's default applies).
_V4_SESSION_PARAMS = """
CREATE TABLE session_params (
    session_id        TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    temperature       REAL,
    max_output_tokens INTEGER
) WITHOUT ROWID;
"""

# documents added to a session (tables owned by cks_desktop/documents/store.py).
# ``id`` is the sha256 of the file's bytes (content-addressed: the same file twice is one row);
# ``page_starts`` is a JSON list of the character offset where each page begins in ``text``
# (empty for formats without pages), so provenance can map a character span to a page.
_V5_DOCUMENTS = """
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
"""

# tokens of each model turn (table owned by cks_desktop/agent/usage.py). ``after_seq`` is
# the last chat message saved before the turn ran, ``iteration`` its number within the answer (1 starts one);
# ``reported_cost``: the USD the server said the turn cost (OpenRouter), NULL when it said nothing.
_V6_USAGE = """
CREATE TABLE chat_usage (
    n                  INTEGER PRIMARY KEY,
    session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    after_seq          INTEGER NOT NULL,
    iteration          INTEGER NOT NULL,
    provider           TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cached_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    reported_cost      REAL,
    created_at         TEXT NOT NULL
);
CREATE INDEX chat_usage_by_session ON chat_usage (session_id, n);
"""

# where each object and relation came from (table owned by cks_desktop/provenance/).
# One row per source of a fact: a document passage (document id = its sha256, chunk, character span
# [start, end) in the document's text, page, the verbatim quote, how the quote was aligned, its review
# state) or a hand edit / chat write (origin, change). A fact found in several places has several rows.
_V7_EVIDENCE = """
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
"""

# extraction runs and the per-chunk answer cache (tables owned by cks_desktop/extraction/).
# The cache key is a hash of (chunk text, prompt version, schema, model): re-adding a document is free,
# and an interrupted run resumes without redoing finished chunks.
_V8_EXTRACTION = """
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
"""

# images in a chat (table owned by the chat's image store): content-addressed per session,
# never fetched from a URL a model or server chose.
_V9_IMAGES = """
CREATE TABLE chat_images (
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    media_type  TEXT NOT NULL,
    data        BLOB NOT NULL,
    width       INTEGER,
    height      INTEGER,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
"""

# passages of each document for retrieval (tables owned by cks_desktop/retrieval/index.py).
# A passage is ``documents.text[span_start:span_end]`` of its document; removing the document removes its
# passages (the foreign key). ``vector`` is the passage's embedding (float32, ``dims`` values) by
# ``model``; ``text_hash`` lets a re-cut keep the vectors of passages whose text did not change.
# ``passages_fts`` (rowid = ``passages.n``) is written by the index, not by triggers; rows whose
# passage is gone are skipped by every search and swept at the next indexing.
_V10_PASSAGES = """
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
"""

# Append-only. user_version N means the first N steps have run.
MIGRATIONS: list[Migration] = [
    Migration("sessions, objects, relations, types, changes, full-text index", _V1),
    Migration("chat transcript", _V2_TRANSCRIPT),
    Migration("graph view positions", _V3_VIEW_POSITIONS),
    Migration("session model parameters", _V4_SESSION_PARAMS),
    Migration("documents in a session", _V5_DOCUMENTS),
    Migration("token usage per model turn", _V6_USAGE),
    Migration("provenance of objects and relations", _V7_EVIDENCE),
    Migration("extraction runs and answer cache", _V8_EXTRACTION),
    Migration("images in a chat", _V9_IMAGES),
    Migration("passages of documents for retrieval", _V10_PASSAGES),
]


def schema_version() -> int:
    """The schema version this build knows."""
    return len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: Path | str) -> None:
    """Bring the database up to ``schema_version()``; each step in its own transaction.

    The version is re-read inside the write transaction, so two processes
    opening a fresh file at once do not both run step 0.
    """
    known = schema_version()
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    _refuse_newer(current, known, path)
    while current < known:
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            _refuse_newer(current, known, path)
            if current < known:
                step = MIGRATIONS[current]
                for statement in split_sql(step.sql):
                    conn.execute(statement)
                if step.run is not None:
                    step.run(conn)
                current += 1
                conn.execute(f"PRAGMA user_version = {current}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _refuse_newer(current: int, known: int, path: Path | str) -> None:
    if current > known:
        raise DatabaseError(
            f"The database {path} was written by a newer version of CKS Desktop "
            f"(schema {current}, this version knows {known}); update CKS Desktop to open it.")
