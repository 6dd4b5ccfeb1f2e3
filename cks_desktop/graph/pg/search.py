"""Full-text search on PostgreSQL: ``tsvector`` + GIN find the rows, ``graph/ranking.py``
ranks them — with the same rules as the SQLite store's FTS5 search.

Why not ``ts_rank``: like FTS5's bm25 it is not what the tools promised (scores
from the session's own rows only, lower = better, the same on both backends);
the index decides WHICH rows match, the shared ranking decides their order.

The words of a query are normalised by the database's own ``cks_words`` (the
function that built the index: lower case, diacritics removed, anything not a
letter or digit a separator), so a query word and an indexed word always meet
in the same form. All words must match; if none does and there are several,
any may (as on SQLite); the last word matches as a prefix while it is being
typed.
"""

from __future__ import annotations

from typing import Any

from cks_desktop.graph import ranking
from cks_desktop.graph.model import Object
from cks_desktop.graph.pg.conn import PgConnection
from cks_desktop.graph.queries import _objects_by_id, check_limit


def _lexemes(conn: PgConnection, query: str) -> list[str]:
    # A lone surrogate cannot be sent (nor stored): it separates words, as on SQLite.
    text = (query or "").encode("utf-8", "replace").decode("utf-8")
    row = conn.raw.execute("SELECT cks_words(%s)", (text,)).fetchone()
    return [w for w in str(row[0] if row else "").split(" ") if w]


def _tsquery(lexemes: list[str], prefix_last: bool, any_term: bool) -> str:
    parts = [f"'{w}'" for w in lexemes]  # letters and digits only: nothing to escape
    if prefix_last:
        parts[-1] += ":*"
    return (" | " if any_term else " & ").join(parts)


def search_objects(conn: PgConnection, session_id: str, query: str, type: str | None,
                   limit: int) -> list[tuple[Object, float]]:
    limit = check_limit(limit)
    lexemes = _lexemes(conn, query)
    if not lexemes:
        return []
    prefix_last = bool(query) and not query[-1].isspace()
    type_clause = " AND o.type = %s COLLATE nocase" if type else ""
    type_params: list[Any] = [type.strip()] if type else []
    candidates: list[ranking.Candidate] = []
    for any_term in (False, True):
        tsq = _tsquery(lexemes, prefix_last, any_term)
        candidates = [ranking.Candidate(r[0], r[1], r[2]) for r in conn.raw.execute(
            "SELECT o.id, f.name, f.body FROM objects_fts f JOIN objects o ON o.n = f.rowid "
            f"WHERE f.tsv @@ to_tsquery('simple', %s) AND o.session_id = %s{type_clause} "
            "ORDER BY f.rowid LIMIT %s",
            (tsq, session_id, *type_params, ranking.MAX_CANDIDATES))]
        if candidates or len(lexemes) < 2:
            break
    if not candidates:
        return []
    terms = [ranking.Term(ranking.normalise(w), prefix_last and i == len(lexemes) - 1)
             for i, w in enumerate(lexemes)]
    row = conn.raw.execute("SELECT count(*) FROM objects WHERE session_id = %s", (session_id,)).fetchone()
    total = int(row[0]) if row else 0
    doc_freq = []
    for i, w in enumerate(lexemes):
        found = conn.raw.execute(
            "SELECT count(*) FROM objects_fts f JOIN objects o ON o.n = f.rowid "
            "WHERE f.tsv @@ to_tsquery('simple', %s) AND o.session_id = %s",
            (_tsquery([w], prefix_last and i == len(lexemes) - 1, False), session_id)).fetchone()
        doc_freq.append(int(found[0]) if found else 0)
    ranked = ranking.rank(candidates, terms, total, doc_freq)[:limit]
    objects = {o.id: o for o in _objects_by_id(conn, session_id, [k for k, _ in ranked])}  # type: ignore[arg-type]
    return [(objects[k], score) for k, score in ranked if k in objects]
