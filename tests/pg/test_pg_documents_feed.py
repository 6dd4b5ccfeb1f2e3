"""The PostgreSQL change feed carries documents, as the SQLite feed does:
another member's ``documents add|remove`` (a real ``python -m cks_desktop --database …``
process) reaches an open store's listeners as ONE ``SessionEvent("documents")``, the same
event the SQLite feed emits; this store's own adds are not emitted again."""

from __future__ import annotations

from pathlib import Path

import psycopg

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.events import SessionEvent
from cks_desktop.graph.pg.store import PgGraphStore
from tests.pg.test_pg_cli import cks
from tests.pg.test_pg_feed import Seen
from tests.pg.test_pg_store import team  # noqa: F401 - the fixture (alice and bob)


def _documents(seen: Seen) -> list[SessionEvent]:
    return [e for _, e in seen.events if isinstance(e, SessionEvent) and e.kind == "documents"]


def test_another_members_document_add_arrives_once_and_our_own_not_again(tmp_path: Path, pg_url: str) -> None:
    made = cks(tmp_path, "--database", pg_url, "sessions", "create", "Docs")
    assert made.returncode == 0, made.stderr
    sid = made.stdout.strip()
    (tmp_path / "a.txt").write_text("Ada Lovelace met Charles Babbage.")
    (tmp_path / "b.txt").write_text("Babbage designed the Analytical Engine.")
    with PgGraphStore.connect(pg_url) as store:
        seen = Seen()
        store.subscribe(seen)
        store.start_feed()
        run = cks(tmp_path, "--database", pg_url, "documents", "add", "--session", sid, str(tmp_path / "a.txt"))
        assert run.returncode == 0, run.stderr
        assert seen.wait(lambda ev: len(_documents(seen)) >= 1, 10.0), seen.events
        (first,) = _documents(seen)
        assert first.external and first.session.id == sid

        # our own add: the documents store tells its listeners; the feed says nothing more,
        # even after a later external write proves the feed scanned past it
        DocumentStore(store).add(sid, [read_path(tmp_path / "b.txt", 10**7)])
        run = cks(tmp_path, "--database", pg_url, "documents", "remove", "--session", sid, "a.txt")
        assert run.returncode == 0, run.stderr
        assert seen.wait(lambda ev: len(_documents(seen)) >= 2, 10.0), seen.events
        assert len(_documents(seen)) == 2  # the terminal's add and remove; never our own add
        assert {d.name for d in DocumentStore(store).list_documents(sid)} == {"b.txt"}


def test_a_private_sessions_documents_reach_no_other_member_not_even_its_id(
        tmp_path: Path, team: dict[str, str]) -> None:
    """Row-level security holds for the documents feed: bob's feed never hears of alice's
    private session, and no NOTIFY payload carries a session id (a raw LISTEN as bob)."""
    with PgGraphStore.connect(team["alice"]) as alice:
        private = alice.create_session("alice's notes")
        alice.set_session_shared(private.id, False)
        shared = alice.create_session("team map")
    (tmp_path / "secret.txt").write_text("Project Tulip has a budget of 4 million.")
    (tmp_path / "open.txt").write_text("The roadmap is public.")
    with PgGraphStore.connect(team["bob"]) as bob, psycopg.connect(team["bob"], autocommit=True) as raw:
        raw.execute("LISTEN cks_documents")
        seen = Seen()
        bob.subscribe(seen)
        bob.start_feed()
        for session, name in ((private, "secret.txt"), (shared, "open.txt")):
            run = cks(tmp_path, "--database", team["alice"], "documents", "add", "--session", session.id,
                      str(tmp_path / name))
            assert run.returncode == 0, run.stderr
        assert seen.wait(lambda ev: len(_documents(seen)) >= 1, 10.0), seen.events
        assert [e.session.id for e in _documents(seen)] == [shared.id]
        payloads = [n.payload for n in raw.notifies(timeout=5, stop_after=2)]
        assert payloads == ["", ""]
        assert all(private.id not in repr(e) for _, e in seen.events)

