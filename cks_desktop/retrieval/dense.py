"""Cosine search over a session's passage vectors: one numpy matrix product.

The matrix (float32, passages x dims) is read from the BLOB column once and kept per session
until the index changes (``index.generation`` for writes of this process; the row count, the
highest row number and the sum of starts for writes of another process). At 100,000 passages a
query is a 100,000 x 256 product plus a partial sort: measured in ``bench/retrieval.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cks_desktop.retrieval import embedder, index

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Vectors:
    """A session's passage ids and their vectors (row i of ``matrix`` is passage ``ids[i]``)."""

    ids: npt.NDArray[np.int64]
    matrix: Matrix


_cache: dict[tuple[int, str], tuple[tuple[int, ...], Vectors]] = {}
_cache_lock = threading.Lock()


def vectors(conn: sqlite3.Connection, store_key: int, session_id: str) -> Vectors:
    """The session's vectors, from the cache when the index did not change."""
    sig_row = conn.execute("SELECT count(*), coalesce(max(n), 0), coalesce(sum(span_start), 0) FROM passages "
                           "WHERE session_id = ?", (session_id,)).fetchone()
    signature = (index.generation(), int(sig_row[0]), int(sig_row[1]), int(sig_row[2]))
    key = (store_key, session_id)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == signature:
            return hit[1]
    ids: list[int] = []
    blobs: list[bytes] = []
    for n, blob in conn.execute("SELECT n, vector FROM passages WHERE session_id = ? AND dims = ? AND model = ? "
                                "ORDER BY n", (session_id, embedder.DIMS, embedder.MODEL)):
        ids.append(int(n))
        blobs.append(bytes(blob))
    matrix = (np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), embedder.DIMS)
              if ids else np.zeros((0, embedder.DIMS), dtype=np.float32))
    found = Vectors(np.asarray(ids, dtype=np.int64), matrix)
    with _cache_lock:
        _cache[key] = (signature, found)
    return found


def top(found: Vectors, query: Matrix, limit: int) -> list[tuple[int, float]]:
    """(passage n, cosine) of the ``limit`` passages nearest to the unit vector ``query``."""
    if found.matrix.shape[0] == 0 or limit <= 0:
        return []
    scores = found.matrix @ query.reshape(-1)
    limit = min(limit, scores.shape[0])
    best = np.argpartition(-scores, limit - 1)[:limit]
    best = best[np.argsort(-scores[best])]
    return [(int(found.ids[i]), float(scores[i])) for i in best]
