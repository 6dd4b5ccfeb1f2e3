"""``--database`` on the real CLI: a PostgreSQL address in every form libpq reads, and a
password in any of them refused before anything connects or is created.

The commands run in an empty working directory, so a keyword-form address taken
for an SQLite path would show up as a new file there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg import pq

from cks_desktop.graph.pg.store import PgGraphStore
from cks_desktop.storage_choice import LIBPQ_KEYWORDS, SECRET_KEYWORDS, is_postgres

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-Zq"


def cks(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in the empty directory ``tmp_path / "cwd"`` (data in ``tmp_path / "home"``)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(tmp_path / "home"), *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def _keyword_form(url: str) -> str:
    """The same connection as libpq's keyword/value string."""
    base, db = url.rsplit("/", 1)
    user, hostport = base.split("://", 1)[1].split("@", 1)
    host, port = hostport.rsplit(":", 1)
    return f"host={host} port={port} dbname={db} user={user}"


def _forms(url: str) -> dict[str, str]:
    return {"url user:password": url.replace("postgres@", f"postgres:{SECRET}@"),
            "url ?password=": f"{url}?password={SECRET}",
            "url ?sslpassword=": f"{url}?sslmode=disable&sslpassword={SECRET}",
            "keyword password=": f"{_keyword_form(url)} password={SECRET}",
            "keyword password first": f"password='{SECRET}' {_keyword_form(url)}"}


@pytest.mark.slow
def test_a_password_in_the_database_address_is_refused_in_every_form(tmp_path: Path, pg_url: str) -> None:
    for form, address in _forms(pg_url).items():
        for args in (("--database", address, "sessions", "list"),
                     ("--database", address, "sessions", "create", "x"),
                     ("team", "check", address),
                     ("--database", address, "team", "private", "s_x")):
            run = cks(tmp_path, *args)
            said = run.stderr + run.stdout
            assert run.returncode == 2, (form, args, said)
            assert "password in the database address" in run.stderr, (form, args, said)
            assert SECRET not in said and len(run.stderr.strip().splitlines()) == 1, (form, args, said)
        assert list((tmp_path / "cwd").iterdir()) == [], form  # no file named after the password
        assert not (tmp_path / "home" / "cks.sqlite3").exists()
    with PgGraphStore.connect(pg_url) as store:  # nothing reached the server either
        assert store.list_sessions() == []


def test_team_copy_refuses_a_password_in_either_address(tmp_path: Path, pg_url: str) -> None:
    for address in _forms(pg_url).values():
        to = cks(tmp_path, "team", "copy", "s_x", "--to", address)
        source = cks(tmp_path, "--database", address, "team", "copy", "s_x", "--to", str(tmp_path / "x.sqlite3"))
        for run in (to, source):
            assert run.returncode == 2 and "password in the database address" in run.stderr, run.stderr
            assert SECRET not in run.stderr + run.stdout
    assert list((tmp_path / "cwd").iterdir()) == [] and not (tmp_path / "x.sqlite3").exists()


def test_the_keyword_form_is_a_postgresql_connection(tmp_path: Path, pg_url: str) -> None:
    address = _keyword_form(pg_url)
    made = cks(tmp_path, "--database", address, "sessions", "create", "Team map")
    assert made.returncode == 0, made.stderr
    with PgGraphStore.connect(pg_url) as store:
        assert [s.title for s in store.list_sessions()] == ["Team map"]
    assert list((tmp_path / "cwd").iterdir()) == [] and not (tmp_path / "home" / "cks.sqlite3").exists()
    check = cks(tmp_path, "team", "check", address)
    assert check.returncode == 0 and "works" in check.stdout, check.stderr


def test_an_address_libpq_cannot_read_is_one_sentence_without_its_text(tmp_path: Path) -> None:
    run = cks(tmp_path, "--database", f"host=127.0.0.1 password '{SECRET}", "sessions", "list")
    assert run.returncode == 2 and "not a valid PostgreSQL connection string" in run.stderr
    assert SECRET not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert list((tmp_path / "cwd").iterdir()) == []


def test_every_libpq_keyword_and_secret_is_known() -> None:
    """The recognised keywords and the refused secrets cover the installed libpq's list
    (``PQconndefaults``; ``*``: libpq's own mark for a password field)."""
    options = pq.Conninfo.get_defaults()
    assert {o.keyword.decode() for o in options} <= LIBPQ_KEYWORDS
    assert {o.keyword.decode() for o in options if o.dispchar == b"*"} <= SECRET_KEYWORDS
    assert is_postgres("host=db.example.org dbname=cks") and is_postgres("  user = ann")
    assert not is_postgres("notes.sqlite3") and not is_postgres("hostile=1.sqlite3")


@pytest.fixture(autouse=True)
def _no_pg_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """libpq's PG* variables of the machine running the tests must not fill in the address."""
    for name in [n for n in os.environ if n.startswith("PG")]:
        monkeypatch.delenv(name)
