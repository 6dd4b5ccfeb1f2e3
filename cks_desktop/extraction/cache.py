"""The per-chunk answer cache, the runs table, and the pairs a person said are different.

Tables (schema migration 8): ``extraction_cache (session_id, key, answer, created_at)`` and
``extraction_runs``. The cache key is ``prompt.cache_key`` — hash of the chunk text and its
context, the prompt version, the schema and the model — and the answer is the model's validated
JSON, written the moment it arrives (its own small transaction). So:

- re-adding or re-extracting the same document asks nothing (every chunk is a hit) and, because
  resolution then finds every object already there and the store skips known sources, writes
  nothing: idempotent;
- a run killed mid-way (the app closed, the machine slept, ``kill -9``) resumes: the next run of
  the same document finds the finished chunks in the cache and asks only for the rest.

Pairs the person said are different are kept in the same table under keys ``distinct:<a>|<b>``
(identities from ``resolution.Entity.identity``), so they are remembered per session, deleted
with it, and never mistaken for an answer (answer keys are hex digests).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.sqlite_util import now_iso
from cks_desktop.ids import new_id

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

DISTINCT = "distinct:"


class ExtractionCache:
    """Answers and decisions of one session, on the store's connection (thread-safe through its lock)."""

    def __init__(self, store: "GraphStore", session_id: str) -> None:
        self.store = store
        self.session_id = session_id

    def get(self, key: str) -> dict[str, Any] | None:
        with self.store.connection_lock() as conn:
            row = conn.execute("SELECT answer FROM extraction_cache WHERE session_id = ? AND key = ?",
                               (self.session_id, key)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(str(row[0]))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def has(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` are cached (one query per 500 keys)."""
        found: set[str] = set()
        with self.store.connection_lock() as conn:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                marks = ",".join("?" * len(part))
                found.update(str(r[0]) for r in conn.execute(
                    f"SELECT key FROM extraction_cache WHERE session_id = ? AND key IN ({marks})",
                    (self.session_id, *part)))
        return found

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The cached answers among ``keys`` (one query per 500 keys): a run reads them all at once."""
        found: dict[str, dict[str, Any]] = {}
        with self.store.connection_lock() as conn:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                marks = ",".join("?" * len(part))
                for key, answer in conn.execute(
                        f"SELECT key, answer FROM extraction_cache WHERE session_id = ? AND key IN ({marks})",
                        (self.session_id, *part)):
                    try:
                        value = json.loads(str(answer))
                    except ValueError:
                        continue
                    if isinstance(value, dict):
                        found[str(key)] = value
        return found

    def put_with_progress(self, key: str, answer: dict[str, Any], run_id: str, done: int) -> None:
        """The answer and the run's progress in ONE transaction (one commit per part)."""
        now = now_iso()
        with self.store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO extraction_cache (session_id, key, answer, created_at) "
                         "VALUES (?, ?, ?, ?)", (self.session_id, key, json.dumps(answer, ensure_ascii=False), now))
            conn.execute("UPDATE extraction_runs SET chunks_done = ?, updated_at = ? WHERE id = ? AND session_id = ?",
                         (done, now, run_id, self.session_id))

    def put(self, key: str, answer: dict[str, Any]) -> None:
        with self.store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO extraction_cache (session_id, key, answer, created_at) "
                         "VALUES (?, ?, ?, ?)", (self.session_id, key, json.dumps(answer, ensure_ascii=False), now_iso()))

    # -- pairs the person said are different ---------------------------------------------------
    def distinct_pairs(self) -> list[tuple[str, str]]:
        with self.store.connection_lock() as conn:
            rows = conn.execute("SELECT key FROM extraction_cache WHERE session_id = ? AND key LIKE ?",
                                (self.session_id, DISTINCT + "%")).fetchall()
        out = []
        for (key,) in rows:
            a, _, b = str(key)[len(DISTINCT):].partition("|")
            if a and b:
                out.append((a, b))
        return out

    def mark_distinct(self, a: str, b: str) -> None:
        first, second = sorted((a, b))
        with self.store.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO extraction_cache (session_id, key, answer, created_at) "
                         "VALUES (?, ?, '{}', ?)", (self.session_id, f"{DISTINCT}{first}|{second}", now_iso()))


class Runs:
    """The ``extraction_runs`` rows: one per run, its state and progress (for the window and ``--json``)."""

    def __init__(self, store: "GraphStore", session_id: str) -> None:
        self.store = store
        self.session_id = session_id

    def start(self, document_id: str, total: int) -> str:
        run_id = new_id("x_")
        now = now_iso()
        with self.store.transaction() as conn:
            conn.execute("INSERT INTO extraction_runs (id, session_id, document_id, state, chunks_total, chunks_done, "
                         "detail, created_at, updated_at) VALUES (?, ?, ?, 'running', ?, 0, '{}', ?, ?)",
                         (run_id, self.session_id, document_id, total, now, now))
        return run_id

    def update(self, run_id: str, *, state: str | None = None, done: int | None = None,
               detail: dict[str, Any] | None = None) -> None:
        sets, params = ["updated_at = ?"], [now_iso()]
        if state is not None:
            sets.append("state = ?")
            params.append(state)
        if done is not None:
            sets.append("chunks_done = ?")
            params.append(str(done))
        if detail is not None:
            sets.append("detail = ?")
            params.append(json.dumps(detail, ensure_ascii=False))
        with self.store.transaction() as conn:
            conn.execute(f"UPDATE extraction_runs SET {', '.join(sets)} WHERE id = ? AND session_id = ?",
                         (*params, run_id, self.session_id))

