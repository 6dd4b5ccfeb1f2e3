"""Objects, relations and chat messages of a session as searchable items, kept current.

An item is one object (its name, type and property values: aliases, description…), one
relation (its source's name, its type in words, its target's name, its property values) or one
chat message (its text, or a tool result's content). Items are derived data: their tables
(``retrieval_items``, ``retrieval_items_fts``) are made by this module on first use and can be
dropped and rebuilt at any time from the graph and the transcript.

``sync`` compares what the session holds now with what is indexed, by text hash: an item whose
text did not change costs nothing, a changed one is embedded again (a vector is reused when
another item of the session has the same text), a gone one (deleted, or added by a change that
was reverted) is removed. So after any write or revert the next search sees the graph as it is.

Every read and write names the session: a search never sees another session's items.
Blocking work: callers run it on a worker thread, never on the event loop.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from cks_desktop.graph.sqlite_util import search_text
from cks_desktop.retrieval import embedder, passages, repair

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import GraphStore

Kind = Literal["object", "relation", "message"]
EMBEDDED_CHARS = 4000  # what of a long message (a tool result) is embedded; all of it is searched by words
SNIPPET_CHARS = 600  # what of a message a search returns

VERSION = 1  # of the items tables' shape; another version's tables are dropped and made again
_TABLES = """
CREATE TABLE IF NOT EXISTS retrieval_meta (name TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS retrieval_items (
    n           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('object', 'relation', 'message')),
    ref         TEXT NOT NULL,
    text_hash   TEXT NOT NULL,
    model       TEXT NOT NULL,
    dims        INTEGER NOT NULL,
    vector      BLOB NOT NULL,
    UNIQUE (session_id, kind, ref)
);
CREATE TABLE IF NOT EXISTS retrieval_synced (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    signature   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS retrieval_items_by_hash ON retrieval_items (session_id, text_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS retrieval_items_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
"""


@dataclass
class ItemReport:
    """What one ``sync`` did."""

    items: int = 0  # items the session has now
    embedded: int = 0  # texts that had to be embedded
    reused: int = 0  # new or changed items whose vector was found by text hash
    removed: int = 0  # items gone (deleted, reverted, or changed and re-written)


@dataclass(frozen=True)
class MessageHit:
    """One chat message a search found: ``text`` is its start (at most ``SNIPPET_CHARS``)."""

    id: int
    seq: int
    role: str
    text: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "seq": self.seq, "role": self.role, "text": self.text, "score": self.score}


def ensure_tables(store: "GraphStore") -> None:
    """Make the items tables if they are missing; tables of another version raise ``IndexDamaged``."""
    with repair.reading(store) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'retrieval_meta'").fetchone() is not None:
            row = conn.execute("SELECT version FROM retrieval_meta WHERE name = 'items'").fetchone()
            if row is not None and int(row[0]) == VERSION:
                return
    with repair.writing(store) as conn:
        had = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'retrieval_items'").fetchone() is not None
        for statement in _TABLES.strip().split(";\n"):
            if statement.strip():
                conn.execute(statement)
        row = conn.execute("SELECT version FROM retrieval_meta WHERE name = 'items'").fetchone()
        if row is None and not had:
            conn.execute("INSERT INTO retrieval_meta (name, version) VALUES ('items', ?)", (VERSION,))
        elif row is None or int(row[0]) != VERSION:
            found = "none" if row is None else str(row[0])
            raise repair.IndexDamaged(f"its tables of objects and messages are of version {found}, "
                                      f"this one reads version {VERSION}")


def searchable(store: "GraphStore") -> bool:
    """Whether the items tables of this version are there to be read (as they were last synced)."""
    with repair.reading(store) as conn:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'retrieval_meta'").fetchone() is None:
            return False
        row = conn.execute("SELECT version FROM retrieval_meta WHERE name = 'items'").fetchone()
    return row is not None and int(row[0]) == VERSION


def drop_tables(conn: sqlite3.Connection) -> None:
    """Drop the items tables (``repair.rebuild``); the next ``ensure_tables`` makes them again."""
    for table in ("retrieval_items_fts", "retrieval_items", "retrieval_synced", "retrieval_meta"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")


def forget(store: "GraphStore") -> None:
    """Forget the store's cached item vectors."""
    with _cache_lock:
        for key in [k for k in _cache if k[0] == id(store)]:
            del _cache[key]


def object_text(obj: "Object") -> str:
    """What is searched for an object: its name, its type, then its property values."""
    return f"{obj.name} ({obj.type})\n{search_text(obj.properties)}".strip()


def relation_text(rel: "Relation", names: dict[str, str]) -> str:
    """What is searched for a relation: "source type target", then its property values."""
    words = rel.type.replace("_", " ")
    head = f"{names.get(rel.source_id, rel.source_id)} {words} {names.get(rel.target_id, rel.target_id)}"
    return f"{head}\n{search_text(rel.properties)}".strip()


def message_text(parts_json: str) -> str:
    """The words of a stored message: its text parts and its tool results' contents (untrusted
    text, searched as words only; never its tool calls' arguments or reasoning)."""
    try:
        parts = json.loads(parts_json)
    except ValueError:
        return ""
    out: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("kind") == "text" and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part.get("kind") == "tool_result" and isinstance(part.get("content"), str):
            out.append(part["content"])
    return "\n".join(t for t in out if t.strip())


def _messages(conn: sqlite3.Connection, session_id: str) -> dict[str, tuple[int, str, str]]:
    """Message id → (seq, role, text) of the session's conversation (notices and error rows left out)."""
    out: dict[str, tuple[int, str, str]] = {}
    for mid, seq, role, parts in conn.execute(
            "SELECT id, seq, role, parts FROM chat_messages WHERE session_id = ? AND notice = 0 "
            "AND role IN ('user', 'assistant', 'tool') ORDER BY seq", (session_id,)):
        text = message_text(str(parts))
        if text:
            out[str(mid)] = (int(seq), str(role), text)
    return out


def current_texts(store: "GraphStore", session_id: str) -> dict[tuple[str, str], str]:
    """(kind, ref) → searched text of everything the session holds now."""
    objects = store.all_objects(session_id)
    names = {o.id: o.name for o in objects}
    texts: dict[tuple[str, str], str] = {("object", o.id): object_text(o) for o in objects}
    for r in store.all_relations(session_id):
        texts[("relation", r.id)] = relation_text(r, names)
    with repair.reading(store) as conn:
        for mid, (_, _, text) in _messages(conn, session_id).items():
            texts[("message", mid)] = text
    return texts


def _signature(conn: sqlite3.Connection, session_id: str) -> str:
    """What changes whenever the graph or the chat does: every graph write (a revert too) records a
    change; messages are appended, deleted or rewritten (their ids and lengths say so)."""
    changes = conn.execute("SELECT count(*), coalesce(max(id), '') FROM changes WHERE session_id = ?",
                           (session_id,)).fetchone()
    chat = conn.execute("SELECT count(*), coalesce(max(id), 0), coalesce(sum(length(parts)), 0), "
                        "coalesce(sum(notice), 0) FROM chat_messages WHERE session_id = ?", (session_id,)).fetchone()
    return f"{changes[0]}:{changes[1]}:{chat[0]}:{chat[1]}:{chat[2]}:{chat[3]}:{embedder.MODEL}"


def sync(store: "GraphStore", session_id: str) -> ItemReport:
    """Bring the session's items up to date (see the module docstring); when neither the graph
    nor the chat changed since the last sync, that costs two indexed queries."""
    ensure_tables(store)
    with repair.reading(store) as conn:
        signature = _signature(conn, session_id)
        row = conn.execute("SELECT signature FROM retrieval_synced WHERE session_id = ?", (session_id,)).fetchone()
    if row is not None and str(row[0]) == signature:
        return ItemReport()
    report = _sync(store, session_id)
    with repair.writing(store) as conn:
        conn.execute("INSERT OR REPLACE INTO retrieval_synced (session_id, signature) VALUES (?, ?)",
                     (session_id, signature))
    return report


def _sync(store: "GraphStore", session_id: str) -> ItemReport:
    texts = current_texts(store, session_id)
    wanted = {key: passages.text_hash(text) for key, text in texts.items()}
    with repair.reading(store) as conn:
        indexed = {(str(kind), str(ref)): (int(n), str(h)) for n, kind, ref, h in conn.execute(
            "SELECT n, kind, ref, text_hash FROM retrieval_items WHERE session_id = ? AND model = ? AND dims = ?",
            (session_id, embedder.MODEL, embedder.DIMS))}
        stale_model = conn.execute("SELECT n FROM retrieval_items WHERE session_id = ? AND (model != ? OR dims != ?)",
                                   (session_id, embedder.MODEL, embedder.DIMS)).fetchall()
    gone = [n for key, (n, h) in indexed.items() if wanted.get(key) != h] + [int(r[0]) for r in stale_model]
    todo = {key: h for key, h in wanted.items() if indexed.get(key, (0, ""))[1] != h}
    report = ItemReport(items=len(wanted), removed=len(gone))
    if not gone and not todo:
        return report
    vectors = _known_vectors(store, session_id, sorted(set(todo.values())))
    report.reused = sum(1 for h in todo.values() if h in vectors)
    fresh = {h: texts[key] for key, h in todo.items() if h not in vectors}
    order = list(fresh)
    for i in range(0, len(order), 256):
        batch = order[i:i + 256]
        for h, v in zip(batch, embedder.embed([fresh[h][:EMBEDDED_CHARS] for h in batch])):
            vectors[h] = v.astype(np.float32).tobytes()
    report.embedded = len(order)
    with repair.writing(store) as conn:
        conn.executemany("DELETE FROM retrieval_items_fts WHERE rowid = ?", [(n,) for n in gone])
        conn.executemany("DELETE FROM retrieval_items WHERE n = ?", [(n,) for n in gone])
        for (kind, ref), h in todo.items():
            cur = conn.execute(
                "INSERT INTO retrieval_items (session_id, kind, ref, text_hash, model, dims, vector) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (session_id, kind, ref, h, embedder.MODEL, embedder.DIMS, vectors[h]))
            conn.execute("INSERT INTO retrieval_items_fts (rowid, body) VALUES (?, ?)",
                         (cur.lastrowid, texts[(kind, ref)]))
    return report


def _known_vectors(store: "GraphStore", session_id: str, hashes: list[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with repair.reading(store) as conn:
        for i in range(0, len(hashes), 500):
            part = hashes[i:i + 500]
            marks = ",".join("?" * len(part))
            for h, v in conn.execute(
                    f"SELECT text_hash, vector FROM retrieval_items WHERE session_id = ? AND model = ? AND dims = ? "
                    f"AND text_hash IN ({marks})", (session_id, embedder.MODEL, embedder.DIMS, *part)):
                out[str(h)] = bytes(v)
    return out


def sweep(store: "GraphStore") -> int:
    """Remove full-text rows whose item is gone (a deleted session); how many."""
    ensure_tables(store)
    with repair.reading(store) as conn:
        fts = conn.execute("SELECT count(*) FROM retrieval_items_fts").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM retrieval_items").fetchone()[0]
    if fts == rows:
        return 0
    with repair.writing(store) as conn:
        return int(conn.execute("DELETE FROM retrieval_items_fts WHERE rowid NOT IN "
                                "(SELECT n FROM retrieval_items)").rowcount)


_cache: dict[tuple[int, str], tuple[tuple[int, int], npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
_cache_lock = threading.Lock()


def _matrix(conn: sqlite3.Connection, store_key: int, session_id: str) -> tuple[npt.NDArray[np.int64],
                                                                                npt.NDArray[np.float32]]:
    row = conn.execute("SELECT count(*), coalesce(max(n), 0) FROM retrieval_items WHERE session_id = ?",
                       (session_id,)).fetchone()
    signature = (int(row[0]), int(row[1]))  # AUTOINCREMENT: a rewrite always raises max(n)
    with _cache_lock:
        hit = _cache.get((store_key, session_id))
        if hit is not None and hit[0] == signature:
            return hit[1], hit[2]
    ids: list[int] = []
    blobs: list[bytes] = []
    for n, blob in conn.execute("SELECT n, vector FROM retrieval_items WHERE session_id = ? AND model = ? AND dims = ? "
                                "ORDER BY n", (session_id, embedder.MODEL, embedder.DIMS)):
        ids.append(int(n))
        blobs.append(bytes(blob))
    matrix = (np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), embedder.DIMS)
              if ids else np.zeros((0, embedder.DIMS), dtype=np.float32))
    found = np.asarray(ids, dtype=np.int64)
    with _cache_lock:
        _cache[(store_key, session_id)] = (signature, found, matrix)
    return found, matrix


def lexical_ranking(conn: sqlite3.Connection, session_id: str, query: str, limit: int) -> list[int]:
    """Item n of the best BM25 matches of the query's words, best first (no FTS5 operator is read)."""
    from cks_desktop.retrieval import lexical

    words = lexical.terms(query)
    if not words:
        return []
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = conn.execute(
        "SELECT f.rowid, bm25(retrieval_items_fts) AS s FROM retrieval_items_fts f JOIN retrieval_items i "
        "ON i.n = f.rowid WHERE retrieval_items_fts MATCH ? AND i.session_id = ? ORDER BY s LIMIT ?",
        (match, session_id, limit))
    return [int(n) for n, _ in rows]


def dense_ranking(conn: sqlite3.Connection, store_key: int, session_id: str, query: npt.NDArray[np.float32],
                  limit: int, floor: float) -> list[int]:
    """Item n of the items nearest to the unit vector ``query`` with cosine at least ``floor``."""
    ids, matrix = _matrix(conn, store_key, session_id)
    if matrix.shape[0] == 0:
        return []
    scores = matrix @ query.reshape(-1)
    order = np.argsort(-scores)[:limit]
    return [int(ids[i]) for i in order if scores[i] >= floor]


def resolve(conn: sqlite3.Connection, session_id: str, ns: list[int]) -> dict[int, tuple[Kind, str]]:
    """Item n → (kind, ref), for items of this session only."""
    if not ns:
        return {}
    marks = ",".join("?" * len(ns))
    out: dict[int, tuple[Kind, str]] = {}
    for n, kind, ref in conn.execute(f"SELECT n, kind, ref FROM retrieval_items WHERE session_id = ? "
                                     f"AND n IN ({marks})", (session_id, *ns)):
        match str(kind):
            case "object":
                out[int(n)] = ("object", str(ref))
            case "relation":
                out[int(n)] = ("relation", str(ref))
            case "message":
                out[int(n)] = ("message", str(ref))
    return out


def message_hits(conn: sqlite3.Connection, session_id: str, scored: list[tuple[str, float]]) -> list[MessageHit]:
    """The found messages (id, score), best first, read from the transcript of this session."""
    out: list[MessageHit] = []
    for ref, score in scored:
        row = conn.execute("SELECT id, seq, role, parts FROM chat_messages WHERE session_id = ? AND id = ?",
                           (session_id, int(ref))).fetchone()
        if row is None:  # deleted meanwhile
            continue
        out.append(MessageHit(id=int(row[0]), seq=int(row[1]), role=str(row[2]),
                              text=message_text(str(row[3]))[:SNIPPET_CHARS], score=score))
    return out
