"""The PostgreSQL backend's own tests, on a real server (tests/pgcluster.py).

The store's behaviour is tested on both backends by tests/graph (parametrised);
here is what only PostgreSQL has: the schema derived from the shared migrations,
failures injected with PostgreSQL triggers, members and row-level security,
errors of an unreachable server.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from cks_desktop.graph.errors import DatabaseError, NotFound
from cks_desktop.graph.pg import schema as pg_schema
from cks_desktop.graph.pg.store import PgGraphStore
from cks_desktop.graph.pg.team import init_team
from cks_desktop.graph.store import GraphStore
from tests import pgcluster


def _columns_sqlite(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%\\_fts\\_%' ESCAPE '\\'")]
        return {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
    finally:
        conn.close()


def test_the_schema_comes_from_the_shared_migrations(pg_url: str, tmp_path: Path) -> None:
    """Every table and column of the SQLite schema exists on PostgreSQL, from the same
    description; PostgreSQL adds only its own columns."""
    GraphStore.open(tmp_path / "s.sqlite3").close()
    sqlite_tables = _columns_sqlite(tmp_path / "s.sqlite3")
    with PgGraphStore.connect(pg_url) as store, store.raw_connection() as raw:
        version = raw.execute("SELECT version FROM cks_schema").fetchone()
        assert version == (pg_schema.schema_version(),)
        pg_tables: dict[str, list[str]] = {}
        for table, column in raw.execute("SELECT table_name, column_name FROM information_schema.columns "
                                         "WHERE table_schema = current_schema() ORDER BY ordinal_position"):
            pg_tables.setdefault(table, []).append(column)
    assert set(sqlite_tables) <= set(pg_tables)
    pg_only = {"objects_fts": {"rowid", "tsv", "session_id"}, "changes": {"seq", "member"},
               "sessions": {"owner", "shared"}}
    for table, columns in sqlite_tables.items():
        if table == "objects_fts":
            assert set(pg_tables[table]) == {"name", "body"} | pg_only[table]
            continue
        if table.endswith("_fts"):  # every full-text table has the same stand-in on PostgreSQL
            assert set(columns) <= set(pg_tables[table]) == {"name", "body"} | pg_only["objects_fts"], table
            continue
        assert pg_tables[table][:len(columns)] == columns, table
        assert set(pg_tables[table][len(columns):]) <= pg_only.get(table, set()), table


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE cks_schema SET version = version + 3")
    with pytest.raises(DatabaseError, match="newer version of CKS Desktop"):
        PgGraphStore.connect(pg_url)


def test_a_fresh_database_is_migrated_once_by_two_openers(pg_cluster: pgcluster.Cluster) -> None:
    name = pgcluster.new_database(pg_cluster, migrated=False)
    try:
        url = pg_cluster.dsn(name)
        with PgGraphStore.connect(url) as a, PgGraphStore.connect(url) as b:
            s = a.create_session("x")
            assert b.get_session(s.id) == s
    finally:
        pgcluster.drop_database(pg_cluster, name)


def test_a_failure_while_writing_rolls_everything_back(pg_url: str) -> None:
    """The PostgreSQL twin of tests/graph/test_database.py's trigger test."""
    with PgGraphStore.connect(pg_url) as store:
        session = store.create_session("s")
        store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
        seen: list[object] = []
        store.subscribe(seen.append)
        with store.raw_connection() as raw:
            raw.execute("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS "
                        "$$ BEGIN RAISE EXCEPTION 'disk on fire'; END $$")
            raw.execute("CREATE TRIGGER boom BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION boom()")
        before = (store.all_objects(session.id), store.list_changes(session.id))
        with pytest.raises(DatabaseError, match="disk on fire"):
            store.apply(session.id, [{"op": "add_object", "type": "T", "name": "b"},
                                     {"op": "remove_object", "ref": "a"}], "t")
        assert (store.all_objects(session.id), store.list_changes(session.id)) == before and seen == []
        assert store.search_objects(session.id, "b") == []


def test_an_unreachable_server_is_one_sentence_without_the_password() -> None:
    port = pgcluster.free_port()
    with pytest.raises(DatabaseError) as info:
        PgGraphStore.connect(f"postgresql://ann:s3cret@127.0.0.1:{port}/team", connect_timeout=2)
    text = str(info.value)
    assert "cannot be reached" in text and f"postgresql://ann@127.0.0.1:{port}/team" in text
    assert "s3cret" not in text and "\n" not in text


def test_the_server_going_away_and_coming_back(pg_url: str, pg_cluster: pgcluster.Cluster) -> None:
    """A dropped connection fails the call with one sentence; the next call reconnects."""
    with PgGraphStore.connect(pg_url) as store:
        session = store.create_session("s")
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = %s AND pid <> pg_backend_pid()", (pg_url.rsplit("/", 1)[1],))
        with pytest.raises(DatabaseError, match="cannot be reached"):
            store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
        store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "t")
        assert [o.name for o in store.all_objects(session.id)] == ["a"]


# -- members, private sessions, row-level security ---------------------------------------------

@pytest.fixture
def team(pg_url: str) -> dict[str, str]:
    """alice and bob, members of a team database set up by ``init_team`` (as the admin)."""
    made = init_team(pg_url, {"alice": None, "bob": None})
    assert made.schema_version == pg_schema.schema_version()
    base, db = pg_url.rsplit("/", 1)
    host = base.split("@", 1)[1]
    return {"admin": pg_url, "alice": f"postgresql://alice@{host}/{db}", "bob": f"postgresql://bob@{host}/{db}"}


def test_a_private_session_is_invisible_to_another_member_even_with_raw_sql(team: dict[str, str]) -> None:
    with PgGraphStore.connect(team["alice"]) as alice:
        mine = alice.create_session("alice's notes")
        alice.apply(mine.id, [{"op": "add_object", "type": "Secret", "name": "Project Tulip",
                               "properties": {"budget": "4 million"}, "label": "$t"},
                              {"op": "add_object", "type": "Person", "name": "Carol", "label": "$c"},
                              {"op": "add_relation", "source": "$c", "target": "$t", "type": "leads"}], "t")
        alice.set_session_shared(mine.id, False)
        shared = alice.create_session("team map")
        alice.apply(shared.id, [{"op": "add_object", "type": "Topic", "name": "Roadmap"}], "t")
    # bob's own app does not list it, and cannot open it by id …
    with PgGraphStore.connect(team["bob"]) as bob:
        assert [s.title for s in bob.list_sessions()] == ["team map"]
        with pytest.raises(NotFound):
            bob.all_objects(mine.id)
        assert bob.search_objects(shared.id, "tulip") == []
    # … and neither can a modified client speaking SQL as bob.
    with psycopg.connect(team["bob"], autocommit=True) as raw:
        for table in ("sessions", "objects", "relations", "changes", "objects_fts", "type_defs"):
            found = raw.execute(f"SELECT count(*) FROM {table} WHERE session_id = %s"
                                if table != "sessions" else "SELECT count(*) FROM sessions WHERE id = %s",
                                (mine.id,)).fetchone()
            assert found == (0,), table
        leaked = raw.execute("SELECT count(*) FROM objects_fts WHERE tsv @@ to_tsquery('simple', 'tulip')").fetchone()
        assert leaked == (0,)
        assert raw.execute("UPDATE sessions SET shared = true WHERE id = %s", (mine.id,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("INSERT INTO objects (id, session_id, type, name, name_key, created_at, updated_at) "
                        "VALUES ('o_x', %s, 'T', 'x', 'x', '', '')", (mine.id,))
    with PgGraphStore.connect(team["alice"]) as alice:  # the owner still sees everything
        assert {o.name for o in alice.all_objects(mine.id)} == {"Project Tulip", "Carol"}


def test_each_change_records_the_member_who_made_it(team: dict[str, str]) -> None:
    with PgGraphStore.connect(team["alice"]) as alice, PgGraphStore.connect(team["bob"]) as bob:
        assert alice.member() == "alice"
        s = alice.create_session("shared")
        a = alice.apply(s.id, [{"op": "add_object", "type": "T", "name": "x"}], "assistant").change
        b = bob.apply(s.id, [{"op": "update_object", "ref": "x", "set_properties": {"k": 1}}], "inspector").change
        assert a is not None and b is not None
        assert alice.change_members(s.id, [a.id, b.id]) == {a.id: "alice", b.id: "bob"}
        assert bob.session_access(s.id) == ("alice", True)
    with psycopg.connect(team["bob"], autocommit=True) as raw, pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("INSERT INTO changes (id, session_id, at, origin, summary, ops, inverse_ops, member) "
                    "VALUES ('c_fake', %s, '', 'x', '', '[]', '[]', 'alice')", (s.id,))


def test_only_the_owner_can_make_a_session_private(team: dict[str, str]) -> None:
    with PgGraphStore.connect(team["alice"]) as alice, PgGraphStore.connect(team["bob"]) as bob:
        s = alice.create_session("shared")
        with pytest.raises(Exception, match="Only alice"):
            bob.set_session_shared(s.id, False)
        assert alice.session_access(s.id) == ("alice", True)


def test_members_cannot_change_the_schema(team: dict[str, str]) -> None:
    with psycopg.connect(team["bob"], autocommit=True) as raw, pytest.raises(psycopg.errors.InsufficientPrivilege):
        raw.execute("ALTER TABLE sessions DISABLE ROW LEVEL SECURITY")


def test_two_members_editing_the_same_object_at_once(team: dict[str, str]) -> None:
    """Both read the same version, both write at the same moment (two connections, two
    threads): different fields → both land; the same field → exactly one lands and the
    other is refused whole with "changed by someone else"."""
    import threading

    from cks_desktop.graph.edit_base import ChangedBySomeoneElse

    with PgGraphStore.connect(team["alice"]) as alice, PgGraphStore.connect(team["bob"]) as bob:
        s = alice.create_session("shared")
        alice.apply(s.id, [{"op": "add_object", "type": "Task", "name": "t", "properties": {"a": 0, "b": 0}}], "t")

        def race(edits: dict[str, dict[str, object]]) -> dict[str, object]:
            version = alice.object_version(s.id, "t")
            barrier = threading.Barrier(2)
            outcome: dict[str, object] = {}

            def edit(who: str, store: PgGraphStore) -> None:
                barrier.wait(5)
                try:
                    store.apply(s.id, [{"op": "update_object", "ref": "t", "set_properties": edits[who],
                                        "if_unchanged_since": version}], who)
                    outcome[who] = "applied"
                except ChangedBySomeoneElse as exc:
                    outcome[who] = str(exc)

            threads = [threading.Thread(target=edit, args=(w, st)) for w, st in (("alice", alice), ("bob", bob))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
            return outcome

        assert race({"alice": {"a": 1}, "bob": {"b": 2}}) == {"alice": "applied", "bob": "applied"}
        assert bob.resolve(s.id, "t").properties == {"a": 1, "b": 2}
        outcome = race({"alice": {"a": "alice's"}, "bob": {"a": "bob's"}})
        winner = [w for w, o in outcome.items() if o == "applied"]
        assert len(winner) == 1, outcome
        loser = "bob" if winner == ["alice"] else "alice"
        assert f"property 'a' was changed by {winner[0]}" in str(outcome[loser])
        assert alice.resolve(s.id, "t").properties["a"] == f"{winner[0]}'s"


def test_search_finds_and_ranks_the_same_on_both_backends(pg_url: str, tmp_path: Path) -> None:
    """tsvector + GIN finds the rows FTS5 finds, and the shared ranking orders them the same."""
    words = ["Zürich", "café", "graph", "knowledge", "Ann", "naïve", "ÉCOLE", "data_base", "x1", "Straße"]
    ops = [{"op": "add_object", "type": "T" if i % 3 else "Other", "name": f"{words[i % 10]} {i}",
            "properties": {"d": " ".join(words[(i * 7 + k) % 10] for k in range(i % 5 + 1))}}
           for i in range(60)]
    queries = ["graph", "cafe", "zurich know", "ann naive", "ecole", "kno", "graph café ", "x1", "data",
               "nothing here", "strasse", "Straße"]
    with GraphStore.open(tmp_path / "s.sqlite3") as lite, PgGraphStore.connect(pg_url) as pg:
        results = []
        for store in (lite, pg):
            s = store.create_session("s")
            store.apply(s.id, ops, "t")
            results.append({q: [(o.name, round(score, 9)) for o, score in store.search_objects(s.id, q, limit=50)]
                            for q in queries}
                           | {f"type:{q}": [o.name for o, _ in store.search_objects(s.id, q, type="other")]
                              for q in queries[:4]})
    lite_results, pg_results = results
    differ = {q: (lite_results[q], pg_results[q]) for q in lite_results if lite_results[q] != pg_results[q]}
    assert not differ
