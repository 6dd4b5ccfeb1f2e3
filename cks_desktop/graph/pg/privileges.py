"""What a member of a team database may do, enforced by PostgreSQL itself.

A member (a login role in the group ``cks_members``) gets exactly what the app
does for them, so a modified client speaking plain SQL as that member can do no
more than the app would:

- ``cks_schema``: read only (the version is the admin's; a member raising it
  would lock every member out with "written by a newer version").
- ``sessions``: read, create, delete; update every column but ``id`` and
  ``owner``. ``owner`` is never written by a member: a new session takes
  ``current_user`` (the column's default), and since it cannot change, the
  row-level policy ``shared OR owner = current_user`` lets only the owner make
  a session private (a member cannot take a shared session away from the
  others by naming themselves its owner).
- ``changes`` (the history): read, insert, delete; never update. An insert
  cannot name ``member`` (it is ``current_user``, the column's default) nor
  ``seq``. A delete must take the session's oldest changes (what compacting
  the history and deleting a session do): removing a change from the middle is
  refused by a trigger, so no one can hide a change of their own.
- ``change_objects`` (which objects each change touched): read and insert,
  never update, never delete. Row-level security shows a row only when its
  change is visible, so a private session's object ids stay private. Index
  rows leave only with their change (a trigger on ``changes``), so no one can
  blind the "changed by someone else" and revert-impact checks.
- every other table: read and write rows, under the row-level security of
  ``schema.protect_session_tables``.

``grant_members`` computes the column lists from the catalogue each time it
runs (after every migration and by ``team init``), so columns a later shared
migration adds are granted too, and a database whose members were granted
more by an older version loses it on its next upgrade by an admin.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql as pgsql

MEMBERS_ROLE = "cks_members"

# A PG_EXTRAS step (graph/pg/schema.py).
# - Index rows are visible when their change is. An insert may name a change not recorded yet
#   (a streamed import writes its index rows chunk by chunk, the change row last) but never one
#   in a session the member cannot see: ``cks_change_hidden`` looks past row-level security for
#   that one answer (asked only when the change is not visible: the usual write records the
#   change first).
# - No member deletes index rows: the app's own ``DELETE FROM change_objects`` matches nothing
#   for them, and removing changes takes their index rows with them (``cks_history_removed``,
#   as the tables' owner). The same trigger refuses a removal that is not the oldest end of a
#   session's history.
MEMBER_PRIVILEGES = r"""
CREATE OR REPLACE FUNCTION cks_change_hidden(change_id text, member text) RETURNS boolean
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM @SCHEMA@.changes c JOIN @SCHEMA@.sessions s ON s.id = c.session_id
                 WHERE c.id = $1 AND NOT s.shared AND s.owner <> $2);
END $$;
ALTER TABLE change_objects ENABLE ROW LEVEL SECURITY;
CREATE POLICY member_rows ON change_objects FOR SELECT
  USING (EXISTS (SELECT 1 FROM changes c WHERE c.id = change_objects.change_id));
CREATE POLICY member_rows_insert ON change_objects FOR INSERT
  WITH CHECK (EXISTS (SELECT 1 FROM changes c WHERE c.id = change_objects.change_id)
              OR NOT cks_change_hidden(change_id, current_user));
CREATE POLICY member_rows_delete ON change_objects FOR DELETE USING (false);
CREATE OR REPLACE FUNCTION cks_history_removed() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM (SELECT session_id, max(id) AS newest FROM gone GROUP BY session_id) g
             WHERE EXISTS (SELECT 1 FROM @SCHEMA@.changes c
                           WHERE c.session_id = g.session_id AND c.id < g.newest)) THEN
    RAISE EXCEPTION 'permission denied: only the oldest changes of a session''s history can be removed'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  DELETE FROM @SCHEMA@.change_objects WHERE change_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;
CREATE TRIGGER changes_removed AFTER DELETE ON changes REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION cks_history_removed();
"""

# table -> (privileges on the whole table, {privilege: columns it must not cover}); a table
# not named here gets SELECT, INSERT, UPDATE, DELETE.
_RULES: dict[str, tuple[tuple[str, ...], dict[str, frozenset[str]]]] = {
    "cks_schema": (("SELECT",), {}),
    "sessions": (("SELECT", "DELETE"), {"INSERT": frozenset({"owner"}), "UPDATE": frozenset({"id", "owner"})}),
    "changes": (("SELECT", "DELETE"), {"INSERT": frozenset({"member", "seq"})}),
    "change_objects": (("SELECT", "INSERT", "DELETE"), {}),
}
_DEFAULT = ("SELECT", "INSERT", "UPDATE", "DELETE")


def _tables(conn: psycopg.Connection[Any]) -> dict[str, list[str]]:
    """Every base table of the current schema with its columns, in order."""
    out: dict[str, list[str]] = {}
    for table, column in conn.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
            "WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' "
            "ORDER BY c.table_name, c.ordinal_position"):
        out.setdefault(table, []).append(column)
    return out


def grant_members(conn: psycopg.Connection[Any]) -> None:
    """Give the members' group role exactly its rights (see the module docstring): every
    earlier grant is revoked first, all in one transaction, so no member ever sees a
    moment without rights nor keeps one an older version gave."""
    role = pgsql.Identifier(MEMBERS_ROLE)
    with conn.transaction():
        row = conn.execute("SELECT quote_ident(current_schema())").fetchone()
        assert row is not None
        schema = pgsql.SQL(str(row[0]))
        conn.execute(pgsql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, role))
        conn.execute(pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(schema, role))
        for table, columns in _tables(conn).items():
            whole, limited = _RULES.get(table, (_DEFAULT, {}))
            ident = pgsql.Identifier(table)
            conn.execute(pgsql.SQL("GRANT {} ON {} TO {}").format(
                pgsql.SQL(", ").join(pgsql.SQL(p) for p in whole), ident, role))
            for privilege, excluded in limited.items():
                allowed = [pgsql.Identifier(c) for c in columns if c not in excluded]
                conn.execute(pgsql.SQL("GRANT {} ({}) ON {} TO {}").format(
                    pgsql.SQL(privilege), pgsql.SQL(", ").join(allowed), ident, role))
        conn.execute(pgsql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(schema, role))
