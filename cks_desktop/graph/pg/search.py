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
    of a search's time on PostgreSQL; it is exact, refreshed whenever a change landed).

    One scan of the index does it all: the rows matching ANY word, each with a flag per
    word; the rows with every flag are the "all words" matches (used when there are any),
    and the flags counted are each word's document frequency. Only when more rows match
    than ``MAX_CANDIDATES`` (then the counts would be cut short) are the frequencies
    counted separately."""
    limit = check_limit(limit)
    lexemes, marker = _words_and_marker(conn, session_id, query)
    if not lexemes:
        return []
    prefix_last = bool(query) and not query[-1].isspace()
    singles = [_tsquery([w], prefix_last and i == len(lexemes) - 1, False) for i, w in enumerate(lexemes)]
    type_clause = " AND o.type = %s COLLATE nocase" if type else ""
    type_params: list[Any] = [type.strip()] if type else []
    flags = ", ".join("f.tsv @@ to_tsquery('simple', %s)" for _ in singles)
    found = conn.raw.execute(
        f"SELECT o.id, f.name, f.body, {flags} FROM objects_fts f JOIN objects o ON o.n = f.rowid "
        f"WHERE f.tsv @@ to_tsquery('simple', %s) AND f.session_id = %s AND o.session_id = f.session_id"
        f"{type_clause} ORDER BY f.rowid LIMIT %s",
        (*singles, " | ".join(singles), session_id, *type_params, ranking.MAX_CANDIDATES + 1)).fetchall()
    if not found:
        return []
    complete = len(found) <= ranking.MAX_CANDIDATES
    if complete:
        every = [r for r in found if all(r[3:])]
    else:  # more rows match some word than are ranked: the first "all words" rows, as on SQLite
        every = conn.raw.execute(
            "SELECT o.id, f.name, f.body FROM objects_fts f JOIN objects o ON o.n = f.rowid "
            "WHERE f.tsv @@ to_tsquery('simple', %s) AND f.session_id = %s AND o.session_id = f.session_id"
            f"{type_clause} ORDER BY f.rowid LIMIT %s",
            (" & ".join(singles), session_id, *type_params, ranking.MAX_CANDIDATES)).fetchall()
    rows = every if every or len(lexemes) < 2 else found[:ranking.MAX_CANDIDATES]
    if not rows:
        return []
    candidates = [ranking.Candidate(r[0], r[1], r[2]) for r in rows]
    terms = [ranking.Term(ranking.normalise(w), prefix_last and i == len(lexemes) - 1)
             for i, w in enumerate(lexemes)]
    total = _total(conn, session_id, marker, totals if totals is not None else {})
    if complete and not type:  # every row matching any word is here: count the flags
        doc_freq = [sum(1 for r in found if r[3 + i]) for i in range(len(singles))]
    else:  # cut short, or filtered by type: count each word in the whole session
        counts = ", ".join("count(*) FILTER (WHERE f.tsv @@ to_tsquery('simple', %s))" for _ in singles)
        row = conn.raw.execute(
            f"SELECT {counts} FROM objects_fts f WHERE f.tsv @@ to_tsquery('simple', %s) AND f.session_id = %s",
            (*singles, " | ".join(singles), session_id)).fetchone()
        doc_freq = [int(v) for v in row] if row else [0] * len(singles)
    ranked = ranking.rank(candidates, terms, total, doc_freq)[:limit]
    objects = {o.id: o for o in _objects_by_id(cast(Any, conn), session_id, [k for k, _ in ranked])}
    return [(objects[k], score) for k, score in ranked if k in objects]
