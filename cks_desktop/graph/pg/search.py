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

from typing import Any, cast

from cks_desktop.graph import ranking
from cks_desktop.graph.model import Object
from cks_desktop.graph.pg.conn import PgConnection
from cks_desktop.graph.queries import _objects_by_id, check_limit


Totals = dict[str, tuple[int, int]]  # session id -> (its newest change's seq, its object count)


def _words_and_marker(conn: PgConnection, session_id: str, query: str) -> tuple[list[str], int]:
    """The query's words as the index holds them, and the session's newest change (``seq``):
    every write of objects records a change, so while it stays the same so does the count."""
    # A lone surrogate cannot be sent (nor stored): it separates words, as on SQLite.
    text = (query or "").encode("utf-8", "replace").decode("utf-8")
    row = conn.raw.execute("SELECT cks_words(%s), (SELECT coalesce(max(seq), 0) FROM changes "
                           "WHERE session_id = %s)", (text, session_id)).fetchone()
    words = [w for w in str(row[0] if row else "").split(" ") if w]
    return words, int(row[1]) if row else 0


def _tsquery(lexemes: list[str], prefix_last: bool, any_term: bool) -> str:
    parts = [f"'{w}'" for w in lexemes]  # letters and digits only: nothing to escape
    if prefix_last:
        parts[-1] += ":*"
    return (" | " if any_term else " & ").join(parts)


def _total(conn: PgConnection, session_id: str, marker: int, totals: Totals) -> int:
    cached = totals.get(session_id)
    if cached is not None and cached[0] == marker:
        return cached[1]
    row = conn.raw.execute("SELECT count(*) FROM objects WHERE session_id = %s", (session_id,)).fetchone()
    total = int(row[0]) if row else 0
    totals[session_id] = (marker, total)
    return total


def search_objects(conn: PgConnection, session_id: str, query: str, type: str | None,
                   limit: int, totals: Totals | None = None) -> list[tuple[Object, float]]:
    """Ranked matches (lower score = better), as ``queries.search_objects`` on SQLite.
    ``totals``: the store's cache of session object counts (a count of 50k rows is most
    of a search's time on PostgreSQL; it is exact, refreshed whenever a change landed)."""
    limit = check_limit(limit)
    lexemes, marker = _words_and_marker(conn, session_id, query)
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
            f"WHERE f.tsv @@ to_tsquery('simple', %s) AND f.session_id = %s AND o.session_id = f.session_id{type_clause} "
            "ORDER BY f.rowid LIMIT %s",
            (tsq, session_id, *type_params, ranking.MAX_CANDIDATES))]
        if candidates or len(lexemes) < 2:
            break
    if not candidates:
        return []
    terms = [ranking.Term(ranking.normalise(w), prefix_last and i == len(lexemes) - 1)
             for i, w in enumerate(lexemes)]
    total = _total(conn, session_id, marker, totals if totals is not None else {})
    singles = [_tsquery([w], prefix_last and i == len(lexemes) - 1, False) for i, w in enumerate(lexemes)]
    # every term's document frequency in ONE scan of the rows matching any of them
    filters = ", ".join("count(*) FILTER (WHERE f.tsv @@ to_tsquery('simple', %s))" for _ in singles)
    row = conn.raw.execute(  # objects_fts.session_id (set from the object row): no join needed to count
        f"SELECT {filters} FROM objects_fts f WHERE f.tsv @@ to_tsquery('simple', %s) AND f.session_id = %s",
        (*singles, " | ".join(singles), session_id)).fetchone()
    doc_freq = [int(v) for v in row] if row else [0] * len(singles)
    ranked = ranking.rank(candidates, terms, total, doc_freq)[:limit]
    objects = {o.id: o for o in _objects_by_id(cast(Any, conn), session_id, [k for k, _ in ranked])}
    return [(objects[k], score) for k, score in ranked if k in objects]
