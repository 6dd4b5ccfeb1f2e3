"""BM25 over the passages (FTS5): the question's words, any of them, best matches first.

The question is untrusted text: it is reduced to its words (``\\w+``), each quoted, so no FTS5
operator or column filter in it is ever interpreted. Very common words are dropped (they match
nearly every passage and only cost time).
"""

from __future__ import annotations

import re
import sqlite3

MAX_TERMS = 64
STOPWORDS = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or that the this to "
    "was were what when where which who whom whose why with".split())
_WORD = re.compile(r"\w+")


def terms(question: str) -> list[str]:
    """The distinct words of ``question`` worth searching for, in order."""
    out: list[str] = []
    for word in _WORD.findall(question.casefold()):
        if word not in STOPWORDS and word not in out:
            out.append(word)
        if len(out) >= MAX_TERMS:
            break
    return out


def search(conn: sqlite3.Connection, session_id: str, question: str, limit: int) -> list[tuple[int, float]]:
    """(passage n, BM25 score: lower is better) of the best ``limit`` passages of the session."""
    words = terms(question)
    if not words:
        return []
    query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = conn.execute(
        "SELECT f.rowid, bm25(passages_fts) AS s FROM passages_fts f JOIN passages p ON p.n = f.rowid "
        "WHERE passages_fts MATCH ? AND p.session_id = ? ORDER BY s LIMIT ?", (query, session_id, limit))
    return [(int(n), float(s)) for n, s in rows]
