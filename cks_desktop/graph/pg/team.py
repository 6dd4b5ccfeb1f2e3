"""Setting up a team database: ``cks-desktop team init postgresql://admin@host/db``.

One command, run once by whoever administers the server: it creates the
database when it is missing (UTF-8), migrates the schema (the admin's role owns
the tables and is the only one that can change them), creates the group role
``cks_members`` with exactly the rights the app needs (``graph/pg/privileges.py``:
rows only, no DDL), and a login role per member given, whose password goes to the server only as a
SCRAM verifier computed here (``scram_verifier``). Members then enter host, database,
their user name and password (Settings → Storage, or ``--database``).

Row-level security (``graph/pg/schema.py``, ``privileges.py``) does the rest: a member reads only
shared sessions and their own private ones, whatever client they use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import conninfo as pg_conninfo
from psycopg import sql as pgsql

from cks_desktop.graph.errors import DatabaseError
from cks_desktop.graph.pg import schema as pg_schema
from cks_desktop.graph.pg.store import failure_sentence, where


@dataclass
class TeamInit:
    """What ``init_team`` did, for the one-line report."""

    database_created: bool = False
    schema_version: int = 0
    members_created: list[str] = field(default_factory=list)
    members_existing: list[str] = field(default_factory=list)


def scram_verifier(conn: psycopg.Connection[Any], member: str, password: str) -> str:
    """The SCRAM-SHA-256 verifier of ``password``, computed here by libpq (random salt): what
    ``ALTER ROLE … PASSWORD`` sends instead of the password, which the server stores as is.
    The password itself never reaches the server, so ``log_statement = all``, the statement
    statistics and the server's activity view cannot show it."""
    return conn.pgconn.encrypt_password(password.encode(), member.encode(), b"scram-sha-256").decode("ascii")


def init_team(admin_url: str, members: dict[str, str | None] | None = None,
              password: str | None = None) -> TeamInit:
    """Create (if needed) the database, schema, group role and member roles.

    ``members``: user name → password (None: a role without a password, for servers
    that authenticate otherwise, e.g. certificates or trust on a private network).
    Idempotent: run it again to add members or after upgrading the app.
    """
    place = where(admin_url)
    params = pg_conninfo.conninfo_to_dict(admin_url)
    dbname = str(params.get("dbname") or "cks")
    extra: dict[str, Any] = {"connect_timeout": 10}
    if password:
        extra["password"] = password
    result = TeamInit()
    try:
        server = pg_conninfo.make_conninfo(admin_url, dbname="postgres", **extra)
        with psycopg.connect(server, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone() is None:
                conn.execute(pgsql.SQL("CREATE DATABASE {} ENCODING 'UTF8' TEMPLATE template0 LOCALE 'C'")
                             .format(pgsql.Identifier(dbname)))
                result.database_created = True
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (pg_schema.MEMBERS_ROLE,)).fetchone() is None:
                conn.execute(f"CREATE ROLE {pg_schema.MEMBERS_ROLE} NOLOGIN")
            for name, secret in (members or {}).items():
                role = pgsql.Identifier(name)
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is None:
                    conn.execute(pgsql.SQL("CREATE ROLE {} LOGIN").format(role))
                    result.members_created.append(name)
                else:
                    result.members_existing.append(name)
                if secret:
                    conn.execute(pgsql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        role, pgsql.Literal(scram_verifier(conn, name, secret))))
                conn.execute(pgsql.SQL("GRANT {} TO {}").format(pgsql.Identifier(pg_schema.MEMBERS_ROLE), role))
            db = pgsql.Identifier(dbname)
            conn.execute(pgsql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(db))
            conn.execute(pgsql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                db, pgsql.Identifier(pg_schema.MEMBERS_ROLE)))
        with psycopg.connect(pg_conninfo.make_conninfo(admin_url, **extra), autocommit=True) as conn:
            pg_schema.migrate(conn, place)
            pg_schema.protect_session_tables(conn)
            pg_schema.grant_members(conn)
            result.schema_version = pg_schema.current_version(conn)
    except psycopg.Error as exc:
        raise DatabaseError(failure_sentence(exc, place)) from None
    return result
