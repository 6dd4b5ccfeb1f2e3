"""The real CLI (``python -m cks_desktop``) on a team database: ``--database``, ``team
init``, ``team check``, ``team copy`` between the embedded file and PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg

from cks_desktop.graph.pg.store import PgGraphStore
from cks_desktop.graph.store import GraphStore
from tests import pgcluster

ROOT = Path(__file__).resolve().parents[2]


def cks(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, input=stdin, timeout=120, cwd=ROOT, env=env)


def test_headless_commands_work_on_a_team_database(tmp_path: Path, pg_url: str) -> None:
    made = cks(tmp_path, "--database", pg_url, "sessions", "create", "Team map")
    assert made.returncode == 0, made.stderr
    sid = made.stdout.strip()
    ops = json.dumps({"operations": [{"op": "add_object", "type": "Person", "name": "Ann"}]})
    call = cks(tmp_path, "--database", pg_url, "tools", "call", "evolve_knowledge", "--args", ops, "--session", sid,
               "--yes")
    assert call.returncode == 0, call.stderr
    listed = cks(tmp_path, "--database", pg_url, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)["sessions"]
    assert row["id"] == sid and row["objects"] == 1
    assert not (tmp_path / "cks.sqlite3").exists()  # the embedded file was never touched
    with PgGraphStore.connect(pg_url) as store:
        assert [o.name for o in store.all_objects(sid)] == ["Ann"]


def test_a_password_in_the_address_is_refused_and_not_echoed(tmp_path: Path, pg_url: str) -> None:
    address = pg_url.replace("postgres@", "postgres:hunter2@")
    run = cks(tmp_path, "--database", address, "sessions", "list")
    assert run.returncode == 2 and "hunter2" not in run.stderr + run.stdout
    assert "keychain" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    run = cks(tmp_path, "--database", f"postgresql://ann@127.0.0.1:{pgcluster.free_port()}/team",
              "sessions", "list")
    assert run.returncode == 2
    assert "cannot be reached" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_team_init_creates_the_database_and_members(tmp_path: Path, pg_cluster: pgcluster.Cluster) -> None:
    name = f"team_{os.getpid()}"
    admin = pg_cluster.dsn(name)
    try:
        run = cks(tmp_path, "team", "init", admin, "--member", "cli_ann", "--member", "cli_bo", "--json",
                  stdin="ann-secret\n\n")
        assert run.returncode == 0, run.stderr
        result = json.loads(run.stdout)
        assert result["database_created"] and sorted(result["members_created"]) == ["cli_ann", "cli_bo"]
        again = cks(tmp_path, "team", "init", admin, "--member", "cli_ann", "--no-passwords", "--json")
        assert json.loads(again.stdout)["members_existing"] == ["cli_ann"]
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as conn:
            has_pw = conn.execute("SELECT rolname, rolpassword IS NOT NULL FROM pg_authid "
                                  "WHERE rolname LIKE 'cli_%%' ORDER BY 1").fetchall()
        assert has_pw == [("cli_ann", True), ("cli_bo", False)]
        check = cks(tmp_path, "team", "check", pg_cluster.dsn(name, user="cli_bo"))
        assert check.returncode == 0 and "works" in check.stdout
    finally:
        pgcluster.drop_database(pg_cluster, name)


def test_team_copy_moves_a_session_between_the_file_and_the_team(tmp_path: Path, pg_url: str) -> None:
    with GraphStore.open(tmp_path / "cks.sqlite3") as local:
        s = local.create_session("Mine")
        local.set_session_instructions(s.id, "be brief")
        local.apply(s.id, [{"op": "define_type", "kind": "object", "name": "Person", "description": "people"},
                           {"op": "add_object", "type": "Person", "name": "Ann", "label": "$a",
                            "properties": {"age": 3, "tags": ["x", "é"]}},
                           {"op": "add_object", "type": "Person", "name": "Bo", "label": "$b"},
                           {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows"}], "t")
        objects, relations = local.all_objects(s.id), local.all_relations(s.id)
    up = cks(tmp_path, "team", "copy", s.id, "--to", pg_url, "--json")
    assert up.returncode == 0, up.stderr
    copied = json.loads(up.stdout)
    assert copied["objects"] == 2 and copied["relations"] == 1
    with PgGraphStore.connect(pg_url) as team:
        assert [(o.id, o.properties) for o in team.all_objects(copied["id"])] == [(o.id, o.properties) for o in objects]
        assert [r.id for r in team.all_relations(copied["id"])] == [r.id for r in relations]
        assert team.get_session(copied["id"]).instructions == "be brief"
        assert team.type_defs(copied["id"])[0].description == "people"
    back = cks(tmp_path, "--database", pg_url, "team", "copy", copied["id"], "--to", str(tmp_path / "back.sqlite3"),
               "--title", "Back", "--json")
    assert back.returncode == 0, back.stderr
    with GraphStore.open(tmp_path / "back.sqlite3") as other:
        (session,) = other.list_sessions()
        assert session.title == "Back"
        assert [o.properties for o in other.all_objects(session.id)] == [o.properties for o in objects]


def test_sessions_watch_follows_a_team_database(tmp_path: Path, pg_url: str) -> None:
    """``sessions watch --json`` on PostgreSQL: LISTEN/NOTIFY brings another member's write."""
    import queue
    import threading

    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(tmp_path), "--database", pg_url,
                             "sessions", "watch", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env)
    lines: "queue.Queue[str]" = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        assert json.loads(lines.get(timeout=60))["event"] == "ready"
        with PgGraphStore.connect(pg_url) as other:
            s = other.create_session("watched")
            other.apply(s.id, [{"op": "add_object", "type": "T", "name": "seen"}], "mcp")
        events = []
        while not any(e.get("event") == "change" for e in events):
            events.append(json.loads(lines.get(timeout=10)))
        change = [e for e in events if e.get("event") == "change"][0]
        assert "seen" in json.dumps(change) and change.get("session_id") == s.id
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def test_team_private_and_shared_from_the_cli(tmp_path: Path, pg_url: str) -> None:
    from cks_desktop.graph.pg.team import init_team

    init_team(pg_url, {"tm_cy": None, "tm_di": None})
    base, db = pg_url.rsplit("/", 1)
    host = base.split("@", 1)[1]
    cy, di = f"postgresql://tm_cy@{host}/{db}", f"postgresql://tm_di@{host}/{db}"
    sid = cks(tmp_path, "--database", cy, "sessions", "create", "cy's").stdout.strip()
    run = cks(tmp_path, "--database", cy, "team", "private", sid, "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"id": sid, "owner": "tm_cy", "shared": False}
    assert json.loads(cks(tmp_path, "--database", di, "sessions", "list", "--json").stdout)["sessions"] == []
    refused = cks(tmp_path, "--database", di, "team", "shared", sid)
    assert refused.returncode == 2 and "No session" in refused.stderr
    assert cks(tmp_path, "--database", cy, "team", "shared", sid).returncode == 0
    (row,) = json.loads(cks(tmp_path, "--database", di, "sessions", "list", "--json").stdout)["sessions"]
    assert row["id"] == sid
    local = cks(tmp_path, "team", "private", sid)
    assert local.returncode == 2 and "team database" in local.stderr


def test_the_cli_uses_the_team_database_the_window_chose_for_the_data_folder(tmp_path: Path, pg_url: str) -> None:
    """Settings → Storage chose the team database: the CLI on the same data folder, without
    ``--database``, reads and writes that database, never a file of its own."""
    from cks_desktop.paths import resolve
    from cks_desktop.settings import Settings
    from cks_desktop.storage_choice import PgSettings, choose

    settings = Settings.load(resolve(tmp_path).ensure().settings_file)
    choose(settings, PgSettings.from_url(pg_url))
    settings.save()
    made = cks(tmp_path, "sessions", "create", "Chosen in the window")
    assert made.returncode == 0, made.stderr
    with PgGraphStore.connect(pg_url) as store:
        assert [s.title for s in store.list_sessions()] == ["Chosen in the window"]
    assert not (tmp_path / "cks.sqlite3").exists()
