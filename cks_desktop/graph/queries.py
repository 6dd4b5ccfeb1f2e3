"""Read queries: paging, full-text search, neighbourhoods, shortest paths, stats.

All functions take the connection and run under the store's lock. Graph walks
fetch one BFS level per query (the frontier goes in as one JSON array), so a
2-hop neighbourhood is two queries however many nodes it holds, and the path
search grows from both ends at once, always expanding the smaller frontier.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from cks_desktop.graph import ranking, rows
from cks_desktop.graph.errors import AmbiguousRef, NotFound, StoreError
from cks_desktop.graph.model import Object, Relation
from cks_desktop.graph.sqlite_util import decode_cursor, encode_cursor, is_id, json_list

MAX_PAGE = 1000
_TOKEN = re.compile(r"\w+", re.UNICODE)


def check_limit(limit: int, maximum: int = MAX_PAGE) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise StoreError(f"limit must be a whole number from 1 to {maximum}.")
    return min(limit, maximum)


def get_object(conn: sqlite3.Connection, session_id: str, object_id: str) -> Object:
    row = conn.execute(f"SELECT {rows.OBJECT_COLS} FROM objects WHERE session_id = ? AND id = ?",
                       (session_id, object_id)).fetchone()
    if row is None:
        raise NotFound(f"No object {object_id!r} in this session.")
    return rows.obj(row)


def resolve(conn: sqlite3.Connection, session_id: str, ref: str) -> Object:
    """An id, else an exact name (case-insensitive)."""
    if not isinstance(ref, str) or not ref.strip():
        raise NotFound("An object reference must be a non-empty id or name.")
    if is_id(ref, "o_"):
        row = conn.execute(f"SELECT {rows.OBJECT_COLS} FROM objects WHERE session_id = ? AND id = ?",
                           (session_id, ref)).fetchone()
        if row is not None:
            return rows.obj(row)
    found = conn.execute(f"SELECT {rows.OBJECT_COLS} FROM objects WHERE session_id = ? AND name_key = ? "
                         "ORDER BY id LIMIT 21", (session_id, ref.strip().casefold())).fetchall()
    if len(found) == 1:
        return rows.obj(found[0])
    if len(found) > 1:
        raise AmbiguousRef(ref, [{"id": r[0], "type": r[2], "name": r[3]} for r in found[:20]])
    raise NotFound(f"No object {ref!r} in this session.")


def get_relation(conn: sqlite3.Connection, session_id: str, relation_id: str) -> Relation:
    row = conn.execute(f"SELECT {rows.RELATION_COLS} FROM relations WHERE session_id = ? AND id = ?",
                       (session_id, relation_id)).fetchone()
    if row is None:
        raise NotFound(f"No relation {relation_id!r} in this session.")
    return rows.relation(row)


def relations_of(conn: sqlite3.Connection, session_id: str,
                 object_id: str) -> tuple[list[Relation], list[Relation]]:
    cols = rows.RELATION_COLS
    incoming = [rows.relation(r) for r in conn.execute(
        f"SELECT {cols} FROM relations WHERE session_id = ? AND target_id = ? ORDER BY id", (session_id, object_id))]
    outgoing = [rows.relation(r) for r in conn.execute(
        f"SELECT {cols} FROM relations WHERE session_id = ? AND source_id = ? ORDER BY id", (session_id, object_id))]
    return incoming, outgoing


def _page_filter(session_id: str, type: str | None, cursor: str | None) -> tuple[list[str], list[Any]]:
    """The WHERE terms every paged listing shares: its session, an optional type, the cursor."""
    where, params = ["session_id = ?"], [session_id]
    if type:
        where.append("type = ? COLLATE NOCASE")
        params.append(type.strip())
    if cursor:
        where.append("id > ?")
        params.append(decode_cursor(cursor))
    return where, params


def list_objects(conn: sqlite3.Connection, session_id: str, type: str | None, limit: int,
                 cursor: str | None) -> tuple[list[Object], str | None]:
    limit = check_limit(limit)
    where, params = _page_filter(session_id, type, cursor)
    found = conn.execute(f"SELECT {rows.OBJECT_COLS} FROM objects WHERE {' AND '.join(where)} "
                         f"ORDER BY id LIMIT ?", (*params, limit + 1)).fetchall()
    page = [rows.obj(r) for r in found[:limit]]
    return page, (encode_cursor(page[-1].id) if len(found) > limit else None)


def list_relations(conn: sqlite3.Connection, session_id: str, object_id: str | None, type: str | None,
                   direction: str, limit: int, cursor: str | None) -> tuple[list[Relation], str | None]:
    limit = check_limit(limit)
    if direction not in ("both", "out", "in", "outgoing", "incoming"):
        raise StoreError("direction must be 'both', 'out' or 'in'.")
    where, params = _page_filter(session_id, type, cursor)
    cols = rows.RELATION_COLS
    if object_id is None:
        sql = f"SELECT {cols} FROM relations WHERE {' AND '.join(where)} ORDER BY id LIMIT ?"
        args: list[Any] = [*params, limit + 1]
    else:
        # One index lookup per end (an OR would make SQLite walk the whole session).
        parts, args = [], []
        for end, index in (("source_id", "relations_by_source"), ("target_id", "relations_by_target")):
            if (end == "source_id" and direction in ("in", "incoming")) or (
                    end == "target_id" and direction in ("out", "outgoing")):
                continue
            parts.append(f"SELECT {cols} FROM relations INDEXED BY {index} "
                         f"WHERE {' AND '.join(where)} AND {end} = ?")
            args += [*params, object_id]
        sql = " UNION ".join(parts) + " ORDER BY 1 LIMIT ?"
        args.append(limit + 1)
    found = conn.execute(sql, args).fetchall()
    page = [rows.relation(r) for r in found[:limit]]
    return page, (encode_cursor(page[-1].id) if len(found) > limit else None)


def fts_query(text: str, any_term: bool = False) -> str | None:
    """User text → a safe FTS5 query: every token quoted; the last one a prefix.

    Quoting makes ``"``, ``*``, ``-``, ``:``, ``AND``/``NEAR`` plain words.
    """
    tokens = _TOKEN.findall(text or "")
    if not tokens:
        return None
    quoted = [f'"{t}"' for t in tokens]
    if text and not text[-1].isspace():
        quoted[-1] += "*"
    return (" OR " if any_term else " ").join(quoted)


def search_objects(conn: sqlite3.Connection, session_id: str, query: str, type: str | None,
                   limit: int) -> list[tuple[Object, float]]:
    """All words must match; if nothing does, any word may. Ranked by BM25 computed from
    this session's rows only (``graph/ranking.py``: FTS5's own bm25 reads statistics of
    the index every session shares, which let one session probe another's words)."""
    limit = check_limit(limit)
    words = _TOKEN.findall(query or "")
    terms = ranking.query_terms(query)
    type_clause = " AND o.type = ? COLLATE NOCASE" if type else ""
    type_params: list[Any] = [type.strip()] if type else []
    candidates: list[ranking.Candidate] = []
    for any_term in (False, True):
        match = fts_query(query, any_term)
        if match is None:
            return []
        candidates = [ranking.Candidate(r[0], r[1], r[2]) for r in conn.execute(
            "SELECT o.id, objects_fts.name, objects_fts.body FROM objects_fts CROSS JOIN objects o ON o.n = objects_fts.rowid "
            f"WHERE objects_fts MATCH ? AND o.session_id = ?{type_clause} ORDER BY objects_fts.rowid LIMIT ?",
            (match, session_id, *type_params, ranking.MAX_CANDIDATES))]
        if candidates or len(words) < 2:
            break
    if not candidates:
        return []
    total = conn.execute("SELECT count(*) FROM objects WHERE session_id = ?", (session_id,)).fetchone()[0]
    doc_freq = [conn.execute(
        # CROSS JOIN keeps the index walk outside: the planner would probe the index once per session row.
        "SELECT count(*) FROM objects_fts CROSS JOIN objects o ON o.n = objects_fts.rowid "
        "WHERE objects_fts MATCH ? AND o.session_id = ?",
        (f'"{w}"' + ("*" if t.prefix else ""), session_id)).fetchone()[0] for w, t in zip(words, terms)]
    ranked = ranking.rank(candidates, terms, total, doc_freq)[:limit]
    found = {o.id: o for o in _objects_by_id(conn, session_id, [key for key, _ in ranked])}
    return [(found[key], score) for key, score in ranked if key in found]


def _edges(conn: sqlite3.Connection, session_id: str, frontier: list[str], full: bool) -> list[Any]:
    """Relations touching any frontier object. The frontier is the OUTER loop and each
    lookup uses the endpoint index (without statistics the planner would rather scan
    the session's relations)."""
    cols = rows.qualified(rows.RELATION_COLS if full else "id, session_id, type, source_id, target_id", "r")
    return conn.execute(
        f"SELECT {cols} FROM json_each(?1) AS f CROSS JOIN relations AS r INDEXED BY relations_by_source "
        f"WHERE r.session_id = ?2 AND r.source_id = f.value "
        f"UNION SELECT {cols} FROM json_each(?1) AS f CROSS JOIN relations AS r INDEXED BY relations_by_target "
        f"WHERE r.session_id = ?2 AND r.target_id = f.value ORDER BY 1",
        (json_list(frontier), session_id)).fetchall()


def _objects_by_id(conn: sqlite3.Connection, session_id: str, ids: list[str]) -> list[Object]:
    found = {r[0]: rows.obj(r) for r in conn.execute(
        f"SELECT {rows.OBJECT_COLS} FROM objects WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))",
        (session_id, json_list(ids)))}
    return [found[i] for i in ids if i in found]


def neighbors(conn: sqlite3.Connection, session_id: str, start: Object, depth: int,
              limit: int) -> tuple[list[Object], list[Relation]]:
    """The start object first, then up to ``limit`` others within ``depth`` hops, and the
    relations between the objects returned."""
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 3:
        raise StoreError("depth must be 1, 2 or 3.")
    limit = check_limit(limit, 5000)
    seen: dict[str, None] = {start.id: None}
    rels: dict[str, Relation] = {}
    frontier = [start.id]
    for _ in range(depth):
        if not frontier or len(seen) > limit:  # full: a further level could add relations only
            break
        nxt: list[str] = []
        for row in _edges(conn, session_id, frontier, full=True):
            for other in (row[3], row[4]):
                if other not in seen and len(seen) <= limit:
                    seen[other] = None
                    nxt.append(other)
            if row[3] in seen and row[4] in seen and row[0] not in rels:
                rels[row[0]] = rows.relation(row)
        frontier = nxt
    # Relations among the last level's objects were never fetched (those objects were not expanded).
    if len(frontier) > 1:
        ids = json_list(frontier)
        for row in conn.execute(
                f"SELECT {rows.qualified(rows.RELATION_COLS, 'r')} FROM json_each(?1) AS f CROSS JOIN relations AS r "
                "INDEXED BY relations_by_source WHERE r.session_id = ?2 AND r.source_id = f.value "
                "AND r.target_id IN (SELECT value FROM json_each(?1))", (ids, session_id)):
            rels.setdefault(row[0], rows.relation(row))
    objects = _objects_by_id(conn, session_id, list(seen))
    return objects, sorted(rels.values(), key=lambda r: r.id)


def find_path(conn: sqlite3.Connection, session_id: str, source: Object, target: Object,
              max_depth: int) -> tuple[list[Object], list[Relation]] | None:
    """Shortest undirected path (bidirectional BFS), at most ``max_depth`` relations long."""
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or not 1 <= max_depth <= 20:
        raise StoreError("max_depth must be a whole number from 1 to 20.")
    if source.id == target.id:
        return [source], []
    # node -> (relation id, previous node, depth) on each side
    sides: list[dict[str, tuple[str | None, str | None, int]]] = [
        {source.id: (None, None, 0)}, {target.id: (None, None, 0)}]
    frontiers = [[source.id], [target.id]]
    depths = [0, 0]
    while frontiers[0] and frontiers[1] and depths[0] + depths[1] < max_depth:
        s = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        mine, other = sides[s], sides[1 - s]
        front = set(frontiers[s])
        depths[s] += 1
        nxt: list[str] = []
        best: tuple[int, str] | None = None
        for rel_id, _sid, _type, src, tgt in _edges(conn, session_id, frontiers[s], full=False):
            for a, b in ((src, tgt), (tgt, src)):
                if a in front and b not in mine:
                    mine[b] = (rel_id, a, depths[s])
                    nxt.append(b)
                    if b in other:
                        total = depths[s] + other[b][2]
                        if best is None or total < best[0]:
                            best = (total, b)
        if best is not None:
            return _build_path(conn, session_id, sides, s, best[1])
        frontiers[s] = nxt
    return None


def _build_path(conn: sqlite3.Connection, session_id: str, sides: list[dict[str, Any]], s: int,
                meet: str) -> tuple[list[Object], list[Relation]]:
    def walk(side: dict[str, Any], node: str) -> tuple[list[str], list[str]]:
        nodes, rels = [node], []
        while side[node][0] is not None:
            rel_id, prev, _ = side[node]
            rels.append(rel_id)
            nodes.append(prev)
            node = prev
        return nodes, rels

    fwd_nodes, fwd_rels = walk(sides[0], meet)  # meet → source
    back_nodes, back_rels = walk(sides[1], meet)  # meet → target
    node_ids = list(reversed(fwd_nodes)) + back_nodes[1:]
    rel_ids = list(reversed(fwd_rels)) + back_rels
    objects = _objects_by_id(conn, session_id, node_ids)
    found = {r[0]: rows.relation(r) for r in conn.execute(
        f"SELECT {rows.RELATION_COLS} FROM relations WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))",
        (session_id, json_list(rel_ids)))}
    return objects, [found[i] for i in rel_ids]


def type_stats(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    defs: dict[tuple[str, str], Any] = {}
    for row in conn.execute(f"SELECT {rows.TYPE_COLS} FROM type_defs WHERE session_id = ?", (session_id,)):
        td = rows.type_def(row)
        defs[(td.kind, td.name.casefold())] = td
    out: dict[str, Any] = {}
    for kind, table in (("object", "objects"), ("relation", "relations")):
        entries: dict[str, dict[str, Any]] = {}
        for name, count in conn.execute(f"SELECT type, count(*) FROM {table} WHERE session_id = ? GROUP BY type",
                                        (session_id,)):
            entries[name] = {"name": name, "count": count, "description": "", "properties_schema": None}
        for (k, key), td in defs.items():
            if k != kind:
                continue
            matches = [e for n, e in entries.items() if n.casefold() == key] or [
                entries.setdefault(td.name, {"name": td.name, "count": 0})]
            for e in matches:
                e["description"] = td.description
                e["properties_schema"] = td.properties_schema
        out[f"{kind}_types"] = sorted(entries.values(), key=lambda e: (-e["count"], e["name"]))
    return out


def counts(conn: sqlite3.Connection, session_id: str) -> dict[str, int]:
    objects = conn.execute("SELECT count(*) FROM objects WHERE session_id = ?", (session_id,)).fetchone()[0]
    relations = conn.execute("SELECT count(*) FROM relations WHERE session_id = ?", (session_id,)).fetchone()[0]
    return {"objects": objects, "relations": relations}
