"""The PostgreSQL schema: the SAME migrations as SQLite (``graph/schema.py``), translated,
plus the few steps only PostgreSQL has.

One description: ``graph.schema.MIGRATIONS`` is the list every backend runs.
Each shared step's SQL goes through ``dialect.ddl`` (types, FTS5 → tsvector +
GIN); ``PG_EXTRAS`` adds what exists only here — the case-insensitive collation
and text-search functions before the first step, the change feed's NOTIFY
triggers, the commit-ordered ``changes.seq``, members and private sessions with
row-level security. An extra names the shared step it follows, so the combined
sequence stays append-only: a new shared migration appended to
``MIGRATIONS`` runs here too, after every extra that was written before it.

The version lives in ``cks_schema`` (one row). Each step runs in its own
transaction under an advisory lock, re-reading the version first, so two members
opening a fresh database at once do not both run it. A shared step with a Python
``run`` function (a data migration written against sqlite3) cannot run here:
the store refuses with a sentence until it has a PostgreSQL counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql as pgsql

from cks_desktop.graph.errors import DatabaseError
from cks_desktop.graph.pg.dialect import ddl
from cks_desktop.graph.pg.privileges import MEMBER_PRIVILEGES
from cks_desktop.graph.pg.privileges import MEMBERS_ROLE as MEMBERS_ROLE  # re-exported: team.py, tests
from cks_desktop.graph.pg.privileges import grant_members as grant_members
from cks_desktop.graph.schema import MIGRATIONS
from cks_desktop.graph.sqlite_util import split_sql

MIGRATION_LOCK = 0x434B534D  # "CKSM"

_PRELUDE = r"""
CREATE COLLATION IF NOT EXISTS nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE OR REPLACE FUNCTION cks_words(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(
           regexp_replace(normalize(lower(t COLLATE "und-x-icu"), NFKD), '[\u0300-\u036f]', '', 'g'),
           '[^[:alnum:]]+', ' ', 'g'))
$$;
CREATE OR REPLACE FUNCTION cks_tsvector(name text, body text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('simple', cks_words(name)), 'A')
      || setweight(to_tsvector('simple', left(cks_words(body), 500000)), 'B')
$$;
-- The ids of a JSON list, for the store's "IN (SELECT value FROM json_each(?))" lookups. PL/pgSQL
-- so that its ROWS estimate holds (a SQL function would be inlined with the default 100): lists
-- are short frontiers, and with 10 the planner walks the indexes instead of scanning the table.
CREATE OR REPLACE FUNCTION cks_json_values(j jsonb) RETURNS SETOF text LANGUAGE plpgsql IMMUTABLE STRICT
  PARALLEL SAFE ROWS 10 AS $$ BEGIN RETURN QUERY SELECT jsonb_array_elements_text(j); END $$;
CREATE OR REPLACE FUNCTION cks_fts_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.session_id := (SELECT o.session_id FROM objects o WHERE o.n = NEW.rowid);
  RETURN NEW;
END $$;
"""

_FEED = r"""
CREATE OR REPLACE FUNCTION cks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('cks_changes', ''); RETURN NULL; END $$;
CREATE TRIGGER changes_notify AFTER INSERT ON changes FOR EACH ROW EXECUTE FUNCTION cks_notify_change();
CREATE OR REPLACE FUNCTION cks_notify_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('cks_sessions', ''); RETURN NULL; END $$;
CREATE TRIGGER sessions_notify AFTER INSERT OR UPDATE OR DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION cks_notify_session();
ALTER TABLE changes ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX changes_by_seq ON changes (seq);
CREATE INDEX changes_by_session_seq ON changes (session_id, seq);
"""

# Members: each change records its database role; a session is shared (every member
# reads and writes it) or private (only its owner sees it). Row-level security, not the
# app, enforces it: a modified client connecting as a member sees no other member's
# private session, nor anything in it. The tables' owner (the admin who ran
# ``team init``) is not subject to it.
_MEMBERS = r"""
ALTER TABLE sessions ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT current_user;
ALTER TABLE sessions ADD COLUMN shared BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE changes ADD COLUMN member TEXT COLLATE "C" NOT NULL DEFAULT current_user;
CREATE OR REPLACE FUNCTION cks_max_object_n() RETURNS bigint LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$ SELECT coalesce(max(n), 0) FROM @SCHEMA@.objects $$;
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_sessions ON sessions FOR ALL
  USING (shared OR owner = current_user) WITH CHECK (shared OR owner = current_user);
CREATE POLICY member_changes_insert ON changes AS RESTRICTIVE FOR INSERT WITH CHECK (member = current_user);
"""


@dataclass(frozen=True)
class Step:
    description: str
    statements: list[str]
    serial_keys: dict[str, str]


# (runs after this many shared steps, description, SQL). Append only, with a LITERAL step
# count (the number of shared steps when it was written), never len(MIGRATIONS).
PG_EXTRAS: list[tuple[int, str, str]] = [
    (0, "collation and full-text functions", _PRELUDE),
    (9, "change feed notifications and commit order", _FEED),
    (9, "members, private sessions, row-level security", _MEMBERS),
    (9, "members' privileges: owner fixed, history append-only, index rows private", MEMBER_PRIVILEGES),
]


def _split(sql: str) -> list[str]:
    """Split on ``;`` at line ends outside ``$$`` bodies."""
    out: list[str] = []
    buf: list[str] = []
    in_body = False
    for line in sql.strip().splitlines():
        buf.append(line)
        in_body ^= line.count("$$") % 2 == 1
        if not in_body and line.rstrip().endswith(";"):
            out.append("\n".join(buf).rstrip().rstrip(";"))
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf))
    return out


def steps() -> list[Step]:
    """The combined, append-only sequence of PostgreSQL steps."""
    out: list[Step] = []

    def extras(after: int) -> None:
        for at, description, sql in PG_EXTRAS:
            if at == after:
                out.append(Step(description, _split(sql), {}))

    extras(0)
    for i, migration in enumerate(MIGRATIONS, start=1):
        statements: list[str] = []
        keys: dict[str, str] = {}
        for statement in split_sql(migration.sql):
            translated, found = ddl(statement)
            statements += translated
            keys.update(found)
        if migration.run is not None:
            statements.append("-- python:" + migration.description)
        out.append(Step(migration.description, statements, keys))
        extras(i)
    return out


def serial_keys() -> dict[str, str]:
    keys: dict[str, str] = {}
    for step in steps():
        keys.update(step.serial_keys)
    return keys


def schema_version() -> int:
    return len(steps())


def current_version(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT to_regclass('cks_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT version FROM cks_schema").fetchone()
    return int(found[0]) if found else 0


def _session_tables(conn: psycopg.Connection[Any]) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t "
        "ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_schema = current_schema() AND c.column_name = 'session_id' "
        "AND t.table_type = 'BASE TABLE' AND c.table_name NOT IN ('sessions', 'change_objects') "
        "ORDER BY 1")]


def protect_session_tables(conn: psycopg.Connection[Any]) -> None:
    """Row-level security on every table with a ``session_id``: a row is visible when its
    session is (the ``sessions`` policy decides). Idempotent; runs after every migration,
    so a table a later shared step adds is protected too. ``change_objects`` has no
    ``session_id``: its policies (``privileges.MEMBER_PRIVILEGES``) follow its change."""
    for table in _session_tables(conn):
        ident = pgsql.Identifier(table)
        conn.execute(pgsql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(ident))
        exists = conn.execute("SELECT 1 FROM pg_policies WHERE schemaname = current_schema() "
                              "AND tablename = %s AND policyname = 'member_rows'", (table,)).fetchone()
        if not exists:
            conn.execute(pgsql.SQL(
                "CREATE POLICY member_rows ON {} FOR ALL USING (session_id IN (SELECT id FROM sessions)) "
                "WITH CHECK (session_id IN (SELECT id FROM sessions))").format(ident))


def _schema(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT quote_ident(current_schema())").fetchone()
    assert row is not None
    return str(row[0])


def migrate(conn: psycopg.Connection[Any], where: str, upto: int | None = None) -> None:
    """Bring the database up to ``schema_version()`` (``conn`` in autocommit mode).
    ``upto``: stop at that version instead, as an older CKS Desktop would have left it
    (for upgrade tests and benchmarks); the members' rights are then not touched."""
    all_steps = steps() if upto is None else steps()[:upto]
    known = len(all_steps)
    current = current_version(conn)
    _refuse_newer(current, known, where)
    if current >= known:
        return
    while True:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS cks_schema (version INTEGER NOT NULL)")
            current = current_version(conn)
            _refuse_newer(current, known, where)
            if current >= known:
                break
            step = all_steps[current]
            schema = _schema(conn)
            for statement in step.statements:
                if statement.startswith("-- python:"):
                    raise DatabaseError(f"The database {where} needs a data migration ({step.description}) "
                                        "that this version cannot run on PostgreSQL.")
                conn.execute(statement.replace("@SCHEMA@", schema))
            if conn.execute("SELECT count(*) FROM cks_schema").fetchone() == (0,):
                conn.execute("INSERT INTO cks_schema (version) VALUES (%s)", (current + 1,))
            else:
                conn.execute("UPDATE cks_schema SET version = %s", (current + 1,))
            if current + 1 == known and upto is None:
                protect_session_tables(conn)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (MEMBERS_ROLE,)).fetchone():
                    grant_members(conn)


def _refuse_newer(current: int, known: int, where: str) -> None:
    if current > known:
        raise DatabaseError(
            f"The database {where} was written by a newer version of CKS Desktop "
            f"(schema {current}, this version knows {known}); update CKS Desktop to open it.")
