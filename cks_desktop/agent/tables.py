"""The chat's tables: the transcript and its tool calls (``transcript.py``), a session's model
parameters (``session_settings.py``), token usage per model turn (``usage.py``) and a chat's images
(``images.py``). A step of ``graph/schema.py``'s ``STEPS``."""

from __future__ import annotations

from cks_desktop.graph.migration import Migration

TRANSCRIPT = Migration('chat transcript', """
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
""")

# a session's model parameters (NULL: Settings → Chat & agent's default applies).
SESSION_PARAMS = Migration('session model parameters', """
CREATE TABLE session_params (
    session_id        TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    temperature       REAL,
    max_output_tokens INTEGER
) WITHOUT ROWID;
""")

# tokens of each model turn (read and written by usage.py). ``after_seq`` is
# the last chat message saved before the turn ran, ``iteration`` its number within the answer (1 starts one);
# ``reported_cost``: the USD the server said the turn cost (OpenRouter), NULL when it said nothing.
USAGE = Migration('token usage per model turn', """
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
""")

# images in a chat (read and written by images.py): content-addressed per session,
# never fetched from a URL a model or server chose.
IMAGES = Migration('images in a chat', """
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
""")
