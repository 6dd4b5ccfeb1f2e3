"""A member of a team database attacking it with plain SQL as their own role.

Each test sets up alice's sessions through the app, then connects as bob with
psycopg (a modified client: no app code in the way) and tries what the app never
does for him. PostgreSQL itself must refuse (tests/pgcluster.py: a real server),
and the app must keep working for both members afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from cks_desktop.graph.errors import DatabaseError
from cks_desktop.graph.pg import schema as pg_schema
from cks_desktop.graph.pg.store import PgGraphStore
from cks_desktop.graph.pg.team import init_team
from tests import pgcluster

Denied = psycopg.errors.InsufficientPrivilege


def _member_url(admin_url: str, member: str) -> str:
    base, db = admin_url.rsplit("/", 1)
    return f"postgresql://{member}@{base.split('@', 1)[1]}/{db}"


@pytest.fixture
def team(pg_url: str) -> dict[str, str]:
    init_team(pg_url, {"alice": None, "bob": None})
    return {"admin": pg_url, "alice": _member_url(pg_url, "alice"), "bob": _member_url(pg_url, "bob")}


@pytest.fixture
def bob_sql(team: dict[str, str]) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(team["bob"], autocommit=True) as raw:
        yield raw


def _alice_sessions(team: dict[str, str]) -> tuple[str, str]:
    """(a shared session with two changes, a private one) made by alice through the app."""
    with PgGraphStore.connect(team["alice"]) as alice:
        shared = alice.create_session("team map")
        alice.apply(shared.id, [{"op": "add_object", "type": "Topic", "name": "Roadmap"}], "t")
        alice.apply(shared.id, [{"op": "add_object", "type": "Topic", "name": "Budget"}], "t")
        private = alice.create_session("alice's notes")
        alice.apply(private.id, [{"op": "add_object", "type": "Secret", "name": "Tulip", "label": "$t"},
                                 {"op": "add_object", "type": "Person", "name": "Carol", "label": "$c"},
                                 {"op": "add_relation", "source": "$c", "target": "$t", "type": "leads"}], "t")
        alice.set_session_shared(private.id, False)
        return shared.id, private.id


def test_a_member_cannot_take_a_shared_session_away_by_naming_himself_its_owner(
        team: dict[str, str], bob_sql: psycopg.Connection[tuple[object, ...]]) -> None:
    shared, _ = _alice_sessions(team)
    with pytest.raises(Denied):
        bob_sql.execute("UPDATE sessions SET owner = 'bob', shared = false WHERE id = %s", (shared,))
    with pytest.raises(Denied):
        bob_sql.execute("UPDATE sessions SET owner = 'bob' WHERE id = %s", (shared,))
    with pytest.raises(Denied):  # not the owner: the row-level policy refuses making it private
        bob_sql.execute("UPDATE sessions SET shared = false WHERE id = %s", (shared,))
    with pytest.raises(Denied):  # nor can a new session be made in someone else's name
        bob_sql.execute("INSERT INTO sessions (id, title, created_at, instructions, owner) "
                        "VALUES ('s_fake', 'x', '', '', 'alice')")
    with PgGraphStore.connect(team["alice"]) as alice:
        assert alice.session_access(shared) == ("alice", True)
        assert [o.name for o in alice.all_objects(shared)] == ["Roadmap", "Budget"]
    with PgGraphStore.connect(team["bob"]) as bob:  # what the app does for bob still works
        bob.rename_session(shared, "our map")
        mine = bob.create_session("bob's")
        assert bob.session_access(mine.id) == ("bob", True)
        bob.set_session_shared(mine.id, False)
        assert bob.session_access(mine.id) == ("bob", False)


def test_a_member_cannot_change_the_schema_version(
        team: dict[str, str], bob_sql: psycopg.Connection[tuple[object, ...]]) -> None:
    for statement in ("UPDATE cks_schema SET version = 999", "DELETE FROM cks_schema",
                      "INSERT INTO cks_schema (version) VALUES (999)"):
        with pytest.raises(Denied):
            bob_sql.execute(statement)
    assert bob_sql.execute("SELECT version FROM cks_schema").fetchall() == [(pg_schema.schema_version(),)]
    with PgGraphStore.connect(team["alice"]) as alice:  # nobody is locked out
        alice.create_session("still opens")


def test_a_private_sessions_history_index_is_invisible_and_untouchable(
        team: dict[str, str], bob_sql: psycopg.Connection[tuple[object, ...]]) -> None:
    shared, private = _alice_sessions(team)
    with PgGraphStore.connect(team["admin"]) as admin, admin.raw_connection() as raw:
        (private_change,) = [r[0] for r in raw.execute("SELECT id FROM changes WHERE session_id = %s", (private,))]
        private_ids = {r[0] for r in raw.execute("SELECT object_id FROM change_objects WHERE change_id = %s",
                                                 (private_change,))}
    assert len(private_ids) == 2
    seen = {r[0] for r in bob_sql.execute("SELECT object_id FROM change_objects")}
    assert seen and not seen & private_ids  # the shared session's rows only
    assert bob_sql.execute("DELETE FROM change_objects WHERE change_id = %s", (private_change,)).rowcount == 0
    with pytest.raises(Denied):  # no update right at all
        bob_sql.execute("UPDATE change_objects SET object_id = object_id")
    with pytest.raises(Denied):  # no planting rows in alice's private index either
        bob_sql.execute("INSERT INTO change_objects (object_id, change_id) VALUES ('o_planted', %s)",
                        (private_change,))
    with PgGraphStore.connect(team["admin"]) as admin, admin.raw_connection() as raw:
        kept = {r[0] for r in raw.execute("SELECT object_id FROM change_objects WHERE change_id = %s",
                                          (private_change,))}
    assert kept == private_ids
    with PgGraphStore.connect(team["alice"]) as alice:  # the owner still writes and reads her index
        assert len(alice.changes_touching(private, sorted(private_ids)[0])) == 1
        alice.apply(private, [{"op": "update_object", "ref": "Tulip", "set_properties": {"k": 1}}], "t")
        streamed = alice.import_data(private, "json", alice.export(shared, "json"), "t")
        assert streamed.change is not None
        tulip = alice.resolve(private, "Tulip")
        assert len(alice.changes_touching(private, tulip.id)) == 2
        assert {o.name for o in alice.all_objects(private)} >= {"Tulip", "Carol", "Roadmap", "Budget"}


def test_a_member_cannot_rewrite_the_history(
        team: dict[str, str], bob_sql: psycopg.Connection[tuple[object, ...]]) -> None:
    shared, _ = _alice_sessions(team)
    history = bob_sql.execute("SELECT id, summary FROM changes WHERE session_id = %s ORDER BY id", (shared,)).fetchall()
    older, newer = (str(row[0]) for row in history)
    for statement in ("UPDATE changes SET member = 'bob' WHERE session_id = %s",
                      "UPDATE changes SET summary = 'nothing happened' WHERE session_id = %s"):
        with pytest.raises(Denied):
            bob_sql.execute(statement, (shared,))
    with pytest.raises(Denied):  # the member column is current_user's, never named
        bob_sql.execute("INSERT INTO changes (id, session_id, at, origin, summary, ops, inverse_ops, member) "
                        "VALUES ('c_fake', %s, '', 'x', '', '[]', '[]', 'bob')", (shared,))
    with pytest.raises(Denied):  # a change from the middle of the history cannot be made to vanish
        bob_sql.execute("DELETE FROM changes WHERE id = %s", (newer,))
    # nor its index rows, which tell who changed an object since: they leave only with their change
    assert bob_sql.execute("DELETE FROM change_objects WHERE change_id = %s", (older,)).rowcount == 0
    assert bob_sql.execute("SELECT count(*) FROM change_objects WHERE change_id = %s", (older,)).fetchone() == (1,)
    with PgGraphStore.connect(team["alice"]) as alice:
        assert [(c.id, c.summary) for c in alice.list_changes(shared)][::-1] == history
        assert alice.change_members(shared, [older, newer]) == {older: "alice", newer: "alice"}
    with PgGraphStore.connect(team["bob"]) as bob:  # what the app does for bob still works
        bob.apply(shared, [{"op": "add_object", "type": "Topic", "name": "Hiring"}], "t")
        assert bob.compact_history(shared, keep_last=1).dropped == 2
        bob.delete_session(shared)
    with PgGraphStore.connect(team["admin"]) as admin, admin.raw_connection() as raw:
        assert raw.execute("SELECT count(*) FROM change_objects co WHERE NOT EXISTS "
                           "(SELECT 1 FROM changes c WHERE c.id = co.change_id)").fetchone() == (0,)


# -- a team database made by the previous version ---------------------------------------------

PREVIOUS_VERSION = 12  # the schema of the last version without the members' privileges step


def _previous_grants(raw: psycopg.Connection[tuple[object, ...]]) -> None:
    """What the previous version's ``team init`` granted the members: every row right on every table."""
    raw.execute("GRANT USAGE ON SCHEMA public TO cks_members")
    raw.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO cks_members")
    raw.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO cks_members")


def test_an_upgrade_by_the_admin_gives_an_old_team_database_the_members_rules(
        pg_cluster: pgcluster.Cluster) -> None:
    assert pg_schema.steps()[PREVIOUS_VERSION].description.startswith("members' privileges")
    name = pgcluster.new_database(pg_cluster, migrated=False)
    admin = pg_cluster.dsn(name)
    try:
        init_team(pg_cluster.dsn("postgres"), {"alice": None, "bob": None})  # the roles, on the server
        with psycopg.connect(admin, autocommit=True) as raw:
            pg_schema.migrate(raw, "old", upto=PREVIOUS_VERSION)
            pg_schema.protect_session_tables(raw)
            _previous_grants(raw)
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as raw:
            raw.execute(f"GRANT CONNECT ON DATABASE {name} TO cks_members")
        alice, bob = _member_url(admin, "alice"), _member_url(admin, "bob")
        needs = f"schema {PREVIOUS_VERSION}, this version needs {pg_schema.schema_version()}"
        with pytest.raises(DatabaseError, match=needs):
            PgGraphStore.connect(alice, migrate=False)
        with psycopg.connect(admin, autocommit=True) as raw:  # alice used the previous version
            raw.execute("INSERT INTO sessions (id, title, created_at, instructions, owner) "
                        "VALUES ('s_old', 'old map', '', '', 'alice')")
        with psycopg.connect(bob, autocommit=True) as raw:  # the hole, as it was
            assert raw.execute("UPDATE sessions SET title = title WHERE id = 's_old'").rowcount == 1
            assert raw.execute("UPDATE cks_schema SET version = version").rowcount == 1
        PgGraphStore.connect(admin).close()  # the admin's next start of the new version upgrades it
        with psycopg.connect(bob, autocommit=True) as raw:
            assert raw.execute("SELECT version FROM cks_schema").fetchone() == (pg_schema.schema_version(),)
            for statement in ("UPDATE sessions SET owner = 'bob', shared = false WHERE id = 's_old'",
                              "UPDATE cks_schema SET version = 999", "UPDATE changes SET summary = ''"):
                with pytest.raises(Denied):
                    raw.execute(statement)
        with PgGraphStore.connect(alice) as a, PgGraphStore.connect(bob) as b:  # members keep working
            a.apply("s_old", [{"op": "add_object", "type": "T", "name": "kept"}], "t")
            b.apply("s_old", [{"op": "add_object", "type": "T", "name": "added"}], "t")
            a.set_session_shared("s_old", False)
            assert [s.id for s in b.list_sessions()] == []
            assert {o.name for o in a.all_objects("s_old")} == {"kept", "added"}
    finally:
        pgcluster.drop_database(pg_cluster, name)
