"""The store's SQLite SQL, spoken to PostgreSQL.

Why translate instead of writing every query twice: the planner's overlay, the
writer, the history, the graph walks and the other modules' tables
(transcript, documents, usage) all talk to the store's connection in SQLite's
dialect. A second copy of each for PostgreSQL would drift from the first the
day someone fixes one of them. The differences the code actually uses are few
and mechanical, so one function rewrites a statement once (cached) and the same
modules run on both backends:

=====================================  =============================================
SQLite                                 PostgreSQL
=====================================  =============================================
``?`` / ``?N`` parameters              ``%s`` / ``%(pN)s`` (a literal ``%`` doubled)
``json_each(?) [AS f]``                ``(SELECT … FROM cks_json_values(%s::jsonb)) AS f``
``INDEXED BY idx``                     (dropped: a planner hint)
``CROSS JOIN t x ON …``                ``JOIN t x ON …`` (SQLite's CROSS JOIN is a hint)
``INSERT OR IGNORE INTO …``            ``INSERT INTO … ON CONFLICT DO NOTHING``
``COLLATE NOCASE``                     the ICU collation ``nocase`` the schema creates
``BEGIN IMMEDIATE``                    ``BEGIN`` + the store's write lock (see conn.py)
=====================================  =============================================

Statements that mean something else on PostgreSQL are rewritten whole
(``_REWRITES``): the next full-text row number is read through a function that
sees past row-level security (a member cannot see other members' private rows,
but their row numbers must not be reused).

``INSERT OR REPLACE`` becomes an upsert on the table's primary key (read from the shared
schema); ``PRAGMA table_info(t)`` a query of ``information_schema``. Not translated (and
so not working on PostgreSQL): any other ``PRAGMA``,
``sqlite_master``, SQLite's date functions, SQLite trigger syntax. ``docs/team.md`` lists
which modules use them.
"""

from __future__ import annotations

import re
from functools import lru_cache

_JSON_EACH = re.compile(r"json_each\((\?\d*)\)(?:\s+AS\s+(\w+))?", re.IGNORECASE)
_INDEXED_BY = re.compile(r"\s+INDEXED\s+BY\s+\w+", re.IGNORECASE)
_CROSS_JOIN_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+(?:\s+(?:AS\s+)?(?!ON\b)\w+)?)(?=\s+ON\b)", re.IGNORECASE)
_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_PARAM = re.compile(r"\?(\d*)")
_OR_REPLACE = re.compile(r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)


@lru_cache(maxsize=1)
def primary_keys() -> dict[str, tuple[str, ...]]:
    """Each shared table's primary key columns, read from the one schema description
    (``graph/schema.py``): what ``INSERT OR REPLACE`` replaces on."""
    from cks_desktop.graph.schema import MIGRATIONS
    from cks_desktop.graph.sqlite_util import split_sql

    keys: dict[str, tuple[str, ...]] = {}
    for migration in MIGRATIONS:
        for statement in split_sql(migration.sql):
            table = _CREATE_TABLE.match(statement)
            if not table:
                continue
            whole = re.search(r"PRIMARY\s+KEY\s*\(([^)]*)\)", statement, re.IGNORECASE)
            if whole:
                keys[table.group(1)] = tuple(c.strip() for c in whole.group(1).split(","))
                continue
            single = re.search(r"^\s*(\w+)\s+\w+(?:\s+\w+)*?\s+PRIMARY\s+KEY", statement,
                               re.IGNORECASE | re.MULTILINE)
            if single:
                keys[table.group(1)] = (single.group(1),)
    return keys


def _or_replace(sql: str) -> str:
    """``INSERT OR REPLACE INTO t (cols) …`` → ``INSERT INTO t (cols) … ON CONFLICT (pk) DO
    UPDATE SET`` every other column (SQLite replaces the row holding the same key)."""
    m = _OR_REPLACE.match(sql)
    if not m:
        return sql
    table, cols = m.group(1), [c.strip() for c in m.group(2).split(",")]
    key = primary_keys().get(table)
    if not key:
        return sql
    rest = [c for c in cols if c not in key]
    action = ("DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)) if rest else "DO NOTHING"
    body = re.sub(r"^\s*INSERT\s+OR\s+REPLACE\s+INTO", "INSERT INTO", sql, flags=re.IGNORECASE)
    return f"{body.rstrip().rstrip(';')} ON CONFLICT ({', '.join(key)}) {action}"

# Whole statements whose meaning differs on PostgreSQL (see the module docstring).
_REWRITES = {
    "SELECT coalesce(max(n), 0) FROM objects": "SELECT cks_max_object_n()",
}


_TABLE_INFO = re.compile(r"^\s*PRAGMA\s+table_info\s*\(\s*(\w+)\s*\)\s*;?\s*$", re.IGNORECASE)


@lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, bool]:
    """``(postgres_sql, numbered)``; ``numbered`` when the statement used ``?N`` (its
    parameters then go as a dict ``{"p1": …}``)."""
    sql = _REWRITES.get(sql.strip(), sql)
    info = _TABLE_INFO.match(sql)
    if info:  # PRAGMA table_info(t): its (cid, name, type, notnull, dflt_value, pk) rows
        return ("SELECT ordinal_position - 1, column_name::text, data_type::text, (is_nullable = 'NO')::int, "
                "column_default::text, 0 FROM information_schema.columns WHERE table_schema = current_schema() "
                f"AND table_name = '{info.group(1).lower()}' ORDER BY ordinal_position", False)
    sql = sql.replace("%", "%%")
    sql = _INDEXED_BY.sub("", sql)

    def json_each(m: re.Match[str]) -> str:
        # COLLATE "C": the values meet "C" columns; with the default collation the comparison
        # would have no collation an index could serve (and every lookup became a seq scan)
        return (f"(SELECT _v COLLATE \"C\" AS value FROM cks_json_values({m.group(1)}::jsonb) AS _j(_v)) "
                f"AS {m.group(2) or '_je'}")

    sql = _JSON_EACH.sub(json_each, sql)
    sql = _CROSS_JOIN_ON.sub(lambda m: "JOIN " + m.group(1), sql)
    sql = _or_replace(sql)
    if _OR_IGNORE.match(sql):
        sql = _OR_IGNORE.sub("INSERT INTO", sql).rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
    numbered = False

    def param(m: re.Match[str]) -> str:
        nonlocal numbered
        if m.group(1):
            numbered = True
            return f"%(p{m.group(1)})s"
        return "%s"

    sql = _PARAM.sub(param, sql)
    return sql, numbered


def numbered_params(params: tuple[object, ...] | list[object]) -> dict[str, object]:
    return {f"p{i}": value for i, value in enumerate(params, start=1)}


# -- the schema ---------------------------------------------------------------------------

_FTS5 = re.compile(r"^\s*CREATE\s+VIRTUAL\s+TABLE\s+(\w+)\s+USING\s+fts5\s*\((.*)\)\s*;?\s*$",
                   re.IGNORECASE | re.DOTALL)
_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(\w+)", re.IGNORECASE)
_INT_PK = re.compile(r"^\s*(\w+)\s+INTEGER\s+PRIMARY\s+KEY\b", re.IGNORECASE | re.MULTILINE)


def fts_table(name: str) -> list[str]:
    """The PostgreSQL stand-in for an FTS5 table with columns (name, body): the same
    columns and ``rowid`` (so the writer's INSERT/DELETE work unchanged), a stored
    ``tsvector`` over them built by ``cks_tsvector`` (names weigh A, property text B)
    and a GIN index on it. ``session_id`` is filled by a trigger from the object row,
    for row-level security."""
    return [
        f"CREATE TABLE {name} (\n    rowid BIGINT PRIMARY KEY,\n    name TEXT NOT NULL DEFAULT '',\n"
        f"    body TEXT NOT NULL DEFAULT '',\n    session_id TEXT COLLATE \"C\",\n"
        f"    tsv tsvector GENERATED ALWAYS AS (cks_tsvector(name, body)) STORED\n)",
        # fastupdate off: a bulk import's rows go straight into the index instead of a pending
        # list every search would scan until the next vacuum (measured: 6.5 ms → 0.06 ms a query)
        f"CREATE INDEX {name}_tsv ON {name} USING GIN (tsv) WITH (fastupdate = off)",
        f"CREATE TRIGGER {name}_session BEFORE INSERT ON {name} FOR EACH ROW EXECUTE FUNCTION cks_fts_session()",
    ]


def ddl(statement: str) -> tuple[list[str], dict[str, str]]:
    """One statement of a shared (SQLite) migration as PostgreSQL statements, and the
    tables it gave an automatic integer key (``{table: column}``, for ``lastrowid``).

    Types: INTEGER → BIGINT (an ``INTEGER PRIMARY KEY`` becomes an identity column, as
    SQLite's rowid alias assigns one), REAL → DOUBLE PRECISION, BLOB → BYTEA, TEXT →
    TEXT COLLATE "C" (byte order, as SQLite compares: ids and paging cursors sort the
    same on both); ``WITHOUT ROWID`` is dropped.
    """
    m = _FTS5.match(statement)
    if m:
        return fts_table(m.group(1)), {}
    keys: dict[str, str] = {}
    table = _CREATE_TABLE.match(statement)
    out = statement.strip().rstrip(";")
    out = re.sub(r"\)\s*WITHOUT\s+ROWID\s*$", ")", out, flags=re.IGNORECASE)
    if table:
        pk = _INT_PK.search(out)
        if pk:
            keys[table.group(1)] = pk.group(1)
        out = _INT_PK.sub(lambda k: f"    {k.group(1)} BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", out)
        out = re.sub(r"\bINTEGER\b", "BIGINT", out)
        out = re.sub(r"\bREAL\b", "DOUBLE PRECISION", out)
        out = re.sub(r"\bBLOB\b", "BYTEA", out)
        out = re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', out)
    return [out], keys
